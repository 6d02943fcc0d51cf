"""What the dashboard needs beyond `ctxmode.stats.collect`: counters per day and file paths.

Read-only like the stats readers (`ctxmode.dbfiles.open_readonly`): looking at the
dashboard must never create, migrate or lock a database that hooks and servers are
writing, nor leave a ``-wal``/``-shm`` file next to a closed one (gc would take that for
use). Errors are raised as ``sqlite3.Error`` so the caller can name the database in its
list of problems.
"""

import re
import sqlite3
from datetime import date
from pathlib import Path
from typing import NamedTuple

from ctxmode.dbfiles import open_readonly
from ctxmode.stats.collect import counter_sums
from ctxmode.stats.model import Usage

# Only these file events hold a path; globs and searches hold patterns, not files.
FILE_PATH_TYPES = ("file_read", "file_edit", "file_write")
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_MAX_PATH_CHARS = 4096  # longer "paths" are captured text, not a file name


class Activity(NamedTuple):
    """One session database's counters per UTC day and its file events."""

    daily: dict[str, Usage]
    files: dict[tuple[str, str], int]  # (event's project dir, path as recorded) -> events
    # True when the days come from the per-call history (``usage_daily``); False for a
    # database written before it existed, whose days are only approximate (see `_daily`).
    exact_days: bool = True


def _is_day(value: object) -> bool:
    """A real calendar date as YYYY-MM-DD (a hand-edited row must not break the chart)."""
    if not isinstance(value, str) or not _DAY.fullmatch(value):
        return False
    try:
        date.fromisoformat(value)
    except ValueError:
        return False
    return True


def _daily(con: sqlite3.Connection) -> tuple[dict[str, Usage], bool]:
    """Counters per UTC day summed over tools, and whether the days are exact.

    ``usage_daily`` counts every call on the day it was made and is never folded, so a
    deleted session's history keeps its days. A database written before that table
    existed only has ``tool_calls``: one row per session and tool whose bytes land on the
    day it was last updated, and the rows of deleted sessions, folded into one, pile onto
    a single day. That is still the best it can tell, so it is used then.
    """
    exact = (
        con.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'usage_daily'"
        ).fetchone()
        is not None
    )
    if exact:
        query = f"SELECT day, {counter_sums(con, 'usage_daily')} FROM usage_daily GROUP BY day"
    else:
        query = (
            f"SELECT substr(updated_at, 1, 10) AS day, {counter_sums(con, 'tool_calls')}"
            " FROM tool_calls GROUP BY day"
        )
    daily: dict[str, Usage] = {}
    for day, *values in con.execute(query).fetchall():
        if _is_day(day):
            daily[day] = Usage(*(int(v or 0) for v in values))
    return daily, exact


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
    con = open_readonly(session_db)
    try:
        daily, exact = _daily(con)
        return Activity(daily, _files(con), exact)
    finally:
        con.close()
