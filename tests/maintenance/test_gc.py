"""`ctxmode gc`: one age and size budget over every project's databases, on real SQLite
files. Age is simulated with os.utime (files) and old timestamps written by SQL (rows)."""

import errno
import json
import os
import sqlite3
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest

from ctxmode import dbfiles, gc, paths
from ctxmode.__main__ import main
from ctxmode.store import ContentStore

from .gcsupport import (
    add_session,
    age,
    age_file,
    content_db,
    fill,
    iso,
    labels,
    session_db,
    set_indexed_at,
    snapshot,
)

MB = 1 << 20
DEFAULT = gc.Budget(30, 500 * MB)


@pytest.fixture
def root():
    return paths.data_root()


@pytest.fixture(autouse=True)
def _elsewhere(tmp_path, monkeypatch):
    """gc's current project is the working directory's: keep it out of the data root."""
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _gc_json(capsys, *argv: str) -> dict:
    code = main(["gc", *argv, "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["exit_code"] == 0 and doc["command"] == ["gc"]
    return doc["data"]


@pytest.fixture
def populated(root, tmp_path):
    """A data root with something for every rule: an old project, expirable rows in a
    fresh one, stale markers and temporary files, a dead server's readiness marker."""
    old, fresh = tmp_path / "old", tmp_path / "fresh"
    old_content, old_sessions = content_db(root, old), session_db(root, old, "__0a1b2c3d")
    add_session(old_sessions, "s-old")
    for db in (old_content, old_sessions):
        age(db, 45)
    fresh_content, fresh_sessions = content_db(root, fresh), session_db(root, fresh)
    with ContentStore(fresh_content) as store:
        store.index_text("# Old page\n\nretired release notes", "https://example.com/old")
        store.index_text("# New page\n\ncurrent release notes", "https://example.com/new")
    set_indexed_at(fresh_content, "https://example.com/old", 40)
    add_session(fresh_sessions, "idle-session", idle_days=40)
    add_session(fresh_sessions, "active-session")
    for folder, name in (("markers", "abc.start.Bash.1.2.json"), ("content", ".x.db.1.tmp")):
        (root / folder).mkdir(parents=True, exist_ok=True)
        (root / folder / name).write_text("{}", encoding="utf-8")
        age_file(root / folder / name, 3)
    (root / "guidance" / "s-gone").mkdir(parents=True)
    (root / "guidance" / "s-gone" / "nudge").write_text("1", encoding="utf-8")
    age_file(root / "guidance" / "s-gone" / "nudge", 3)
    age_file(root / "guidance" / "s-gone", 3)
    (root / "servers").mkdir()
    (root / "servers" / f"{_dead_pid()}.json").write_text(
        json.dumps({"pid": 0, "project_dir": str(fresh)}), encoding="utf-8"
    )
    return {
        "old": (old_content, old_sessions),
        "fresh": (fresh_content, fresh_sessions),
    }


# --------------------------------------------------------------------------- dry run


def test_dry_run_lists_every_action_and_leaves_the_tree_byte_for_byte(root, populated, capsys):
    before = snapshot(root)
    data = _gc_json(capsys, "--dry-run")
    assert snapshot(root) == before
    assert data["dry_run"] is True
    kinds = {a["action"] for a in data["actions"]}
    assert {"delete-project", "expire-sources", "expire-sessions", "remove-files"} <= kinds
    files = {a["target"] for a in data["actions"] if a["action"] == "remove-files"}
    assert files == {"marker", "guidance", "server", "tmp"}
    assert all(a["estimated"] for a in data["actions"])
    assert data["freed"] > 0

    # Human output of a dry run: the same plan, still nothing touched.
    assert main(["gc", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "delete-project" in out and "dry run: nothing was deleted" in out
    assert snapshot(root) == before

    # And the plan is real: applying it does what the dry run listed.
    data = _gc_json(capsys)
    assert not any(p.exists() for p in populated["old"])
    assert all(p.exists() for p in populated["fresh"])
    assert labels(populated["fresh"][0]) == {"https://example.com/new"}
    assert not (root / "markers" / "abc.start.Bash.1.2.json").exists()
    assert not (root / "guidance" / "s-gone").exists()
    assert not (root / "content" / ".x.db.1.tmp").exists()
    assert list((root / "servers").iterdir()) == []


# --------------------------------------------------------------------------- age


def test_an_old_project_goes_whole_while_a_fresh_one_stays(root, tmp_path):
    old, fresh = tmp_path / "old", tmp_path / "fresh"
    old_dbs = [content_db(root, old), session_db(root, old), session_db(root, old, "__feed1234")]
    suffix_cache = root / "sessions" / f".{paths.project_hash(old)}.suffix"
    suffix_cache.write_text("", encoding="utf-8")
    for db in old_dbs:
        age(db, 31)
    fresh_dbs = [content_db(root, fresh), session_db(root, fresh)]
    for db in fresh_dbs:
        age(db, 29)

    report = gc.apply(gc.plan(root, DEFAULT))

    assert not any(p.exists() for db in old_dbs for p in (db, db.with_name(db.name + "-wal")))
    assert not suffix_cache.exists()
    assert all(db.exists() for db in fresh_dbs)
    [deleted] = [a for a in report.actions if a.action == "delete-project"]
    assert deleted.target == paths.project_hash(old) and deleted.count == 3
    assert deleted.bytes and not deleted.estimated


def test_a_project_held_open_by_a_live_process_is_kept_even_when_old(root, tmp_path):
    project = tmp_path / "busy"
    db = content_db(root, project)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys, time\n"
            "con = sqlite3.connect(sys.argv[1])\n"
            "con.execute('SELECT count(*) FROM sqlite_master').fetchall()\n"
            "print('ready', flush=True)\n"
            "time.sleep(120)\n",
            str(db),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        age(db, 90)  # opening it wrote the sidecars: make the whole family old again

        p = gc.plan(root, DEFAULT)
        assert p.deletions == []
        [note] = [n for n in p.notes if n.target == paths.project_hash(project)]
        assert f"in use by process {holder.pid}" in note.message

        gc.apply(p)
        assert db.exists()
    finally:
        holder.kill()
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()

    # Once the process is gone, the same project goes.
    age(db, 90)
    r = gc.apply(gc.plan(root, DEFAULT))
    assert not db.exists(), r


def test_a_project_a_running_server_names_is_kept(root, tmp_path):
    project = tmp_path / "served"
    db = content_db(root, project)
    age(db, 60)
    (root / "servers").mkdir()
    marker = root / "servers" / f"{os.getpid()}.json"
    marker.write_text(json.dumps({"pid": os.getpid(), "project_dir": str(project)}))

    p = gc.plan(root, DEFAULT)
    assert p.deletions == []
    assert any("running ctxmode server" in n.message for n in p.notes)
    gc.apply(p)
    assert db.exists() and marker.exists()


def test_the_current_project_is_never_deleted_for_age(root, tmp_path):
    project = tmp_path / "here"
    db = content_db(root, project)
    age(db, 60)
    p = gc.plan(root, DEFAULT, current=project)
    assert p.deletions == [] and any("current project" in n.message for n in p.notes)


def test_existing_files_never_expire_by_age_but_urls_and_deleted_files_do(root, tmp_path):
    project = tmp_path / "docs"
    db = content_db(root, project)
    kept, removed = tmp_path / "kept.md", tmp_path / "removed.md"
    kept.write_text("# Kept\n\nzebrafish habitat notes\n", encoding="utf-8")
    removed.write_text("# Removed\n\nplatypus burrow notes\n", encoding="utf-8")
    with ContentStore(db) as store:
        store.index_file(kept)
        store.index_file(removed)
        store.index_text("# Fetched\n\nnarwhal migration page", "https://example.com/narwhal")
        store.index_text("# Recent\n\naxolotl care page", "https://example.com/axolotl")
    removed.unlink()
    for label in (str(kept), str(removed), "https://example.com/narwhal"):
        set_indexed_at(db, label, 400)

    p = gc.plan(root, DEFAULT)
    [expiry] = p.expiries
    assert set(expiry.items) == {str(removed), "https://example.com/narwhal"}
    report = gc.apply(p)

    assert labels(db) == {str(kept), "https://example.com/axolotl"}
    [action] = [a for a in report.actions if a.action == "expire-sources"]
    assert action.count == 2
    with ContentStore(db) as store:  # the FTS rows went with them
        for word, hits in (("narwhal", 0), ("platypus", 0), ("zebrafish", 1), ("axolotl", 1)):
            assert len(store.search(word, refresh=False).hits) == hits, word
        con = store.connection
        con.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES('integrity-check', 0)")


def test_idle_sessions_and_orphaned_events_expire_inside_a_fresh_database(root, tmp_path):
    db = session_db(root, tmp_path / "agent")
    add_session(db, "idle", idle_days=45)
    add_session(db, "active", idle_days=2)
    con = sqlite3.connect(db)
    con.execute(
        "INSERT INTO session_events(session_id, type, category, data, data_hash, created_at)"
        " VALUES ('pid-123', 'file_read', 'file', 'x', 'h', '2000-01-01T00:00:00.000Z')"
    )
    con.commit()
    con.close()

    report = gc.apply(gc.plan(root, DEFAULT))

    con = sqlite3.connect(db)
    try:
        assert {r[0] for r in con.execute("SELECT session_id FROM session_meta")} == {"active"}
        assert {r[0] for r in con.execute("SELECT DISTINCT session_id FROM session_events")} == {
            "active"
        }
    finally:
        con.close()
    done = {a.action: a.count for a in report.actions}
    assert done["expire-sessions"] == 1 and done["expire-orphans"] == 1


# --------------------------------------------------------------------------- size budget


def _sized_projects(root, tmp_path, names_and_days):
    made = {}
    for name, days in names_and_days:
        db = content_db(root, tmp_path / name)
        fill(db, 1)
        age(db, days)
        made[name] = db
    return made


def test_over_budget_the_least_recently_used_project_goes_first(root, tmp_path):
    dbs = _sized_projects(root, tmp_path, [("a", 3), ("b", 2), ("c", 1)])
    total = sum(db.stat().st_size for db in dbs.values())
    limits = gc.Budget(30, total - MB // 2)

    p = gc.plan(root, limits)
    assert [(d.project.hash, d.reason) for d in p.deletions] == [
        (paths.project_hash(tmp_path / "a"), "budget")
    ]
    report = gc.apply(p)

    assert not dbs["a"].exists() and dbs["b"].exists() and dbs["c"].exists()
    assert report.total_after <= limits.max_bytes and not report.over_budget


def test_apply_deletes_no_project_the_budget_no_longer_needs(root, tmp_path):
    dbs = _sized_projects(root, tmp_path, [("a", 3), ("b", 2), ("c", 1)])
    total = sum(db.stat().st_size for db in dbs.values())
    p = gc.plan(root, gc.Budget(30, total - MB // 2))
    assert [d.project.hash for d in p.deletions] == [paths.project_hash(tmp_path / "a")]
    dbs["c"].unlink()  # someone else freed space between plan and apply

    report = gc.apply(p)

    assert dbs["a"].exists() and dbs["b"].exists()
    assert not [a for a in report.actions if a.action == "delete-project"]
    assert any("budget is met without it" in n.message for n in report.notes)


def test_the_size_budget_skips_the_current_project_and_says_when_it_cannot_be_met(root, tmp_path):
    dbs = _sized_projects(root, tmp_path, [("a", 3), ("b", 2)])
    limits = gc.Budget(30, MB // 2)

    report = gc.apply(gc.plan(root, limits, current=tmp_path / "a"))

    assert dbs["a"].exists() and not dbs["b"].exists()
    assert report.over_budget
    assert any("over budget" in n.message for n in report.notes)


def test_the_cli_takes_the_size_budget_in_mb_and_the_environment_as_default(
    root, tmp_path, monkeypatch, capsys
):
    dbs = _sized_projects(root, tmp_path, [("a", 3), ("b", 2), ("c", 1)])
    monkeypatch.setenv("CTXMODE_GC_MAX_MB", "2")
    data = _gc_json(capsys, "--dry-run")
    assert data["budget"] == {"max_age_days": 30, "max_bytes": 2 * MB}
    assert [a["action"] for a in data["actions"]].count("delete-project") == 2

    assert main(["gc", "--max-size", "100"]) == 0
    out = capsys.readouterr().out
    assert "of 100 MB budget" in out and "freed" in out
    assert all(db.exists() for db in dbs.values())


def test_a_bad_environment_override_is_a_usage_error_without_traceback(monkeypatch, capsys):
    monkeypatch.setenv("CTXMODE_GC_MAX_AGE_DAYS", "soon")
    assert main(["gc"]) == 2
    err = capsys.readouterr().err
    assert "CTXMODE_GC_MAX_AGE_DAYS" in err and "Traceback" not in err


# --------------------------------------------------------------------------- compaction


def test_vacuum_gives_the_space_of_a_big_expired_source_back(root, tmp_path):
    db = content_db(root, tmp_path / "big")
    words = " ".join(f"build step alpha{n % 97} beta{n % 89} finished" for n in range(60_000))
    with ContentStore(db) as store:
        store.index_text(f"# Dump\n\n{words}", "cmd:build-log")
        store.index_text("# Small\n\nkept page", "https://example.com/kept")
    set_indexed_at(db, "cmd:build-log", 60)
    before = db.stat().st_size

    report = gc.apply(gc.plan(root, DEFAULT))

    after = db.stat().st_size
    assert after < before / 3
    [compact] = [a for a in report.actions if a.action == "compact"]
    assert compact.detail == "checkpoint + vacuum"
    assert compact.bytes is not None and compact.bytes >= before - after
    assert report.freed >= before - after
    assert labels(db) == {"https://example.com/kept"}
    con = sqlite3.connect(db)
    try:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        con.close()


# --------------------------------------------------------------------------- robustness


def test_an_unreadable_database_is_reported_not_deleted_and_gc_goes_on(root, tmp_path, capsys):
    broken = root / "content" / f"{paths.project_hash(tmp_path / 'broken')}.db"
    broken.parent.mkdir(parents=True)
    broken.write_bytes(b"this is not a database" * 200)
    age(broken, 100)
    old = content_db(root, tmp_path / "old")
    age(old, 100)

    data = _gc_json(capsys)

    assert broken.read_bytes() == b"this is not a database" * 200
    assert not old.exists()
    assert any(
        n["target"] == f"content/{broken.name}" and "left alone" in n["message"]
        for n in data["notes"]
    )


def test_fresh_markers_and_a_live_servers_marker_stay(root):
    (root / "markers").mkdir(parents=True)
    fresh = root / "markers" / "k.start.Read.1.2.json"
    stale = root / "markers" / "k.start.Read.0.1.json"
    for marker in (fresh, stale):
        marker.write_text("{}", encoding="utf-8")
    age_file(stale, 2)
    (root / "servers").mkdir()
    live = root / "servers" / f"{os.getpid()}.json"
    live.write_text(json.dumps({"pid": os.getpid(), "project_dir": "x"}), encoding="utf-8")
    tmp = root / "setup" / ".claude-code-global.json.1.tmp"
    tmp.parent.mkdir()
    tmp.write_text("{", encoding="utf-8")  # being written right now

    gc.apply(gc.plan(root, DEFAULT))

    assert fresh.exists() and live.exists() and tmp.exists() and not stale.exists()


def test_gc_on_a_missing_data_root_creates_nothing(root, capsys):
    assert not root.exists() or not any(root.iterdir())
    data = _gc_json(capsys)
    assert data["actions"] == [] and data["total_after"] == 0
    assert not (root / "content").exists()


def test_gcs_own_writes_do_not_make_a_project_look_used(root, tmp_path):
    db = content_db(root, tmp_path / "quiet")
    with ContentStore(db) as store:
        store.index_text("# Page\n\nold fetched page", "https://example.com/page")
    set_indexed_at(db, "https://example.com/page", 40)
    age(db, 20)
    stamp = db.stat().st_mtime_ns

    report = gc.apply(gc.plan(root, DEFAULT))

    assert [a.action for a in report.actions][:1] == ["expire-sources"]
    assert labels(db) == set()
    assert db.stat().st_mtime_ns == stamp


# --------------------------------------------------------------------------- servers


def test_a_servers_project_stays_protected_when_the_pid_probe_fails_oddly(
    root, tmp_path, monkeypatch
):
    """Windows' os.kill(pid, 0) raises a plain OSError: that is not "dead"."""
    project = tmp_path / "served"
    db = content_db(root, project)
    age(db, 60)
    (root / "servers").mkdir()
    (root / "servers" / "424242.json").write_text(
        json.dumps({"pid": 424242, "project_dir": str(project)}), encoding="utf-8"
    )

    def kill(pid: int, sig: int) -> None:
        raise OSError(errno.EINVAL, "The parameter is incorrect")

    monkeypatch.setattr(os, "kill", kill)
    p = gc.plan(root, DEFAULT)
    assert p.deletions == [] and not [f for f in p.files if f.kind == "server"]
    gc.apply(p)
    assert db.exists()


# --------------------------------------------------------------------------- last use


def test_an_empty_wal_left_by_a_read_only_open_does_not_make_a_project_used(root, tmp_path):
    """`ctxmode stats --all-projects` used to open databases with ``mode=ro``, which
    leaves an empty ``-wal`` and a ``-shm`` stamped now next to a 40-day-old project."""
    db = content_db(root, tmp_path / "old")
    age(db, 40)
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    con.execute("SELECT count(*) FROM sqlite_master").fetchone()
    con.close()
    wal = db.with_name(db.name + "-wal")
    assert wal.exists() and wal.stat().st_size == 0  # as SQLite leaves it

    p = gc.plan(root, DEFAULT)
    assert [d.project.hash for d in p.deletions] == [paths.project_hash(tmp_path / "old")]
    gc.apply(p)
    assert not any(path.exists() for path in dbfiles.family(db))


def test_last_written_counts_a_wal_with_writes_but_not_an_empty_one_nor_the_shm(tmp_path):
    db = tmp_path / "a.db"
    db.write_bytes(b"x")
    wal, shm = tmp_path / "a.db-wal", tmp_path / "a.db-shm"
    wal.write_bytes(b""), shm.write_bytes(b"s")
    age_file(db, 10)
    assert dbfiles.last_written(db) == pytest.approx(db.stat().st_mtime)
    wal.write_bytes(b"frames")
    assert dbfiles.last_written(db) == pytest.approx(wal.stat().st_mtime)
    assert dbfiles.last_written(tmp_path / "missing.db") == 0.0


def _tree(folder) -> dict[str, tuple[int, int]]:
    return {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.iterdir()}


def test_open_readonly_of_a_closed_database_creates_no_file_and_changes_no_mtime(root, tmp_path):
    db = content_db(root, tmp_path / "looked-at")
    with ContentStore(db) as store:
        store.index_text("# Page\n\nokapi notes", "https://example.com/okapi")
    age(db, 40)
    before = _tree(db.parent)
    assert [name for name in before if name.startswith(db.name)] == [db.name]  # closed

    con = dbfiles.open_readonly(db)
    try:
        assert con.execute("SELECT label FROM sources").fetchone()["label"] == (
            "https://example.com/okapi"
        )
    finally:
        con.close()

    assert _tree(db.parent) == before
    missing = tmp_path / "none.db"
    with pytest.raises(sqlite3.Error):
        dbfiles.open_readonly(missing)
    assert not missing.exists()


def test_open_readonly_sees_writes_still_in_the_wal_of_an_open_database(root, tmp_path):
    db = content_db(root, tmp_path / "open")
    writer = sqlite3.connect(db)
    try:
        writer.execute("CREATE TABLE t(x)")
        writer.execute("INSERT INTO t VALUES (42)")
        writer.commit()
        assert db.with_name(db.name + "-wal").stat().st_size > 0
        con = dbfiles.open_readonly(db)
        try:
            assert con.execute("SELECT x FROM t").fetchone()[0] == 42
        finally:
            con.close()
    finally:
        writer.close()


# --------------------------------------------------------------------------- processes


def test_apply_looks_processes_up_in_batches_not_once_per_project(root, tmp_path, monkeypatch):
    dbs = [content_db(root, tmp_path / f"old{n}") for n in range(6)]
    for db in dbs:
        age(db, 60)
    p = gc.plan(root, DEFAULT)
    assert len(p.deletions) == 6
    calls = []
    real = dbfiles.holders_of

    def counting(found):
        calls.append(list(found))
        return real(calls[-1])

    monkeypatch.setattr(dbfiles, "holders_of", counting)
    gc.apply(p)
    assert not any(db.exists() for db in dbs)
    # One lookup before renaming, one on the renamed files; nothing left to compact.
    assert len(calls) == 2, calls


def _hold(db, write: bool = False) -> subprocess.Popen:
    """A process that keeps the database open (after a committed write, when asked)."""
    code = (
        "import sqlite3, sys, time\n"
        "con = sqlite3.connect(sys.argv[1])\n"
        "con.execute('SELECT count(*) FROM sqlite_master').fetchall()\n"
        + (
            "con.execute('CREATE TABLE IF NOT EXISTS held(x)')\n"
            "con.execute('INSERT INTO held VALUES (1)')\n"
            "con.commit()\n"
            if write
            else ""
        )
        + "print('ready', flush=True)\n"
        "time.sleep(120)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(db)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


def _stop(proc: subprocess.Popen) -> None:
    proc.kill()
    proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()


def test_a_database_in_use_gets_a_passive_checkpoint_and_no_vacuum(root, tmp_path):
    db = content_db(root, tmp_path / "busy")
    fill(db, 2)
    con = sqlite3.connect(db)
    con.execute("DELETE FROM filler")
    con.commit()
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    wal = db.with_name(db.name + "-wal")
    holder = _hold(db, write=True)
    try:
        wal_before = wal.stat().st_size
        assert wal_before > 0
        report = gc.apply(gc.plan(root, DEFAULT))
        free = sqlite3.connect(db).execute("PRAGMA freelist_count").fetchone()[0]
        assert free > 0  # not vacuumed under the holder
        assert wal.stat().st_size == wal_before  # PASSIVE never truncates the WAL
        assert not [a for a in report.actions if a.action == "compact"]
        assert any(
            n.message.startswith(f"not vacuumed: in use by process {holder.pid}")
            for n in report.notes
        )
    finally:
        _stop(holder)

    report = gc.apply(gc.plan(root, DEFAULT))  # nobody holds it now: the full treatment
    [compact] = [a for a in report.actions if a.action == "compact"]
    assert compact.detail == "checkpoint + vacuum"
    assert sqlite3.connect(db).execute("PRAGMA freelist_count").fetchone()[0] == 0


def test_holders_are_matched_by_file_identity_not_by_spelling(tmp_path, monkeypatch):
    import psutil

    real = tmp_path / "Data"
    real.mkdir()
    db = real / "0123456789abcdef.db"
    sqlite3.connect(db).close()
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    spellings = {
        4242: str(tmp_path / "link" / db.name),  # through a symlink: same inode
        4343: str(db).upper(),  # another case: the same file where case is ignored
    }

    class Process:
        def __init__(self, pid: int) -> None:
            self.pid = pid

        def open_files(self):
            return [types.SimpleNamespace(path=spellings[self.pid])]

    monkeypatch.setattr(dbfiles, "PROC", str(tmp_path / "no-proc"))  # the psutil branch
    monkeypatch.setattr(psutil, "process_iter", lambda *a, **k: map(Process, spellings))
    monkeypatch.setattr(paths, "_CASE_INSENSITIVE_FS", False)
    assert dbfiles.holders_of([db]) == {db: [4242]}
    monkeypatch.setattr(paths, "_CASE_INSENSITIVE_FS", True)  # the macOS/Windows rule
    assert dbfiles.holders_of([db]) == {db: [4242, 4343]}
    assert dbfiles.same_file_key(str(db).upper()) == dbfiles.same_file_key(db)


def test_holders_without_proc_are_found_through_psutil(root, tmp_path, monkeypatch):
    db = content_db(root, tmp_path / "held")
    holder = _hold(db)
    try:
        monkeypatch.setattr(dbfiles, "PROC", str(tmp_path / "no-proc"))
        assert dbfiles.holders_of([db]) == {db: [holder.pid]}
    finally:
        _stop(holder)


# --------------------------------------------------------------------------- deleting


def test_a_project_is_renamed_aside_checked_again_then_unlinked(root, tmp_path, monkeypatch):
    old = [content_db(root, tmp_path / "old"), session_db(root, tmp_path / "old")]
    for db in old:
        age(db, 60)
    p = gc.plan(root, DEFAULT)
    seen = []
    real = dbfiles.holders_of

    def looking(found):
        found = list(found)
        seen.append({db: (db.exists(), Path(str(db).split(".gc-")[0]).exists()) for db in found})
        return real(found)

    monkeypatch.setattr(dbfiles, "holders_of", looking)
    report = gc.apply(p)

    before, after = seen
    assert set(before) == set(old)
    assert {db.name for db in after} == {f"{db.name}.gc-{os.getpid()}" for db in old}
    assert all(exists and not original for exists, original in after.values())
    assert not any(path.exists() for db in old for path in dbfiles.family(db))
    assert not [f for f in root.rglob("*") if ".gc-" in f.name]
    assert [a.action for a in report.actions] == ["delete-project"]


def test_a_process_that_opens_a_project_while_it_is_deleted_keeps_it(root, tmp_path, monkeypatch):
    db = content_db(root, tmp_path / "late")
    with ContentStore(db) as store:
        store.index_text("# Page\n\nquokka notes", "https://example.com/quokka")
    age(db, 60)
    p = gc.plan(root, DEFAULT)
    assert len(p.deletions) == 1
    real = dbfiles.holders_of
    late: list[subprocess.Popen] = []

    def opened_meanwhile(found):
        held = real(found)
        if not late:  # the race: someone opens it right after the last check
            late.append(_hold(db))
        return held

    monkeypatch.setattr(dbfiles, "holders_of", opened_meanwhile)
    try:
        report = gc.apply(p)
        assert db.exists()
        assert labels(db) == {"https://example.com/quokka"}  # while the holder has it
    finally:
        for proc in late:
            _stop(proc)

    assert late and db.exists()
    assert not [f for f in root.rglob("*") if ".gc-" in f.name]  # all put back
    assert not [a for a in report.actions if a.action == "delete-project"]
    [note] = [n for n in report.notes if n.target == paths.project_hash(tmp_path / "late")]
    assert note.message == (
        f"not deleted: process {late[0].pid} opened it while it was being deleted"
    )
    assert labels(db) == {"https://example.com/quokka"}


def test_files_an_interrupted_gc_left_are_collected_once_it_is_gone(root, tmp_path):
    db = content_db(root, tmp_path / "kept")
    dead, alive = _dead_pid(), os.getpid()
    leftovers = [db.with_name(f"{paths.project_hash(tmp_path / 'x')}.db.gc-{dead}")]
    leftovers.append(leftovers[0].with_name(leftovers[0].name + "-wal"))
    running = db.with_name(f"{paths.project_hash(tmp_path / 'y')}.db.gc-{alive}")
    for path in (*leftovers, running):
        path.write_bytes(b"old")

    p = gc.plan(root, DEFAULT)
    assert {f.path for f in p.files if f.kind == "trash"} == set(leftovers)
    assert len(p.projects) == 1  # trash is nobody's project
    report = gc.apply(p)

    assert not any(path.exists() for path in leftovers)
    assert running.exists() and db.exists()
    assert [a.count for a in report.actions if a.target == "trash"] == [2]


# --------------------------------------------------------------------------- sessions


def test_apply_expires_only_the_planned_sessions_still_idle(root, tmp_path):
    from ctxmode.session.db import SessionDB
    from ctxmode.stats.model import EARLIER_SESSIONS, Usage

    db = session_db(root, tmp_path / "agent")
    add_session(db, "idle", idle_days=45)
    add_session(db, "revived", idle_days=45)
    add_session(db, "active")
    with SessionDB(db) as sdb:
        sdb.add_usage("idle", "ctx_search", Usage(calls=3, returned=300))
    p = gc.plan(root, DEFAULT)
    [expiry] = [e for e in p.expiries if e.kind == "sessions"]
    assert set(expiry.items) == {"idle", "revived"}

    con = sqlite3.connect(db)  # used again after the plan
    con.execute(
        "UPDATE session_meta SET last_event_at = ? WHERE session_id = 'revived'",
        (iso(time.time()),),
    )
    con.commit()
    con.close()
    add_session(db, "late", idle_days=45)  # idle, but not in the plan
    report = gc.apply(p)

    with SessionDB(db) as sdb:
        assert {m.session_id for m in sdb.sessions()} == {"revived", "active", "late"}
        assert sdb.usage(EARLIER_SESSIONS)["ctx_search"] == Usage(calls=3, returned=300)
    [action] = [a for a in report.actions if a.action == "expire-sessions"]
    assert action.count == 1 and action.detail.startswith("1 (planned: 2 idle")


# --------------------------------------------------------------------------- unreadable


def test_an_unreadable_folder_is_skipped_with_a_note(root, tmp_path, monkeypatch, capsys):
    sessions = session_db(root, tmp_path / "s")
    content = content_db(root, tmp_path / "c")
    for db in (sessions, content):
        age(db, 60)
    real = os.listdir

    def listdir(path="."):
        if Path(path) == root / "content":
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "listdir", listdir)
    data = _gc_json(capsys)

    assert content.exists() and not sessions.exists()
    assert {"target": "content", "message": "cannot be read (Permission denied); skipped"} in (
        data["notes"]
    )


def test_unreadable_entries_are_skipped_with_a_note_not_a_traceback(
    root, tmp_path, monkeypatch, capsys
):
    sessions = session_db(root, tmp_path / "s")
    content = content_db(root, tmp_path / "c")
    for db in (sessions, content):
        age(db, 60)
    real = Path.stat

    def stat(self, *, follow_symlinks=True):
        if self.parent == root / "sessions":  # a folder that can be listed, not searched
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        return real(self, follow_symlinks=follow_symlinks)

    monkeypatch.setattr(Path, "stat", stat)
    assert main(["gc"]) == 0
    captured = capsys.readouterr()
    monkeypatch.undo()

    assert "Traceback" not in captured.err
    assert f"note: sessions/{sessions.name}: cannot be read (Permission denied)" in captured.err
    assert sessions.exists() and not content.exists()


# --------------------------------------------------------------------------- help


def test_the_help_tells_about_the_automatic_collection(capsys):
    assert main(["gc", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    for part in ("ctxmode serve", "once a day", "a minute after it starts", "CTXMODE_GC=off"):
        assert part in out, part
    assert "Example: ctxmode gc --dry-run --max-size 200" in out
