"""Schema of the per-project session database, as ordered migrations.

Tables:
    session_meta    one row per session: project, platform, start and last activity,
                    how many events were ever recorded, compactions, and when the routing
                    block was injected (at most once per session and context window)
    session_events  the events; ``priority`` is importance (1 keep longest … 4 evict first),
                    ``data_hash`` the dedupe key; ids only grow (AUTOINCREMENT), so "the last
                    N events" is "the N highest ids"
    session_resume  at most one resume snapshot per session; ``consumed`` once injected
    tool_calls      per session and tool, the MCP server's measured counters: calls, bytes
                    returned to the agent, bytes kept in the sandbox (measured output, file
                    or page bytes that never entered the context), bytes indexed, fetch
                    cache hits and the bytes they spared re-downloading. Rows of deleted
                    sessions are folded into session ``''`` so project totals survive.
    usage_daily     the same counters per UTC day and tool, never folded: the history
                    (savings over time) outlives sessions
    model_usage     per session and model, the tokens the host itself reports (input not
                    read from cache, output, cache read, cache creation) and the replies
                    they came from, as turn-end hooks read them; folded like tool_calls
    usage_cursor    per session, how far the host's transcript has been read (file, byte
                    offset, the model and last reply seen there), advanced in the same
                    transaction as model_usage so no reply is counted twice

Timestamps are ISO-8601 UTC with milliseconds and a ``Z``, so they sort as text.
"""

import sqlite3
from collections.abc import Callable

NOW = "(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))"


def m001_initial(con: sqlite3.Connection) -> None:
    statements = [
        f"""
        CREATE TABLE session_meta(
            session_id TEXT PRIMARY KEY,
            project_dir TEXT NOT NULL DEFAULT '',
            platform TEXT NOT NULL DEFAULT '',
            started_at TEXT NOT NULL DEFAULT {NOW},
            last_event_at TEXT,
            event_count INTEGER NOT NULL DEFAULT 0,
            compact_count INTEGER NOT NULL DEFAULT 0,
            routing_injected_at TEXT
        )""",
        f"""
        CREATE TABLE session_events(
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id TEXT NOT NULL,
            type TEXT NOT NULL,
            category TEXT NOT NULL,
            priority INTEGER NOT NULL DEFAULT 2,
            data TEXT NOT NULL,
            data_hash TEXT NOT NULL,
            source_hook TEXT NOT NULL DEFAULT '',
            project_dir TEXT NOT NULL DEFAULT '',
            bytes_avoided INTEGER NOT NULL DEFAULT 0,
            bytes_returned INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL DEFAULT {NOW}
        )""",
        "CREATE INDEX session_events_session ON session_events(session_id, id)",
        "CREATE INDEX session_events_type ON session_events(session_id, type)",
        "CREATE INDEX session_events_evict ON session_events(session_id, priority, id)",
        f"""
        CREATE TABLE session_resume(
            session_id TEXT PRIMARY KEY,
            snapshot TEXT NOT NULL,
            event_count INTEGER NOT NULL,
            created_at TEXT NOT NULL DEFAULT {NOW},
            consumed INTEGER NOT NULL DEFAULT 0
        )""",
        "CREATE INDEX session_resume_claim ON session_resume(consumed, created_at)",
        f"""
        CREATE TABLE tool_calls(
            session_id TEXT NOT NULL,
            tool TEXT NOT NULL,
            calls INTEGER NOT NULL DEFAULT 0,
            bytes_returned INTEGER NOT NULL DEFAULT 0,
            updated_at TEXT NOT NULL DEFAULT {NOW},
            PRIMARY KEY(session_id, tool)
        )""",
    ]
    for statement in statements:
        con.execute(statement)


def m002_tool_counters(con: sqlite3.Connection) -> None:
    for column in ("bytes_sandboxed", "bytes_indexed", "cache_hits", "cache_bytes_saved"):
        con.execute(f"ALTER TABLE tool_calls ADD COLUMN {column} INTEGER NOT NULL DEFAULT 0")
    # Spelled out, not `session.usage.COUNTER_COLUMNS`: a migration must never change.
    counters = ", ".join(
        f"{c} INTEGER NOT NULL DEFAULT 0"
        for c in (
            "calls",
            "bytes_returned",
            "bytes_sandboxed",
            "bytes_indexed",
            "cache_hits",
            "cache_bytes_saved",
        )
    )
    con.execute(
        f"CREATE TABLE usage_daily(day TEXT NOT NULL, tool TEXT NOT NULL, {counters},"
        " PRIMARY KEY(day, tool))"
    )


def m003_model_usage(con: sqlite3.Connection) -> None:
    con.execute(
        f"""
        CREATE TABLE model_usage(
            session_id TEXT NOT NULL,
            model TEXT NOT NULL,
            replies INTEGER NOT NULL DEFAULT 0,
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            cache_read_tokens INTEGER NOT NULL DEFAULT 0,
            cache_creation_tokens INTEGER NOT NULL DEFAULT 0,
            updated_at TEXT NOT NULL DEFAULT {NOW},
            PRIMARY KEY(session_id, model)
        )"""
    )
    con.execute(
        f"""
        CREATE TABLE usage_cursor(
            session_id TEXT PRIMARY KEY,
            path TEXT NOT NULL DEFAULT '',
            byte_offset INTEGER NOT NULL DEFAULT 0,
            model TEXT NOT NULL DEFAULT '',
            last_id TEXT NOT NULL DEFAULT '',
            updated_at TEXT NOT NULL DEFAULT {NOW}
        )"""
    )


MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [
    m001_initial,
    m002_tool_counters,
    m003_model_usage,
]
