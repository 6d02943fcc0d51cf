"""What one server process holds between tool calls: the project, its knowledge base, the
runs it has started, and the search flood guard's windows."""

import logging
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ctxmode import paths, settings
from ctxmode.db import identity
from ctxmode.executor import BackgroundRuns
from ctxmode.stats.record import Recorder
from ctxmode.store import ContentStore

if TYPE_CHECKING:
    from ctxmode.security import Policy, PolicyCache

log = logging.getLogger("ctxmode.server")

SWEEP_INTERVAL_S = 2.0
# What ctx_index stored is made searchable after this long without another call (a search
# does it at once): a burst of calls shares one full-text index write.
CATCH_UP_WHEN_IDLE_S = 0.05


@dataclass
class _Window:
    started: float
    count: int = 0


AGENT_SHARE = 4  # all callers together are allowed the calls of this many
MAX_CALLERS = 256  # windows kept; past it the expired go, then the oldest


@dataclass(frozen=True)
class Tally:
    """One ctx_search call counted: the count that decides how it is answered, and the
    calls behind it (the caller's, or with `shared` all callers') in the window that began
    `elapsed` seconds ago."""

    count: int
    calls: int
    elapsed: float
    shared: bool = False


@dataclass
class FloodGuard:
    """Counts ctx_search calls per caller (client session, and agent when the client says
    which): parallel sub-agents sharing one server never exhaust each other's budget. The
    window is ``CTXMODE_SEARCH_WINDOW_MS`` long.

    The agent is whatever the client names in a request's ``_meta``, so a client could
    name a new one per call. All callers' calls together also count, as `AGENT_SHARE`
    callers' (a quarter of them counts as one caller's calls), so inventing agents buys
    at most that many callers' budget. Over stdio a server has one client: this total is
    the connection's."""

    windows: dict[str, _Window] = field(default_factory=dict)
    everyone: _Window | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def hit(self, caller: str, now: float | None = None) -> Tally:
        """Count one call; return the count that decides its answer."""
        now = time.monotonic() if now is None else now
        length = settings.search_window_ms() / 1000
        with self._lock:
            window = self.windows.get(caller)
            if window is None or now - window.started > length:
                if window is None and len(self.windows) >= MAX_CALLERS:
                    self._forget(now, length)
                window = self.windows[caller] = _Window(now)
            window.count += 1
            everyone = self.everyone
            if everyone is None or now - everyone.started > length:
                everyone = self.everyone = _Window(now)
            everyone.count += 1
            share = everyone.count // AGENT_SHARE
            if share > window.count:
                return Tally(share, everyone.count, now - everyone.started, shared=True)
            return Tally(window.count, window.count, now - window.started)

    def _forget(self, now: float, length: float) -> None:
        """Make room for a new caller: drop expired windows, else the oldest half (their
        calls still count in the total)."""
        live = {k: w for k, w in self.windows.items() if now - w.started <= length}
        if len(live) >= MAX_CALLERS:
            oldest = sorted(live, key=lambda k: live[k].started)[: MAX_CALLERS // 2]
            for key in oldest:
                del live[key]
        self.windows = live


class _WhenIdle:
    """Runs `work` in a thread of its own once `poke` has not been called for `quiet_s`
    seconds: what can wait for a pause between tool calls waits for one."""

    def __init__(self, work: Callable[[], None], quiet_s: float) -> None:
        self._work = work
        self._quiet_s = quiet_s
        self._due: float | None = None
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None

    def poke(self) -> None:
        with self._wake:
            waiting = self._due is not None  # it wakes at the old time and waits on
            self._due = time.monotonic() + self._quiet_s
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="ctxmode-idle", daemon=True)
                self._thread.start()
            elif not waiting:
                self._wake.notify()

    def _run(self) -> None:
        while True:
            with self._wake:
                while self._due is None:
                    self._wake.wait()
                while (left := self._due - time.monotonic()) > 0:
                    self._wake.wait(left)  # a poke meanwhile moved the time on
                self._due = None
            try:
                self._work()
            except Exception:  # the next search catches up instead
                log.exception("idle work failed")


