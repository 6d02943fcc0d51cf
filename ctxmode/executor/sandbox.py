"""Run one script in its own process group, with a deadline, an output cap and a clean exit.

Design:
* Every run gets a fresh temp directory (the script file, compiled binaries, ``TMPDIR``),
  a scrubbed environment, and stdin closed; it runs in the project directory.
* The child leads a new session/process group, and carries ``CTXMODE_RUN_ID`` in its
  environment. Killing a run means: snapshot its descendants, SIGKILL the group, then kill
  the snapshot and any process still carrying the run id (one that escaped the group with
  ``setsid``). Timeout, output cap and cancellation all go through that path.
* When the main process exits, processes it left in its group are killed too, after a short
  grace for output already in flight: a run never leaves anything behind (except in
  background mode, where the caller's registry owns the process until it cleans up).
* Output is read as bytes from both pipes as it streams, counted against the cap, and
  captured (`capture`): written to files in the run's temp directory while memory keeps
  only a head and a tail of each stream, decoded once as UTF-8 with replacement. However
  much a run prints, reading it costs a few megabytes. An `echo` callback sees each piece
  as it arrives (the CLI on a terminal shows the run live).
"""

import contextlib
import logging
import os
import selectors
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ctxmode import settings
from ctxmode.errors import UsageError
from ctxmode.executor.capture import HEAD_BYTES, TAIL_BYTES, Capture, Extent, read_capture
from ctxmode.executor.procs import adopt_orphans, kill_tree, leftovers

log = logging.getLogger("ctxmode.executor")

DEFAULT_TIMEOUT_MS = settings.EXEC_TIMEOUT_MS.default
HARD_CAP_BYTES = 100 * 1024 * 1024
BACKGROUND_CHECK_S = 0.1  # how often backgrounded runs are held to their output cap
EXIT_GRACE_S = 0.1  # output still in flight after the main process exits
_READ = 65536


@dataclass(frozen=True)
class Spawn:
    """What to start: argv, cwd and environment, plus the limits of the run."""

    argv: Sequence[str]
    cwd: Path
    env: dict[str, str]
    timeout_s: float
    cap_bytes: int = HARD_CAP_BYTES
    head_bytes: int = HEAD_BYTES  # of each stream, kept in memory
    tail_bytes: int = TAIL_BYTES
    # Sees each piece of output as it is read: (True for stdout, False for stderr, bytes).
    echo: Callable[[bool, bytes], None] | None = None


@dataclass
class Outcome:
    stdout: str
    stderr: str
    exit_code: int
    timed_out: bool = False
    capped: bool = False
    cancelled: bool = False
    backgrounded: bool = False
    pid: int | None = None
    out: Extent = field(default_factory=Extent)
    err: Extent = field(default_factory=Extent)


@dataclass
class BackgroundRuns:
    """Runs left going after their timeout (background mode). `cleanup` ends them all.

    While any runs, a watcher holds each to its output cap: a backgrounded run writes
    straight to its files, so without it nothing would stop one that fills the disk."""

    entries: dict[int, tuple["subprocess.Popen[bytes]", str, Path]] = field(default_factory=dict)
    caps: dict[int, int] = field(default_factory=dict)  # pid -> its output cap in bytes
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _watcher: threading.Thread | None = None

    def add(
        self,
        proc: "subprocess.Popen[bytes]",
        run_id: str,
        workdir: Path,
        cap_bytes: int = HARD_CAP_BYTES,
    ) -> None:
        with self._lock:
            self.entries[proc.pid] = (proc, run_id, workdir)
            self.caps[proc.pid] = cap_bytes
            if self._watcher is None or not self._watcher.is_alive():
                self._watcher = threading.Thread(
                    target=self._watch, name="ctxmode-background-cap", daemon=True
                )
                self._watcher.start()

    def _watch(self) -> None:
        """Kill a backgrounded run past its cap; forget the ones that ended."""
        while True:
            time.sleep(BACKGROUND_CHECK_S)
            with self._lock:
                entries = dict(self.entries)
                if not entries:
                    self._watcher = None
                    return
            for pid, (proc, run_id, workdir) in entries.items():
                if proc.poll() is not None:
                    continue
                out = _size(workdir / ".stdout") + _size(workdir / ".stderr")
                cap = self.caps.get(pid, HARD_CAP_BYTES)
                if out > cap:
                    log.warning("background run %d passed its output cap: killed", pid)
                    kill_tree(pid, run_id or None)
                    proc.wait()
                    for name in (".stdout", ".stderr"):  # give the disk back
                        with contextlib.suppress(OSError):
                            os.truncate(workdir / name, min(_size(workdir / name), cap))

    def cleanup(self) -> int:
        """Kill every backgrounded run's process tree and remove its files; return count."""
        with self._lock:
            entries, self.entries = self.entries, {}
        for proc, run_id, workdir in entries.values():
            kill_tree(proc.pid, run_id or None)
            proc.wait()
            shutil.rmtree(workdir, ignore_errors=True)
        return len(entries)


