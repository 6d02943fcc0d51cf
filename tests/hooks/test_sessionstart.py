"""The session-start handler (ctxmode.hooks.sessionstart): the startup / compact / resume /
clear matrix, injection switches, and no leakage between sessions or projects."""

import sqlite3
import sys
import types
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from session.support import PROJECT, bash, hook_event, open_db, stored

from ctxmode.hookevent import RECORD, HookDecision
from ctxmode.hooks import capture, compact, entry, sessionstart
from ctxmode.session import where
from ctxmode.session.db import now_iso

ROUTING = "<context_window_protection>ctx_batch_execute ctx_search ctx_fetch_and_index"


@pytest.fixture(autouse=True)
def _env(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "CTXMODE_INJECT"):
        monkeypatch.delenv(var, raising=False)
    guidance = types.ModuleType("ctxmode.hooks.guidance")
    guidance.routing_block = lambda platform, *, subagent=False: f"{ROUTING} [{platform}]"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ctxmode.hooks.guidance", guidance)


def start(source: str | None, session: str = "s1", **fields) -> HookDecision:
    return sessionstart.handle(
        hook_event("session_start", source=source, session_id=session, **fields)
    )


def work(session: str = "s1", prompt: str = "修复邮箱校验", project: Path = PROJECT) -> None:
    capture.handle(
        hook_event("prompt_submit", prompt=prompt, session_id=session, project_dir=project)
    )
    capture.handle(bash(f'git commit -m "{session} work"', session_id=session, project_dir=project))


def snapshot_of(decision: HookDecision) -> ET.Element | None:
    text = decision.context or ""
    start_at = text.find("<session_resume")
    if start_at < 0:
        return None
    return ET.fromstring(
        text[start_at : text.index("</session_resume>") + len("</session_resume>")]
    )


# --------------------------------------------------------------------------- startup


def test_startup_injects_the_routing_block_and_records_the_session():
    decision = start("startup")
    assert decision.kind == "context"
    assert decision.context == f"{ROUTING} [claude-code]"
    assert ("session_start", "session startup (claude-code)") in stored()


def test_the_routing_block_is_injected_once_per_session():
    assert start("startup").kind == "context"
    assert start("startup") == RECORD
    assert start("startup", session="s2").kind == "context"


def test_startup_never_injects_another_sessions_snapshot():
    work("old")
    compact.handle(hook_event("pre_compact", session_id="old"))
    decision = start("startup", session="new")
    assert snapshot_of(decision) is None
    with open_db() as sdb:
        assert sdb.resume("old").consumed is False  # type: ignore[union-attr]


@pytest.mark.parametrize("source", [None, "", "new", "init", "weird"])
def test_a_missing_or_unknown_source_is_a_startup(source):
    start(source)
    assert ("session_start", "session startup (claude-code)") in stored()


def test_startup_records_the_instruction_files_as_rules(tmp_path):
    project = tmp_path / "proj"
    (project / ".claude").mkdir(parents=True)
    (project / "CLAUDE.md").write_text("# Project rules\nUse uv.\n", encoding="utf-8")
    (project / ".claude" / "CLAUDE.md").write_text("   \n", encoding="utf-8")  # empty: skipped
    config = Path.home() / ".claude"
    config.mkdir()
    (config / "CLAUDE.md").write_text("Be brief. TOKEN=abc123secret\n", encoding="utf-8")
    start("startup", project_dir=project)
    events = stored(project=project)
    assert ("rule", str(config / "CLAUDE.md")) in events
    assert ("rule_content", "Be brief. TOKEN=***\n") in events
    assert ("rule", str(project / "CLAUDE.md")) in events
    assert ("rule_content", "# Project rules\nUse uv.\n") in events
    assert ("rule", str(project / ".claude" / "CLAUDE.md")) not in events


def test_startup_cleans_up_idle_sessions_and_orphans():
    work("idle")
    capture.handle(bash("git commit -m orphan", session_id="pid-99"))
    with open_db() as sdb:
        sdb.connection.execute(
            "UPDATE session_meta SET started_at = ?, last_event_at = ? WHERE session_id = 'idle'",
            (now_iso(-30 * 86400), now_iso(-30 * 86400)),
        )
        sdb.connection.execute("DELETE FROM session_meta WHERE session_id = 'pid-99'")
    start("startup", session="fresh")
    assert stored("idle") == [] and stored("pid-99") == []


