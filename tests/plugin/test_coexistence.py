"""The plugin and `ctxmode setup claude-code` never both answer: setup refuses beside an
enabled plugin, plugin hooks step aside for setup's, and doctor says which one is active."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxmode.doctor.hosts import plugin_check
from ctxmode.hooks import guidance
from ctxmode.setup import setup
from ctxmode.setup.errors import PluginInstalledError


@pytest.fixture
def home(fake_host: Path) -> Path:
    return fake_host


@pytest.fixture
def project(tmp_path) -> Path:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    return root.resolve()


def _enable_plugin(home: Path) -> Path:
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"enabledPlugins": {"ctxmode@ctxmode": True}}), "utf-8")
    return settings


def test_setup_refuses_while_the_plugin_is_enabled_and_writes_nothing(home, project):
    settings = _enable_plugin(home)
    before = settings.read_bytes()
    with pytest.raises(PluginInstalledError, match="ctxmode@ctxmode"):
        setup("claude-code", project=project)
    assert settings.read_bytes() == before
    assert not (project / ".claude").exists() and not (project / ".mcp.json").exists()


def test_a_disabled_plugin_does_not_stop_setup(home, project):
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"enabledPlugins": {"ctxmode@ctxmode": False}}), "utf-8")
    setup("claude-code", project=project)
    assert (project / ".claude" / "settings.json").is_file()


def _hook(event: str, payload: dict, project: Path, **env: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "ctxmode", "hook", "claude-code", event],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env={**os.environ, "CLAUDE_PROJECT_DIR": str(project), **env},
        timeout=60,
        check=True,
    )
    return done.stdout


def _start(project: Path, n: int) -> dict:
    """A session start of a new session (the routing block goes once per session)."""
    return {
        "hook_event_name": "SessionStart",
        "session_id": f"0b0e9b2c-1d5e-4d8a-9b7f-3c2a1e0f9d8{n}",
        "source": "startup",
        "cwd": str(project),
    }


def test_plugin_hooks_step_aside_where_setup_registered_hooks(home, project):
    alone = _hook("sessionstart", _start(project, 1), project, CTXMODE_PLUGIN="claude-code")
    assert "mcp__plugin_ctxmode_ctxmode__" in alone  # the plugin's tool names
    setup("claude-code", project=project)
    beside = _hook("sessionstart", _start(project, 2), project, CTXMODE_PLUGIN="claude-code")
    assert beside == ""
    own = _hook("sessionstart", _start(project, 3), project)  # setup's own hook answers
    assert "mcp__ctxmode__" in own


def test_doctor_names_the_plugin_and_warns_when_setup_hooks_are_there_too(home, project):
    assert plugin_check("claude-code", project) is None
    _enable_plugin(home)
    alone = plugin_check("claude-code", project)
    assert alone is not None and alone.status == "OK" and "active" in alone.detail
    (project / ".claude").mkdir()
    hook = {"type": "command", "command": "ctxmode hook claude-code pretooluse"}
    (project / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}}), "utf-8"
    )
    both = plugin_check("claude-code", project)
    assert both is not None and both.status == "WARN"
    assert "registered twice" in both.detail and "ctxmode uninstall claude-code" in both.fix


def test_guidance_names_the_plugin_tools_only_under_the_plugin(monkeypatch):
    assert guidance.tool_name("claude-code", "ctx_search") == "mcp__ctxmode__ctx_search"
    monkeypatch.setenv("CTXMODE_PLUGIN", "claude-code")
    assert (
        guidance.tool_name("claude-code", "ctx_search") == "mcp__plugin_ctxmode_ctxmode__ctx_search"
    )
    assert guidance.tool_name("codex", "ctx_search") == "ctx_search"
