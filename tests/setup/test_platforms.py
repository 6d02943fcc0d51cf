"""Every platform, both scopes: setup writes the right files, is idempotent, keeps the
user's entries, survives a host rewriting the file, and uninstall leaves no trace."""

import copy
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from ctxmode.errors import UsageError
from ctxmode.setup import PLATFORMS, setup, targets, uninstall
from ctxmode.setup.command import Command
from ctxmode.setup.errors import SettingsFileError
from ctxmode.setup.model import JsonTarget, PlainFileTarget, Scope, TomlTarget
from ctxmode.setup.targets import plan

from .conftest import snapshot

SCOPES = ["project", "global"]
USER_TOML = """# my codex config
model = "o3"  # the usual

[mcp_servers.other]
command = "npx"
args = ["-y", "thing"]   # keep me

[profiles.fast]
model = "gpt-5"
"""


def _where(scope: str, project: Path) -> Path | None:
    return project if scope == "project" else None


def _global_only(platform: str) -> bool:
    """A host with no per-project configuration: setup refuses a project scope."""
    try:
        plan(platform, Scope(Path("/nonexistent/project")), Command())
    except UsageError:
        return True
    return False


@pytest.fixture(autouse=True)
def _no_project_scope_for_global_only_hosts(request: pytest.FixtureRequest) -> None:
    callspec = getattr(request.node, "callspec", None)
    params = callspec.params if callspec is not None else {}
    platform = params.get("platform")
    if platform and params.get("scope", "project") == "project" and _global_only(platform):
        pytest.skip(f"{platform} has no project configuration")


def _targets(platform: str, where: Path | None) -> tuple[Any, ...]:
    return plan(platform, Scope(where), Command()).targets


def _user_doc(target: JsonTarget) -> dict[str, Any]:
    """Settings a user already had: an unknown key, their own hooks and MCP server."""
    doc: dict[str, Any] = {"userSetting": {"keep": [1, "two", None], "nested": {"a": True}}}
    if target.hooks:
        nested = "hooks" in target.hooks[0].item
        item = (
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "my-own-hook.sh"}]}
            if nested
            else {"command": "my-own-hook.sh"}
        )
        doc["hooks"] = {target.hooks[0].event: [item], "UserOnlyEvent": [copy.deepcopy(item)]}
    for server in target.servers:
        doc.setdefault(server.container[0], {})["mine"] = {"command": "other", "args": []}
    return doc


def _seed(targets: tuple[Any, ...]) -> None:
    for target in targets:
        target.path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(target, JsonTarget):
            text = json.dumps(_user_doc(target), indent=2) + "\n"
            target.path.write_text(text, encoding="utf-8")
        elif isinstance(target, TomlTarget):
            target.path.write_text(USER_TOML, encoding="utf-8")


def _host_rewrite(data: Any) -> Any:
    """What a host that re-serialises its settings might do: reverse every key order and
    the order of entries in every list of objects (argv lists keep their order)."""
    if isinstance(data, dict):
        return {k: _host_rewrite(data[k]) for k in reversed(list(data))}
    if isinstance(data, list) and all(isinstance(v, dict) for v in data):
        return [_host_rewrite(v) for v in reversed(data)]
    return data


@pytest.mark.parametrize("scope", SCOPES)
@pytest.mark.parametrize("platform", list(PLATFORMS))
def test_setup_twice_changes_nothing_the_second_time(platform, scope, project, home):
    where = _where(scope, project)
    first = setup(platform, project=where)
    assert first.changed
    assert {c.action for c in first.changes} == {"create"}
    before = snapshot(project, home)
    second = setup(platform, project=where)
    assert not second.changed
    assert snapshot(project, home) == before


@pytest.mark.parametrize("scope", SCOPES)
@pytest.mark.parametrize("platform", list(PLATFORMS))
def test_uninstall_after_a_fresh_setup_leaves_nothing_behind(platform, scope, project, home):
    where = _where(scope, project)
    before = snapshot(project, home)
    setup(platform, project=where)
    result = uninstall(platform, project=where)
    assert {c.action for c in result.changes} == {"delete"}
    assert snapshot(project, home) == before
    assert not result.record_path.exists()


