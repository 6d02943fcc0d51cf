"""The capture handler (ctxmode.hooks.capture): post_tool, post_tool_failure,
prompt_submit and stop become session events."""

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from session.support import PROJECT, bash, hook_event, open_db, stored

from ctxmode.errors import StoreError
from ctxmode.hookevent import RECORD
from ctxmode.hooks import capture, entry
from ctxmode.session import markers, where
from ctxmode.session.db import SessionDB


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "CTXMODE_INJECT"):
        monkeypatch.delenv(var, raising=False)


def test_a_tool_call_is_recorded_under_its_session_with_no_output():
    event = hook_event(tool="Edit", tool_input={"file_path": "/p/a.py", "old_string": "x"})
    assert capture.handle(event) == RECORD
    assert stored() == [("file_edit", "/p/a.py")]
    with open_db() as sdb:
        meta = sdb.meta("s1")
    assert meta is not None
    assert (meta.project_dir, meta.platform) == (str(PROJECT), "claude-code")


def test_a_failed_call_is_recorded_as_an_error():
    event = hook_event(
        "post_tool_failure",
        tool="Bash",
        tool_input={"command": "pytest -q"},
        error="Exit code 1\nFAILED tests/test_users.py::test_rejects_bad_email",
    )
    capture.handle(event)
    assert any(t == "error_tool" and "test_rejects_bad_email" in d for t, d in stored())


@pytest.mark.parametrize(
    "prompt",
    ["修复登录页面的错误，保持接口不变", "ログインのバグを直して", "Refactor auth; keep the API"],
)
def test_a_prompt_is_recorded_verbatim_in_any_language(prompt):
    assert capture.handle(hook_event("prompt_submit", prompt=prompt)) == RECORD
    assert ("user_prompt", prompt) in stored()


def test_system_prompts_record_nothing_and_touch_no_database():
    capture.handle(hook_event("prompt_submit", prompt="<system-reminder>x</system-reminder>"))
    assert not where.session_db_path(PROJECT).exists()


def test_stop_records_the_end_of_the_turn():
    capture.handle(hook_event("stop", raw={"status": "completed"}))
    assert stored() == [("turn_end", "turn ended (completed)")]


def test_missing_fields_are_tolerated():
    for event in ("post_tool", "post_tool_failure", "prompt_submit", "stop"):
        capture.handle(hook_event(event, project_dir=None, cwd=None, session_id=""))


def test_a_host_without_session_ids_gets_one_per_agent_process():
    capture.handle(bash("git commit -m wip", session_id=""))
    assert stored(f"pid-{os.getppid()}") == [("git", "commit: wip")]


def test_the_same_session_id_in_two_projects_never_mixes():
    other = Path("/home/dev/projects/other")
    capture.handle(bash("git commit -m here"))
    capture.handle(bash("git commit -m there", project_dir=other))
    assert stored() == [("git", "commit: here")]
    assert stored(project=other) == [("git", "commit: there")]


def test_markers_left_by_pre_tool_are_recorded_with_the_next_post_tool():
    markers.write_redirect("s1", "Bash", "bash_redirected", 8192, "curl https://x.dev")
    capture.handle(bash("ls"))
    with open_db() as sdb:
        (event,) = sdb.events("s1", types=["bash_redirected"])
    assert event.bytes_avoided == 8192


def test_secrets_never_reach_the_database():
    capture.handle(bash("export OPENAI_API_KEY=sk-live-verysecretvalue123456 && npm ci"))
    capture.handle(hook_event("prompt_submit", prompt="my password: hunter2, go"))
    raw = Path(where.session_db_path(PROJECT)).read_bytes()
    assert b"verysecretvalue" not in raw and b"hunter2" not in raw


def test_hosts_without_a_compact_session_start_get_the_snapshot_with_the_next_tool_result():
    with open_db() as sdb:
        sdb.upsert_resume("s1", "<session_resume/>", 3)
    event = bash("ls", platform="vscode-copilot")
    decision = capture.handle(event)
    assert (decision.kind, decision.context) == ("context", "<session_resume/>")
    assert capture.handle(event) == RECORD  # injected once
    with open_db() as sdb:
        (consumed,) = sdb.events("s1", types=["snapshot_consumed"])
    assert consumed.bytes_returned == len("<session_resume/>")


