"""The session database (ctxmode.session.db): dedupe, the cap and its eviction order, resume
snapshots and their claim, cleanup, corruption, counters, locking."""

import sqlite3

import pytest

from ctxmode.errors import StoreError
from ctxmode.session.db import SessionDB, now_iso
from ctxmode.session.events import MAX_EVENTS_PER_SESSION, Event
from ctxmode.stats.model import Usage


@pytest.fixture
def sdb(tmp_path):
    with SessionDB(tmp_path / "s.db") as db:
        yield db


def _add(sdb: SessionDB, session: str, *events: Event) -> int:
    return sdb.add_events(session, events, source_hook="test")


def _data(sdb: SessionDB, session: str = "s1") -> list[str]:
    return [e.data for e in sdb.events(session)]


# --------------------------------------------------------------------------- dedupe (49)


def test_same_type_and_data_within_the_last_five_events_is_stored_once(sdb):
    assert _add(sdb, "s1", Event("file_read", "a.py")) == 1
    assert _add(sdb, "s1", Event("file_read", "a.py")) == 0
    assert _data(sdb) == ["a.py"]


def test_the_same_event_is_stored_again_after_five_other_events(sdb):
    _add(sdb, "s1", Event("file_read", "a.py"))
    for n in range(5):
        _add(sdb, "s1", Event("file_read", f"other{n}.py"))
    assert _add(sdb, "s1", Event("file_read", "a.py")) == 1
    assert _data(sdb).count("a.py") == 2


def test_same_data_under_another_type_is_not_a_duplicate(sdb):
    _add(sdb, "s1", Event("file_read", "a.py"), Event("file_edit", "a.py"))
    assert _data(sdb) == ["a.py", "a.py"]


def test_duplicates_inside_one_batch_are_skipped(sdb):
    assert _add(sdb, "s1", Event("git", "commit"), Event("git", "commit")) == 1


def test_dedupe_is_per_session(sdb):
    _add(sdb, "s1", Event("file_read", "a.py"))
    assert _add(sdb, "s2", Event("file_read", "a.py")) == 1


# --------------------------------------------------------------------------- cap (50)


def test_a_session_holds_at_most_the_cap_evicting_the_least_important_first(sdb):
    low = [Event("intent", f"intent {n}") for n in range(10)]
    critical = [Event("file_edit", f"f{n}.py") for n in range(MAX_EVENTS_PER_SESSION - 10)]
    _add(sdb, "s1", *low[:5], *critical, *low[5:])
    assert sdb.event_count("s1") == MAX_EVENTS_PER_SESSION

    _add(sdb, "s1", Event("file_edit", "new.py"))

    events = sdb.events("s1")
    assert len(events) == MAX_EVENTS_PER_SESSION
    assert "intent 0" not in [e.data for e in events]  # least important, oldest: gone
    assert "intent 1" in [e.data for e in events]
    assert events[-1].data == "new.py"
    assert all(e.data != "intent 0" for e in events)


def test_eviction_takes_the_oldest_among_equally_unimportant_events(sdb):
    _add(sdb, "s1", *[Event("file_edit", f"f{n}.py") for n in range(MAX_EVENTS_PER_SESSION)])
    _add(sdb, "s1", Event("file_edit", "last.py"))
    data = _data(sdb)
    assert "f0.py" not in data
    assert data[0] == "f1.py"
    assert data[-1] == "last.py"


def test_a_new_unimportant_event_does_not_displace_important_ones(sdb):
    _add(sdb, "s1", *[Event("file_edit", f"f{n}.py") for n in range(MAX_EVENTS_PER_SESSION)])
    _add(sdb, "s1", Event("tool_latency", "Bash: 6000ms"))
    data = _data(sdb)
    assert len(data) == MAX_EVENTS_PER_SESSION
    assert "f0.py" in data
    assert "Bash: 6000ms" not in data


def test_the_latest_prompt_is_never_evicted(sdb):
    _add(sdb, "s1", Event("user_prompt", "an old prompt"))
    _add(sdb, "s1", Event("user_prompt", "最后的请求：修复登录页面"))
    _add(sdb, "s1", *[Event("task", f"t{n}") for n in range(MAX_EVENTS_PER_SESSION)])
    data = _data(sdb)
    assert "最后的请求：修复登录页面" in data
    assert "an old prompt" not in data  # prompts are important, but not immortal


