"""Recording what each MCP tool call measured, and the stats file status bars read.

The server counts one `Usage` per call and adds them to the project's session database
(``tool_calls``, per session and tool) a moment later, once for a burst of calls, then
rewrites the project's stats file (`ctxmode.stats.statsfile`): the current session's and
the project's totals, so a status line shows them without opening SQLite. Whatever reads
the counters in this process flushes them first (`Recorder.flush`); closing does too.

Which session a call belongs to: ``CTXMODE_SESSION_ID``, or a host's session variable
(``CLAUDE_SESSION_ID``, ``CODEX_THREAD_ID``, ...) when the host sets one; else the project's
session the hooks saw active in the last day (hosts start one MCP server per conversation,
and the SessionStart hook records it first); else ``pid-<parent pid>``, the same id hooks
give a host that names no session.
"""

import logging
import os
import threading
import time
from pathlib import Path

from ctxmode import settings
from ctxmode.errors import CtxError
from ctxmode.session.db import SessionDB, now_iso
from ctxmode.session.where import stats_file_for
from ctxmode.stats.model import Usage
from ctxmode.stats.statsfile import snapshot, write_stats_file

log = logging.getLogger("ctxmode.stats")

ACTIVE_WITHIN_S = 86_400
# Calls are written to the database, and the stats file rewritten, this long after a call:
# once for every call in between.
STATS_FILE_DELAY_S = 0.25
SESSION_KEPT_S = 2.0  # how long the session the database named is used without asking


def session_from_env() -> str | None:
    """``CTXMODE_SESSION_ID``, else a host's session variable (``CLAUDE_SESSION_ID``, ...:
    the platform descriptors' ``session_vars``)."""
    from ctxmode.platforms import descriptors

    found = settings.session_id()
    for var in (v for host in descriptors() for v in host.session_vars):
        found = found or os.environ.get(var, "").strip()
    return found or None


class Recorder:
    """The server's counters: one per process, shared by the worker threads."""

    def __init__(self, session_db: Path, project_dir: Path) -> None:
        self.session_db = session_db
        self.project_dir = project_dir
        self._db: SessionDB | None = None
        self._inode: int | None = None
        self._lock = threading.Lock()
        self._unwritten: dict[tuple[str, str], Usage] = {}  # (session, tool): not yet written
        self._flush_timer: threading.Timer | None = None
        self._latest: tuple[float, str] | None = None  # (when, session) the database named

    @property
    def stats_file(self) -> Path:
        return stats_file_for(self.session_db)

    def _open(self) -> SessionDB:
        """The database, reopened when its file was deleted or replaced under us (a purge
        from the CLI while this server runs): counting into the old, unlinked file would
        bring purged totals back into the stats file."""
        try:
            inode: int | None = self.session_db.stat().st_ino
        except OSError:
            inode = None
        if self._db is not None and (inode is None or inode != self._inode):
            self._db.close()
            self._db = None
        if self._db is None:
            self._db = SessionDB(self.session_db)
            self._inode = self.session_db.stat().st_ino
        return self._db

    def session_id(self) -> str:
        """The session calls are counted under (see the module docstring); the
        database's answer is kept for `SESSION_KEPT_S`."""
        found = session_from_env()
        if found:
            return found
        now = time.monotonic()
        if self._latest is not None and now - self._latest[0] < SESSION_KEPT_S:
            return self._latest[1]
        try:
            with self._lock:
                latest = self._open().latest_session()
        except Exception:  # counting must never break a tool call
            latest = None
        if latest is not None and (latest.last_event_at or latest.started_at) >= now_iso(
            -ACTIVE_WITHIN_S
        ):
            sid = latest.session_id
        else:
            sid = f"pid-{os.getppid()}"
        self._latest = (now, sid)
        return sid

    def record(self, tool: str, usage: Usage, session_id: str | None = None) -> None:
        """Count one call: kept in memory and written, with the stats file, within
        `STATS_FILE_DELAY_S` (once for a burst of calls), or by `flush`."""
        sid = session_id or self.session_id()
        with self._lock:
            key = (sid, tool)
            self._unwritten[key] = self._unwritten.get(key, Usage()).plus(usage)
            if self._flush_timer is None:
                self._flush_timer = threading.Timer(STATS_FILE_DELAY_S, self.flush)
                self._flush_timer.daemon = True
                self._flush_timer.start()

    def flush(self) -> None:
        """Write the calls counted since the last flush, then rewrite the stats file;
        failures are logged only (counting must never break a tool call)."""
        started = time.perf_counter()
        with self._lock:
            if self._flush_timer is not None:
                self._flush_timer.cancel()
                self._flush_timer = None
            counted, self._unwritten = self._unwritten, {}
            if not counted:
                return
            try:
                sdb = self._open()
                for (sid, tool), usage in counted.items():
                    sdb.add_usage(sid, tool, usage)
                write_stats_file(self.stats_file, snapshot(sdb, sid, str(self.project_dir)))
            except (CtxError, OSError) as exc:  # says what is wrong (a full disk)
                log.warning("could not record stats: %s", exc)
            except Exception:
                log.exception("could not record stats")
        log.debug("stats recorded in %.1f ms", (time.perf_counter() - started) * 1e3)

    def close(self) -> None:
        self.flush()
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
