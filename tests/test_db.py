"""SQLite plumbing shared by every ctxmode database (ctxmode.db)."""

import sqlite3

import pytest

from ctxmode import db
from ctxmode.errors import StoreError

NO_WAIT = (0.0, 0.0, 0.0)


def _flaky(failures: list[BaseException], result: str = "ok"):
    calls = []

    def fn():
        calls.append(1)
        if failures:
            raise failures.pop(0)
        return result

    return fn, calls


# --------------------------------------------------------------------------- retry_busy


def test_retry_busy_retries_a_locked_database_until_it_succeeds():
    locked = sqlite3.OperationalError("database is locked")
    fn, calls = _flaky([locked, locked])
    assert db.retry_busy(fn, NO_WAIT) == "ok"
    assert len(calls) == 3


def test_retry_busy_recognises_sqlite_busy_wording():
    fn, calls = _flaky([sqlite3.OperationalError("SQLITE_BUSY: database is busy")])
    assert db.retry_busy(fn, NO_WAIT) == "ok"
    assert len(calls) == 2


def test_retry_busy_gives_up_after_the_last_delay_with_a_store_error():
    fn, calls = _flaky([sqlite3.OperationalError("database is locked")] * 10)
    with pytest.raises(StoreError, match="locked after 3 retries") as info:
        db.retry_busy(fn, NO_WAIT)
    assert len(calls) == 4
    assert isinstance(info.value.__cause__, sqlite3.OperationalError)


def test_retry_busy_reraises_other_sqlite_errors_immediately():
    fn, calls = _flaky([sqlite3.OperationalError("no such table: nope")])
    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        db.retry_busy(fn, NO_WAIT)
    assert len(calls) == 1


def test_retry_busy_reraises_non_sqlite_errors_immediately():
    fn, calls = _flaky([ValueError("boom")])
    with pytest.raises(ValueError, match="boom"):
        db.retry_busy(fn, NO_WAIT)
    assert len(calls) == 1