# --------------------------------------------------------------------------- compact


def test_compact_injects_the_routing_block_and_the_stored_snapshot():
    work()
    compact.handle(hook_event("pre_compact"))
    with open_db() as sdb:
        stored_snapshot = sdb.resume("s1").snapshot  # type: ignore[union-attr]
    decision = start("compact")
    assert decision.context is not None
    assert decision.context.startswith(ROUTING)
    assert decision.context.endswith(stored_snapshot)
    root = snapshot_of(decision)
    assert root is not None and root.findtext("last_request") == "修复邮箱校验"
    with open_db() as sdb:
        assert sdb.resume("s1").consumed is True  # type: ignore[union-attr]
        (consumed,) = sdb.events("s1", types=["snapshot_consumed"])
    assert consumed.bytes_returned == len(stored_snapshot.encode("utf-8"))


def test_compact_without_a_stored_snapshot_builds_one_from_the_sessions_events():
    work()
    root = snapshot_of(start("compact"))
    assert root is not None and "s1 work" in (root.findtext("git") or "")


def test_compact_never_uses_another_sessions_snapshot():
    work("other")
    compact.handle(hook_event("pre_compact", session_id="other"))
    decision = start("compact", session="s1")
    assert snapshot_of(decision) is None
    assert decision.context == f"{ROUTING} [claude-code]"


def test_the_injected_context_stays_under_claude_codes_spill_limit():
    for n in range(300):
        work("s1", prompt=f"step {n}: " + "详细说明" * 50)
    compact.handle(hook_event("pre_compact"))
    decision = start("compact")
    assert decision.context is not None and len(decision.context) < 10_000


# --------------------------------------------------------------------------- resume (55)


def test_resume_uses_only_the_incoming_sessions_events_never_a_newer_sessions():
    work("mine", prompt="my own task")
    work("newer", prompt="someone else's task")
    compact.handle(hook_event("pre_compact", session_id="newer"))
    root = snapshot_of(start("resume", session="mine"))
    assert root is not None
    assert root.findtext("last_request") == "my own task"
    assert "someone else" not in ET.tostring(root, encoding="unicode")
    with open_db() as sdb:
        assert sdb.resume("newer").consumed is False  # type: ignore[union-attr]


def test_resume_without_own_events_claims_the_latest_unconsumed_snapshot_once():
    work("prior", prompt="the prior task")
    compact.handle(hook_event("pre_compact", session_id="prior"))
    first = snapshot_of(start("resume", session="fresh-1"))
    second = snapshot_of(start("resume", session="fresh-2"))
    assert first is not None and first.findtext("last_request") == "the prior task"
    assert second is None
    assert any("from session prior" in d for t, d in stored("fresh-1") if t == "snapshot_consumed")


def test_a_session_with_only_its_startup_records_still_claims_a_prior_snapshot(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "CLAUDE.md").write_text("Use uv.", encoding="utf-8")
    work("prior", prompt="the prior task", project=project)
    compact.handle(hook_event("pre_compact", session_id="prior", project_dir=project))
    start("startup", session="fresh", project_dir=project)  # records CLAUDE.md as a rule
    root = snapshot_of(start("resume", session="fresh", project_dir=project))
    assert root is not None and root.findtext("last_request") == "the prior task"


def test_live_events_win_over_a_stored_snapshot():
    work("s1", prompt="old state")
    compact.handle(hook_event("pre_compact"))
    work("s1", prompt="newer state after the snapshot")
    root = snapshot_of(start("resume"))
    assert root is not None and root.findtext("last_request") == "newer state after the snapshot"
    with open_db() as sdb:
        assert sdb.resume("s1").consumed is True  # type: ignore[union-attr]


def test_claude_fork_is_a_resume():
    work("s1")
    assert snapshot_of(start("fork")) is not None


def test_resume_with_nothing_to_resume_injects_the_routing_block_only():
    assert start("resume").context == f"{ROUTING} [claude-code]"