def test_claude_code_takes_the_snapshot_at_session_start_not_with_tool_results():
    with open_db() as sdb:
        sdb.upsert_resume("s1", "<session_resume/>", 3)
    assert capture.handle(bash("ls")) == RECORD
    with open_db() as sdb:
        assert sdb.resume("s1").consumed is False  # type: ignore[union-attr]


def test_injection_off_still_records_but_never_injects(monkeypatch):
    monkeypatch.setenv("CTXMODE_INJECT", "off")
    with open_db() as sdb:
        sdb.upsert_resume("s1", "<session_resume/>", 3)
    assert capture.handle(bash("git commit -m x", platform="vscode-copilot")) == RECORD
    assert stored() == [("git", "commit: x")]


def test_a_locked_database_makes_the_hook_give_up_instead_of_hanging(monkeypatch):
    monkeypatch.setattr(capture, "HOOK_BUSY_TIMEOUT_MS", 50)
    with open_db():
        pass
    holder = sqlite3.connect(where.session_db_path(PROJECT), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(StoreError, match="busy"):
            capture.handle(bash("git commit -m x"))
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_a_locked_database_fails_open_in_the_real_hook_process():
    """The whole process: blocked for the short hook timeout at most, then exit 0, no output."""
    with open_db():
        pass
    holder = SessionDB(where.session_db_path(PROJECT))
    holder.connection.execute("BEGIN IMMEDIATE")
    try:
        payload = {
            "session_id": "s1",
            "cwd": str(PROJECT),
            "tool_name": "Bash",
            "tool_input": {"command": "git commit -m locked"},
            "tool_response": {"stdout": "ok"},
        }
        proc = subprocess.run(
            [sys.executable, "-m", "ctxmode", "hook", "claude-code", "posttooluse"],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=60,
        )
    finally:
        holder.connection.execute("ROLLBACK")
        holder.close()
    assert proc.returncode == 0
    assert proc.stdout.strip() in ("", "{}")
    log = where.sessions_dir().parent / "logs" / "hooks.log"
    assert "busy" in log.read_text(encoding="utf-8")


def test_the_dispatcher_routes_a_claude_post_tool_payload_here():
    payload = {
        "session_id": "4f1c2b9e-8a7d-4e3b-9c61-2d5e7f0a1b3c",
        "cwd": str(PROJECT),
        "hook_event_name": "PostToolUse",
        "tool_name": "Edit",
        "tool_input": {"file_path": f"{PROJECT}/src/users.py", "old_string": "a"},
        "tool_response": {"filePath": f"{PROJECT}/src/users.py"},
    }
    entry.handle("claude-code", "posttooluse", payload)
    assert stored("4f1c2b9e-8a7d-4e3b-9c61-2d5e7f0a1b3c") == [
        ("file_edit", f"{PROJECT}/src/users.py")
    ]


def test_a_host_that_drops_session_start_answers_gets_the_routing_block_with_the_first_prompt():
    def prompt(session: str) -> object:
        return capture.handle(
            hook_event("prompt_submit", prompt="fix it", platform="qwen-code", session_id=session)
        )

    first = prompt("s1")
    assert first.kind == "context" and "<context_window_protection>" in (first.context or "")
    assert prompt("s1") == RECORD  # once per session
    assert prompt("s2").kind == "context"
    claude = hook_event("prompt_submit", prompt="fix it", session_id="s3")
    assert capture.handle(claude) == RECORD  # Claude Code's session start brings it


def test_the_first_prompt_brings_no_routing_block_with_injection_off(monkeypatch):
    monkeypatch.setenv("CTXMODE_INJECT", "off")
    event = hook_event("prompt_submit", prompt="fix it", platform="qwen-code")
    assert capture.handle(event) == RECORD