def test_the_cap_applies_per_session(sdb):
    _add(sdb, "s1", *[Event("file_edit", f"f{n}.py") for n in range(MAX_EVENTS_PER_SESSION)])
    _add(sdb, "s2", Event("file_edit", "other.py"))
    assert sdb.event_count("s1") == MAX_EVENTS_PER_SESSION
    assert sdb.event_count("s2") == 1


# --------------------------------------------------------------------------- sessions


def test_adding_events_creates_the_session_and_counts_them(sdb):
    _add(sdb, "s1", Event("file_read", "a.py"), Event("file_read", "b.py"))
    meta = sdb.meta("s1")
    assert meta is not None
    assert meta.event_count == 2
    assert meta.last_event_at is not None


def test_events_of_one_session_never_come_back_for_another(sdb):
    _add(sdb, "s1", Event("file_edit", "secret-plan.py"))
    _add(sdb, "s2", Event("file_edit", "mine.py"))
    assert _data(sdb, "s2") == ["mine.py"]
    assert _data(sdb, "nobody") == []


def test_events_of_a_type_and_the_newest_n(sdb):
    _add(sdb, "s1", *[Event("file_read", f"r{n}") for n in range(5)], Event("git", "commit"))
    assert [e.data for e in sdb.events("s1", types=["git"])] == ["commit"]
    assert [e.data for e in sdb.events("s1", limit=2)] == ["r4", "commit"]


def test_event_data_over_the_limit_keeps_head_and_tail(sdb):
    text = "HEAD" + "x" * 200_000 + "TAIL"
    _add(sdb, "s1", Event("error_tool", text))
    (stored,) = sdb.events("s1")
    assert stored.data.startswith("HEAD") and stored.data.endswith("TAIL")
    assert len(stored.data) <= 65_536


def test_negative_byte_counts_are_stored_as_zero(sdb):
    _add(sdb, "s1", Event("read_redirected", "Read: x", bytes_avoided=-5, bytes_returned=7))
    (stored,) = sdb.events("s1")
    assert (stored.bytes_avoided, stored.bytes_returned) == (0, 7)


def test_routing_is_claimed_once_per_session_unless_a_new_window_asks_again(sdb):
    assert sdb.claim_routing("s1") is True
    assert sdb.claim_routing("s1") is False
    assert sdb.claim_routing("s1", again=True) is True
    assert sdb.claim_routing("s2") is True


def test_search_events_matches_data_or_category_case_insensitively(sdb):
    _add(sdb, "s1", Event("file_edit", "src/Users.py"), Event("git", "commit: 100% done_x"))
    assert [e.data for e in sdb.search_events("users")] == ["src/Users.py"]
    assert [e.data for e in sdb.search_events("100%")] == ["commit: 100% done_x"]
    assert sdb.search_events("0_d") == []  # _ is literal, not a wildcard
    assert [e.type for e in sdb.search_events("git", category="git")] == ["git"]


# --------------------------------------------------------------------------- resume (51)


def test_upsert_resume_overwrites_the_snapshot_and_resets_consumed(sdb):
    sdb.upsert_resume("s1", "<one/>", 3)
    assert sdb.mark_resume_consumed("s1") is True
    sdb.upsert_resume("s1", "<two/>", 5)
    resume = sdb.resume("s1")
    assert resume is not None
    assert (resume.snapshot, resume.event_count, resume.consumed) == ("<two/>", 5, False)


def test_claim_takes_the_newest_unconsumed_snapshot_of_another_session(sdb):
    sdb.upsert_resume("old", "<old/>", 1)
    sdb.upsert_resume("new", "<new/>", 1)
    sdb.connection.execute(
        "UPDATE session_resume SET created_at = ? WHERE session_id = 'old'", (now_iso(-60),)
    )
    claimed = sdb.claim_latest_resume("me")
    assert claimed is not None and claimed.snapshot == "<new/>"
    assert sdb.resume("new").consumed is True  # type: ignore[union-attr]
    again = sdb.claim_latest_resume("me")
    assert again is not None and again.snapshot == "<old/>"
    assert sdb.claim_latest_resume("me") is None