def timeout_seconds(timeout_ms: int | float | None) -> float:
    """The run's deadline in seconds: per call, else ``CTXMODE_EXEC_TIMEOUT_MS``, else 120 s.

    Raises:
        UsageError: a timeout that is not a positive number of milliseconds.
    """
    if timeout_ms is None:
        settings.require_valid(settings.EXEC_TIMEOUT_MS)
        timeout_ms = settings.exec_timeout_ms()
    if not timeout_ms > 0:
        raise UsageError(f"timeout must be a positive number of milliseconds, got {timeout_ms}")
    return float(timeout_ms) / 1000


# --------------------------------------------------------------------------- running


def _popen(spawn: Spawn, stdout: int, stderr: int) -> subprocess.Popen[bytes]:
    posix = os.name == "posix"
    flags = (
        0
        if posix
        else (
            getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)
            | getattr(subprocess, "CREATE_NO_WINDOW", 0)
        )
    )
    return subprocess.Popen(
        list(spawn.argv),
        cwd=spawn.cwd,
        env=spawn.env,
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=stderr,
        start_new_session=posix,  # its own process group, so the tree can be killed
        creationflags=flags,
    )


def _cap_note(cap: int) -> str:
    size = f"{cap / (1024 * 1024):.0f}MB" if cap >= 1024 * 1024 else f"{cap} bytes"
    return f"\n[output capped at {size} — process killed]"


def _exit_watch(pid: int) -> int | None:
    """A file descriptor that becomes readable when `pid` exits (Linux pidfd), else None."""
    pidfd_open = getattr(os, "pidfd_open", None)
    if pidfd_open is None:
        return None
    try:
        return int(pidfd_open(pid))
    except OSError:
        return None


def run_process(
    spawn: Spawn, *, cancel: threading.Event | None = None, run_id: str = ""
) -> Outcome:
    """Start `spawn` and collect its output under the deadline and the cap."""
    adopt_orphans()
    try:
        proc = _popen(spawn, subprocess.PIPE, subprocess.PIPE)
    except OSError as exc:
        return Outcome("", f"cannot start {spawn.argv[0]}: {exc.strerror or exc}", 1)
    assert proc.stdout is not None and proc.stderr is not None
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    out_path, err_path = _files(spawn)
    window = {"head": spawn.head_bytes, "tail": spawn.tail_bytes}
    buffers = {out_fd: Capture(out_path, **window), err_fd: Capture(err_path, **window)}
    selector = selectors.DefaultSelector()
    for fd in buffers:
        selector.register(fd, selectors.EVENT_READ)
    watch = _exit_watch(proc.pid)
    if watch is not None:
        selector.register(watch, selectors.EVENT_READ)
    # Without an exit event (or with a cancel flag to honour), look up every 50 ms.
    tick = 0.05 if watch is None or cancel is not None else None
    deadline = time.monotonic() + spawn.timeout_s
    total = 0
    timed_out = capped = cancelled = False
    exited_at: float | None = None
    try:
        while any(fd in buffers for fd in selector.get_map()):
            now = time.monotonic()
            if now >= deadline:
                timed_out = True
                break
            if cancel is not None and cancel.is_set():
                cancelled = True
                break
            if (
                exited_at is None
                and (watch is None or tick is not None)
                and proc.poll() is not None
            ):
                exited_at = now
            if exited_at is not None and now - exited_at > EXIT_GRACE_S:
                break  # something the script left behind holds the pipes open
            wait = deadline - now
            if exited_at is not None:
                wait = min(wait, EXIT_GRACE_S / 2)
            elif tick is not None:
                wait = min(wait, tick)
            for key, _ in selector.select(wait):
                fd = int(key.fd)
                if fd == watch:
                    selector.unregister(fd)
                    exited_at = time.monotonic()
                    continue
                data = os.read(fd, _READ)
                if not data:
                    selector.unregister(fd)
                    continue
                room = spawn.cap_bytes - total
                kept = data[:room] if room < len(data) else data
                buffers[fd].feed(kept)
                if spawn.echo is not None and kept:
                    spawn.echo(fd == out_fd, kept)
                total += len(data)
            if total > spawn.cap_bytes:
                capped = True
                break
    finally:
        selector.close()
        if watch is not None:
            os.close(watch)
        stdout, out = buffers[out_fd].finish()
        stderr, err = buffers[err_fd].finish()
    if not (timed_out or capped or cancelled):
        # Its output closed (``exec >&- 2>&-``) while it runs on: the deadline and a
        # cancellation still hold.
        timed_out, cancelled = _await_exit(proc, deadline, cancel)
    if timed_out or capped or cancelled:
        kill_tree(proc.pid, run_id or None)
    code = proc.wait()
    if leftovers(proc.pid, run_id):  # only now: an unreaped leader still counts
        kill_tree(proc.pid, run_id or None)
    proc.stdout.close()
    proc.stderr.close()
    if capped:
        stderr += _cap_note(spawn.cap_bytes)
    return Outcome(
        stdout=stdout,
        stderr=stderr,
        exit_code=1 if (timed_out or cancelled) else (code if code >= 0 else 128 - code),
        timed_out=timed_out,
        capped=capped,
        cancelled=cancelled,
        pid=proc.pid,
        out=out,
        err=err,
    )


