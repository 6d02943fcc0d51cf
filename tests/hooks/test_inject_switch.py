"""``CTXMODE_INJECT=off`` through real hook processes: events are still recorded and a
snapshot is still stored, but a session start adds nothing to the agent's context."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxmode.session import where
from ctxmode.session.db import SessionDB

SESSION = "6d1f0c3a-2b4e-4f7a-9c8d-1e2f3a4b5c6d"


def _hook(event: str, payload: dict[str, object], env: dict[str, str]) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "ctxmode", "hook", "claude-code", event],
        input=json.dumps({"session_id": SESSION, "hook_event_name": event, **payload}),
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "proj"
    folder.mkdir()
    return folder


@pytest.fixture
def hook_env(tmp_path: Path) -> dict[str, str]:
    """This test's data root (conftest's CTXMODE_DIR) and a home without agent files."""
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CTXMODE_INJECT"))}
    return {**env, "HOME": str(home)}


def _work_then_compact(project: Path, env: dict[str, str]) -> None:
    cwd = {"cwd": str(project)}
    _hook("UserPromptSubmit", {**cwd, "prompt": "fix the login redirect bug"}, env)
    bash = {"tool_name": "Bash", "tool_input": {"command": 'git commit -m "fix login"'}}
    _hook("PostToolUse", {**cwd, **bash, "tool_response": {"stdout": "1 file changed"}}, env)
    _hook("PreCompact", {**cwd, "trigger": "auto", "custom_instructions": ""}, env)
    with SessionDB(where.session_db_path(project)) as sdb:
        assert sdb.resume(SESSION) is not None, "PreCompact stored no snapshot"


@pytest.mark.parametrize("var", ["CTXMODE_INJECT", "CONTEXT_MODE_INJECT"])
def test_inject_off_makes_session_start_inject_nothing(project, hook_env, var):
    env = {**hook_env, var: "off"}
    start = _hook("SessionStart", {"cwd": str(project), "source": "startup"}, env)
    assert start == ""
    _work_then_compact(project, env)
    assert _hook("SessionStart", {"cwd": str(project), "source": "compact"}, env) == ""
    with SessionDB(where.session_db_path(project)) as sdb:
        assert any(e.type == "git" for e in sdb.events(SESSION))  # still recorded


def test_without_the_switch_the_same_calls_inject_the_routing_block_and_the_snapshot(
    project, hook_env
):
    start = _hook("SessionStart", {"cwd": str(project), "source": "startup"}, hook_env)
    assert "context_window_protection" in start
    _work_then_compact(project, hook_env)
    after = _hook("SessionStart", {"cwd": str(project), "source": "compact"}, hook_env)
    assert "<session_resume" in after and "login" in after