def test_a_session_never_claims_its_own_snapshot(sdb):
    sdb.upsert_resume("me", "<mine/>", 1)
    assert sdb.claim_latest_resume("me") is None
    assert sdb.resume("me").consumed is False  # type: ignore[union-attr]


def test_claim_ignores_snapshots_older_than_the_retention(sdb):
    sdb.upsert_resume("ancient", "<x/>", 1)
    sdb.connection.execute("UPDATE session_resume SET created_at = ?", (now_iso(-8 * 86400),))
    assert sdb.claim_latest_resume("me") is None


def test_two_claimers_never_get_the_same_snapshot(tmp_path):
    path = tmp_path / "s.db"
    with SessionDB(path) as setup:
        setup.upsert_resume("prior", "<only/>", 1)
    with SessionDB(path) as one, SessionDB(path) as two:
        results = [one.claim_latest_resume("a"), two.claim_latest_resume("b")]
    assert sum(r is not None for r in results) == 1


def test_take_resume_returns_the_own_unconsumed_snapshot_once(sdb):
    sdb.upsert_resume("s1", "<mine/>", 1)
    taken = sdb.take_resume("s1")
    assert taken is not None and taken.snapshot == "<mine/>"
    assert sdb.take_resume("s1") is None


# --------------------------------------------------------------------------- cleanup (52, 54)


def test_delete_session_removes_only_that_session(sdb):
    _add(sdb, "s1", Event("file_edit", "a.py"))
    _add(sdb, "s2", Event("file_edit", "b.py"))
    sdb.upsert_resume("s1", "<x/>", 1)
    sdb.upsert_resume("s2", "<y/>", 1)
    sdb.add_usage("s1", "ctx_search", Usage(calls=1, returned=10))
    assert sdb.delete_session("s1") == 1
    assert sdb.meta("s1") is None and sdb.resume("s1") is None and sdb.usage("s1") == {}
    assert _data(sdb, "s2") == ["b.py"] and sdb.resume("s2") is not None


def test_deleting_a_session_keeps_its_counters_in_the_project_totals(sdb):
    sdb.add_usage("s1", "ctx_execute", Usage(calls=2, returned=100, sandboxed=9000))
    sdb.add_usage("s2", "ctx_execute", Usage(calls=1, returned=10, sandboxed=90))
    before = sdb.usage()
    sdb.delete_session("s1")
    assert sdb.usage("s1") == {}
    assert sdb.usage() == before == {"ctx_execute": Usage(3, 110, 9090)}
    sdb.add_usage("s3", "ctx_execute", Usage(calls=1, returned=1))
    sdb.delete_session("s3")  # a second fold adds to the first
    assert sdb.usage()["ctx_execute"] == Usage(4, 111, 9090)


def test_cleanup_removes_sessions_idle_for_more_than_seven_days(sdb):
    for sid in ("idle", "recent", "long-running"):
        _add(sdb, sid, Event("file_edit", f"{sid}.py"))
    con = sdb.connection
    con.execute(
        "UPDATE session_meta SET started_at = ?, last_event_at = ? WHERE session_id = 'idle'",
        (now_iso(-9 * 86400), now_iso(-8 * 86400)),
    )
    con.execute(
        "UPDATE session_meta SET started_at = ? WHERE session_id = 'long-running'",
        (now_iso(-30 * 86400),),
    )
    assert sdb.cleanup_old_sessions(7) == ["idle"]
    assert sdb.meta("idle") is None and _data(sdb, "idle") == []
    assert sdb.meta("recent") is not None
    assert sdb.meta("long-running") is not None  # started long ago, but still active