def _await_exit(
    proc: "subprocess.Popen[bytes]", deadline: float, cancel: threading.Event | None
) -> tuple[bool, bool]:
    """Wait for `proc` to exit until `deadline` or `cancel`: (timed out, cancelled)."""
    while True:
        now = time.monotonic()
        if now >= deadline:
            return True, False
        if cancel is not None and cancel.is_set():
            return False, True
        try:
            proc.wait(timeout=min(deadline - now, 0.05))
        except subprocess.TimeoutExpired:
            continue
        return False, False


def workdir_of(spawn: Spawn) -> Path:
    return Path(spawn.env["TMPDIR"])


def _files(spawn: Spawn) -> tuple[Path, Path]:
    workdir = workdir_of(spawn)
    return workdir / ".stdout", workdir / ".stderr"


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def run_in_background(
    spawn: Spawn,
    registry: BackgroundRuns,
    *,
    cancel: threading.Event | None = None,
    run_id: str = "",
) -> Outcome:
    """Run with output to files; on timeout leave the process running, owned by `registry`."""
    adopt_orphans()
    out_path, err_path = _files(spawn)
    with out_path.open("wb") as out, err_path.open("wb") as err:
        try:
            proc = _popen(spawn, out.fileno(), err.fileno())
        except OSError as exc:
            return Outcome("", f"cannot start {spawn.argv[0]}: {exc.strerror or exc}", 1)
    deadline = time.monotonic() + spawn.timeout_s
    capped = cancelled = backgrounded = False
    while True:
        if proc.poll() is not None:
            break
        if _size(out_path) + _size(err_path) > spawn.cap_bytes:
            capped = True
            break
        if cancel is not None and cancel.is_set():
            cancelled = True
            break
        if time.monotonic() >= deadline:
            backgrounded = True
            break
        time.sleep(0.01)
    if capped or cancelled:
        kill_tree(proc.pid, run_id or None)
        proc.wait()
    elif backgrounded:
        registry.add(proc, run_id, workdir_of(spawn), spawn.cap_bytes)
    elif leftovers(proc.pid, run_id):  # the leader was reaped by poll()
        kill_tree(proc.pid, run_id or None)
    code = proc.returncode if proc.returncode is not None else 0
    window = {"head": spawn.head_bytes, "tail": spawn.tail_bytes}
    stdout, out_extent = read_capture(out_path, limit=spawn.cap_bytes, **window)
    room = max(0, spawn.cap_bytes - out_extent.bytes)
    stderr, err_extent = read_capture(err_path, limit=room, **window)
    if capped:
        stderr += _cap_note(spawn.cap_bytes)
    return Outcome(
        stdout=stdout,
        stderr=stderr,
        exit_code=0 if backgrounded else (1 if cancelled else (code if code >= 0 else 128 - code)),
        timed_out=backgrounded,
        capped=capped,
        cancelled=cancelled,
        backgrounded=backgrounded,
        pid=proc.pid,
        out=out_extent,
        err=err_extent,
    )
