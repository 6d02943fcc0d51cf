"""``ctxmode serve`` from process start to the end of the connection.

Hosts talk to a server the moment they spawn it: Claude Code gives its version probe a
short deadline, and every host sends the model its first turn while servers are still
starting. Importing the MCP SDK takes most of a second, so `run` does the urgent and
cheap things first, and the SDK only if it must:

1. publish the readiness marker, state ``starting`` (hooks redirect to ctx_* tools
   from now on);
2. take stdin and stdout for the protocol (`pipes.claim`);
3. load the tools and the server's state in a background thread (`_load_core`), while
   the main thread answers the client (`direct.serve`: the opening, tool calls,
   cancellations, pings); once loaded, mark the server ``ready``;
4. at the first message the direct path does not understand, load the SDK
   (`_load_sdk`), let the calls in flight answer, and hand the pipes to the SDK server
   (`app.serve`) with the opening messages to be read again; at EOF, let the calls in
   flight answer and stop.

Everything this module imports, outside the two loaders, is standard library or light
ctxmode modules (a test walks the imports).
"""

import contextlib
import errno
import logging
import logging.handlers
import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

from ctxmode import paths, readiness
from ctxmode.server import direct, early, pipes, upkeep
from ctxmode.server.handoff import Handoff

LOG_BYTES = 1024 * 1024
LOG_BACKUPS = 3
# While the core loads and tool calls run in worker threads, hand the interpreter lock to
# the thread that reads the client sooner than the default 5 ms.
_EARLY_SWITCH_INTERVAL_S = 0.0005

log = logging.getLogger("ctxmode.server")


class _LogFile(logging.handlers.RotatingFileHandler):
    """The server's log file. A record that cannot be written (a full disk) is not worth
    a traceback on stderr per record: one warning says so, and the file is left alone
    from then on (the stderr handler still carries warnings)."""

    broken = False

    def emit(self, record: logging.LogRecord) -> None:
        if not self.broken:
            super().emit(record)

    def handleError(self, record: logging.LogRecord) -> None:
        if self.broken:
            return
        self.broken = True
        exc = sys.exc_info()[1]
        full = isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EFBIG)
        reason = "disk full" if full else "cannot write it"
        detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        try:
            sys.stderr.write(
                f"ctxmode: WARNING log file {self.baseFilename}: {reason} ({detail}); "
                "no longer written by this server\n"
            )
            sys.stderr.flush()
        except (OSError, ValueError):
            pass


def setup_logging(logs_dir: Path) -> None:
    """Log to a rotating file under the data root, and warnings to stderr. Never stdout."""
    root = logging.getLogger("ctxmode")
    root.setLevel(logging.INFO)
    root.propagate = False
    stderr = logging.StreamHandler(sys.stderr)
    stderr.setLevel(logging.WARNING)
    stderr.setFormatter(logging.Formatter("ctxmode: %(levelname)s %(message)s"))
    root.addHandler(stderr)
    try:
        logs_dir.mkdir(parents=True, exist_ok=True)
        handler = _LogFile(
            logs_dir / "server.log",
            maxBytes=LOG_BYTES,
            backupCount=LOG_BACKUPS,
            encoding="utf-8",
        )
    except OSError as exc:
        root.warning("cannot write the log file in %s: %s", logs_dir, exc)
        return
    handler.setFormatter(
        logging.Formatter("%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s")
    )
    root.addHandler(handler)


class _Loader(threading.Thread):
    """Runs `load` once; `done_fd` becomes readable when it has finished (and stays so)."""

    def __init__(self, load: Callable[[], Any]) -> None:
        super().__init__(name="ctxmode-load", daemon=True)
        self._load = load
        self._result: Any = None
        self._error: BaseException | None = None
        self._done = threading.Event()
        self.done_fd, self._done_w = os.pipe()

    def run(self) -> None:
        try:
            self._result = self._load()
        except BaseException as exc:  # re-raised where it is waited for, by `value`
            self._error = exc
        finally:
            self._done.set()
            os.write(self._done_w, b".")

    def finished(self) -> bool:
        return self._done.is_set()

    def value(self) -> Any:
        """What `load` returned (waits for it, from any thread); raises what it raised."""
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._result


