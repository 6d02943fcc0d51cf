"""The session database of one project: events, session meta, resume snapshots, tool counters.

Design:
* One file per project (and linked git worktree) holding many sessions, schema in
  `schema.py`. Hook processes, the CLI and the MCP server write it at once: WAL, and every
  write is one short ``BEGIN IMMEDIATE`` transaction, so concurrent writers queue instead of
  failing half way and nothing is lost.
* Hooks open it with a short busy timeout (`HOOK_BUSY_TIMEOUT_MS`) and no retries: a hook
  that cannot get the lock gives up with `StoreError` and fails open rather than stall the
  host agent. Other callers keep ``ctxmode.db``'s 30 s timeout and retries.
* Inserting skips an event equal (type and data) to one of the session's last
  `DEDUPE_WINDOW` events, and keeps at most `MAX_EVENTS_PER_SESSION` per session by
  evicting the least important, then oldest, events; the session's latest prompt is never
  evicted.
* A conversation resumed under a new session id is linked to the session it continues (a
  ``resumed_from`` event); `conversation_events` reads the whole chain.
* A damaged file is moved aside (``<name>.corrupt-<ms>``) and a fresh one started: session
  events are a convenience, safe to lose. Damage found by a write (not only at open) does
  the same; that write fails with a `StoreError` saying so, the next one goes to the new
  file. A write refused by a full disk is a `DiskFullError`.
"""

import sqlite3
import time
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from ctxmode import db
from ctxmode.errors import DiskFullError, StoreError
from ctxmode.session.events import (
    CRITICAL,
    DEDUPE_WINDOW,
    MAX_EVENTS_PER_SESSION,
    NORMAL,
    Event,
    StoredEvent,
    clip,
    data_hash,
    type_info,
)
from ctxmode.session.schema import MIGRATIONS
from ctxmode.session.usage import COUNTER_COLUMNS, EARLIER_SESSIONS, Usage
from ctxmode.typenames import NamedTuple

HOOK_BUSY_TIMEOUT_MS = 2_500
RETENTION_DAYS = 7
MAX_CHAIN = 4  # sessions of one conversation read back (resumed under new ids)
OPEN_FAILURES = 50  # failures a passing check is matched against, newest first

_COUNTERS = ", ".join(COUNTER_COLUMNS)
_ADD_COUNTERS = ", ".join(f"{c} = {c} + excluded.{c}" for c in COUNTER_COLUMNS)
_EVENT_COLUMNS = (
    "id, session_id, type, category, priority, data, source_hook, project_dir,"
    " bytes_avoided, bytes_returned, created_at"
)


def now_iso(offset_seconds: float = 0.0) -> str:
    """UTC now (plus an offset) in the database's timestamp format."""
    t = time.time() + offset_seconds
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1000):03d}Z"


class SessionMeta(NamedTuple):
    session_id: str
    project_dir: str
    platform: str
    started_at: str
    last_event_at: str | None
    event_count: int
    compact_count: int
    routing_injected_at: str | None


class Resume(NamedTuple):
    """A stored resume snapshot."""

    session_id: str
    snapshot: str
    event_count: int
    created_at: str
    consumed: bool


def _stored(row: sqlite3.Row) -> StoredEvent:
    return StoredEvent(
        id=row["id"],
        session_id=row["session_id"],
        type=row["type"],
        category=row["category"],
        priority=row["priority"],
        data=row["data"],
        source_hook=row["source_hook"],
        project_dir=row["project_dir"],
        bytes_avoided=row["bytes_avoided"],
        bytes_returned=row["bytes_returned"],
        created_at=row["created_at"],
    )


def _meta(row: sqlite3.Row) -> SessionMeta:
    return SessionMeta(
        session_id=row["session_id"],
        project_dir=row["project_dir"],
        platform=row["platform"],
        started_at=row["started_at"],
        last_event_at=row["last_event_at"],
        event_count=row["event_count"],
        compact_count=row["compact_count"],
        routing_injected_at=row["routing_injected_at"],
    )


