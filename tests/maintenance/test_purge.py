"""Purge, rule by rule: what each scope deletes, what it keeps, and that it never reaches
beyond the project it was given."""

import subprocess
from pathlib import Path

import pytest

from ctxmode import paths, purge
from ctxmode.errors import UsageError
from ctxmode.session.db import SessionDB
from ctxmode.session.events import Event
from ctxmode.session.where import session_db_path, stats_file_for
from ctxmode.stats.model import Usage
from ctxmode.store import ContentStore


@pytest.fixture
def root() -> Path:
    return paths.data_root()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "Project"
    folder.mkdir()
    return folder.resolve()


def populate(root: Path, project: Path) -> dict[str, Path]:
    """Every file a project can have, each with content (WAL/SHM made real by open
    connections being closed after writes)."""
    where = paths.ProjectPaths(root, project)
    with ContentStore(where.content_db) as store:
        store.index_text("# Shared\nalpha beta", "notes")
        store.index_text("# S1\ngamma", "s1-notes", session_id="s1")
        store.index_text("# S2\ndelta", "s2-notes", session_id="s2")
    sdb_path = session_db_path(project, root)
    with SessionDB(sdb_path) as sdb:
        for sid in ("s1", "s2"):
            sdb.ensure_session(sid, str(project), "claude-code")
            sdb.add_event(sid, Event("file_read", f"{sid}.py"), source_hook="PostToolUse")
            sdb.add_usage(sid, "ctx_execute", Usage(1, 100, 5000))
        sdb.upsert_resume("s1", "<snapshot/>", 1)
    for suffix in ("-wal", "-shm"):
        for db in (where.content_db, sdb_path):
            Path(f"{db}{suffix}").write_bytes(b"x")
    events_md = sdb_path.with_name(sdb_path.name.removesuffix(".db") + "-events.md")
    events_md.write_text("# events", encoding="utf-8")
    cleanup = sdb_path.with_name(sdb_path.name.removesuffix(".db") + ".cleanup")
    cleanup.write_text("", encoding="utf-8")
    stats = stats_file_for(sdb_path)
    stats.write_text("{}", encoding="utf-8")
    return {
        "content": where.content_db,
        "session": sdb_path,
        "events_md": events_md,
        "cleanup": cleanup,
        "stats": stats,
    }


# ------------------------------------------------------------------ scope resolution


def test_session_id_with_scope_project_is_ambiguous_in_the_articles_words():
    with pytest.raises(UsageError) as caught:
        purge.resolve_scope("project", "abc")
    assert str(caught.value) == (
        "Ambiguous purge: sessionId implies scope:session, cannot combine with "
        "scope:project. Use scope:project WITHOUT sessionId for the legacy "
        "whole-project wipe."
    )


def test_scope_session_needs_a_session_id():
    with pytest.raises(UsageError, match="scope:session requires sessionId"):
        purge.resolve_scope("session", None)


@pytest.mark.parametrize(
    ("scope", "session_id", "expected"),
    [
        ("project", None, ("project", False)),
        ("session", "s1", ("session", False)),
        (None, "s1", ("session", False)),  # a session id alone can only mean that session
        (None, None, ("project", True)),  # bare {confirm: true}: deprecated project wipe
    ],
)
def test_effective_scope(scope, session_id, expected):
    assert purge.resolve_scope(scope, session_id) == expected


def test_unknown_scope_is_refused():
    with pytest.raises(UsageError, match="scope must be project or session"):
        purge.resolve_scope("everything", None)


# ------------------------------------------------------------------ project scope


def test_project_scope_deletes_every_file_of_the_project(root, project):
    files = populate(root, project)
    outcome = purge.purge_project(root, project)
    assert outcome.labels == [
        "knowledge base (FTS5)",
        "session events DB",
        "session events markdown",
        "session stats",
    ]
    for path in files.values():
        assert not path.exists(), path
    for db in (files["content"], files["session"]):
        for suffix in ("-wal", "-shm"):
            assert not Path(f"{db}{suffix}").exists()
    assert files["cleanup"] in outcome.removed
    assert purge.message(outcome) == (
        "Purged: knowledge base (FTS5), session events DB, session events markdown, "
        "session stats. All session data for this project has been permanently deleted."
    )


def test_project_scope_lists_only_what_was_actually_deleted(root, project):
    with ContentStore(paths.ProjectPaths(root, project).content_db) as store:
        store.index_text("# A\nalpha", "a")
    outcome = purge.purge_project(root, project)
    assert outcome.labels == ["knowledge base (FTS5)"]


def test_project_purge_is_idempotent_and_safe_on_a_fresh_install(root, project):
    fresh = purge.purge_project(root, project)
    assert (fresh.labels, fresh.removed) == ([], [])
    assert purge.message(fresh) == "Nothing to purge: no data is stored for this project."
    populate(root, project)
    assert purge.purge_project(root, project).labels
    again = purge.purge_project(root, project)
    assert (again.labels, again.removed) == ([], [])


