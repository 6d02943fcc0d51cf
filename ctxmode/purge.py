"""Deleting a project's stored data, or one session's, and nothing else.

Two scopes:

* **project**: in this order, the knowledge base (``content/<hash>.db`` with its sidecars),
  the session database (``sessions/<hash><suffix>.db`` with sidecars), the session-events
  markdown (``<hash><suffix>-events.md``), the cleanup marker (``<hash><suffix>.cleanup``),
  then the stats file (``<hash><suffix>.stats.json``) and the cached worktree suffix.
* **session**: that session's events, resume snapshot and meta rows, and the knowledge-base
  sources indexed during it. Files stay; other sessions stay; project-wide counters stay
  (the session's counters are folded into the project's earlier-sessions row).

Every path is derived from the project directory alone: no directory listing, no glob. A
sibling git worktree has another path, hence another hash and other files: it cannot be
touched. On case-insensitive file systems (macOS, Windows) both the case-folded hash and
the legacy one are swept. Missing files are not errors: purging twice, or purging a
project that never stored anything, reports nothing deleted.
"""

from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ctxmode import dbfiles, paths
from ctxmode.errors import EnvironmentProblem, UsageError

if TYPE_CHECKING:
    from ctxmode.session.db import SessionDB

KNOWLEDGE_BASE = "knowledge base (FTS5)"
SESSION_DB = "session events DB"
EVENTS_MARKDOWN = "session events markdown"
SESSION_STATS = "session stats"

AMBIGUOUS = (
    "Ambiguous purge: sessionId implies scope:session, cannot combine with scope:project. "
    "Use scope:project WITHOUT sessionId for the legacy whole-project wipe."
)
SESSION_NEEDS_ID = (
    "scope:session requires sessionId. Pass scope:project for the legacy whole-project wipe."
)
CANCELLED = "Purge cancelled. Pass confirm: true to proceed."
BARE_CONFIRM_DEPRECATED = (
    "ctx_purge: bare {confirm: true} is deprecated. Pass scope: project for the whole-project "
    "wipe, or scope: session with sessionId for a scoped wipe."
)


class Target(NamedTuple):
    """One file purge may delete, and the label it reports (None: deleted silently)."""

    path: Path
    label: str | None
    sqlite: bool = False


class Outcome(NamedTuple):
    scope: str
    session_id: str | None
    labels: list[str]  # what was actually deleted, in order, without repeats
    removed: list[Path]  # project scope: the files removed
    events: int = 0  # session scope: event rows removed
    chunks: int = 0  # session scope: knowledge-base chunks removed


def resolve_scope(scope: str | None, session_id: str | None) -> tuple[str, bool]:
    """The effective scope, and whether the caller used the deprecated bare form.

    Raises:
        UsageError: sessionId with scope project, scope session without sessionId, or an
            unknown scope.
    """
    if scope not in (None, "project", "session"):
        raise UsageError(f"scope must be project or session, not {scope!r}")
    if session_id and scope == "project":
        raise UsageError(AMBIGUOUS)
    if scope == "session" and not session_id:
        raise UsageError(SESSION_NEEDS_ID)
    if scope is not None:
        return scope, False
    return ("session", False) if session_id else ("project", True)


def _hashes(project_dir: Path) -> list[str]:
    found = [paths.project_hash(project_dir), paths.legacy_project_hash(project_dir)]
    return list(dict.fromkeys(found))  # one on Linux, where the two coincide


def _suffix(root: Path, project_dir: Path) -> str:
    from ctxmode.session.where import worktree_suffix

    return worktree_suffix(root, project_dir, remember=False)


def project_targets(root: Path, project_dir: Path) -> list[Target]:
    """Every file of the project, in deletion order (existing or not)."""
    suffix = _suffix(root, project_dir)
    hashes = _hashes(project_dir)
    sessions = root / "sessions"
    targets = [Target(root / "content" / f"{h}.db", KNOWLEDGE_BASE, True) for h in hashes]
    targets += [Target(sessions / f"{h}{suffix}.db", SESSION_DB, True) for h in hashes]
    targets += [Target(sessions / f"{h}{suffix}-events.md", EVENTS_MARKDOWN) for h in hashes]
    targets += [Target(sessions / f"{h}{suffix}.cleanup", None) for h in hashes]
    targets += [Target(sessions / f"{h}{suffix}.stats.json", SESSION_STATS) for h in hashes]
    targets += [Target(sessions / f".{h}.suffix", None) for h in hashes]
    return targets


