"""The tokens each model used, per session, as the host reports them (``model_usage``), and
how far the host's transcript has been read (``usage_cursor``); see `ctxmode.session.schema`.

A turn-end hook adds what the turn added and moves the cursor in one transaction: a hook
that fails half way counts nothing, and a reply is never counted twice. A deleted
session's rows are folded into the earlier-sessions row, like its tool counters.
"""

import sqlite3
from collections.abc import Mapping

from ctxmode.session.hostusage import Cursor, TokenUsage
from ctxmode.session.usage import EARLIER_SESSIONS

COLUMNS = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_creation_tokens",
    "replies",
)  # in `TokenUsage` field order
_COLUMNS = ", ".join(COLUMNS)
_ADD = ", ".join(f"{c} = {c} + excluded.{c}" for c in COLUMNS)


def _has_table(con: sqlite3.Connection, name: str) -> bool:
    found = con.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,))
    return found.fetchone() is not None


def add(
    con: sqlite3.Connection, session_id: str, found: Mapping[str, TokenUsage], now: str
) -> None:
    """Add tokens per model to the session's rows (call inside a write transaction)."""
    for model, usage in found.items():
        con.execute(
            f"INSERT INTO model_usage(session_id, model, {_COLUMNS}, updated_at)"
            " VALUES(?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(session_id, model) DO UPDATE SET "
            + _ADD
            + ", updated_at = excluded.updated_at",
            (session_id, model, *(max(0, v) for v in usage), now),
        )


def cursor(con: sqlite3.Connection, session_id: str) -> Cursor:
    row = con.execute(
        "SELECT path, byte_offset, model, last_id FROM usage_cursor WHERE session_id = ?",
        (session_id,),
    ).fetchone()
    return Cursor(str(row[0]), int(row[1]), str(row[2]), str(row[3])) if row else Cursor()


def move_cursor(con: sqlite3.Connection, session_id: str, to: Cursor, now: str) -> None:
    con.execute(
        "INSERT INTO usage_cursor(session_id, path, byte_offset, model, last_id, updated_at)"
        " VALUES(?, ?, ?, ?, ?, ?) ON CONFLICT(session_id) DO UPDATE SET path = excluded.path,"
        " byte_offset = excluded.byte_offset, model = excluded.model,"
        " last_id = excluded.last_id, updated_at = excluded.updated_at",
        (session_id, *to, now),
    )


def fold(con: sqlite3.Connection, session_id: str) -> None:
    """Move a deleted session's tokens into the earlier-sessions row; drop its cursor."""
    if session_id == EARLIER_SESSIONS or not _has_table(con, "model_usage"):
        return
    con.execute(
        f"INSERT INTO model_usage(session_id, model, {_COLUMNS}, updated_at)"
        f" SELECT ?, model, {_COLUMNS}, updated_at FROM model_usage"
        " WHERE session_id = ? AND true ON CONFLICT(session_id, model) DO UPDATE SET " + _ADD,
        (EARLIER_SESSIONS, session_id),
    )
    con.execute("DELETE FROM model_usage WHERE session_id = ?", (session_id,))
    con.execute("DELETE FROM usage_cursor WHERE session_id = ?", (session_id,))


def read(con: sqlite3.Connection, session_id: str | None = None) -> dict[str, TokenUsage]:
    """Tokens per model of one session, or (None) of the whole project; ``{}`` for a
    database that predates the table (reports open databases read-only, unmigrated)."""
    if not _has_table(con, "model_usage"):
        return {}
    where, args = ("WHERE session_id = ?", (session_id,)) if session_id is not None else ("", ())
    sums = ", ".join(f"SUM({c})" for c in COLUMNS)
    rows = con.execute(
        f"SELECT model, {sums} FROM model_usage {where} GROUP BY model ORDER BY model", args
    ).fetchall()
    return {str(r[0]): TokenUsage(*(int(v or 0) for v in tuple(r)[1:])) for r in rows}
