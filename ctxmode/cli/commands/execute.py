"""`ctxmode execute` and `ctxmode execute-file`: run code in the sandbox from a shell."""

import sys
from pathlib import Path
from typing import Annotated

import typer

from ctxmode import paths
from ctxmode.cli import output
from ctxmode.cli.options import JsonOpt, ProjectOpt
from ctxmode.errors import ExitCode, InputError, UsageError
from ctxmode.executor import ExecRequest, ExecResult, execute
from ctxmode.executor.runtimes import LANGUAGES, normalize_language

LangOpt = Annotated[
    str,
    typer.Option(
        "--lang",
        "-l",
        help=f"Language: {', '.join(LANGUAGES)}.",
        show_default=False,
    ),
]
TimeoutOpt = Annotated[
    float | None,
    typer.Option(
        "--timeout-ms",
        "-t",
        help="Kill the run after this many milliseconds "
        "(default: $CTXMODE_EXEC_TIMEOUT_MS, else 120000).",
        show_default=False,
    ),
]
IntentOpt = Annotated[
    str | None,
    typer.Option(
        help="What you are looking for: output over 5 KB is indexed and only the "
        "matching sections are shown.",
    ),
]
IsolateOpt = Annotated[
    bool | None,
    typer.Option(
        "--isolate/--no-isolate",
        help="Confine the run with bubblewrap (Linux): project writable, the rest "
        "read-only, what Read deny rules deny hidden, no network unless --network "
        "(default: $CTXMODE_ISOLATE).",
        show_default=False,
    ),
]
NetworkOpt = Annotated[
    bool | None,
    typer.Option(
        "--network/--no-network",
        help="With --isolate: allow network access (default: $CTXMODE_ISOLATE_NETWORK, else none).",
        show_default=False,
    ),
]
RawOpt = Annotated[
    bool,
    typer.Option(
        "--raw",
        help="Print the whole output even when it is large (never index it); it is held "
        "in memory, up to the 100 MiB cap.",
    ),
]


def _read_stdin(what: str) -> str:
    if sys.stdin.isatty():
        raise UsageError(f"{what} comes from stdin, but stdin is a terminal; pipe it in")
    return sys.stdin.read()


def _exit_code(result: ExecResult) -> int:
    if result.timed_out or result.capped:  # stopped by a limit, not by itself
        return int(ExitCode.TIMEOUT)
    return result.exit_code if 0 <= result.exit_code <= 255 else int(ExitCode.ERROR)


def _finish(
    request: ExecRequest,
    result: ExecResult,
    *,
    label: str,
    intent: str | None,
    raw: bool,
    json_: bool,
    timeout_text: str | None = None,
) -> None:
    from ctxmode.executor.shaping import shape
    from ctxmode.store import ContentStore

    code = _exit_code(result)
    shaped = None
    if not raw:
        where = paths.ProjectPaths(paths.data_root(), request.project_dir)
        shaped = shape(
            result,
            label=label,
            intent=intent,
            open_store=lambda: ContentStore(where.adopt_legacy_content_db()),
            timeout_text=timeout_text,
        )
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
    elif shaped is not None and shaped.indexed_label is not None:
        sys.stdout.write(shaped.text + "\n")
    else:
        sys.stdout.write(result.stdout)
        sys.stderr.write(result.stderr)
        if result.timed_out:
            output.stderr.print(
                f"[timed out after {result.timeout_ms:.0f}ms — partial output shown]"
            )
    sys.stdout.flush()
    if code:
        raise typer.Exit(code)


def execute_command(
    code: Annotated[
        str | None,
        typer.Argument(help="Code to run; '-' reads it from stdin.", show_default=False),
    ] = None,
    lang: LangOpt = "shell",
    file: Annotated[
        Path | None,
        typer.Option("--file", "-f", help="Read the code from this script file.", dir_okay=False),
    ] = None,
    timeout_ms: TimeoutOpt = None,
    intent: IntentOpt = None,
    isolate: IsolateOpt = None,
    network: NetworkOpt = None,
    raw: RawOpt = False,
    project: ProjectOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Run code in a sandbox and print what it printed.

    Each run gets its own temp directory, a scrubbed environment and a deadline
    (120 s by default); the whole process tree is killed on timeout, and nothing
    it started survives it. Output over 100 KB is indexed into the knowledge base
    and a pointer is printed instead (--raw prints it all). Memory holds only
    the first 1 MiB and last 256 KiB of each stream: a flood prints its first and
    last lines and says what was left out, and at most 2 MiB of it, repeated
    lines collapsed, is indexed within the deadline. The exit status is the
    run's own; 124 when the deadline or the 100 MiB output cap stopped it.

    The host's permission rules are checked on the text first (exit 5): Bash
    deny rules on its commands, Read deny rules on the files it names. That is
    best effort: a command or a file name built at run time gets past it.
    --isolate enforces in the kernel: writes only in the project and the temp
    directory, paths the Read deny rules deny hidden, no network.

    Example: ctxmode execute --lang python "import sys; print(sys.version)"
    """
    output.use_json(["execute"], json_)
    if file is not None and code is not None:
        raise UsageError("pass the code or --file, not both")
    if file is not None:
        try:
            source = file.read_text(encoding="utf-8")
        except OSError as exc:
            raise InputError(f"cannot read {file}: {exc.strerror or exc}") from exc
    elif code is None or code == "-":
        source = _read_stdin("the code")
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
    _check_code(request)
    result = execute(request)
    _finish(
        request, result, label=f"execute:{result.language}", intent=intent, raw=raw, json_=json_
    )


def execute_file_command(
    path: Annotated[str, typer.Argument(help="File to process (relative to the project).")],
    lang: LangOpt = "python",
    code: Annotated[
        str | None,
        typer.Option(
            "--code",
            "-c",
            help="Code that reads FILE_CONTENT / FILE_CONTENT_PATH (file_content in "
            "Elixir and Rust); default: read from stdin.",
            show_default=False,
        ),
    ] = None,
    timeout_ms: TimeoutOpt = None,
    intent: IntentOpt = None,
    isolate: IsolateOpt = None,
    network: NetworkOpt = None,
    raw: RawOpt = False,
    project: ProjectOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Process a file in the sandbox: the file's text never reaches your context.

    The code sees the file as FILE_CONTENT (its text) and FILE_CONTENT_PATH; only
    what the code prints comes back.

    Example: ctxmode execute-file access.log -c "print(len(FILE_CONTENT.splitlines()))"
    """
    output.use_json(["execute-file"], json_)
    source = code if code is not None and code != "-" else _read_stdin("the code")
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
    _check_path(request)
    _check_code(request)
    result = execute(request)
    _finish(
        request,
        result,
        label=f"file:{path}",
        intent=intent,
        raw=raw,
        json_=json_,
        timeout_text=f"Timed out processing {path} after {result.timeout_ms:.0f}ms",
    )


def _check_code(request: ExecRequest) -> None:
    """Refuse code the project's permission rules deny, by its commands or by the files it
    names (exit 5)."""
    from ctxmode.security import check_run, enforce, load_policy

    language = normalize_language(request.language)
    policy = load_policy(request.project_dir)
    enforce(check_run(policy, language, request.code, request.project_dir))


def _check_path(request: ExecRequest) -> None:
    """Refuse a file the project's Read rules deny (exit 5)."""
    from ctxmode.security import check_path, enforce, load_policy

    assert request.file_path is not None
    policy = load_policy(request.project_dir)
    enforce(check_path(policy, request.file_path, request.project_dir))
