"""`ctxmode execute` and `ctxmode execute-file`: run code in the sandbox from a shell.

Piped (scripts, agents through Bash, CI), a run is shaped as ``ctx_execute`` shapes it:
small output printed as it came, large output indexed and a pointer printed instead, which
says how to search it with ``ctxmode search``. On a terminal the output streams live as the
run prints it; what was indexed is said after it, on stderr. Either way the run is counted
in ``ctxmode stats`` under ``cli:execute`` / ``cli:execute-file``.
"""

import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ctxmode import paths
from ctxmode.cli import output
from ctxmode.errors import ExitCode, InputError, UsageError
from ctxmode.executor import ExecRequest, ExecResult, execute, file_size
from ctxmode.executor.runtimes import normalize_language

if TYPE_CHECKING:
    from ctxmode.executor.shaping import Shaped
    from ctxmode.store import ContentStore

STATS_TOOLS = {"execute": "cli:execute", "execute-file": "cli:execute-file"}


def read_stdin(what: str) -> str:
    if sys.stdin.isatty():
        raise UsageError(f"{what} comes from stdin, but stdin is a terminal; pipe it in")
    return sys.stdin.read()


def run_code(
    code: str | None,
    *,
    lang: str = "shell",
    file: Path | None = None,
    timeout_ms: float | None = None,
    intent: str | None = None,
    isolate: bool | None = None,
    network: bool | None = None,
    raw: bool = False,
    project: Path | None = None,
    json_: bool = False,
) -> int:
    """``ctxmode execute``: run `code` (or `file`, or stdin) and return the exit status."""
    output.use_json(["execute"], json_)
    if file is not None and code is not None:
        raise UsageError("pass the code or --file, not both")
    if file is not None:
        try:
            source = file.read_text(encoding="utf-8")
        except OSError as exc:
            raise InputError(f"cannot read {file}: {exc.strerror or exc}") from exc
    elif code is None or code == "-":
        source = read_stdin("the code")
    else:
        source = code
    request = ExecRequest(
        language=lang,
        code=source,
        project_dir=paths.resolve_project(project),
        timeout_ms=timeout_ms,
        isolate=isolate,
        network=network,
        keep_all=raw,
    )
    check_code(request)
    return _run(request, "execute", intent=intent, raw=raw, json_=json_)


def run_file(
    path: str,
    *,
    lang: str = "python",
    code: str | None = None,
    timeout_ms: float | None = None,
    intent: str | None = None,
    isolate: bool | None = None,
    network: bool | None = None,
    raw: bool = False,
    project: Path | None = None,
    json_: bool = False,
) -> int:
    """``ctxmode execute-file``: run `code` over the file at `path`; the exit status."""
    output.use_json(["execute-file"], json_)
    source = code if code is not None and code != "-" else read_stdin("the code")
    request = ExecRequest(
        language=lang,
        code=source,
        project_dir=paths.resolve_project(project),
        timeout_ms=timeout_ms,
        file_path=path,
        isolate=isolate,
        network=network,
        keep_all=raw,
    )
    check_path(request)
    check_code(request)
    return _run(request, "execute-file", intent=intent, raw=raw, json_=json_)


def exit_code(result: ExecResult) -> int:
    if result.timed_out or result.capped:  # stopped by a limit, not by itself
        return int(ExitCode.TIMEOUT)
    return result.exit_code if 0 <= result.exit_code <= 255 else int(ExitCode.ERROR)


class _Terminal:
    """Copies a run's output to the terminal as it arrives; remembers how a line ended."""

    def __init__(self) -> None:
        self.bytes = 0
        self.at_line_start = True

    def __call__(self, is_stdout: bool, data: bytes) -> None:
        stream = sys.stdout if is_stdout else sys.stderr
        stream.buffer.write(data)
        stream.buffer.flush()
        self.bytes += len(data)
        self.at_line_start = data.endswith(b"\n")


def _streams_live(json_: bool) -> bool:
    try:
        return not json_ and sys.stdout.isatty() and hasattr(sys.stdout, "buffer")
    except ValueError:  # a closed stdout
        return False


