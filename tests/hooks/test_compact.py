"""The pre-compact handler (ctxmode.hooks.compact): the resume snapshot is built and stored."""

import xml.etree.ElementTree as ET

import pytest
from session.support import PROJECT, bash, hook_event, open_db

from ctxmode import paths
from ctxmode.hookevent import RECORD
from ctxmode.hooks import capture, compact
from ctxmode.session.events import MAX_EVENTS_PER_SESSION, Event


@pytest.fixture(autouse=True)
def _env(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CTXMODE_INJECT", raising=False)
    monkeypatch.delenv("CTXMODE_SNAPSHOT_BYTES", raising=False)


def _work(session: str = "s1") -> None:
    capture.handle(hook_event("prompt_submit", prompt="修复用户注册的邮箱校验", session_id=session))
    capture.handle(
        hook_event(
            tool="Edit",
            session_id=session,
            tool_input={"file_path": f"{PROJECT}/src/users.py", "old_string": "x"},
        )
    )
    capture.handle(bash('git commit -m "validate email"', session_id=session))


def test_pre_compact_stores_the_snapshot_and_records_the_compaction():
    _work()
    assert compact.handle(hook_event("pre_compact")) == RECORD
    with open_db() as sdb:
        resume = sdb.resume("s1")
        meta = sdb.meta("s1")
        (built,) = sdb.events("s1", types=["snapshot_built"])
        (summary,) = sdb.events("s1", types=["compaction_summary"])
    assert resume is not None and not resume.consumed
    root = ET.fromstring(resume.snapshot)
    assert root.attrib["compact_count"] == "1"
    assert root.findtext("last_request") == "修复用户注册的邮箱校验"
    assert "src/users.py" in (root.findtext("files") or "")
    assert built.bytes_avoided == len(resume.snapshot.encode("utf-8")) > 0
    assert "1 files touched" in summary.data
    assert meta is not None and meta.compact_count == 1


def test_a_second_compaction_replaces_the_snapshot_and_counts_up():
    _work()
    compact.handle(hook_event("pre_compact"))
    capture.handle(bash("git push origin main"))
    compact.handle(hook_event("pre_compact"))
    with open_db() as sdb:
        resume = sdb.resume("s1")
    assert resume is not None
    root = ET.fromstring(resume.snapshot)
    assert root.attrib["compact_count"] == "2"
    assert "push" in (root.findtext("git") or "")


def test_a_session_without_events_stores_nothing():
    assert compact.handle(hook_event("pre_compact", session_id="empty")) == RECORD
    with open_db() as sdb:
        assert sdb.resume("empty") is None


def test_the_snapshot_respects_the_configured_budget(monkeypatch):
    monkeypatch.setenv("CTXMODE_SNAPSHOT_BYTES", "1024")
    with open_db() as sdb:
        for n in range(200):
            sdb.add_events(
                "s1",
                [Event("git", f"commit: change number {n}"), Event("file_edit", f"/p/f{n}.py")],
                source_hook="post_tool",
            )
    compact.handle(hook_event("pre_compact"))
    with open_db() as sdb:
        resume = sdb.resume("s1")
    assert resume is not None
    assert len(resume.snapshot.encode("utf-8")) <= 1024
    ET.fromstring(resume.snapshot)


def test_the_last_prompt_survives_a_full_session():
    capture.handle(hook_event("prompt_submit", prompt="把 README 翻译成中文"))
    with open_db() as sdb:
        edits = [Event("file_edit", f"/p/f{n}.py") for n in range(MAX_EVENTS_PER_SESSION + 50)]
        sdb.add_events("s1", edits, source_hook="post_tool")
    compact.handle(hook_event("pre_compact"))
    with open_db() as sdb:
        resume = sdb.resume("s1")
    assert resume is not None
    assert ET.fromstring(resume.snapshot).findtext("last_request") == "把 README 翻译成中文"


def test_only_the_compacting_sessions_events_are_in_its_snapshot():
    _work("s1")
    capture.handle(bash('git commit -m "other session secret plan"', session_id="s2"))
    compact.handle(hook_event("pre_compact"))
    with open_db() as sdb:
        resume = sdb.resume("s1")
    assert resume is not None and "secret plan" not in resume.snapshot


def test_opencode_gets_the_snapshot_back_as_compaction_context(monkeypatch):
    _work()
    decision = compact.handle(hook_event("pre_compact", platform="opencode"))
    assert decision.kind == "context"
    assert decision.context is not None and decision.context.startswith("<session_resume")
    monkeypatch.setenv("CTXMODE_INJECT", "off")
    assert compact.handle(hook_event("pre_compact", platform="opencode")) == RECORD


def test_the_events_are_indexed_for_the_snapshots_search_calls():
    _work()
    compact.handle(hook_event("pre_compact"))
    from ctxmode.store import ContentStore

    content = paths.ProjectPaths(paths.data_root(), PROJECT).content_db
    with ContentStore(content) as store:
        labels = [s.label for s in store.sources()]
        result = store.search("validate email", source="session-events")
    assert labels == ["session-events:s1"]
    assert result.hits and "validate email" in result.hits[0].snippet