def _resume(row: sqlite3.Row) -> Resume:
    return Resume(
        session_id=row["session_id"],
        snapshot=row["snapshot"],
        event_count=row["event_count"],
        created_at=row["created_at"],
        consumed=bool(row["consumed"]),
    )


def _non_negative(value: int) -> int:
    return value if isinstance(value, int) and value > 0 else 0


class SessionDB:
    """One project's session database. Use as a context manager or call `close`."""

    def __init__(self, path: Path | str, *, busy_timeout_ms: int | None = None) -> None:
        """Open (creating or migrating) the database at `path`.

        `busy_timeout_ms` set (hooks): wait at most that long for the write lock, once.
        None: ``ctxmode.db``'s 30 s timeout, retried.

        Raises:
            StoreError: the file cannot be opened, or was written by a newer ctxmode.
        """
        self.path = path
        self._fail_fast = busy_timeout_ms is not None
        self._busy_timeout_ms = busy_timeout_ms
        self.recovered_from: Path | None = None
        try:
            self._con = self._open()
        except sqlite3.DatabaseError as exc:
            if not db.is_corrupt(exc) or str(path) == ":memory:":
                raise self._open_failure(exc) from exc
            # A damaged file is set aside (not deleted: it may still be recoverable).
            self.recovered_from = db.set_aside(Path(path))
            try:
                self._con = self._open()
            except sqlite3.DatabaseError as again:
                raise self._open_failure(again) from again
        self._identity = None if str(path) == ":memory:" else db.identity(path)

    def _open_failure(self, exc: sqlite3.DatabaseError) -> StoreError:
        if db.is_full(exc, None if str(self.path) == ":memory:" else self.path):
            return DiskFullError(db.full_message(f"the session database {self.path}", exc))
        return StoreError(f"cannot open session database {self.path}: {exc}")

    def _write_failure(self, exc: sqlite3.DatabaseError) -> StoreError | None:
        """The error to raise for a failed write; None: re-raise it as it is.

        A damaged file is moved aside and a new one opened for the next write (unless
        another process already did: then its new file is opened).
        """
        if db.is_full(exc, None if str(self.path) == ":memory:" else self.path):
            return DiskFullError(db.full_message(f"the session database {self.path}", exc))
        if not db.is_corrupt(exc) or str(self.path) == ":memory:":
            return None
        self._con.close()
        aside = db.set_aside_if_same(Path(self.path), self._identity)
        try:
            self._con = self._open()
        except sqlite3.DatabaseError as again:
            self._con = None  # type: ignore[assignment]  # unusable: fails loudly on use
            return self._open_failure(again)
        self._identity = db.identity(self.path)
        if aside is None:
            return StoreError(f"session database {self.path} was replaced while writing: {exc}")
        self.recovered_from = aside
        return StoreError(
            f"the session database was damaged ({exc}); it was moved to {aside} and a new "
            "one started (this write was lost)"
        )

    def _open(self) -> sqlite3.Connection:
        con = db.connect(self.path)
        try:
            if self._busy_timeout_ms is not None:
                con.execute(f"PRAGMA busy_timeout={int(self._busy_timeout_ms)}")
                # A hook process is usually the last connection when it closes, and the
                # checkpoint SQLite then runs costs fsyncs (~5-10 ms). Leave it to the WAL's
                # auto-checkpoint and to long-lived connections (Python 3.12+ only).
                setconfig = getattr(con, "setconfig", None)
                no_checkpoint = getattr(sqlite3, "SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE", None)
                if setconfig is not None and no_checkpoint is not None:
                    setconfig(no_checkpoint, True)
            # Hot path: one pragma read instead of the migration machinery.
            if int(con.execute("PRAGMA user_version").fetchone()[0]) != len(MIGRATIONS):
                db.migrate(con, MIGRATIONS)
            con.execute("SELECT 1 FROM session_meta LIMIT 1").fetchall()
        except BaseException:
            con.close()
            raise
        return con

    def close(self) -> None:
        con = self._con
        if con is None:
            return
        self._con = None  # type: ignore[assignment]  # closed databases fail loudly on use
        con.close()

    def __enter__(self) -> "SessionDB":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def connection(self) -> sqlite3.Connection:
        return self._con

    # ------------------------------------------------------------------ transactions

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE`` write transaction; nested calls join the outer one.

        Raises:
            StoreError: the lock was not granted in time.
        """
        con = self._con
        if con.in_transaction:
            yield con
            return
        try:
            if not self._fail_fast:
                with db.write_transaction(con):
                    yield con
                return
            with self._fail_fast_transaction(con):
                yield con
        except sqlite3.DatabaseError as exc:
            failure = self._write_failure(exc)
            if failure is None:
                raise
            raise failure from exc

    @contextmanager
    def _fail_fast_transaction(self, con: sqlite3.Connection) -> Iterator[None]:
        try:
            con.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if db.is_busy(exc):
                raise StoreError(
                    f"session database busy for {self._busy_timeout_ms} ms: {self.path}"
                ) from exc
            raise
        try:
            yield
        except BaseException:
            db.rollback_quietly(con)  # SQLite may have rolled back already (a full disk)
            raise
        try:
            con.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            db.rollback_quietly(con)
            if db.is_full(exc) or db.is_corrupt(exc):
                raise  # worded by `transaction`
            raise StoreError(f"session database commit failed: {exc}") from exc

    # ------------------------------------------------------------------ sessions

    def ensure_session(self, session_id: str, project_dir: str = "", platform: str = "") -> None:
        """Create the session's meta row unless it exists."""
        with self.transaction() as con:
            con.execute(
                "INSERT OR IGNORE INTO session_meta(session_id, project_dir, platform)"
                " VALUES(?, ?, ?)",
                (session_id, project_dir, platform),
            )

    def meta(self, session_id: str) -> SessionMeta | None:
        row = self._con.execute(
            "SELECT * FROM session_meta WHERE session_id = ?", (session_id,)
        ).fetchone()
        return _meta(row) if row else None

    def sessions(self) -> list[SessionMeta]:
        """Every session, most recently active first."""
        rows = self._con.execute(
            "SELECT * FROM session_meta"
            " ORDER BY COALESCE(last_event_at, started_at) DESC, started_at DESC"
        ).fetchall()
        return [_meta(r) for r in rows]

    def latest_session(self) -> SessionMeta | None:
        """The most recently active session, None in an empty database."""
        row = self._con.execute(
            "SELECT * FROM session_meta"
            " ORDER BY COALESCE(last_event_at, started_at) DESC, started_at DESC LIMIT 1"
        ).fetchone()
        return None if row is None else _meta(row)

    def latest_session_id(self) -> str | None:
        latest = self.latest_session()
        return None if latest is None else latest.session_id

    def has_session(self, session_id: str) -> bool:
        row = self._con.execute(
            "SELECT 1 FROM session_meta WHERE session_id = ?"
            " UNION ALL SELECT 1 FROM session_events WHERE session_id = ? LIMIT 1",
            (session_id, session_id),
        ).fetchone()
        return row is not None

    def increment_compact_count(self, session_id: str) -> int:
        """Count one more compaction; returns the new count."""
        with self.transaction() as con:
            con.execute("INSERT OR IGNORE INTO session_meta(session_id) VALUES(?)", (session_id,))
            con.execute(
                "UPDATE session_meta SET compact_count = compact_count + 1 WHERE session_id = ?",
                (session_id,),
            )
            row = con.execute(
                "SELECT compact_count FROM session_meta WHERE session_id = ?", (session_id,)
            ).fetchone()
        return int(row[0])

    def claim_routing(self, session_id: str, *, again: bool = False) -> bool:
        """True when the routing block should be injected now, and remember that it was.

        Without `again` only the first call of a session gets True (one injection per
        session); `again` (a new context window: compact, resume, clear) always does.
        """
        with self.transaction() as con:
            con.execute("INSERT OR IGNORE INTO session_meta(session_id) VALUES(?)", (session_id,))
            cur = con.execute(
                "UPDATE session_meta SET routing_injected_at = ? WHERE session_id = ?"
                + ("" if again else " AND routing_injected_at IS NULL"),
                (now_iso(), session_id),
            )
        return cur.rowcount == 1

    def delete_session(self, session_id: str) -> int:
        """Remove one session's events, resume snapshot and meta; returns the number of
        events removed. Its tool counters and model tokens are folded into the project's
        earlier-sessions row: project-wide stats survive both retention and a one-session
        purge."""
        with self.transaction() as con:
            cur = con.execute("DELETE FROM session_events WHERE session_id = ?", (session_id,))
            con.execute("DELETE FROM session_resume WHERE session_id = ?", (session_id,))
            if session_id != EARLIER_SESSIONS:
                con.execute(
                    f"INSERT INTO tool_calls(session_id, tool, {_COUNTERS}, updated_at)"
                    f" SELECT ?, tool, {_COUNTERS}, updated_at FROM tool_calls"
                    " WHERE session_id = ? AND true ON CONFLICT(session_id, tool) DO UPDATE SET "
                    + _ADD_COUNTERS,
                    (EARLIER_SESSIONS, session_id),
                )
                con.execute("DELETE FROM tool_calls WHERE session_id = ?", (session_id,))
                from ctxmode.session import modelusage  # not on a hook's path

                modelusage.fold(con, session_id)
            con.execute("DELETE FROM session_meta WHERE session_id = ?", (session_id,))
        return cur.rowcount

    def cleanup_old_sessions(self, days: float = RETENTION_DAYS) -> list[str]:
        """Delete every session idle for more than `days` (by its last event, else its
        start; upstream went by the start alone and wiped long-running sessions)."""
        cutoff = now_iso(-days * 86_400)
        with self.transaction() as con:
            old = [
                r[0]
                for r in con.execute(
                    "SELECT session_id FROM session_meta"
                    " WHERE COALESCE(last_event_at, started_at) < ?",
                    (cutoff,),
                )
            ]
            for session_id in old:
                self.delete_session(session_id)
        return old

    def delete_orphans(self, *, keep_recent_uuid_days: float = RETENTION_DAYS) -> int:
        """Delete events whose session has no meta row, except recent ones of a session id
        that looks like a host's UUID (its meta row may not be written yet). ``pid-…``
        probe sessions and anything older go."""
        cutoff = now_iso(-keep_recent_uuid_days * 86_400)
        with self.transaction() as con:
            cur = con.execute(
                "DELETE FROM session_events WHERE session_id NOT IN"
                " (SELECT session_id FROM session_meta)"
                " AND NOT (session_id GLOB '*-*-*-*-*' AND created_at >= ?)",
                (cutoff,),
            )
        return cur.rowcount

    # ------------------------------------------------------------------ events

    def add_events(
        self,
        session_id: str,
        events: Iterable[Event],
        *,
        source_hook: str,
        project_dir: str = "",
        platform: str = "",
    ) -> int:
        """Record events of a session in one transaction (creating the session if needed);
        returns how many were stored (duplicates of the last few are skipped). Every
        event's text is redacted here, whoever built it: nothing reaches the disk with a
        secret in it (redacting twice changes nothing)."""
        from ctxmode.session.redact import redact_text

        items = [e._replace(data=redact_text(e.data)) for e in events]
        with self.transaction() as con:
            con.execute(
                "INSERT OR IGNORE INTO session_meta(session_id, project_dir, platform)"
                " VALUES(?, ?, ?)",
                (session_id, project_dir, platform),
            )
            if not items:
                return 0
            recent: deque[tuple[str, str]] = deque(
                reversed(
                    con.execute(
                        "SELECT type, data_hash FROM session_events WHERE session_id = ?"
                        " ORDER BY id DESC LIMIT ?",
                        (session_id, DEDUPE_WINDOW),
                    ).fetchall()
                ),
                maxlen=DEDUPE_WINDOW,
            )
            seen = {(r[0], r[1]) for r in recent}
            stored = 0
            for event in items:
                data = clip(event.data)
                key = (event.type, data_hash(data))
                if key in seen:
                    continue
                info = type_info(event.type)
                con.execute(
                    "INSERT INTO session_events(session_id, type, category, priority, data,"
                    " data_hash, source_hook, project_dir, bytes_avoided, bytes_returned)"
                    " VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        session_id,
                        event.type,
                        info.category,
                        event.priority,
                        data,
                        key[1],
                        source_hook,
                        project_dir,
                        _non_negative(event.bytes_avoided),
                        _non_negative(event.bytes_returned),
                    ),
                )
                recent.append(key)
                seen = set(recent)
                stored += 1
            if stored:
                self._evict(con, session_id)
                con.execute(
                    "UPDATE session_meta SET last_event_at = ?, event_count = event_count + ?"
                    " WHERE session_id = ?",
                    (now_iso(), stored, session_id),
                )
        return stored

    def add_event(self, session_id: str, event: Event, *, source_hook: str) -> bool:
        """Record one event; False when it was a duplicate."""
        return self.add_events(session_id, [event], source_hook=source_hook) == 1

    @staticmethod
    def _evict(con: sqlite3.Connection, session_id: str) -> None:
        count = int(
            con.execute(
                "SELECT count(*) FROM session_events WHERE session_id = ?", (session_id,)
            ).fetchone()[0]
        )
        excess = count - MAX_EVENTS_PER_SESSION
        if excess <= 0:
            return
        con.execute(
            "DELETE FROM session_events WHERE id IN ("
            " SELECT id FROM session_events WHERE session_id = :sid AND id IS NOT ("
            "  SELECT max(id) FROM session_events WHERE session_id = :sid"
            "  AND type = 'user_prompt')"
            " ORDER BY priority DESC, id ASC LIMIT :excess)",
            {"sid": session_id, "excess": excess},
        )

    def events(
        self,
        session_id: str,
        *,
        types: Sequence[str] | None = None,
        limit: int = MAX_EVENTS_PER_SESSION,
    ) -> list[StoredEvent]:
        """One session's events, oldest first (the newest `limit` of them)."""
        sql = f"SELECT {_EVENT_COLUMNS} FROM session_events WHERE session_id = ?"
        params: list[object] = [session_id]
        if types:
            sql += f" AND type IN ({', '.join('?' * len(types))})"
            params.extend(types)
        sql += " ORDER BY id DESC LIMIT ?"
        params.append(limit)
        rows = self._con.execute(sql, params).fetchall()
        return [_stored(r) for r in reversed(rows)]

    def open_failures(self, session_id: str) -> list[tuple[int, str]]:
        """(id, first line) of the conversation's failures not known to be fixed (this
        session's and those of the sessions it continues), newest first."""
        chain = self.chain(session_id)
        rows = self._con.execute(
            "SELECT id, data FROM session_events WHERE type = 'error_tool' AND priority <= ?"
            f" AND session_id IN ({', '.join('?' * len(chain))}) ORDER BY id DESC LIMIT ?",
            (CRITICAL, *chain, OPEN_FAILURES),
        ).fetchall()
        return [(int(r[0]), str(r[1]).strip().split("\n", 1)[0].strip()) for r in rows]

    def mark_fixed(self, ids: Sequence[int]) -> None:
        """Failures that were fixed: no longer kept over routine events."""
        if not ids:
            return
        with self.transaction() as con:
            con.execute(
                f"UPDATE session_events SET priority = ? WHERE id IN ({', '.join('?' * len(ids))})",
                (NORMAL, *ids),
            )

    def resumed_from(self, session_id: str) -> str | None:
        """The session this one continues (a conversation resumed under a new id)."""
        row = self._con.execute(
            "SELECT data FROM session_events WHERE session_id = ? AND type = 'resumed_from'"
            " ORDER BY id DESC LIMIT 1",
            (session_id,),
        ).fetchone()
        return None if row is None else str(row[0])

    def continued(self, session_id: str) -> bool:
        """Whether another session already continues this one."""
        row = self._con.execute(
            "SELECT 1 FROM session_events WHERE type = 'resumed_from' AND data = ? LIMIT 1",
            (session_id,),
        ).fetchone()
        return row is not None

    def chain(self, session_id: str) -> list[str]:
        """The session and the sessions it continues, newest first (up to `MAX_CHAIN`)."""
        chain, current = [session_id], self.resumed_from(session_id)
        while current is not None and current not in chain and len(chain) < MAX_CHAIN:
            chain.append(current)
            current = self.resumed_from(current)
        return chain

    def conversation_events(self, session_id: str) -> list[StoredEvent]:
        """The events of a session and of the sessions it continues, oldest first: one
        conversation, whatever ids the host gave it."""
        out: list[StoredEvent] = []
        for sid in reversed(self.chain(session_id)):
            out += self.events(sid)
        return out

    def has_work(self, session_id: str, no_work: Iterable[str]) -> bool:
        """Whether the session recorded any event but those of `no_work` types."""
        skip = list(no_work) or [""]
        row = self._con.execute(
            "SELECT 1 FROM session_events WHERE session_id = ?"
            f" AND type NOT IN ({', '.join('?' * len(skip))}) LIMIT 1",
            (session_id, *skip),
        ).fetchone()
        return row is not None

    def known_sessions(self, ids: Iterable[str]) -> list[str]:
        """Those of `ids` this database has a session for, most recently active first."""
        wanted = list(dict.fromkeys(i for i in ids if i))
        if not wanted:
            return []
        rows = self._con.execute(
            f"SELECT session_id FROM session_meta WHERE session_id IN"
            f" ({', '.join('?' * len(wanted))})"
            " ORDER BY COALESCE(last_event_at, started_at) DESC, started_at DESC",
            wanted,
        ).fetchall()
        return [str(r[0]) for r in rows]

    def sessions_starting_with(self, prefix: str) -> list[str]:
        """Session ids beginning with `prefix` (a host's short id), most recent first."""
        escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        rows = self._con.execute(
            "SELECT session_id FROM session_meta WHERE session_id LIKE ? ESCAPE '\\'"
            " ORDER BY COALESCE(last_event_at, started_at) DESC",
            (escaped + "%",),
        ).fetchall()
        return [str(r[0]) for r in rows]

    def event_count(self, session_id: str) -> int:
        return int(
            self._con.execute(
                "SELECT count(*) FROM session_events WHERE session_id = ?", (session_id,)
            ).fetchone()[0]
        )

    def search_events(
        self, query: str, *, limit: int = 20, category: str | None = None
    ) -> list[StoredEvent]:
        """Events of any session of this project whose data or category contains `query`
        (case-insensitive), oldest first."""
        escaped = query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        sql = (
            f"SELECT {_EVENT_COLUMNS} FROM session_events"
            " WHERE (data LIKE :q ESCAPE '\\' OR category LIKE :q ESCAPE '\\')"
        )
        params: dict[str, object] = {"q": f"%{escaped}%", "limit": limit}
        if category is not None:
            sql += " AND category = :category"
            params["category"] = category
        sql += " ORDER BY id LIMIT :limit"
        return [_stored(r) for r in self._con.execute(sql, params).fetchall()]

    # ------------------------------------------------------------------ resume snapshots

    def upsert_resume(self, session_id: str, snapshot: str, event_count: int) -> None:
        """Store the session's snapshot, replacing the previous one (unconsumed again)."""
        with self.transaction() as con:
            con.execute(
                "INSERT INTO session_resume(session_id, snapshot, event_count, created_at,"
                " consumed) VALUES(?, ?, ?, ?, 0)"
                " ON CONFLICT(session_id) DO UPDATE SET snapshot = excluded.snapshot,"
                " event_count = excluded.event_count, created_at = excluded.created_at,"
                " consumed = 0",
                (session_id, snapshot, event_count, now_iso()),
            )

    def resume(self, session_id: str) -> Resume | None:
        row = self._con.execute(
            "SELECT * FROM session_resume WHERE session_id = ?", (session_id,)
        ).fetchone()
        return _resume(row) if row else None

    def take_resume(self, session_id: str) -> Resume | None:
        """The session's own unconsumed snapshot, marked consumed; None if there is none."""
        with self.transaction() as con:
            row = con.execute(
                "SELECT * FROM session_resume WHERE session_id = ? AND consumed = 0",
                (session_id,),
            ).fetchone()
            if row is None:
                return None
            con.execute(
                "UPDATE session_resume SET consumed = 1 WHERE session_id = ?", (session_id,)
            )
        return _resume(row)

    def mark_resume_consumed(self, session_id: str) -> bool:
        """Mark the session's snapshot consumed; False when there was none unconsumed."""
        with self.transaction() as con:
            cur = con.execute(
                "UPDATE session_resume SET consumed = 1 WHERE session_id = ? AND consumed = 0",
                (session_id,),
            )
        return cur.rowcount == 1

    def claim_latest_resume(
        self, current_session_id: str, *, max_age_days: float = RETENTION_DAYS
    ) -> Resume | None:
        """Atomically take the newest unconsumed snapshot of *another* session.

        Two concurrent claimers never get the same row (the read and the update share one
        write transaction); a session never claims its own snapshot. None when nothing is
        claimable.
        """
        cutoff = now_iso(-max_age_days * 86_400)
        with self.transaction() as con:
            row = con.execute(
                "SELECT * FROM session_resume WHERE consumed = 0 AND session_id != ?"
                " AND created_at >= ? ORDER BY created_at DESC, rowid DESC LIMIT 1",
                (current_session_id, cutoff),
            ).fetchone()
            if row is None:
                return None
            con.execute(
                "UPDATE session_resume SET consumed = 1 WHERE session_id = ?",
                (row["session_id"],),
            )
        return _resume(row)

    # ------------------------------------------------------------------ tool counters

    def add_usage(self, session_id: str, tool: str, usage: Usage) -> None:
        """Add one call's (or several calls') counters to the session's row for `tool`
        and to today's row (UTC) of the daily history."""
        values = [_non_negative(v) for v in usage]
        now = now_iso()
        with self.transaction() as con:
            con.execute(
                f"INSERT INTO tool_calls(session_id, tool, {_COUNTERS}, updated_at)"
                " VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(session_id, tool) DO UPDATE SET "
                + _ADD_COUNTERS
                + ", updated_at = excluded.updated_at",
                (session_id, tool, *values, now),
            )
            con.execute(
                f"INSERT INTO usage_daily(day, tool, {_COUNTERS}) VALUES(?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT(day, tool) DO UPDATE SET " + _ADD_COUNTERS,
                (now[:10], tool, *values),
            )

    def usage(self, session_id: str | None = None) -> dict[str, Usage]:
        """Counters per tool: of one session, or (None) of the whole project, earlier
        (deleted) sessions included."""
        where, args = (
            ("WHERE session_id = ?", (session_id,)) if session_id is not None else ("", ())
        )
        sums = ", ".join(f"SUM({c})" for c in COUNTER_COLUMNS)
        rows = self._con.execute(
            f"SELECT tool, {sums} FROM tool_calls {where} GROUP BY tool ORDER BY tool", args
        ).fetchall()
        return {r[0]: Usage(*(int(v or 0) for v in tuple(r)[1:])) for r in rows}
