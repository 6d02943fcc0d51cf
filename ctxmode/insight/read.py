"""What the dashboard needs beyond `ctxmode.stats.collect`: counters per day and file paths.

Read-only like the stats readers (SQLite ``mode=ro``): looking at the dashboard must never
create, migrate or lock a database that hooks and servers are writing. Errors are raised
as ``sqlite3.Error`` so the caller can name the database in its list of problems.
"""

import re
import sqlite3
from datetime import date
from pathlib import Path
from typing import NamedTuple

from ctxmode.stats.model import Usage

# Only these file events hold a path; globs and searches hold patterns, not files.
FILE_PATH_TYPES = ("file_read", "file_edit", "file_write")
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_DAILY_COLUMNS = (  # in `Usage` order
    "calls",
    "bytes_returned",
    "bytes_sandboxed",
    "bytes_indexed",
    "cache_hits",
    "cache_bytes_saved",
)
_MAX_PATH_CHARS = 4096  # longer "paths" are captured text, not a file name


class Activity(NamedTuple):
    """One session database's counters per UTC day and its file events."""

    daily: dict[str, Usage]
    files: dict[tuple[str, str], int]  # (event's project dir, path as recorded) -> events


def _connect_ro(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5)


def _is_day(value: object) -> bool:
    """A real calendar date as YYYY-MM-DD (a hand-edited row must not break the chart)."""
    if not isinstance(value, str) or not _DAY.fullmatch(value):
        return False
    try:
        date.fromisoformat(value)
    except ValueError:
        return False
    return True


def _daily(con: sqlite3.Connection) -> dict[str, Usage]:
    """Counters by the UTC day each ``tool_calls`` row was last updated.

    A row sums every call of one tool in one session, so its bytes land on the day of the
    session's last call of that tool: the finest split the database records.
    """
    have = {r[1] for r in con.execute("PRAGMA table_info(tool_calls)")}
    sums = ", ".join(f"SUM({c})" if c in have else "0" for c in _DAILY_COLUMNS)
    rows = con.execute(
        f"SELECT substr(updated_at, 1, 10) AS day, {sums} FROM tool_calls GROUP BY day"
    ).fetchall()
    daily: dict[str, Usage] = {}
    for day, *values in rows:
        if _is_day(day):
            daily[day] = Usage(*(int(v or 0) for v in values))
    return daily


def _files(con: sqlite3.Connection) -> dict[tuple[str, str], int]:
    marks = ",".join("?" * len(FILE_PATH_TYPES))
    rows = con.execute(
        "SELECT project_dir, data, COUNT(*) FROM session_events"
        f" WHERE category = 'file' AND type IN ({marks}) AND LENGTH(data) <= ?"
        " GROUP BY project_dir, data",
        (*FILE_PATH_TYPES, _MAX_PATH_CHARS),
    ).fetchall()
    return {(str(r[0] or ""), str(r[1])): int(r[2]) for r in rows if str(r[1]).strip()}


def activity(session_db: Path) -> Activity:
    """Daily counters and file events of one session database (empty when it is absent).

    Raises:
        sqlite3.Error: the database cannot be read.
    """
    if not session_db.exists():
        return Activity({}, {})
    con = _connect_ro(session_db)
    try:
        return Activity(_daily(con), _files(con))
    finally:
        con.close()