@pytest.mark.parametrize("scope", SCOPES)
@pytest.mark.parametrize("platform", list(PLATFORMS))
def test_user_entries_and_unknown_keys_survive_setup_and_uninstall(platform, scope, project):
    where = _where(scope, project)
    targets = _targets(platform, where)
    _seed(targets)
    original = {t.path: t.path.read_text(encoding="utf-8") for t in targets if t.path.exists()}
    # A plan may depend on what the files hold (Qwen's "$version" only in a file that has one).
    targets = _targets(platform, where)
    setup(platform, project=where)
    for target in targets:
        if isinstance(target, JsonTarget):
            data = json.loads(target.path.read_text(encoding="utf-8"))
            seeded = _user_doc(target)
            assert data["userSetting"] == seeded["userSetting"]
            for event, items in seeded.get("hooks", {}).items():
                assert data["hooks"][event][: len(items)] == items
            for server in target.servers:
                assert data[server.container[0]]["mine"] == {"command": "other", "args": []}
        elif isinstance(target, TomlTarget):
            text = target.path.read_text(encoding="utf-8")
            assert text.startswith(USER_TOML)
    uninstall(platform, project=where)
    for target in targets:
        if target.path not in original:
            assert not target.path.exists()
            continue
        text = target.path.read_text(encoding="utf-8")
        kept = [s for s in getattr(target, "settings", ()) if s.structural]
        if not kept:
            assert text == original[target.path]
            continue
        # A file's skeleton (format version, agent name) stays while the user's hooks need it.
        expected = json.loads(original[target.path])
        expected.update({s.path[0]: s.value for s in kept})
        assert json.loads(text) == expected


@pytest.mark.parametrize("platform", list(PLATFORMS))
def test_uninstall_after_the_host_reordered_and_reformatted_removes_only_ours(platform, project):
    _seed(_targets(platform, project))
    targets = _targets(platform, project)  # as planned for the seeded files
    setup(platform, project=project)
    for target in targets:
        if isinstance(target, JsonTarget):
            data = json.loads(target.path.read_text(encoding="utf-8"))
            target.path.write_text(json.dumps(_host_rewrite(data), indent=4), encoding="utf-8")
    uninstall(platform, project=project)
    for target in targets:
        if isinstance(target, JsonTarget):
            data = json.loads(target.path.read_text(encoding="utf-8"))
            expected = _host_rewrite(_user_doc(target))
            expected.update({s.path[0]: s.value for s in target.settings if s.structural})
            assert data == expected
            assert "ctxmode hook" not in json.dumps(data)
            assert target.path.read_text(encoding="utf-8").startswith('{\n    "')  # 4 spaces
        elif isinstance(target, PlainFileTarget):
            assert not target.path.exists()


@pytest.mark.parametrize("scope", SCOPES)
@pytest.mark.parametrize("platform", list(PLATFORMS))
def test_dry_run_shows_a_diff_per_file_and_writes_nothing(platform, scope, project, home):
    where = _where(scope, project)
    before = snapshot(project, home)
    result = setup(platform, project=where, dry_run=True)
    assert snapshot(project, home) == before
    assert not result.record_path.exists()
    for change in result.changes:
        diff = change.diff()
        assert diff.startswith(f"--- /dev/null\n+++ b{change.path}\n")
    setup(platform, project=where)
    before = snapshot(project, home)
    result = uninstall(platform, project=where, dry_run=True)
    assert snapshot(project, home) == before
    assert all(
        c.diff().endswith("+++ /dev/null\n") or "+++ /dev/null\n" in c.diff()
        for c in result.changes
    )


@pytest.mark.parametrize("platform", list(PLATFORMS))
def test_malformed_settings_are_refused_by_setup_and_left_alone_by_uninstall(
    platform, project, home
):
    targets = _targets(platform, project)
    broken = next((t for t in targets if isinstance(t, (JsonTarget, TomlTarget))), None)
    if broken is None:
        pytest.skip(f"{platform} has no settings file (only its plugin file)")
    broken.path.parent.mkdir(parents=True, exist_ok=True)
    text = '{"hooks": {"PreToolUse": [' if isinstance(broken, JsonTarget) else "[features\nx ="
    broken.path.write_text(text, encoding="utf-8")
    before = snapshot(project, home)
    with pytest.raises(SettingsFileError, match=str(broken.path)):
        setup(platform, project=project)
    assert snapshot(project, home) == before
    result = uninstall(platform, project=project)  # nothing of ctxmode's in it: not an error
    assert not result.changed and result.warnings == ()
    assert snapshot(project, home) == before