def test_other_projects_are_untouched(root, project, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    theirs = populate(root, other.resolve())
    populate(root, project)
    purge.purge_project(root, project)
    for path in theirs.values():
        assert path.exists(), path


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_purging_one_worktree_leaves_the_sibling_worktree_intact(root, tmp_path, monkeypatch):
    monkeypatch.delenv("CTXMODE_SESSION_SUFFIX", raising=False)
    main = tmp_path / "repo"
    main.mkdir()
    _git("init", "-q", cwd=main)
    _git(
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "x",
        cwd=main,
    )
    wt1, wt2 = tmp_path / "wt1", tmp_path / "wt2"
    _git("worktree", "add", "-q", str(wt1), cwd=main)
    _git("worktree", "add", "-q", str(wt2), cwd=main)
    mine = populate(root, wt1.resolve())
    sibling = populate(root, wt2.resolve())
    assert mine["session"].name != sibling["session"].name
    purge.purge_project(root, wt1.resolve())
    assert not any(p.exists() for p in mine.values())
    for path in sibling.values():
        assert path.exists(), path
    for db in (sibling["content"], sibling["session"]):
        for suffix in ("-wal", "-shm"):
            assert Path(f"{db}{suffix}").exists()


def test_both_hash_variants_are_swept_on_case_insensitive_file_systems(root, project, monkeypatch):
    monkeypatch.setattr(paths, "_CASE_INSENSITIVE_FS", True)
    canonical, legacy = paths.project_hash(project), paths.legacy_project_hash(project)
    assert canonical != legacy  # the directory name has capitals
    monkeypatch.setenv("CTXMODE_SESSION_SUFFIX", "")
    made = []
    for h in (canonical, legacy):
        for path in (
            root / "content" / f"{h}.db",
            root / "sessions" / f"{h}.db",
            root / "sessions" / f"{h}-events.md",
            root / "sessions" / f"{h}.cleanup",
        ):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"x")
            made.append(path)
    outcome = purge.purge_project(root, project)
    assert not [p for p in made if p.exists()]
    assert outcome.labels == [
        "knowledge base (FTS5)",
        "session events DB",
        "session events markdown",
    ]


# ------------------------------------------------------------------ session scope


def test_session_scope_deletes_that_sessions_rows_and_chunks_only(root, project):
    files = populate(root, project)
    with SessionDB(files["session"]) as sdb:
        before_project = sdb.usage()
    outcome = purge.purge_session(root, project, "s1")
    assert outcome.labels == ["session rows for s1", "FTS5 chunks for s1"]
    assert purge.message(outcome) == (
        "Purged session s1: session rows for s1, FTS5 chunks for s1. "
        "Other sessions and project-wide stats preserved."
    )
    for path in files.values():
        assert path.exists(), path  # files are kept
    with SessionDB(files["session"]) as sdb:
        assert not sdb.has_session("s1") and sdb.resume("s1") is None
        assert sdb.has_session("s2") and sdb.events("s2")
        assert sdb.usage() == before_project  # project stats kept
    with ContentStore(files["content"]) as store:
        labels = {s.label for s in store.sources()}
    assert labels == {"notes", "s2-notes"}


def test_unknown_session_reports_no_matching_rows(root, project):
    populate(root, project)
    outcome = purge.purge_session(root, project, "nope")
    assert purge.message(outcome) == (
        "Purged session nope: no matching rows. Other sessions and project-wide stats preserved."
    )


def test_session_counts_preview_without_deleting(root, project):
    files = populate(root, project)
    assert purge.session_counts(root, project, "s1") == (1, 1)
    with SessionDB(files["session"]) as sdb:
        assert sdb.has_session("s1")


def test_a_session_with_only_server_counters_is_reported_and_the_stats_file_follows(root, project):
    from ctxmode.stats.record import Recorder

    sdb_path = session_db_path(project, root)
    recorder = Recorder(sdb_path, project)
    recorder.record("ctx_execute", Usage(1, 10, 900), "pid-42")
    recorder.close()
    stats = stats_file_for(sdb_path)
    assert '"sandboxed": 900' in stats.read_text(encoding="utf-8")
    outcome = purge.purge_session(root, project, "pid-42")
    assert outcome.labels == ["session rows for pid-42"]
    import json

    data = json.loads(stats.read_text(encoding="utf-8"))
    assert data["session"]["sandboxed"] == 0  # the purged session is gone from the file
    assert data["project"]["sandboxed"] == 900  # the project's totals are kept


def test_a_file_that_cannot_be_deleted_is_named_and_the_rest_still_goes(root, project):
    files = populate(root, project)
    files["events_md"].unlink()
    files["events_md"].mkdir()  # unlink() of a directory fails like a locked file would
    from ctxmode.errors import EnvironmentProblem

    with pytest.raises(EnvironmentProblem) as caught:
        purge.purge_project(root, project)
    assert str(files["events_md"]) in str(caught.value)
    assert not files["content"].exists() and not files["session"].exists()
    assert not files["stats"].exists()
