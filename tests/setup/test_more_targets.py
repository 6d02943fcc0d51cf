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