def test_uninstall_refuses_a_malformed_file_that_still_names_ctxmode(project):
    setup("claude-code", project=project)
    settings = project / ".claude" / "settings.json"
    broken = settings.read_text(encoding="utf-8")[:-20]
    settings.write_text(broken, encoding="utf-8")
    with pytest.raises(SettingsFileError, match="not valid JSON"):
        uninstall("claude-code", project=project)
    assert settings.read_text(encoding="utf-8") == broken
    assert (project / ".mcp.json").exists()


# --- what each host gets ------------------------------------------------------------------


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _handlers(groups: list[dict[str, Any]]) -> list[tuple[str | None, str]]:
    return [(g.get("matcher"), h["command"]) for g in groups for h in g["hooks"]]


def test_claude_code_project_hooks_use_matchers_that_match(project):
    setup("claude-code", project=project)
    settings = _json(project / ".claude" / "settings.json")["hooks"]
    assert _handlers(settings["PreToolUse"]) == [
        ("Bash|PowerShell|Read|Grep|WebFetch|Agent", "ctxmode hook claude-code pretooluse"),
        ("mcp__.*", "ctxmode hook claude-code pretooluse"),
    ]
    assert _handlers(settings["PostToolUseFailure"]) == [
        ("Bash|PowerShell", "ctxmode hook claude-code posttoolusefailure")
    ]
    assert set(settings) == {
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "PreCompact",
        "SessionStart",
        "UserPromptSubmit",
        "Stop",
    }
    assert _handlers(settings["Stop"]) == [(None, "ctxmode hook claude-code stop")]
    assert all(
        h["type"] == "command" and h["timeout"] <= 30
        for groups in settings.values()
        for g in groups
        for h in g["hooks"]
    )
    assert _json(project / ".mcp.json") == {
        "mcpServers": {"ctxmode": {"command": "ctxmode", "args": ["serve"]}}
    }


def test_claude_code_global_honours_claude_config_dir(home, tmp_path, monkeypatch):
    config = tmp_path / "claude-config"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    setup("claude-code", project=None)
    assert "SessionStart" in _json(config / "settings.json")["hooks"]
    assert "ctxmode" in _json(config / ".claude.json")["mcpServers"]
    assert not (home / ".claude").exists()


def test_claude_code_global_default_paths(home):
    setup("claude-code", project=None)
    assert "PreToolUse" in _json(home / ".claude" / "settings.json")["hooks"]
    assert _json(home / ".claude.json")["mcpServers"]["ctxmode"]["args"] == ["serve"]


def test_qwen_code_uses_millisecond_timeouts(project):
    setup("qwen-code", project=project)
    data = _json(project / ".qwen" / "settings.json")
    timeouts = [h["timeout"] for gs in data["hooks"].values() for g in gs for h in g["hooks"]]
    assert min(timeouts) >= 1000
    assert "PostToolUseFailure" in data["hooks"]
    assert data["mcpServers"]["ctxmode"] == {"command": "ctxmode", "args": ["serve"]}


def test_gemini_cli_enables_hooks_and_names_them(project):
    setup("gemini-cli", project=project)
    data = _json(project / ".gemini" / "settings.json")
    assert data["hooksConfig"] == {"enabled": True}
    before_tool = data["hooks"]["BeforeTool"][0]
    assert before_tool["matcher"].endswith("|mcp_.*")
    assert before_tool["hooks"][0]["name"] == "ctxmode-beforetool"
    assert set(data["hooks"]) == {
        "BeforeTool",
        "AfterTool",
        "PreCompress",
        "SessionStart",
        "BeforeAgent",
        "AfterModel",
    }


def test_gemini_cli_global_honours_gemini_cli_home(tmp_path, monkeypatch):
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "g"))
    setup("gemini-cli", project=None)
    assert (tmp_path / "g" / ".gemini" / "settings.json").exists()