def _run(request: ExecRequest, command: str, *, intent: str | None, raw: bool, json_: bool) -> int:
    terminal = _Terminal() if _streams_live(json_) else None
    if terminal is not None:
        sys.stdout.flush()
        sys.stderr.flush()
        request = replace(request, echo=terminal)
    result = execute(request)
    if command == "execute":
        label = f"execute:{result.language}"
        timeout_text = None
    else:
        label = f"file:{request.file_path}"
        timeout_text = f"Timed out processing {request.file_path} after {result.timeout_ms:.0f}ms"
    shaped = None
    if not raw:
        from ctxmode.executor.shaping import shape

        where = paths.ProjectPaths(paths.data_root(), request.project_dir)
        shaped = shape(
            result,
            label=label,
            intent=intent,
            open_store=lambda: _knowledge_base(where),
            timeout_text=timeout_text,
            syntax="cli",
        )
    code = exit_code(result)
    written = 0
    if json_:
        output.emit_json(
            {
                "language": result.language,
                "runtime": result.runtime,
                "exit_code": result.exit_code,
                "timed_out": result.timed_out,
                "capped": result.capped,
                "isolated": result.isolated,
                "duration_ms": round(result.duration_ms, 1),
                "stdout": result.stdout,
                "stderr": result.stderr,
                "text": shaped.text if shaped else None,
                "is_error": shaped.is_error if shaped else result.exit_code != 0,
                "indexed": shaped.indexed_label if shaped else None,
            },
            exit_code=code,
        )
        written = _size(shaped.text if shaped else result.stdout + result.stderr)
    elif terminal is not None:
        written = terminal.bytes + _after_live(terminal, result, shaped)
    elif shaped is not None and shaped.indexed_label is not None:
        sys.stdout.write(shaped.text + "\n")
        written = _size(shaped.text) + 1
    else:
        sys.stdout.write(result.stdout)
        sys.stderr.write(result.stderr)
        written = _size(result.stdout) + _size(result.stderr)
        if result.timed_out:
            written += _say_timed_out(result)
    sys.stdout.flush()
    _count(request, command, result, written, shaped.indexed_bytes if shaped else 0)
    return code


def _knowledge_base(where: paths.ProjectPaths) -> "ContentStore":
    """The project's knowledge base, opened only when an output is large enough to index."""
    from ctxmode.store import ContentStore

    return ContentStore(where.adopt_legacy_content_db())


def _after_live(terminal: _Terminal, result: ExecResult, shaped: "Shaped | None") -> int:
    """What to add after a run shown live: how it stopped, and what was indexed."""
    notes = []
    if result.capped:
        notes.append(result.stderr[result.stderr.rfind("\n[output capped") + 1 :])
    if result.timed_out:
        notes.append(f"[timed out after {result.timeout_ms:.0f}ms]")
    if shaped is not None and shaped.view:
        notes.append(shaped.view)
    if not notes:
        return 0
    text = ("" if terminal.at_line_start else "\n") + "\n".join(notes)
    output.note(text)
    return _size(text) + 1


def _say_timed_out(result: ExecResult) -> int:
    text = f"[timed out after {result.timeout_ms:.0f}ms — partial output shown]"
    output.note(text)
    return _size(text) + 1


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _count(
    request: ExecRequest, command: str, result: ExecResult, written: int, indexed: int
) -> None:
    """Add the run to the project's stats, as the server counts ``ctx_execute``: what was
    printed back, and what the run printed (or the file it read) that was not."""
    from ctxmode.session.where import session_db_path
    from ctxmode.stats.model import Usage
    from ctxmode.stats.record import Recorder

    if request.file_path is not None:
        handled = file_size(request.project_dir, request.file_path)
    else:
        handled = result.printed_bytes
    usage = Usage(calls=1, returned=written, sandboxed=max(0, handled - written), indexed=indexed)
    db = session_db_path(request.project_dir, paths.data_root())
    recorder = Recorder(db, request.project_dir)
    try:
        recorder.record(STATS_TOOLS[command], usage)
    finally:
        recorder.close()


def check_code(request: ExecRequest) -> None:
    """Refuse code the project's permission rules deny, by its commands or by the files it
    names (exit 5)."""
    from ctxmode.security import check_run, enforce, load_policy

    language = normalize_language(request.language)
    policy = load_policy(request.project_dir)
    enforce(check_run(policy, language, request.code, request.project_dir))


def check_path(request: ExecRequest) -> None:
    """Refuse a file the project's Read rules deny (exit 5)."""
    from ctxmode.security import check_path as check
    from ctxmode.security import enforce, load_policy

    assert request.file_path is not None
    policy = load_policy(request.project_dir)
    enforce(check(policy, request.file_path, request.project_dir))