def test_retry_busy_gives_up_on_a_database_really_locked_by_another_connection(tmp_path):
    path = tmp_path / "locked.db"
    holder = db.connect(path)
    holder.execute("CREATE TABLE t(x)")
    waiter = sqlite3.connect(path, timeout=0, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        holder.execute("INSERT INTO t VALUES (1)")
        with pytest.raises(StoreError, match="locked"):
            db.retry_busy(lambda: waiter.execute("INSERT INTO t VALUES (2)"), (0.0, 0.0))
        holder.execute("COMMIT")
        db.retry_busy(lambda: waiter.execute("INSERT INTO t VALUES (3)"), (0.0,))
        assert [r[0] for r in waiter.execute("SELECT x FROM t ORDER BY x")] == [1, 3]
    finally:
        waiter.close()
        holder.close()


# --------------------------------------------------------------------------- connect


def test_connect_uses_wal_and_row_objects(tmp_path):
    con = db.connect(tmp_path / "sub" / "a.db")
    try:
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert con.execute("PRAGMA busy_timeout").fetchone()[0] == db.BUSY_TIMEOUT_MS
        assert con.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        row = con.execute("SELECT 1 AS one").fetchone()
        assert row["one"] == 1
    finally:
        con.close()


def test_connect_removes_orphan_sidecars_when_the_main_file_is_missing(tmp_path):
    path = tmp_path / "a.db"
    for suffix in ("-wal", "-shm"):
        (tmp_path / f"a.db{suffix}").write_bytes(b"ORPHANED-SIDECAR" * 64)
    con = db.connect(path)
    try:
        con.execute("CREATE TABLE t(x)")
    finally:
        con.close()
    for suffix in ("-wal", "-shm"):
        side = tmp_path / f"a.db{suffix}"
        assert not side.exists() or b"ORPHANED-SIDECAR" not in side.read_bytes()


def test_connect_keeps_sidecars_of_an_existing_database(tmp_path):
    path = tmp_path / "a.db"
    writer = db.connect(path)
    writer.execute("CREATE TABLE t(x)")
    writer.execute("INSERT INTO t VALUES (42)")
    reader = db.connect(path)  # the writer's WAL holds committed rows not yet checkpointed
    try:
        assert reader.execute("SELECT x FROM t").fetchall()[0][0] == 42
    finally:
        reader.close()
        writer.close()


def test_write_transaction_rolls_back_on_error(tmp_path):
    con = db.connect(tmp_path / "a.db")
    try:
        con.execute("CREATE TABLE t(x)")
        with pytest.raises(RuntimeError), db.write_transaction(con):
            con.execute("INSERT INTO t VALUES (1)")
            raise RuntimeError("abort")
        with db.write_transaction(con):
            con.execute("INSERT INTO t VALUES (2)")
        assert [r[0] for r in con.execute("SELECT x FROM t")] == [2]
    finally:
        con.close()


# --------------------------------------------------------------------------- corruption


@pytest.mark.parametrize(
    ("message", "corrupt"),
    [
        ("file is not a database", True),
        ("database disk image is malformed", True),
        ("database is locked", False),
        ("no such table: x", False),
    ],
)
def test_is_corrupt_recognises_damage_messages(message, corrupt):
    assert db.is_corrupt(sqlite3.DatabaseError(message)) is corrupt


def test_set_aside_renames_the_file_and_its_sidecars(tmp_path):
    path = tmp_path / "kb.db"
    path.write_bytes(b"main")
    (tmp_path / "kb.db-wal").write_bytes(b"wal")
    (tmp_path / "kb.db-shm").write_bytes(b"shm")
    aside = db.set_aside(path)
    assert aside.name.startswith("kb.db.corrupt-")
    assert aside.read_bytes() == b"main"
    assert (tmp_path / f"{aside.name}-wal").read_bytes() == b"wal"
    assert (tmp_path / f"{aside.name}-shm").read_bytes() == b"shm"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("kb.db-")) == []
    assert not path.exists()


# --------------------------------------------------------------------------- migrate


def _migrations(log):
    def first(con):
        log.append("first")
        con.execute("CREATE TABLE one(x)")

    def second(con):
        log.append("second")
        con.execute("CREATE TABLE two(x)")

    return [first, second]


def test_migrate_applies_pending_migrations_once_in_order(tmp_path):
    path = tmp_path / "m.db"
    log = []
    con = db.connect(path)
    try:
        assert db.migrate(con, _migrations(log)[:1]) == 1
        assert db.migrate(con, _migrations(log)) == 2
        assert db.migrate(con, _migrations(log)) == 2
        assert log == ["first", "second"]
        assert con.execute("PRAGMA user_version").fetchone()[0] == 2
    finally:
        con.close()


def test_a_failing_migration_leaves_the_previous_version(tmp_path):
    def broken(con):
        con.execute("CREATE TABLE half(x)")
        raise sqlite3.OperationalError("syntax error near oops")

    con = db.connect(tmp_path / "m.db")
    try:
        with pytest.raises(sqlite3.OperationalError):
            db.migrate(con, [*_migrations([])[:1], broken])
        assert con.execute("PRAGMA user_version").fetchone()[0] == 1
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert "half" not in tables and "one" in tables
    finally:
        con.close()


def test_migrate_refuses_a_database_from_a_newer_version(tmp_path):
    log = []
    con = db.connect(tmp_path / "m.db")
    try:
        con.execute("PRAGMA user_version = 7")
        with pytest.raises(StoreError, match="newer"):
            db.migrate(con, _migrations(log))
        assert log == []
        assert con.execute("PRAGMA user_version").fetchone()[0] == 7
    finally:
        con.close()


def test_this_sqlite_has_fts5_with_trigram():
    assert db.fts5_problem() is None
    db.require_fts5()