# --------------------------------------------------------------------------- clear


def test_clear_injects_the_routing_block_only_and_starts_clean():
    work("s1", prompt="before the clear")
    compact.handle(hook_event("pre_compact"))
    work("prior", prompt="another session")
    compact.handle(hook_event("pre_compact", session_id="prior"))
    decision = start("clear")
    assert decision.context == f"{ROUTING} [claude-code]"
    assert [t for t, _ in stored()] == ["session_start"]
    work("s1", prompt="after the clear")
    compact.handle(hook_event("pre_compact"))
    root = snapshot_of(start("compact"))
    assert root is not None
    assert "before the clear" not in ET.tostring(root, encoding="unicode")
    with open_db() as sdb:
        assert sdb.resume("prior").consumed is False  # type: ignore[union-attr]


# --------------------------------------------------------------------------- switches


def test_injection_off_records_everything_and_injects_nothing(monkeypatch):
    monkeypatch.setenv("CTXMODE_INJECT", "off")
    work()
    compact.handle(hook_event("pre_compact"))
    assert start("compact") == RECORD
    assert start("startup", session="s2") == RECORD
    with open_db() as sdb:
        assert sdb.resume("s1").consumed is False  # type: ignore[union-attr]
    assert any(t == "session_start" for t, _ in stored("s2"))


def test_without_the_guidance_module_the_snapshot_still_gets_through(monkeypatch):
    monkeypatch.setitem(sys.modules, "ctxmode.hooks.guidance", None)  # import fails
    work()
    assert start("startup", session="s2") == RECORD
    decision = start("compact")
    assert decision.context is not None and decision.context.startswith("<session_resume")


def test_a_locked_database_still_gets_the_routing_block_injected(monkeypatch):
    monkeypatch.setattr(sessionstart, "HOOK_BUSY_TIMEOUT_MS", 50)
    with open_db():
        pass
    holder = sqlite3.connect(where.session_db_path(PROJECT), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        decision = start("startup")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert decision.context == f"{ROUTING} [claude-code]"


# --------------------------------------------------------------------------- isolation


def test_sessions_of_two_projects_never_leak_into_each_other():
    other = Path("/home/dev/projects/other")
    work("s1", prompt="project A task")
    work("s1", prompt="project B task", project=other)
    compact.handle(hook_event("pre_compact", project_dir=other))
    root = snapshot_of(start("compact", project_dir=PROJECT))
    assert root is not None
    assert root.findtext("last_request") == "project A task"
    claimed = snapshot_of(start("resume", session="fresh", project_dir=PROJECT))
    assert claimed is not None  # project A's own conversation goes on...
    assert "project B task" not in ET.tostring(claimed, encoding="unicode")  # ...never B's


def test_the_dispatcher_answers_a_claude_session_start_with_additional_context():
    output = entry.handle(
        "claude-code",
        "sessionstart",
        {"session_id": "s1", "cwd": str(PROJECT), "source": "startup"},
    )
    assert ROUTING in output.stdout
    assert '"hookEventName":"SessionStart"' in output.stdout.replace(" ", "")


def test_a_host_that_rebuilds_its_system_prompt_gets_the_routing_block_at_every_start():
    # OpenCode's shim splices it into a system prompt OpenCode never stores: a session
    # continued by a new process (`opencode run --continue`) would otherwise lose it.
    assert start("startup", platform="opencode").kind == "context"
    assert start("startup", platform="opencode").context == f"{ROUTING} [opencode]"


def test_a_host_that_drops_the_answer_still_gets_the_routing_block_with_its_first_prompt():
    # Qwen Code drops SessionStart answers: the answer carries the routing block (for a
    # version that reads it) but claims nothing, so the first prompt brings it as well.
    answered = start("startup", platform="qwen-code")
    assert answered.kind == "context"
    assert answered.context == f"{ROUTING} [qwen-code]"
    assert ("session_start", "session startup (qwen-code)") in stored()
    prompt = hook_event("prompt_submit", prompt="fix it", platform="qwen-code")
    assert capture.handle(prompt).context == f"{ROUTING} [qwen-code]"
