"""Reading the counters back: one session, one project, every project.

Everything here is read-only (`dbfiles.open_readonly`), never creates a file (a report
must not make an idle project look used) and never fails a report: a database that cannot
be read contributes nothing and is named in ``problems``.
"""

import sqlite3
from pathlib import Path
from typing import Any, NamedTuple

from ctxmode.dbfiles import open_readonly
from ctxmode.session import modelusage
from ctxmode.session.hostusage import TokenUsage
from ctxmode.session.where import read_stats_file, stats_file_for, text_field
from ctxmode.stats.model import COUNTER_COLUMNS, EARLIER_SESSIONS, Usage

REDIRECT_TYPES = ("bash_redirected", "webfetch_redirected", "read_redirected")


class Captured(NamedTuple):
    """What hooks recorded: material for continuity, not context saved."""

    events: int = 0
    data_bytes: int = 0
    by_category: dict[str, int] = {}
    redirects: int = 0


class Scope(NamedTuple):
    """The counters of one session or of a whole project."""

    by_tool: dict[str, Usage]
    captured: Captured
    sessions: int = 0
    started_at: str | None = None
    last_at: str | None = None
    models: dict[str, TokenUsage] = {}  # the tokens the host reports, per model


class ProjectStats(NamedTuple):
    project_dir: str
    session_db: Path
    session_id: str | None
    session: Scope | None
    project: Scope


def counter_sums(con: sqlite3.Connection, table: str) -> str:
    """``SUM(column)`` for every counter of `table`, in `Usage` order; ``0`` for a column
    a database not yet migrated lacks (its ``tool_calls`` has only the first two)."""
    have = {str(r[1]) for r in con.execute(f"PRAGMA table_info({table})")}
    return ", ".join(f"SUM({c})" if c in have else "0" for c in COUNTER_COLUMNS)


def _usage(con: sqlite3.Connection, session_id: str | None) -> dict[str, Usage]:
    sums = counter_sums(con, "tool_calls")
    where, args = ("WHERE session_id = ?", (session_id,)) if session_id is not None else ("", ())
    rows = con.execute(f"SELECT tool, {sums} FROM tool_calls {where} GROUP BY tool", args)
    return {r[0]: Usage(*(int(v or 0) for v in tuple(r)[1:])) for r in rows}


def _captured(con: sqlite3.Connection, session_id: str | None) -> Captured:
    where, args = ("WHERE session_id = ?", (session_id,)) if session_id is not None else ("", ())
    rows = con.execute(
        f"SELECT category, COUNT(*), SUM(LENGTH(CAST(data AS BLOB))) FROM session_events {where}"
        " GROUP BY category",
        args,
    ).fetchall()
    marks = ",".join("?" * len(REDIRECT_TYPES))
    redirect_where = f"{where} AND" if where else "WHERE"
    redirects = con.execute(
        f"SELECT COUNT(*) FROM session_events {redirect_where} type IN ({marks})",
        (*args, *REDIRECT_TYPES),
    ).fetchone()[0]
    return Captured(
        events=sum(int(r[1]) for r in rows),
        data_bytes=sum(int(r[2] or 0) for r in rows),
        by_category={r[0]: int(r[1]) for r in sorted(rows, key=lambda r: -int(r[1]))},
        redirects=int(redirects),
    )


def _span(con: sqlite3.Connection, session_id: str | None) -> tuple[str | None, str | None]:
    where, args = ("WHERE session_id = ?", (session_id,)) if session_id is not None else ("", ())
    meta = con.execute(
        "SELECT MIN(started_at), MAX(COALESCE(last_event_at, started_at))"
        f" FROM session_meta {where}",
        args,
    ).fetchone()
    calls = con.execute(
        f"SELECT MIN(updated_at), MAX(updated_at) FROM tool_calls {where}", args
    ).fetchone()
    starts = [v for v in (meta[0], calls[0]) if v]
    ends = [v for v in (meta[1], calls[1]) if v]
    return (min(starts) if starts else None, max(ends) if ends else None)


def _scope(con: sqlite3.Connection, session_id: str | None) -> Scope:
    started, last = _span(con, session_id)
    if session_id is None:
        sessions = con.execute(
            "SELECT COUNT(*) FROM (SELECT session_id FROM session_meta UNION"
            " SELECT session_id FROM tool_calls WHERE session_id != ?)",
            (EARLIER_SESSIONS,),
        ).fetchone()[0]
    else:
        sessions = 1
    return Scope(
        _usage(con, session_id),
        _captured(con, session_id),
        int(sessions),
        started,
        last,
        modelusage.read(con, session_id),
    )


def _project_dir(con: sqlite3.Connection, session_db: Path) -> str:
    """The project a session database belongs to: as the stats file or the hooks say."""
    found = text_field(read_stats_file(stats_file_for(session_db)), "project_dir")
    if found:
        return found
    row = con.execute(
        "SELECT project_dir FROM session_meta WHERE project_dir != ''"
        " ORDER BY COALESCE(last_event_at, started_at) DESC LIMIT 1"
    ).fetchone()
    return str(row[0]) if row else ""


def read_project(
    session_db: Path, session_id: str | None = None, project_dir: str = ""
) -> ProjectStats | None:
    """The counters of the project whose session database is `session_db`; None when the
    database does not exist yet.

    Raises:
        sqlite3.Error: the database cannot be read (callers decide how to report it).
    """
    if not session_db.exists():
        return None
    con = open_readonly(session_db)
    try:
        project = _scope(con, None)
        session = _scope(con, session_id) if session_id else None
        return ProjectStats(
            project_dir or _project_dir(con, session_db), session_db, session_id, session, project
        )
    finally:
        con.close()


def session_dbs(sessions_dir: Path) -> list[Path]:
    """Every project's session database (set-aside damaged copies excluded)."""
    try:
        return sorted(p for p in sessions_dir.glob("*.db") if p.is_file())
    except OSError:
        return []


def read_all(sessions_dir: Path) -> tuple[list[ProjectStats], list[str]]:
    """Every project's counters, and the databases that could not be read."""
    found: list[ProjectStats] = []
    problems: list[str] = []
    for path in session_dbs(sessions_dir):
        try:
            stats = read_project(path)
        except sqlite3.Error as exc:
            problems.append(f"{path.name}: {exc}")
            continue
        if stats is not None:
            found.append(stats)
    return found, problems


def knowledge_base(content_db: Path) -> dict[str, Any]:
    """Sources, chunks and bytes of a project's knowledge base (zeros when absent)."""
    empty = {"sources": 0, "chunks": 0, "bytes": 0, "file_bytes": 0}
    if not content_db.exists():
        return empty
    try:
        con = open_readonly(content_db)
    except sqlite3.Error:
        return empty
    try:
        row = con.execute(
            "SELECT COUNT(*), COALESCE(SUM(chunk_count), 0), COALESCE(SUM(bytes), 0) FROM sources"
        ).fetchone()
    except sqlite3.Error:
        return empty
    finally:
        con.close()
    size = sum(p.stat().st_size for p in (content_db, Path(f"{content_db}-wal")) if p.exists())
    return {"sources": int(row[0]), "chunks": int(row[1]), "bytes": int(row[2]), "file_bytes": size}