def _publish(where: paths.ProjectPaths, state: str) -> tuple[Path | None, OSError | None]:
    try:
        return readiness.write_marker(where.root, where.project_dir, state), None
    except OSError as exc:
        return None, exc


def _exit_on_signal(stop: Callable[[], None]) -> None:
    """Until the SDK server's own handlers take over: on SIGTERM/SIGINT/SIGHUP, `stop`."""

    def handler(signum: int, frame: FrameType | None) -> None:
        log.info("signal %d received; shutting down", signum)
        stop()

    for name in ("SIGTERM", "SIGINT", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), handler)


def _load_core(where: paths.ProjectPaths) -> Any:  # a `ServerState`
    """The tools and the server's state: what the direct path needs (no SDK)."""
    from ctxmode.server import dispatch  # noqa: F401  (loaded here, used by the calls)
    from ctxmode.server.state import ServerState

    state = ServerState(where)
    state.warm()
    return state


def _load_sdk() -> Any:
    """The SDK server module: most of the start-up, loaded only when needed."""
    from ctxmode.server import app

    return app


def run(project: str | os.PathLike[str] | None = None) -> int:
    """Entry point of ``ctxmode serve``.

    Raises:
        CtxError: the project cannot be served (home directory, missing directory).
    """
    parent = os.getppid()
    where = paths.project_paths(project)
    marker, failure = _publish(where, readiness.STARTING)
    setup_logging(where.logs_dir)
    if failure is not None:
        log.warning("cannot publish the readiness marker: %s", failure)
    log.info("serving %s (pid %d)", where.project_dir, os.getpid())
    wire = pipes.claim()
    handoff = Handoff(wire, marker, parent)
    core = _Loader(lambda: _load_core(where))

    def mark_ready() -> None:
        core.value()  # a core that failed to load ends the server here, saying why
        ready, failure = _publish(where, readiness.READY)
        if failure is not None:
            log.warning("cannot mark the readiness marker ready: %s", failure)
        handoff.marker = ready or marker

    def stop() -> None:
        """End now (a signal, or the client is gone): stop every run, withdraw the marker."""
        if core.finished():
            with contextlib.suppress(Exception):  # a core that failed to load
                core.value().shutdown()
        if handoff.marker is not None:
            readiness.remove_marker(handoff.marker)
        logging.shutdown()
        os._exit(0)

    _exit_on_signal(stop)
    try:
        tools = early.tool_dicts()  # ~15 ms: the list is what clients ask right after
        core.start()
        if wire is None:  # not pipes: the SDK's own transport serves
            app, state = _load_sdk(), core.value()
            mark_ready()
            app.serve(state, handoff)
            return 0
        calls = direct.Calls(wire, core.value)
        ended = threading.Event()
        upkeep.start_threads(where.root, where.project_dir, parent, stop, ended)
        interval = sys.getswitchinterval()
        sys.setswitchinterval(_EARLY_SWITCH_INTERVAL_S)
        try:
            ending = direct.serve(wire, calls, tools, core.done_fd, mark_ready)
        finally:
            sys.setswitchinterval(interval)
        if ending.eof:
            state = core.value()
            state.close_input()  # the calls that end there answer now
            calls.wait_idle()
            ended.set()
            state.shutdown()
            return 0
        sdk = _Loader(_load_sdk)
        sdk.start()
        calls.wait_idle()  # their answers are written before the SDK writes
        ended.set()
        app, state = sdk.value(), core.value()
        handoff.prefix, handoff.answered = ending.prefix, ending.answered
        app.serve(state, handoff)
    finally:
        if handoff.marker is not None:
            readiness.remove_marker(handoff.marker)
        if wire is not None:
            wire.release()
        log.info("stopped")
    return 0
