"""The sandboxed polyglot executor: run code, get back what it printed.

`execute` is the one core call behind ``ctxmode execute``, ``ctx_execute``,
``ctx_execute_file`` and each command of ``ctx_batch_execute``. Every language runs with
the project directory as its working directory, as a shell command does: relative paths
(``open("package.json")``) mean the project's files. The script file itself, and a
compiled binary, stay in the run's temp directory.
"""

import contextlib
import errno
import os
import shutil
import stat
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from ctxmode import settings
from ctxmode.errors import EnvironmentProblem, InputError, NotFoundError, UsageError
from ctxmode.executor import sandbox
from ctxmode.executor.capture import Extent, measured, read_whole
from ctxmode.executor.deadline import Deadline
from ctxmode.executor.env import make_workdir, new_run_id, sandbox_env
from ctxmode.executor.runtimes import LANGUAGES, find_runtime, normalize_language
from ctxmode.executor.sandbox import BackgroundRuns
from ctxmode.executor.scripts import build_script

__all__ = ["LANGUAGES", "BackgroundRuns", "Deadline", "ExecRequest", "ExecResult", "execute"]

RUST_COMPILE_MAX_S = 60.0


@dataclass(frozen=True)
class ExecRequest:
    language: str
    code: str
    project_dir: Path
    timeout_ms: float | None = None  # None: CTXMODE_EXEC_TIMEOUT_MS, else 120 s
    file_path: str | None = None  # execute_file: relative to the project, or absolute
    cwd: Path | None = None  # where the run starts; None: the project (see `run_dir`)
    background: bool = False  # on timeout, leave it running (needs a registry)
    isolate: bool | None = None  # None: CTXMODE_ISOLATE
    network: bool | None = None  # with isolate: keep network access (None: the setting)
    cap_bytes: int = sandbox.HARD_CAP_BYTES
    # Keep all of the output (up to the cap) in memory, not just its head and tail.
    keep_all: bool = False
    # Sees the run's output as it arrives: (True for stdout, False for stderr, bytes).
    echo: Callable[[bool, bytes], None] | None = None


@dataclass(frozen=True)
class ExecResult:
    language: str
    runtime: str
    stdout: str
    stderr: str
    exit_code: int
    timeout_ms: float
    duration_ms: float
    timed_out: bool = False
    backgrounded: bool = False
    capped: bool = False
    cancelled: bool = False
    isolated: bool = False
    out: Extent | None = None  # how much stdout the run printed (None: all of `stdout`)
    err: Extent | None = None
    deadline: Deadline | None = None  # when the call's time is up (start + timeout)
    # A cut run's whole output (files ``stdout``, ``stderr``), removed with the result.
    spool: Path | None = None

    @property
    def stdout_extent(self) -> Extent:
        return measured(self.stdout, self.out)

    @property
    def stderr_extent(self) -> Extent:
        return measured(self.stderr, self.err)

    def whole(self, stream: str, limit: int) -> tuple[str, int] | None:
        """All that `stream` ("stdout" or "stderr") printed, from the run's kept file, up
        to `limit` bytes (identical lines folded), and the bytes beyond it; None when the
        captured text is already all of it or no file was kept."""
        extent = self.stdout_extent if stream == "stdout" else self.stderr_extent
        if self.spool is None or not extent.cut:
            return None
        path = self.spool / stream
        if not path.is_file():
            return None
        return read_whole(path, limit)

    @property
    def printed_bytes(self) -> int:
        """Everything the run printed, also what its texts leave out."""
        return self.stdout_extent.bytes + self.stderr_extent.bytes


def isolate_requested(flag: bool | None) -> bool:
    if flag is not None:
        return flag
    return settings.isolate()


def network_allowed(flag: bool | None) -> bool:
    """Does a confined run keep network access? The flag, else ``CTXMODE_ISOLATE_NETWORK``."""
    return settings.isolate_network() if flag is None else flag