def test_gemini_cli_turns_a_disabled_master_switch_on_and_uninstall_restores_it(project):
    settings = project / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooksConfig": {"enabled": false}}\n', encoding="utf-8")
    result = setup("gemini-cli", project=project)
    assert any("hooksConfig.enabled" in w for w in result.warnings)
    assert _json(settings)["hooksConfig"]["enabled"] is True
    uninstall("gemini-cli", project=project)
    assert settings.read_text(encoding="utf-8") == '{"hooksConfig": {"enabled": false}}\n'


def test_codex_writes_a_regex_matcher_and_toml_tables(project):
    tomllib = pytest.importorskip("tomllib")
    setup("codex", project=project)
    hooks = _json(project / ".codex" / "hooks.json")["hooks"]
    matcher = hooks["PreToolUse"][0]["matcher"]
    fires = re.compile(matcher)
    for emitted in ("Bash", "exec_command", "shell", "apply_patch", "mcp__ctxmode__ctx_search"):
        assert fires.search(emitted), emitted
    for other in ("update_plan", "view_image", "Bashful", "my_shell"):
        assert not fires.search(other), other
    config = tomllib.loads((project / ".codex" / "config.toml").read_text(encoding="utf-8"))
    forwarded = [*targets.setting_vars(), *targets.PROXY_VARS]
    assert config == {
        "mcp_servers": {
            "ctxmode": {"command": "ctxmode", "args": ["serve"], "env_vars": forwarded}
        },
        "features": {"hooks": True},
    }


def test_codex_global_honours_codex_home(tmp_path, monkeypatch):
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "cx"))
    setup("codex", project=None)
    assert (tmp_path / "cx" / "hooks.json").exists()
    assert (tmp_path / "cx" / "config.toml").exists()


def test_vscode_copilot_writes_flat_hooks_and_servers(project):
    setup("vscode-copilot", project=project)
    hooks = _json(project / ".github" / "hooks" / "ctxmode-vscode-copilot.json")["hooks"]
    assert hooks["PreToolUse"] == [
        {"type": "command", "command": "ctxmode hook vscode-copilot pretooluse", "timeout": 10}
    ]
    assert _json(project / ".vscode" / "mcp.json") == {
        "servers": {"ctxmode": {"type": "stdio", "command": "ctxmode", "args": ["serve"]}}
    }


@pytest.mark.skipif(sys.platform != "linux", reason="VS Code's user dir is per-OS")
def test_vscode_copilot_global_paths(home):
    setup("vscode-copilot", project=None)
    assert (home / ".copilot" / "hooks" / "ctxmode-vscode-copilot.json").exists()
    assert "ctxmode" in _json(home / ".config" / "Code" / "User" / "mcp.json")["servers"]


def test_vscode_copilot_warns_that_vscode_also_runs_claude_hooks(project):
    setup("claude-code", project=project)
    result = setup("vscode-copilot", project=project)
    assert any("chat.hookFilesLocations" in w for w in result.warnings)


def test_claude_code_warns_when_vscode_hooks_are_already_there(project):
    setup("vscode-copilot", project=None)
    result = setup("claude-code", project=project)
    assert any("VS Code also runs the claude-code hooks" in w for w in result.warnings)


def test_jetbrains_copilot_uses_the_copilot_runtime_format(project):
    result = setup("jetbrains-copilot", project=project)
    data = _json(project / ".github" / "hooks" / "ctxmode-jetbrains-copilot.json")
    assert data["version"] == 1
    command = "ctxmode hook jetbrains-copilot pretooluse"
    assert data["hooks"]["PreToolUse"] == [
        {"type": "command", "bash": command, "powershell": command, "timeoutSec": 10}
    ]
    assert "PostToolUseFailure" in data["hooks"]
    assert any("--global" in n for n in result.notes)


@pytest.mark.skipif(sys.platform == "win32", reason="Copilot's config dir is per-OS")
def test_jetbrains_copilot_global_registers_the_mcp_server(home):
    setup("jetbrains-copilot", project=None)
    mcp = home / ".config" / "github-copilot" / "intellij" / "mcp.json"
    assert _json(mcp) == {"servers": {"ctxmode": {"command": "ctxmode", "args": ["serve"]}}}


