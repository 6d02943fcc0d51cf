"""Setup of Copilot CLI, Kimi Code, Antigravity (IDE and CLI) and Zed: where each one reads."""

import json
from pathlib import Path

from ctxmode.setup import setup, uninstall
from ctxmode.setup.command import Command
from ctxmode.setup.model import JsonTarget, Scope
from ctxmode.setup.targets import plan


def _json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_copilot_cli_project_hooks_and_mcp(project):
    setup("copilot-cli", project=project)
    hooks = _json(project / ".github" / "hooks" / "ctxmode-copilot-cli.json")
    assert hooks["version"] == 1
    assert set(hooks["hooks"]) == {
        "sessionStart",
        "userPromptSubmitted",
        "preToolUse",
        "postToolUse",
        "postToolUseFailure",
        "preCompact",
        "agentStop",
    }
    pre = hooks["hooks"]["preToolUse"][0]
    assert pre["bash"] == pre["powershell"] == "ctxmode hook copilot-cli pretooluse"
    server = _json(project / ".github" / "mcp.json")["mcpServers"]["ctxmode"]
    assert server == {"type": "local", "command": "ctxmode", "args": ["serve"], "tools": ["*"]}
    uninstall("copilot-cli", project=project)
    assert not (project / ".github").exists()


def test_copilot_cli_uses_an_existing_mcp_json(project):
    """Copilot reads .mcp.json, and .github/mcp.json only when there is none."""
    dot = project / ".mcp.json"
    dot.write_text('{"mcpServers": {"mine": {"command": "x", "args": []}}}\n', encoding="utf-8")
    setup("copilot-cli", project=project)
    servers = _json(dot)["mcpServers"]
    assert servers["ctxmode"] == {"command": "ctxmode", "args": ["serve"]}  # Claude's shape too
    assert not (project / ".github" / "mcp.json").exists()
    assert not setup("copilot-cli", project=project).changed  # the record keeps the target
    uninstall("copilot-cli", project=project)
    assert _json(dot) == {"mcpServers": {"mine": {"command": "x", "args": []}}}


def test_copilot_cli_leaves_a_ctxmode_server_another_setup_wrote(project):
    setup("claude-code", project=project)
    targets = plan("copilot-cli", Scope(project), Command()).targets
    assert not any(isinstance(t, JsonTarget) and t.servers for t in targets)
    setup("copilot-cli", project=project)
    uninstall("copilot-cli", project=project)
    assert "ctxmode" in _json(project / ".mcp.json")["mcpServers"]


def test_copilot_cli_global_honours_copilot_home(tmp_path, monkeypatch):
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "cop"))
    paths = {t.path for t in plan("copilot-cli", Scope(None), Command()).targets}
    assert paths == {
        tmp_path / "cop" / "hooks" / "ctxmode-copilot-cli.json",
        tmp_path / "cop" / "mcp-config.json",
    }


def test_copilot_cli_warns_about_other_copilot_hook_files(project):
    setup("vscode-copilot", project=project)
    result = setup("copilot-cli", project=project)
    assert any("ctxmode-vscode-copilot.json" in w for w in result.warnings)


USER_KIMI = (
    '# my kimi config\ndefault_model = "k3"  # keep\n\n[[hooks]]\nevent = "Stop"\n'
    'command = "mine.sh"\n'
)


def test_kimi_global_hooks_are_array_tables_and_uninstall_restores_the_file(home):
    conf = home / ".kimi-code" / "config.toml"
    conf.parent.mkdir(parents=True)
    conf.write_text(USER_KIMI, encoding="utf-8")
    setup("kimi", project=None)
    text = conf.read_text(encoding="utf-8")
    assert text.startswith(USER_KIMI)
    assert text.count("[[hooks]]") == 8  # the user's and seven of ctxmode's
    assert 'command = "ctxmode hook kimi stop"' in text
    assert 'command = "ctxmode hook kimi sessionend"' in text
    assert 'matcher = "Bash|Read|Grep|FetchURL|Agent|mcp__"' in text
    assert _json(home / ".kimi-code" / "mcp.json")["mcpServers"]["ctxmode"]["args"] == ["serve"]
    assert not setup("kimi", project=None).changed
    uninstall("kimi", project=None)
    assert conf.read_text(encoding="utf-8") == USER_KIMI
    assert not (home / ".kimi-code" / "mcp.json").exists()


def test_kimi_project_gets_only_its_mcp_file(project):
    result = setup("kimi", project=project)
    assert [c.path for c in result.changes] == [project / ".kimi-code" / "mcp.json"]
    assert any("--global" in n for n in result.notes)


def test_kimi_global_honours_kimi_code_home(tmp_path, monkeypatch):
    monkeypatch.setenv("KIMI_CODE_HOME", str(tmp_path / "k"))
    paths = {t.path for t in plan("kimi", Scope(None), Command()).targets}
    assert paths == {tmp_path / "k" / "config.toml", tmp_path / "k" / "mcp.json"}


def test_antigravity_cli_hook_groups_and_mcp(home, project):
    setup("antigravity-cli", project=None)
    hooks = _json(home / ".gemini" / "config" / "hooks.json")["hooks"]
    assert hooks["PreToolUse"][0]["matcher"].startswith("run_command|")
    assert hooks["PostToolUse"][0]["hooks"][0]["command"] == (
        "ctxmode hook antigravity-cli posttooluse"
    )
    assert "ctxmode" in _json(home / ".gemini" / "config" / "mcp_config.json")["mcpServers"]
    setup("antigravity-cli", project=project)
    assert (project / ".antigravitycli" / "hooks.json").exists()


def test_antigravity_rules_file_per_project_and_mcp_globally(home, project):
    setup("antigravity", project=None)
    servers = _json(home / ".gemini" / "antigravity" / "mcp_config.json")["mcpServers"]
    assert servers["ctxmode"] == {"command": "ctxmode", "args": ["serve"]}
    setup("antigravity", project=project)
    rules = (project / ".agent" / "rules" / "ctxmode.md").read_text(encoding="utf-8")
    assert "ctx_fetch_and_index" in rules and "<context_window_protection>" in rules
    uninstall("antigravity", project=project)
    assert not (project / ".agent").exists()


def test_zed_context_servers_keep_the_users_comments(home):
    settings = home / ".config" / "zed" / "settings.json"
    settings.parent.mkdir(parents=True)
    original = '// my zed settings\n{\n  "theme": "One Dark", // keep\n}\n'
    settings.write_text(original, encoding="utf-8")
    setup("zed", project=None)
    text = settings.read_text(encoding="utf-8")
    assert "// my zed settings" in text and "// keep" in text
    assert '"context_servers"' in text and '"serve"' in text
    uninstall("zed", project=None)
    assert settings.read_text(encoding="utf-8") == original
