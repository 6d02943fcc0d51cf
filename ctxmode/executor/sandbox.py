"""Run one script in its own process group, with a deadline, an output cap and a clean exit.

Design:
* Every run gets a fresh temp directory (its cwd, except shell which runs in the project
  root) and ``TMPDIR`` inside it, a scrubbed environment, and stdin closed.
* The child leads a new session/process group, and carries ``CTXMODE_RUN_ID`` in its
  environment. Killing a run means: snapshot its descendants, SIGKILL the group, then kill
  the snapshot and any process still carrying the run id (one that escaped the group with
  ``setsid``). Timeout, output cap and cancellation all go through that path.
* When the main process exits, processes it left in its group are killed too, after a short
  grace for output already in flight: a run never leaves anything behind (except in
  background mode, where the caller's registry owns the process until it cleans up).
* Output is read as bytes from both pipes as it streams, counted against the cap, and
  decoded once as UTF-8 with replacement.
"""

import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ctxmode.errors import UsageError

DEFAULT_TIMEOUT_MS = 120_000
HARD_CAP_BYTES = 100 * 1024 * 1024
EXIT_GRACE_S = 0.1  # output still in flight after the main process exits
_READ = 65536
RUN_ID_VAR = "CTXMODE_RUN_ID"
FILE_PATH_VAR = "CTXMODE_FILE_PATH"

# Variables that let a parent inject code or change how interpreters and tools start.
ENV_DENYLIST = frozenset(
    """BASH_ENV ENV PROMPT_COMMAND PS4 SHELLOPTS BASHOPTS CDPATH INPUTRC BASH_XTRACEFD
    NODE_OPTIONS NODE_PATH PYTHONSTARTUP PYTHONHOME PYTHONWARNINGS PYTHONBREAKPOINT
    PYTHONINSPECT PYTHONPATH RUBYOPT RUBYLIB PERL5OPT PERL5LIB PERLLIB PERL5DB ERL_AFLAGS
    ERL_FLAGS ELIXIR_ERL_OPTIONS ERL_LIBS GOFLAGS CGO_CFLAGS CGO_LDFLAGS RUSTC RUSTC_WRAPPER
    RUSTC_WORKSPACE_WRAPPER CARGO_BUILD_RUSTC CARGO_BUILD_RUSTC_WRAPPER RUSTFLAGS PHPRC
    PHP_INI_SCAN_DIR R_PROFILE R_PROFILE_USER R_HOME DOTNET_STARTUP_HOOKS
    DOTNET_ADDITIONAL_DEPS DOTNET_SHARED_STORE DOTNET_ROOT DOTNET_ROOT(x86) DOTNET_HOST_PATH
    CORECLR_PROFILER CORECLR_PROFILER_PATH CORECLR_PROFILER_PATH_32 CORECLR_PROFILER_PATH_64
    CORECLR_PROFILER_PATH_ARM32 CORECLR_PROFILER_PATH_ARM64 CORECLR_ENABLE_PROFILING
    DOTNET_PROFILER_PATH DOTNET_PROFILER_PATH_32 DOTNET_PROFILER_PATH_64
    DOTNET_PROFILER_PATH_ARM32 DOTNET_PROFILER_PATH_ARM64 DOTNET_DiagnosticPorts
    DOTNET_BUNDLE_EXTRACT_BASE_DIR LD_PRELOAD LD_AUDIT DYLD_INSERT_LIBRARIES OPENSSL_CONF
    OPENSSL_ENGINES CC CXX AR GIT_TEMPLATE_DIR GIT_CONFIG_GLOBAL GIT_CONFIG_SYSTEM GIT_EXEC_PATH
    GIT_SSH GIT_SSH_COMMAND GIT_ASKPASS""".split()
)
_CA_BUNDLES = (
    "/etc/ssl/cert.pem",
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
)


@dataclass(frozen=True)
class Spawn:
    """What to start: argv, cwd and environment, plus the limits of the run."""

    argv: Sequence[str]
    cwd: Path
    env: dict[str, str]
    timeout_s: float
    cap_bytes: int = HARD_CAP_BYTES


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