def test_vscode_and_jetbrains_share_github_hooks_and_uninstall_cleans_it(project):
    setup("vscode-copilot", project=project)
    result = setup("jetbrains-copilot", project=project)
    assert any("twice" in w for w in result.warnings)
    uninstall("vscode-copilot", project=project)
    uninstall("jetbrains-copilot", project=project)
    assert not (project / ".github").exists()


def test_cursor_writes_version_and_camel_case_events(project):
    setup("cursor", project=project)
    data = _json(project / ".cursor" / "hooks.json")
    assert data["version"] == 1
    assert data["hooks"]["preToolUse"][0]["matcher"] == "Shell|Read|Grep|WebFetch|Task|MCP:.*"
    assert set(data["hooks"]) == {
        "preToolUse",
        "postToolUse",
        "sessionStart",
        "afterAgentResponse",
        "stop",
    }
    assert _json(project / ".cursor" / "mcp.json")["mcpServers"]["ctxmode"]["command"] == (
        "ctxmode"
    )


def test_kiro_writes_an_agent_with_glob_matchers(project):
    result = setup("kiro", project=project)
    agent = _json(project / ".kiro" / "agents" / "ctxmode.json")
    assert agent["name"] == "ctxmode" and agent["includeMcpJson"] is True
    matchers = [h["matcher"] for h in agent["hooks"]["preToolUse"]]
    assert "shell" in matchers and all("|" not in m and "(" not in m for m in matchers)
    assert agent["hooks"]["agentSpawn"] == [{"command": "ctxmode hook kiro agentspawn"}]
    assert "ctxmode" in _json(project / ".kiro" / "settings" / "mcp.json")["mcpServers"]
    assert any("--agent ctxmode" in n for n in result.notes)


def test_opencode_installs_the_plugin_and_a_local_server(project, home):
    from ctxmode.setup.targets import opencode_plugin_source

    setup("opencode", project=project)
    plugin = project / ".opencode" / "plugins" / "ctxmode.js"
    assert plugin.read_text(encoding="utf-8") == opencode_plugin_source()
    assert _json(project / "opencode.json")["mcp"]["ctxmode"] == {
        "type": "local",
        "command": ["ctxmode", "serve"],
        "enabled": True,
    }
    setup("opencode", project=None)
    assert (home / ".config" / "opencode" / "plugins" / "ctxmode.js").exists()
    assert (home / ".config" / "opencode" / "opencode.json").exists()


def test_forwarded_variables_are_those_ctxmode_reads_and_none_it_sets_itself():
    names = targets.setting_vars()
    assert {"CTXMODE_DIR", "XDG_DATA_HOME", "CTXMODE_FETCH_STRICT", "CTXMODE_GC"} <= set(names)
    assert not {"CTXMODE_FILE_PATH", "CTXMODE_RUN_ID", "CTXMODE_BIN"} & set(names)


def test_codex_forwards_the_variable_names_to_the_server_not_their_values(project, monkeypatch):
    monkeypatch.setenv("CTXMODE_DIR", str(project / "elsewhere"))
    setup("codex", project=project)
    text = (project / ".codex" / "config.toml").read_text(encoding="utf-8")
    assert (
        'env_vars = [\n  "CTXMODE_DIR",\n  "CONTEXT_MODE_DIR",\n  "CONTEXT_MODE_DATA_DIR",\n'
        '  "XDG_DATA_HOME",' in text
    )
    assert "elsewhere" not in text


def test_gemini_cli_allows_ctxmode_variables_through_redaction_and_takes_back_only_those(project):
    settings = project / ".gemini" / "settings.json"
    settings.parent.mkdir()
    mine = {"security": {"environmentVariableRedaction": {"allowed": ["MY_VAR", "CTXMODE_DIR"]}}}
    original = json.dumps(mine, indent=2) + "\n"
    settings.write_text(original, encoding="utf-8")
    setup("gemini-cli", project=project)
    allowed = _json(settings)["security"]["environmentVariableRedaction"]["allowed"]
    assert allowed[:2] == ["MY_VAR", "CTXMODE_DIR"] and allowed.count("CTXMODE_DIR") == 1
    assert set(targets.setting_vars()) <= set(allowed)
    assert not setup("gemini-cli", project=project).changed
    uninstall("gemini-cli", project=project)
    assert settings.read_text(encoding="utf-8") == original
