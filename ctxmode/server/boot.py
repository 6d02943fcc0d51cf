"""``ctxmode serve`` from process start to a serving SDK server.

Hosts talk to a server the moment they spawn it: Claude Code gives its version probe a
short deadline, and every host sends the model its first turn while servers are still
starting. Importing the MCP SDK takes most of a second, so `run` does the urgent and
cheap things first:

1. publish the readiness marker, state ``starting`` (hooks redirect to ctx_* tools
   from now on);
2. take stdin and stdout for the protocol (`pipes.claim`);
3. load the SDK and the server in a background thread (`_load`), while the main thread
   answers the client's opening messages whose answers are static (`early.Opening`);
4. once loaded, mark the server ``ready`` and hand the pipes to the SDK server
   (`app.serve`), with every byte read so far to be read again.

Everything this module imports, outside `_load`, is standard library or light ctxmode
modules (a test walks the imports).
"""

import errno
import json
import logging
import logging.handlers
import os
import select
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

from ctxmode import paths, readiness
from ctxmode.server import early, pipes
from ctxmode.server.handoff import Handoff

LOG_BYTES = 1024 * 1024
LOG_BACKUPS = 3
# While the SDK loads in the background, hand the interpreter lock to the thread that
# answers the client sooner than the default 5 ms.
_EARLY_SWITCH_INTERVAL_S = 0.0005
_READ_SIZE = 1 << 16

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
    """Runs `load` once; `done_fd` becomes readable when it has finished."""

    def __init__(self, load: Callable[[], Any]) -> None:
        super().__init__(name="ctxmode-load", daemon=True)
        self._load = load
        self._result: Any = None
        self._error: BaseException | None = None
        self.done_fd, self._done_w = os.pipe()

    def run(self) -> None:
        try:
            self._result = self._load()
        except BaseException as exc:  # re-raised in the main thread by `value`
            self._error = exc
        finally:
            os.write(self._done_w, b".")

    def value(self) -> Any:
        """What `load` returned (waits for it); raises what it raised."""
        self.join()
        os.close(self.done_fd)
        os.close(self._done_w)
        if self._error is not None:
            raise self._error
        return self._result


def _message(line: bytes) -> object:
    """A line as JSON, or None when it is not JSON text (the SDK answers those)."""
    try:
        return json.loads(line.decode("utf-8"))
    except (ValueError, RecursionError):  # UnicodeDecodeError included; nested too deep
        return None


def answer_opening(
    wire: pipes.Wire, done_fd: int, tools: list[dict[str, Any]]
) -> tuple[bytes, list[dict[str, Any]]]:
    """Answer the client's opening messages (`early.Opening`) until `done_fd` becomes
    readable; return every byte read from the wire and the responses written.

    Stops reading at the first message it does not answer, and at EOF: what remains is
    the SDK's to read.
    """
    opening = early.Opening(tools)
    read = bytearray()
    partial = b""
    answered: list[dict[str, Any]] = []
    reading = True
    while True:
        watched = [wire.fd_in, done_fd] if reading else [done_fd]
        ready, _, _ = select.select(watched, [], [])
        if done_fd in ready:
            return bytes(read), answered
        chunk = os.read(wire.fd_in, _READ_SIZE)
        if not chunk:
            reading = False
            continue
        read += chunk
        *lines, partial = (partial + chunk).split(b"\n")
        for line in lines:
            try:
                response = opening.answer(_message(line))
            except early.Unsure:
                reading = False
                break
            if response is None:
                continue
            try:
                wire.write(json.dumps(response, separators=(",", ":")).encode("ascii") + b"\n")
            except OSError:  # the client is gone: the SDK meets the closed pipe too
                reading = False
                break
            answered.append(response)


def _publish(where: paths.ProjectPaths, state: str) -> tuple[Path | None, OSError | None]:
    try:
        return readiness.write_marker(where.root, where.project_dir, state), None
    except OSError as exc:
        return None, exc


def _exit_on_signal(handoff: Handoff) -> None:
    """Until the server's own handlers take over: on SIGTERM/SIGINT/SIGHUP, withdraw
    the marker and exit (nothing has been started that would need stopping)."""

    def handler(signum: int, frame: FrameType | None) -> None:
        if handoff.marker is not None:
            readiness.remove_marker(handoff.marker)
        os._exit(0)

    for name in ("SIGTERM", "SIGINT", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), handler)


def _load(where: paths.ProjectPaths) -> tuple[Any, Any]:
    """The server module (with the MCP SDK: most of the start-up) and its state."""
    from ctxmode.server import app
    from ctxmode.server.state import ServerState

    return app, ServerState(where)


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
    _exit_on_signal(handoff)
    try:
        tools = early.tool_dicts()  # ~15 ms: the list is what clients ask right after
        loader = _Loader(lambda: _load(where))
        loader.start()
        if wire is not None:
            interval = sys.getswitchinterval()
            sys.setswitchinterval(_EARLY_SWITCH_INTERVAL_S)
            try:
                handoff.prefix, handoff.answered = answer_opening(wire, loader.done_fd, tools)
            finally:
                sys.setswitchinterval(interval)
        app, state = loader.value()
        ready, failure = _publish(where, readiness.READY)
        if failure is not None:
            log.warning("cannot mark the readiness marker ready: %s", failure)
        handoff.marker = ready or marker
        app.serve(state, handoff)
    finally:
        if handoff.marker is not None:
            readiness.remove_marker(handoff.marker)
        if wire is not None:
            wire.release()
    log.info("stopped")
    return 0