@dataclass
class BackgroundRuns:
    """Runs left going after their timeout (background mode). `cleanup` ends them all."""

    entries: dict[int, tuple["subprocess.Popen[bytes]", str, Path]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, proc: "subprocess.Popen[bytes]", run_id: str, workdir: Path) -> None:
        with self._lock:
            self.entries[proc.pid] = (proc, run_id, workdir)

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
        raw = os.environ.get("CTXMODE_EXEC_TIMEOUT_MS", "").strip()
        if not raw:
            return DEFAULT_TIMEOUT_MS / 1000
        try:
            timeout_ms = float(raw)
        except ValueError as exc:
            raise UsageError(f"CTXMODE_EXEC_TIMEOUT_MS={raw!r} is not a number") from exc
    if not timeout_ms > 0:
        raise UsageError(f"timeout must be a positive number of milliseconds, got {timeout_ms}")
    return float(timeout_ms) / 1000


def real_tmp(project_dir: Path | None) -> Path:
    """The OS temp dir, unless TMPDIR points into the project (then /tmp)."""
    tmp = Path(tempfile.gettempdir()).resolve()
    if project_dir is not None and (tmp == project_dir or project_dir in tmp.parents):
        fallback = Path("/tmp")
        return fallback if fallback.is_dir() else tmp
    return tmp


def make_workdir(project_dir: Path | None) -> Path:
    return Path(tempfile.mkdtemp(prefix=".ctx-mode-", dir=real_tmp(project_dir)))


def sandbox_env(workdir: Path, run_id: str, file_path: Path | None = None) -> dict[str, str]:
    """The parent environment minus injection vectors, plus the sandbox's own settings."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ENV_DENYLIST
        and not key.startswith("BASH_FUNC_")
        and not key.upper().startswith("COMPLUS_")
    }
    env.update(
        TMPDIR=str(workdir),
        TEMP=str(workdir),
        TMP=str(workdir),
        HOME=os.environ.get("HOME") or os.environ.get("USERPROFILE") or str(Path.home()),
        LANG=_utf8_locale(),
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONUNBUFFERED="1",
        PYTHONUTF8="1",
        PYTHONIOENCODING="utf-8",
        NO_COLOR="1",
    )
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    if "SSL_CERT_FILE" not in env:
        bundle = next((p for p in _CA_BUNDLES if os.path.exists(p)), None)
        if bundle:
            env["SSL_CERT_FILE"] = bundle
    env[RUN_ID_VAR] = run_id
    if file_path is not None:
        env[FILE_PATH_VAR] = str(file_path)
    return env


def _utf8_locale() -> str:
    """The caller's locale when it is UTF-8, else one every system has."""
    current = os.environ.get("LC_ALL") or os.environ.get("LANG") or ""
    if "utf-8" in current.lower() or "utf8" in current.lower():
        return current
    return "en_US.UTF-8" if sys.platform == "darwin" else "C.UTF-8"


def new_run_id() -> str:
    return uuid.uuid4().hex


# --------------------------------------------------------------------------- killing