def existing(targets: list[Target]) -> list[Path]:
    """The files among `targets` present now (for --dry-run and confirmations)."""
    found: list[Path] = []
    for target in targets:
        files = dbfiles.family(target.path) if target.sqlite else [target.path]
        found.extend(p for p in files if p.exists())
    return found


def purge_project(root: Path, project_dir: Path) -> Outcome:
    """Delete every file of the project; report the labels of what existed.

    Raises:
        EnvironmentProblem: some files could not be deleted (another process holds them
            on Windows, permissions); everything else was deleted first.
    """
    labels: list[str] = []
    removed: list[Path] = []
    left: list[str] = []
    for target in project_targets(root, project_dir):
        for path in dbfiles.family(target.path) if target.sqlite else [target.path]:
            try:
                path.unlink()
            except FileNotFoundError:
                continue
            except OSError as exc:
                left.append(f"{path} ({exc.strerror or exc})")
                continue
            removed.append(path)
            if path == target.path and target.label is not None and target.label not in labels:
                labels.append(target.label)
    if left:
        raise EnvironmentProblem(
            f"purged {', '.join(labels) or 'nothing'}, but could not delete: {'; '.join(left)}. "
            "Stop the processes using them (restart the agent) and purge again."
        )
    return Outcome("project", None, labels, removed)


def session_counts(root: Path, project_dir: Path, session_id: str) -> tuple[int, int]:
    """(event rows, knowledge-base chunks) a session purge would remove; read-only."""
    import sqlite3

    from ctxmode.dbfiles import open_readonly

    events = chunks = 0
    suffix = _suffix(root, project_dir)
    for h in _hashes(project_dir):
        for path, query in (
            (root / "sessions" / f"{h}{suffix}.db", "SELECT COUNT(*) FROM session_events"),
            (root / "content" / f"{h}.db", "SELECT COALESCE(SUM(chunk_count), 0) FROM sources"),
        ):
            if not path.exists():
                continue
            try:
                con = open_readonly(path)
                try:
                    n = int(
                        con.execute(query + " WHERE session_id = ?", (session_id,)).fetchone()[0]
                    )
                finally:
                    con.close()
            except sqlite3.Error:
                continue
            if path.parent.name == "sessions":
                events += n
            else:
                chunks += n
    return events, chunks


def purge_session(root: Path, project_dir: Path, session_id: str) -> Outcome:
    """Delete one session's rows and the sources indexed during it; files stay."""
    from ctxmode.session.db import SessionDB
    from ctxmode.store import ContentStore

    if not session_id:
        raise UsageError(SESSION_NEEDS_ID)
    suffix = _suffix(root, project_dir)
    events = chunks = 0
    had_rows = False
    for h in _hashes(project_dir):
        session_db = root / "sessions" / f"{h}{suffix}.db"
        if session_db.exists():
            with SessionDB(session_db) as sdb:
                had_rows |= (
                    sdb.has_session(session_id)
                    or sdb.resume(session_id) is not None
                    or bool(sdb.usage(session_id))
                )
                events += sdb.delete_session(session_id)
                _refresh_stats_file(sdb, session_db)
        content_db = root / "content" / f"{h}.db"
        if content_db.exists():
            with ContentStore(content_db) as store:
                chunks += store.delete_session_sources(session_id)
    labels = []
    if had_rows or events:
        labels.append(f"session rows for {session_id}")
    if chunks:
        labels.append(f"FTS5 chunks for {session_id}")
    return Outcome("session", session_id, labels, [], events, chunks)


def _refresh_stats_file(sdb: "SessionDB", session_db: Path) -> None:
    """Rebuild the stats file from the database, so a status line stops showing the
    purged session (the project totals are unchanged: its counters were folded)."""
    from ctxmode.session.where import read_stats_file, stats_file_for, text_field
    from ctxmode.stats.statsfile import snapshot, write_stats_file

    path = stats_file_for(session_db)
    old = read_stats_file(path)
    if old:
        sid, project = text_field(old, "session_id"), text_field(old, "project_dir")
        write_stats_file(path, snapshot(sdb, sid, project))


def message(outcome: Outcome) -> str:
    """The answer an agent (or a person) gets."""
    if outcome.scope == "session":
        what = ", ".join(outcome.labels) or "no matching rows"
        return (
            f"Purged session {outcome.session_id}: {what}. "
            "Other sessions and project-wide stats preserved."
        )
    if not outcome.labels:
        return "Nothing to purge: no data is stored for this project."
    return (
        f"Purged: {', '.join(outcome.labels)}. "
        "All session data for this project has been permanently deleted."
    )
