"""Continuity through the hooks: a conversation resumed under a new session id gets its own
snapshot and never another's, a passing check marks its failure fixed, and a compaction of
a resumed conversation keeps what came before the resume."""

import json
import sys
import types
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from session.support import bash, hook_event, open_db, stored

from ctxmode.hookevent import HookDecision
from ctxmode.hooks import capture, compact, sessionstart
from ctxmode.session.events import CRITICAL


@pytest.fixture(autouse=True)
def _env(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "CTXMODE_INJECT"):
        monkeypatch.delenv(var, raising=False)
    guidance = types.ModuleType("ctxmode.hooks.guidance")
    guidance.routing_block = lambda platform, *, subagent=False: "<routing/>"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ctxmode.hooks.guidance", guidance)


def prompt(text: str, session: str, **fields) -> None:
    capture.handle(hook_event("prompt_submit", prompt=text, session_id=session, **fields))


def resume(session: str, transcript: Path | None = None, **fields) -> str:
    decision: HookDecision = sessionstart.handle(
        hook_event(
            "session_start",
            source="resume",
            session_id=session,
            transcript_path=str(transcript) if transcript else None,
            **fields,
        )
    )
    return decision.context or ""


def claude_transcript(folder: Path, name: str, *session_ids: str) -> Path:
    """A Claude Code transcript file whose lines carry these sessions' ids."""
    path = folder / f"{name}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        json.dumps({"type": "user", "sessionId": sid, "message": {"content": "…"}})
        for sid in session_ids
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


A = "aaaaaaaa-1111-4111-8111-111111111111"
B = "bbbbbbbb-2222-4222-8222-222222222222"
NEW = "cccccccc-3333-4333-8333-333333333333"


# --------------------------------------------------------------------------- resume


def test_a_resume_under_a_new_id_is_recognised_by_its_transcript_lines(tmp_path):
    prompt("不要改数据库迁移，只改服务层", A)
    prompt("Fix the flaky client test.", B)  # newer, another conversation
    transcript = claude_transcript(tmp_path, NEW, A)  # the resumed copy of A's lines
    context = resume(NEW, transcript)
    assert "不要改数据库迁移，只改服务层" in context
    assert "flaky client test" not in context
    assert ("resumed_from", A) in stored(NEW)


def test_a_gemini_resume_is_recognised_by_the_chat_file_name(tmp_path):
    prompt("Return 503 listing the failed checks.", A, platform="gemini-cli")
    chat = tmp_path / f"session-2026-05-14T09-18-{A[:8]}.json"  # not written yet
    context = resume(NEW, chat, platform="gemini-cli")
    assert "Return 503 listing the failed checks." in context


def test_without_a_transcript_the_latest_unfinished_session_of_the_host_goes_on():
    prompt("Invoices are immutable once issued.", A)
    prompt("A Gemini conversation in the same project.", B, platform="gemini-cli")
    context = resume(NEW)
    assert "Invoices are immutable once issued." in context
    assert "Gemini conversation" not in context


def test_a_transcript_of_a_conversation_never_recorded_gets_nothing(tmp_path):
    prompt("Invoices are immutable once issued.", A)
    transcript = claude_transcript(tmp_path, NEW, "dddddddd-4444-4444-8444-444444444444")
    assert "Invoices" not in resume(NEW, transcript)


def test_two_resumes_never_continue_the_same_session():
    prompt("Only one window may continue this.", A)
    assert "Only one window" in resume(NEW)
    assert "Only one window" not in resume("eeeeeeee-5555-4555-8555-555555555555")


def test_a_fresh_start_or_a_clear_never_gets_another_conversations_data(tmp_path):
    prompt("Secret plan: migrate invoices to cents.", A)
    compact.handle(hook_event("pre_compact", session_id=A))
    for source in ("startup", "clear"):
        decision = sessionstart.handle(hook_event("session_start", source=source, session_id=NEW))
        assert "migrate invoices" not in (decision.context or "")


def test_a_resumed_conversation_compacts_with_what_came_before_the_resume(tmp_path):
    prompt("Keep the public API of acme.client unchanged.", A)
    resume(NEW, claude_transcript(tmp_path, NEW, A))
    prompt("Now add retries.", NEW)
    compact.handle(hook_event("pre_compact", session_id=NEW))
    decision = sessionstart.handle(hook_event("session_start", source="compact", session_id=NEW))
    text = decision.context or ""
    root = ET.fromstring(text[text.index("<session_resume") :])
    assert "Keep the public API of acme.client unchanged." in (root.findtext("decisions") or "")
    assert root.findtext("last_request") == "Now add retries."


# --------------------------------------------------------------------------- failed, then fixed


def _fail(command: str, session: str = "s1") -> None:
    capture.handle(
        hook_event(
            "post_tool_failure",
            tool="Bash",
            tool_input={"command": command},
            error="Exit code 1\nFAILED tests/test_users.py::test_x - assert 1 == 2",
            session_id=session,
        )
    )


def test_the_same_check_passing_later_marks_its_failure_fixed():
    _fail("pytest tests/test_users.py -q")
    _fail("mypy src")
    capture.handle(bash("pytest -q", {"stdout": "5 passed", "stderr": ""}))
    events = stored()
    assert ("error_fixed", "$ pytest tests/test_users.py -q\npassed: $ pytest -q") in events
    assert not any(t == "error_fixed" and "mypy" in d for t, d in events)
    with open_db() as sdb:
        still = [head for _, head in sdb.open_failures("s1")]
        (failure,) = sdb.events("s1", types=["error_tool"])[:1]
    assert still == ["$ mypy src"]
    assert failure.priority > CRITICAL  # fixed: no longer kept over routine events


def test_a_session_that_never_failed_does_not_look_for_fixes(monkeypatch):
    looked = []
    monkeypatch.setattr(
        capture,
        "_fixed",
        lambda *a: looked.append(a) or [],  # type: ignore[func-returns-value]
    )
    capture.handle(bash("pytest -q", {"stdout": "5 passed", "stderr": ""}))
    assert looked == []


def test_a_fix_after_a_resume_resolves_the_failure_of_the_earlier_session(tmp_path):
    _fail("pytest tests/test_users.py -q", session=A)
    resume(NEW, claude_transcript(tmp_path, NEW, A))
    capture.handle(bash("pytest tests/test_users.py -q", {"stdout": "ok"}, session_id=NEW))
    assert any(t == "error_fixed" for t, _ in stored(NEW))
    with open_db() as sdb:
        assert sdb.open_failures(A) == []
