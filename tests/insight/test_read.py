"""Reading the session databases for the dashboard: the per-day history, databases written
before it existed, and reading without leaving a trace."""

import sqlite3
from pathlib import Path

from ctxmode import paths
from ctxmode.insight import data, page, read
from ctxmode.insight.charts import esc
from ctxmode.session.db import SessionDB
from ctxmode.session.events import Event
from ctxmode.session.where import session_db_path
from ctxmode.stats.model import Usage

from .support import at_day, chart, fill


def _days(found: dict) -> list[tuple[str, int, int, int]]:
    return [(d["day"], d["calls"], d["returned"], d["sandboxed"]) for d in found["daily"]]


def _two_sessions_on_two_days(project: Path) -> Path:
    db = session_db_path(project, paths.data_root())
    with SessionDB(db) as sdb:
        sdb.ensure_session("s1", str(project))
        sdb.ensure_session("s2", str(project))
        with at_day("2024-05-01"):
            sdb.add_usage("s1", "ctx_execute", Usage(calls=2, returned=100, sandboxed=9_900))
        with at_day("2024-05-03"):
            sdb.add_usage("s2", "ctx_execute", Usage(calls=1, returned=50, sandboxed=450))
            sdb.add_usage("s2", "ctx_search", Usage(calls=1, returned=25))
    return db


def test_deleted_sessions_keep_their_days(project):
    db = _two_sessions_on_two_days(project)
    expected = [("2024-05-01", 2, 100, 9_900), ("2024-05-03", 2, 75, 450)]
    with SessionDB(db) as sdb:
        sdb.delete_session("s1")  # folded into the earlier-sessions row
    assert _days(data.gather(project)) == expected
    with SessionDB(db) as sdb:
        sdb.delete_session("s2")  # both folded into one row: its updated_at is one day
        assert set(sdb.usage()) == {"ctx_execute", "ctx_search"}
    found = data.gather(project)
    assert _days(found) == expected
    assert found["totals"]["calls"] == 4 and found["sessions"] == 0
    html = page.render(found)
    over_time = chart(html, "savings-over-time")
    assert "2024-05-01: 9.7 KB kept in the sandbox, 100 B returned, 2 calls" in over_time
    assert "2024-05-03: 450 B kept in the sandbox, 75 B returned, 2 calls" in over_time
    assert over_time.count("<rect") == 4  # two days, kept + returned; 05-02 is empty
    assert f"Per UTC day; {esc(data.DAILY_NOTE)}." in html
    assert esc(data.DAILY_NOTE_APPROXIMATE) not in html


def test_all_projects_add_up_per_day(project, tmp_path):
    _two_sessions_on_two_days(project)
    other = (tmp_path / "other").resolve()
    other.mkdir()
    with SessionDB(session_db_path(other, paths.data_root())) as sdb:
        sdb.ensure_session("s9", str(other))
        with at_day("2024-05-03"):
            sdb.add_usage("s9", "ctx_execute", Usage(calls=1, returned=10, sandboxed=990))
        with at_day("2024-05-04"):
            sdb.add_usage("s9", "ctx_execute", Usage(calls=1, returned=1, sandboxed=9))
        sdb.delete_session("s9")
    assert _days(data.gather(project, all_projects=True)) == [
        ("2024-05-01", 2, 100, 9_900),
        ("2024-05-03", 3, 85, 1_440),
        ("2024-05-04", 1, 1, 9),
    ]


def test_a_database_from_before_the_daily_history_falls_back_to_updated_at(project, tmp_path):
    db = _two_sessions_on_two_days(project)
    with SessionDB(db) as sdb:
        sdb.connection.execute("DROP TABLE usage_daily")
    assert read.activity(db).exact_days is False
    found = data.gather(project)
    assert _days(found) == [("2024-05-01", 2, 100, 9_900), ("2024-05-03", 2, 75, 450)]
    assert found["notes"]["daily"] == f"{data.DAILY_NOTE}; {data.DAILY_NOTE_APPROXIMATE}"
    assert esc(data.DAILY_NOTE_APPROXIMATE) in page.render(found)
    # With a current database beside it, both count, each the way it can.
    other = (tmp_path / "other").resolve()
    other.mkdir()
    with SessionDB(session_db_path(other, paths.data_root())) as sdb:
        with at_day("2024-05-01"):
            sdb.add_usage("s9", "ctx_execute", Usage(calls=1, returned=10, sandboxed=990))
    everything = data.gather(project, all_projects=True)
    assert _days(everything)[0] == ("2024-05-01", 3, 110, 10_890)
    assert everything["notes"]["daily"].endswith(data.DAILY_NOTE_APPROXIMATE)


def test_a_database_older_still_lacks_counter_columns(tmp_path):
    db = tmp_path / "old.db"
    with sqlite3.connect(db) as con:
        con.execute(
            "CREATE TABLE tool_calls(session_id TEXT, tool TEXT, calls INTEGER,"
            " bytes_returned INTEGER, updated_at TEXT)"
        )
        con.execute(
            "CREATE TABLE session_events(project_dir TEXT, data TEXT, category TEXT, type TEXT)"
        )
        con.execute("INSERT INTO tool_calls VALUES('s', 't', 3, 30, '2024-01-02T00:00:00.000Z')")
    con.close()
    found = read.activity(db)
    assert found.daily == {"2024-01-02": Usage(calls=3, returned=30)}
    assert found.exact_days is False


def _listing(root: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
    }


def test_reading_closed_databases_leaves_the_data_root_as_it_was(project, home, tmp_path):
    fill(project, home)
    other = (tmp_path / "other").resolve()
    other.mkdir()
    with SessionDB(session_db_path(other, paths.data_root())) as sdb:
        sdb.add_usage("s9", "ctx_execute", Usage(calls=1, returned=10, sandboxed=990))
        sdb.add_events("s9", [Event("file_read", "notes.md")], source_hook="PostToolUse")
        assert sdb.connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    root = paths.data_root()
    before = _listing(root)
    assert not [name for name in before if name.endswith(("-wal", "-shm", "-journal"))]
    for db in root.glob("sessions/*.db"):
        read.activity(db)
    html = page.render(data.gather(project)) + page.render(data.gather(project, all_projects=True))
    assert "ctx_execute" in html
    assert _listing(root) == before


def test_reading_a_database_in_use_sees_its_writes(project):
    db = session_db_path(project, paths.data_root())
    with SessionDB(db) as sdb:
        with at_day("2024-06-01"):
            sdb.add_usage("s1", "ctx_execute", Usage(calls=1, returned=10, sandboxed=90))
        assert Path(f"{db}-wal").exists()  # open: its sidecars are there, and are used
        assert read.activity(db).daily == {"2024-06-01": Usage(1, 10, 90)}