def test_orphan_cleanup_keeps_recent_uuid_sessions_and_drops_pid_and_old_ones(sdb):
    uuid = "4f1c2b9e-8a7d-4e3b-9c61-2d5e7f0a1b3c"
    old_uuid = "9a0e7d3c-5b14-4c8f-a2e6-7f1d3b5c9e08"
    for sid in (uuid, old_uuid, "pid-4242"):
        _add(sdb, sid, Event("file_edit", f"{sid}.py"))
    con = sdb.connection
    con.execute("DELETE FROM session_meta")  # orphans: events without a meta row
    con.execute(
        "UPDATE session_events SET created_at = ? WHERE session_id = ?",
        (now_iso(-8 * 86400), old_uuid),
    )
    assert sdb.delete_orphans() == 2
    assert [e.session_id for e in sdb.events(uuid)] == [uuid]
    assert sdb.events(old_uuid) == [] and sdb.events("pid-4242") == []


def test_sessions_are_listed_most_recently_active_first(sdb):
    _add(sdb, "first", Event("file_edit", "a.py"))
    _add(sdb, "second", Event("file_edit", "b.py"))
    sdb.connection.execute(
        "UPDATE session_meta SET last_event_at = ? WHERE session_id = 'first'", (now_iso(60),)
    )
    assert [m.session_id for m in sdb.sessions()] == ["first", "second"]
    assert sdb.latest_session_id() == "first"


# --------------------------------------------------------------------------- files (53)


def test_a_corrupt_database_is_set_aside_and_a_fresh_one_started(tmp_path):
    path = tmp_path / "s.db"
    path.write_bytes(b"this is not a database at all" * 100)
    with SessionDB(path) as sdb:
        assert sdb.recovered_from is not None
        assert sdb.recovered_from.name.startswith("s.db.corrupt-")
        assert sdb.recovered_from.read_bytes().startswith(b"this is not")
        assert sdb.add_event("s1", Event("file_edit", "a.py"), source_hook="test")


def test_events_persist_across_reopening(tmp_path):
    path = tmp_path / "s.db"
    with SessionDB(path) as sdb:
        _add(sdb, "s1", Event("file_edit", "a.py"))
    with SessionDB(path) as sdb:
        assert _data(sdb) == ["a.py"]


def test_a_database_from_a_newer_ctxmode_is_refused(tmp_path):
    path = tmp_path / "s.db"
    with SessionDB(path):
        pass
    con = sqlite3.connect(path)
    con.execute("PRAGMA user_version = 99")
    con.close()
    with pytest.raises(StoreError, match="newer"):
        SessionDB(path)


# --------------------------------------------------------------------------- counters (61)


def test_tool_call_counters_persist_across_instances(tmp_path):
    path = tmp_path / "s.db"
    with SessionDB(path) as sdb:
        sdb.add_usage("s1", "ctx_execute", Usage(calls=1, returned=100))
        sdb.add_usage("s1", "ctx_execute", Usage(calls=1, returned=50))
        sdb.add_usage("s1", "ctx_search", Usage(calls=1, returned=-3))
    with SessionDB(path) as sdb:
        calls = sdb.usage("s1")
    assert (calls["ctx_execute"].calls, calls["ctx_execute"].returned) == (2, 150)
    assert (calls["ctx_search"].calls, calls["ctx_search"].returned) == (1, 0)


def test_compact_count_increments(sdb):
    assert sdb.increment_compact_count("s1") == 1
    assert sdb.increment_compact_count("s1") == 2
    assert sdb.meta("s1").compact_count == 2  # type: ignore[union-attr]


# --------------------------------------------------------------------------- locking


def test_a_hook_gives_up_quickly_when_another_writer_holds_the_lock(tmp_path):
    path = tmp_path / "s.db"
    with SessionDB(path) as holder:
        holder.connection.execute("BEGIN IMMEDIATE")
        try:
            with SessionDB(path, busy_timeout_ms=100) as hook:  # not the 30 s, no retries
                with pytest.raises(StoreError, match="busy for 100 ms"):
                    hook.add_event("s1", Event("file_edit", "a.py"), source_hook="test")
        finally:
            holder.connection.execute("ROLLBACK")


def test_nested_transactions_join_the_outer_one_and_roll_back_together(sdb):
    with pytest.raises(RuntimeError), sdb.transaction():
        _add(sdb, "s1", Event("file_edit", "a.py"))
        sdb.upsert_resume("s1", "<x/>", 1)
        raise RuntimeError("boom")
    assert _data(sdb) == [] and sdb.resume("s1") is None
