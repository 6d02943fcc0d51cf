"""The plugin files: generated from the descriptors, complete, and in step with setup."""

import json
import re
from pathlib import Path

import ctxmode
from ctxmode.platforms import claude_code, codex
from ctxmode.setup import plugin

ROOT = Path(__file__).resolve().parents[2]


def _load(rel: str) -> dict:
    return json.loads((ROOT / rel).read_text(encoding="utf-8"))


def test_the_committed_plugin_files_are_what_the_generator_writes(tmp_path):
    assert plugin.main(["--check"]) == 0, "run `python -m ctxmode.setup.plugin` and commit"
    assert plugin.main(["--out", str(tmp_path)]) == 0
    for rel in plugin.render_all():
        assert (tmp_path / rel).read_text(encoding="utf-8") == (ROOT / rel).read_text("utf-8")


def test_claude_hooks_register_every_event_ctxmode_handles():
    hooks = _load("hooks/hooks.json")["hooks"]
    registered = {
        re.search(r"hook claude-code (\w+)$", h["command"]).group(1)
        for groups in hooks.values()
        for g in groups
        for h in g["hooks"]
    }
    assert registered == set(claude_code.EVENTS)
    assert set(hooks) == set(claude_code.WIRE_NAMES.values())
    pre = [g["matcher"] for g in hooks["PreToolUse"]]
    assert any(re.fullmatch(m, "mcp__plugin_ctxmode_ctxmode__ctx_execute") for m in pre)
    assert any(re.fullmatch(m, "Bash") for m in pre)


def test_codex_hooks_cover_the_tools_codex_emits():
    hooks = _load(".codex-plugin/hooks.json")["hooks"]
    registered = {
        re.search(r"hook codex (\w+)$", h["command"]).group(1)
        for groups in hooks.values()
        for g in groups
        for h in g["hooks"]
    }
    assert registered == set(codex.EVENTS)
    matcher = re.compile(hooks["PreToolUse"][0]["matcher"])
    for emitted in ("Bash", "exec_command", "shell", "apply_patch", "mcp__ctxmode__ctx_search"):
        assert matcher.search(emitted), emitted
    assert not matcher.search("update_plan")


def test_every_hook_and_server_runs_the_launcher_not_ctxmode_on_path():
    launcher = ROOT / plugin.LAUNCHER
    assert launcher.is_file() and launcher.read_text(encoding="utf-8").startswith("#!/bin/sh")
    for rel, var in (
        ("hooks/hooks.json", "CLAUDE_PLUGIN_ROOT"),
        (".codex-plugin/hooks.json", "PLUGIN_ROOT"),
    ):
        for groups in _load(rel)["hooks"].values():
            for g in groups:
                for h in g["hooks"]:
                    assert h["command"].startswith(f'sh "${{{var}}}/{plugin.LAUNCHER}" hook ')
    server = _load(".claude-plugin/plugin.json")["mcpServers"]["ctxmode"]
    assert server["args"] == ["${CLAUDE_PLUGIN_ROOT}/bin/ctxmode-plugin", "serve"]
    codex_server = _load(".codex-plugin/mcp.json")["mcpServers"]["ctxmode"]
    assert codex_server["default_tools_approval_mode"] == "approve"
    # Codex ignores tools/list_changed: its server waits for the first build, and Codex
    # waits as long for it
    assert codex_server["env"] == {"CTXMODE_PLUGIN": "codex", "CTXMODE_PLUGIN_WAIT": "300"}
    assert codex_server["startup_timeout_sec"] == 300


def test_manifests_carry_the_package_version_and_one_plugin():
    market = _load(".claude-plugin/marketplace.json")
    assert [p["name"] for p in market["plugins"]] == ["ctxmode"]
    assert market["plugins"][0]["source"] == "./"
    for rel in (".claude-plugin/plugin.json", ".codex-plugin/plugin.json"):
        assert _load(rel)["version"] == ctxmode.__version__
    assert market["plugins"][0]["version"] == ctxmode.__version__


def test_skills_are_invocable_and_name_their_tool_and_cli_fallback():
    commands = {
        "ctx-stats": "stats",
        "ctx-doctor": "doctor",
        "ctx-search": "search",
        "ctx-index": "index",
        "ctx-purge": "purge",
        "ctx-upgrade": "upgrade",
        "ctx-insight": "insight",
    }
    for name, command in commands.items():
        text = (ROOT / "skills" / name / "SKILL.md").read_text(encoding="utf-8")
        front = text.split("---")[1]
        assert f"name: {name}\n" in front and "user-invocable: true" in front
        assert f"`{name.replace('-', '_')}`" in text, name  # the MCP tool
        assert f'bin/ctxmode-plugin" {command}' in text, name  # the CLI fallback
    routing = (ROOT / "skills" / "ctxmode" / "SKILL.md").read_text(encoding="utf-8")
    for ref in re.findall(r"\]\((references/[\w.-]+)\)", routing):
        assert (ROOT / "skills" / "ctxmode" / ref).is_file(), ref
    assert "user-invocable" not in routing.split("---")[1]  # triggered by the model