@dataclass
class ServerState:
    """Per-process state, created by the lifespan and closed on the way out."""

    project: paths.ProjectPaths
    runs: BackgroundRuns = field(default_factory=BackgroundRuns)
    guard: FloodGuard = field(default_factory=FloodGuard)
    cancels: set[threading.Event] = field(default_factory=set)
    until_eof: set[threading.Event] = field(default_factory=set)  # `close_input` sets these
    input_closed: bool = False  # the client closed stdin
    session_id: str = ""  # the session calls are counted under, set per call
    _store: ContentStore | None = None
    _store_lock: threading.RLock = field(default_factory=threading.RLock)
    _store_file: tuple[int, int] | None = None  # (device, inode) of the file it opened
    _recorder: Recorder | None = None
    # One-time notices of knowledge-base heals, added to the next tool answer.
    _notices: list[str] = field(default_factory=list)
    _notices_lock: threading.Lock = field(default_factory=threading.Lock)
    _idle: _WhenIdle | None = None  # makes what was indexed searchable between calls
    _policies: "PolicyCache | None" = None

    @property
    def project_dir(self) -> Path:
        return self.project.project_dir

    def warm(self) -> None:
        """Load, without writing anything, what the first tool call would otherwise wait
        for: the hosts' descriptors (the session a call counts under) and the permission
        rules (read again when their files change)."""
        from ctxmode.stats.record import session_from_env

        session_from_env()
        self.policy()

    def policy(self) -> "Policy":
        """The permission rules now (read again when their files change)."""
        if self._policies is None:
            from ctxmode.security import PolicyCache

            self._policies = PolicyCache(self.project_dir)
        return self._policies.get()

    @property
    def recorder(self) -> Recorder:
        if self._recorder is None:
            from ctxmode.session.where import session_db_path

            db_path = session_db_path(self.project_dir, self.project.root)
            self._recorder = Recorder(db_path, self.project_dir)
        return self._recorder

    @contextmanager
    def store(self) -> Iterator[ContentStore]:
        """The knowledge base, opened on first use and used by one thread at a time.

        Reopened when its file was deleted or replaced since (``ctxmode purge`` or gc
        from another process, one os.stat per call): what this server indexes must land
        in the file under the name, not in an unlinked one that vanishes when it exits.
        """
        with self._store_lock:
            if self._store is not None and identity(self._store.path) != self._store_file:
                self.close_store()
            if self._store is None:
                path = self.project.adopt_legacy_content_db()
                self._store = ContentStore(path, deny=self._denied, sweep_interval=SWEEP_INTERVAL_S)
                self._store_file = identity(path)
            self._store.session_id = self.session_id
            try:
                yield self._store
            finally:
                if self._store is not None:
                    self._keep_notices(self._store)
                    if self._store.pending:
                        self._catch_up_when_idle()

    def _denied(self, path: str) -> bool:
        """Whether the rules now deny reading `path` (the store asks before it reads a
        file again)."""
        from ctxmode.security import path_deny_check

        return path_deny_check(self.policy(), self.project_dir)(path)

    def _catch_up_when_idle(self) -> None:
        if self._idle is None:
            self._idle = _WhenIdle(self._catch_up, CATCH_UP_WHEN_IDLE_S)
        self._idle.poke()

    def _catch_up(self) -> None:
        with self._store_lock:
            if self._store is not None:
                self._store.catch_up()
                self._keep_notices(self._store)

    @contextmanager
    def private_store(self) -> Iterator[ContentStore]:
        """A connection of its own, for a long call (a fetch) that must not hold up the
        shared one; SQLite's WAL lets both write."""
        with ContentStore(self.project.adopt_legacy_content_db()) as store:
            store.session_id = self.session_id
            try:
                yield store
            finally:
                self._keep_notices(store)

    def _keep_notices(self, store: ContentStore) -> None:
        with self._notices_lock:
            self._notices.extend(store.take_notices())

    def take_notices(self) -> list[str]:
        """Notices of knowledge-base heals not yet told to the agent (each told once)."""
        with self._notices_lock:
            notices, self._notices = self._notices, []
        return notices

    @contextmanager
    def cancellable(
        self, event: threading.Event | None = None, *, until_eof: bool = False
    ) -> Iterator[threading.Event]:
        """A cancel flag for one run (`event`, or a new one), set if the call is cancelled
        or the server stops, and with `until_eof` as soon as the client closes stdin
        (`close_input`)."""
        event = event or threading.Event()
        self.cancels.add(event)
        if until_eof:
            self.until_eof.add(event)
            if self.input_closed:
                event.set()
        try:
            yield event
        finally:
            self.cancels.discard(event)
            self.until_eof.discard(event)

    def close_input(self) -> None:
        """The client closed stdin: cancel the calls that end there (their answers, errors
        saying so, are still sent)."""
        self.input_closed = True
        for event in list(self.until_eof):
            event.set()

    def close_store(self) -> None:
        """Close the shared knowledge base handle (reopened on next use)."""
        with self._store_lock:
            if self._store is not None:
                self._store.close()
                self._store = None

    def shutdown(self) -> None:
        """Stop every run in flight or in the background, then close the databases."""
        for event in list(self.cancels):
            event.set()
        self.runs.cleanup()
        self.close_store()
        self.close_recorder()
        insight = sys.modules.get("ctxmode.insight")
        if insight is not None:
            insight.stop_all()  # a dashboard served by this process goes with it

    def close_recorder(self) -> None:
        if self._recorder is not None:
            self._recorder.close()