def _confinement(project: Path) -> tuple[list[str], list[str]]:
    """(the paths to mask, the settings files to keep read-only) for a confined run.

    Raises:
        EnvironmentProblem: the ``Read(...)`` deny rules cannot be resolved to paths.
    """
    from ctxmode import security

    policy = security.load_policy(project)
    try:
        masked = security.denied_paths(policy)
    except security.TooManyFilesError as exc:
        raise EnvironmentProblem(
            f"cannot resolve the Read deny rules for --isolate ({exc}); anchor the patterns "
            "to fewer directories"
        ) from exc
    # ctxmode's own data (every project's knowledge base and sessions) is not the run's.
    from ctxmode import paths

    masked = [*masked, str(paths.data_root())]
    git_config = project / ".git" / "config"  # core.fsmonitor, core.pager, aliases: run by git
    return masked, [str(s.path) for s in policy.sources] + [str(git_config)]


def guarded_folders(project: Path) -> list[str]:
    """The folders inside `project` that a confined run may neither change nor create
    anything in: those holding the host's permission rules (existing or not), and the
    repository's hooks (existing), which the host's own git would run unconfined."""
    from ctxmode import security

    folders = {str(path.parent) for path, _ in security.settings_sources(project)}
    inside = [f for f in folders if Path(f).parent == project or project in Path(f).parents]
    hooks = project / ".git" / "hooks"
    if hooks.is_dir() and not hooks.is_symlink():
        inside.append(str(hooks))
    return sorted(inside)


FILE_CONTENT_MAX_BYTES = 512 * 1024 * 1024  # of a file read whole into FILE_CONTENT


def resolve_file(project_dir: Path, path: str) -> Path:
    """An execute_file path, absolute or relative to the project.

    Raises:
        PolicyDeniedError: it is ctxmode's own data (a knowledge base, a session).
        NotFoundError: there is no such file.
        InputError: it is not a regular file (a directory, a FIFO, a device, a symlink
            loop), or it is larger than `FILE_CONTENT_MAX_BYTES`.
    """
    from ctxmode.security import refuse_own_data

    candidate = Path(path).expanduser()
    resolved = candidate if candidate.is_absolute() else project_dir / candidate
    refuse_own_data(resolved)
    try:
        mode = resolved.stat().st_mode
    except OSError as exc:  # missing, a symlink loop, a folder that cannot be entered
        if resolved.is_symlink() and exc.errno == errno.ELOOP:
            raise InputError(f"not a file: {path} is a symlink loop") from exc
        raise NotFoundError(f"no such file: {path}") from exc
    if not stat.S_ISREG(mode):
        from ctxmode.paths import file_kind

        raise InputError(f"not a file: {path} is {file_kind(mode)}; give a regular file")
    size = os.stat(resolved).st_size
    if size > FILE_CONTENT_MAX_BYTES:
        raise InputError(
            f"{path} is {size / 2**30:.1f} GiB, more than the "
            f"{FILE_CONTENT_MAX_BYTES >> 20} MiB execute_file reads into FILE_CONTENT: read it "
            "in parts with ctx_execute (e.g. Python's `for line in open(path)`), or index it"
        )
    return resolved.absolute()


def file_size(project_dir: Path, path: str) -> int:
    """The size of an execute_file file (absolute or relative to the project); 0 when it
    cannot be read: what a caller reading it itself would have put into its context."""
    target = Path(path).expanduser()
    try:
        return (target if target.is_absolute() else project_dir / target).stat().st_size
    except OSError:
        return 0


