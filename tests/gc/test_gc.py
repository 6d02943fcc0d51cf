"""`ctxmode gc`: one age and size budget over every project's databases, on real SQLite
files. Age is simulated with os.utime (files) and old timestamps written by SQL (rows)."""

import json
import os
import sqlite3
import subprocess
import sys

import pytest
from gcsupport import (
    add_session,
    age,
    age_file,
    content_db,
    fill,
    labels,
    session_db,
    set_indexed_at,
    snapshot,
)

from ctxmode import gc, paths
from ctxmode.__main__ import main
from ctxmode.store import ContentStore

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