def _carries(pid: int, marker: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            return marker in handle.read()
    except OSError:
        return False


def _escaped(run_id: str, known: set[int]) -> list[int]:
    """Processes still carrying `run_id` in their environment (they left the group)."""
    import psutil

    found = []
    me = os.getpid()
    for proc in psutil.process_iter(["pid"]):
        pid = proc.info["pid"]
        if pid in known or pid == me:
            continue
        try:
            if proc.environ().get(RUN_ID_VAR) == run_id:
                found.append(pid)
        except (psutil.Error, OSError):
            continue
    return found


_subreaper = False


def adopt_orphans() -> bool:
    """Make this process the subreaper of what its runs start (Linux).

    A process that escapes its run's group and outlives its parent is then re-parented to
    us instead of init, so `orphans` finds it without scanning every process.
    """
    global _subreaper
    if _subreaper or not sys.platform.startswith("linux"):
        return _subreaper
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_child_subreaper = 36
        _subreaper = libc.prctl(pr_set_child_subreaper, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        _subreaper = False
    return _subreaper


def orphans(run_id: str) -> list[int]:
    """Our adopted children that belong to the run `run_id` (needs `adopt_orphans`)."""
    if not _subreaper:
        return []
    marker = f"{RUN_ID_VAR}={run_id}\0".encode()
    pids: list[int] = []
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return []
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/children", encoding="ascii") as handle:
                pids.extend(int(p) for p in handle.read().split())
        except (OSError, ValueError):  # noqa: PERF203 - a thread may end meanwhile
            continue
    return [pid for pid in pids if _carries(pid, marker)]


def _reap(pids: list[int]) -> None:
    """Collect the exit status of killed processes that are our children (adopted ones)."""
    for pid in pids:
        for _ in range(100):
            try:
                done, _status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                break
            if done:
                break
            time.sleep(0.005)


def kill_tree(pid: int, run_id: str | None) -> None:
    """SIGKILL a run: its descendants (snapshot first), its process group, and anything that
    escaped the group but still carries the run id. Best effort on Windows."""
    import psutil

    try:
        descendants = [p.pid for p in psutil.Process(pid).children(recursive=True)]
    except psutil.Error:
        descendants = []
    if os.name == "posix":
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    targets = [pid, *descendants]
    if run_id is not None:
        targets += _escaped(run_id, set(targets))
    for target in targets:
        try:
            psutil.Process(target).kill()
        except psutil.Error:  # noqa: PERF203 - each target may already be gone
            pass
    _reap([t for t in targets if t != pid])


def _group_has_members(pgid: int) -> bool:
    if os.name != "posix":
        return False
    try:
        os.killpg(pgid, 0)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def _leftovers(pid: int, run_id: str) -> bool:
    """Did the finished run leave processes behind (in its group, or adopted by us)?"""
    return _group_has_members(pid) or bool(run_id and orphans(run_id))


# --------------------------------------------------------------------------- running


def _popen(spawn: Spawn, stdout: int, stderr: int) -> subprocess.Popen[bytes]:
    if os.name == "posix":
        return subprocess.Popen(
            list(spawn.argv),
            cwd=spawn.cwd,
            env=spawn.env,
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
        )
    flags = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0) | getattr(
        subprocess, "CREATE_NO_WINDOW", 0
    )
    return subprocess.Popen(
        list(spawn.argv),
        cwd=spawn.cwd,
        env=spawn.env,
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=stderr,
        creationflags=flags,
    )


def _decode(data: bytes | bytearray) -> str:
    return bytes(data).decode("utf-8", "replace")


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
    buffers = {out_fd: bytearray(), err_fd: bytearray()}
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
                buffers[fd] += data[:room] if room < len(data) else data
                total += len(data)
            if total > spawn.cap_bytes:
                capped = True
                break
    finally:
        selector.close()
        if watch is not None:
            os.close(watch)
    if timed_out or capped or cancelled:
        kill_tree(proc.pid, run_id or None)
    code = proc.wait()
    if _leftovers(proc.pid, run_id):  # only now: an unreaped leader still counts
        kill_tree(proc.pid, run_id or None)
    proc.stdout.close()
    proc.stderr.close()
    stderr = _decode(buffers[err_fd])
    if capped:
        stderr += _cap_note(spawn.cap_bytes)
    return Outcome(
        stdout=_decode(buffers[out_fd]),
        stderr=stderr,
        exit_code=1 if (timed_out or cancelled) else (code if code >= 0 else 128 - code),
        timed_out=timed_out,
        capped=capped,
        cancelled=cancelled,
        pid=proc.pid,
    )


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


def _read_head(path: Path, limit: int) -> bytes:
    try:
        with path.open("rb") as handle:
            return handle.read(limit)
    except OSError:
        return b""


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
        registry.add(proc, run_id, workdir_of(spawn))
    elif _leftovers(proc.pid, run_id):  # the leader was reaped by poll()
        kill_tree(proc.pid, run_id or None)
    code = proc.returncode if proc.returncode is not None else 0
    stdout = _read_head(out_path, spawn.cap_bytes)
    stderr = _decode(_read_head(err_path, max(0, spawn.cap_bytes - len(stdout))))
    if capped:
        stderr += _cap_note(spawn.cap_bytes)
    return Outcome(
        stdout=_decode(stdout),
        stderr=stderr,
        exit_code=0 if backgrounded else (1 if cancelled else (code if code >= 0 else 128 - code)),
        timed_out=backgrounded,
        capped=capped,
        cancelled=cancelled,
        backgrounded=backgrounded,
        pid=proc.pid,
    )