def execute(
    request: ExecRequest,
    *,
    registry: BackgroundRuns | None = None,
    cancel: threading.Event | None = None,
) -> ExecResult:
    """Run `request` to completion, timeout, cap or cancellation.

    Raises:
        UsageError: unknown language or bad timeout.
        RuntimeMissingError: the language's runtime is not installed.
        NotFoundError: execute_file's file does not exist.
        EnvironmentProblem: isolation was asked for and is unavailable.
    """
    started = time.monotonic()
    language = normalize_language(request.language)
    timeout_s = sandbox.timeout_seconds(request.timeout_ms)
    deadline = Deadline(started + timeout_s)
    project = request.project_dir
    file_path = resolve_file(project, request.file_path) if request.file_path else None
    runtime = find_runtime(language, project)
    isolated = isolate_requested(request.isolate)
    cwd = request.cwd or project
    if isolated and cwd != project and project not in cwd.parents:
        raise UsageError(
            f"cwd {cwd} is outside the project, which is all a confined run sees "
            "(CTXMODE_ISOLATE): use a folder inside the project"
        )
    masked, read_only = _confinement(project) if isolated else ([], [])
    guarded = guarded_folders(project) if isolated else []
    placeholders = [f for f in guarded if not os.path.lexists(f)]  # made for the run
    workdir = make_workdir(project)
    keep_workdir = False
    try:
        run_id = new_run_id()
        env = sandbox_env(workdir, run_id, file_path)
        name, source = build_script(language, request.code, with_file=file_path is not None)
        script = workdir / name
        script.write_text(source, encoding="utf-8")

        def wrap(argv: list[str]) -> list[str]:
            if not isolated:
                return argv
            from ctxmode.executor.isolate import confine

            return confine(
                argv,
                project_dir=project,
                workdir=workdir,
                cwd=cwd,
                network=network_allowed(request.network),
                masked=masked,
                read_only=read_only,
                guarded=guarded,
            )

        argv = [*runtime.argv, str(script)]
        if runtime.compiled:
            binary = workdir / "script"
            compile_s = min(timeout_s, RUST_COMPILE_MAX_S)
            built = sandbox.run_process(
                sandbox.Spawn(
                    wrap([*runtime.argv, str(script), "-o", str(binary)]), workdir, env, compile_s
                ),
                cancel=cancel,
                run_id=run_id,
            )
            if built.exit_code != 0 or built.timed_out:
                detail = built.stderr.strip() or built.stdout.strip() or "rustc failed"
                return ExecResult(
                    language,
                    runtime.name,
                    "",
                    f"Compilation failed:\n{detail}",
                    1,
                    timeout_s * 1000,
                    (time.monotonic() - started) * 1000,
                    timed_out=built.timed_out,
                    isolated=isolated,
                    deadline=deadline,
                )
            argv = [str(binary)]
            timeout_s = max(0.001, timeout_s - (time.monotonic() - started))
        spawn = sandbox.Spawn(wrap(argv), cwd, env, timeout_s, request.cap_bytes, echo=request.echo)
        if request.keep_all:
            spawn = replace(spawn, head_bytes=request.cap_bytes, tail_bytes=0)
        if request.background and registry is not None:
            outcome = sandbox.run_in_background(spawn, registry, cancel=cancel, run_id=run_id)
            keep_workdir = outcome.backgrounded
        else:
            outcome = sandbox.run_process(spawn, cancel=cancel, run_id=run_id)
        spool = None if keep_workdir else _keep_output(workdir, outcome)
    finally:
        if not keep_workdir:
            _remove_workdir(workdir)
        for folder in placeholders:  # the empty mount point bubblewrap made, if still empty
            with contextlib.suppress(OSError):
                os.rmdir(folder)
    result = ExecResult(
        language=language,
        runtime=runtime.name,
        stdout=outcome.stdout,
        stderr=outcome.stderr,
        exit_code=outcome.exit_code,
        timeout_ms=timeout_s * 1000,
        duration_ms=(time.monotonic() - started) * 1000,
        timed_out=outcome.timed_out,
        backgrounded=outcome.backgrounded,
        capped=outcome.capped,
        cancelled=outcome.cancelled,
        isolated=isolated,
        out=outcome.out,
        err=outcome.err,
        deadline=deadline,
        spool=spool,
    )
    if spool is not None:
        weakref.finalize(result, shutil.rmtree, spool, True)
    return result


def _remove_workdir(workdir: Path) -> None:
    """A run's temp folder gone: a few plain files (the script, the captured output) are
    unlinked without `shutil.rmtree`'s walk; anything else, the walk."""
    try:
        with os.scandir(workdir) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    raise IsADirectoryError(entry.path)
                os.unlink(entry.path)
        os.rmdir(workdir)
    except OSError:
        shutil.rmtree(workdir, ignore_errors=True)


def _keep_output(workdir: Path, outcome: sandbox.Outcome) -> Path | None:
    """The files of a run whose captured text leaves part of its output out, moved out of
    its temp directory so that all of it can be indexed; None for a whole capture."""
    if not (outcome.out.cut or outcome.err.cut):
        return None
    spool = workdir.with_name(workdir.name + "-output")
    try:
        spool.mkdir(mode=0o700)
        for name in ("stdout", "stderr"):
            if (workdir / f".{name}").is_file():
                os.replace(workdir / f".{name}", spool / name)
    except OSError:
        shutil.rmtree(spool, ignore_errors=True)
        return None
    return spool
