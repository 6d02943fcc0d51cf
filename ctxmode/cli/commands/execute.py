"""`ctxmode execute` and `ctxmode execute-file`: run code in the sandbox from a shell.

The work is `ctxmode.cli.actions.execute`; plain invocations of ``execute`` skip Typer
altogether (`ctxmode.cli.fast`). This module declares both commands for help, completion,
the man page and every invocation the fast path leaves to Typer.
"""

from pathlib import Path
from typing import Annotated

import typer

from ctxmode.cli.actions.execute import run_code, run_file
from ctxmode.cli.options import JsonOpt, ProjectOpt
from ctxmode.executor.runtimes import ALIASES, LANGUAGES


def complete_language(incomplete: str) -> list[str]:
    """Language names that start with what was typed; else aliases that do (js, py, sh)."""
    typed = incomplete.lower()
    names = [name for name in LANGUAGES if name.startswith(typed)]
    return names or [alias for alias in ALIASES if alias.startswith(typed)]


LangOpt = Annotated[
    str,
    typer.Option(
        "--lang",
        "-l",
        help=f"Language: {', '.join(LANGUAGES)}.",
        show_default=False,
        autocompletion=complete_language,
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

    Every language runs in the project directory (the script file and $TMPDIR
    are in a temp directory of its own), with a scrubbed environment and a
    deadline (120 s by default); the whole process tree is killed on timeout,
    and nothing it started survives it. On a terminal the output streams live.
    Piped, output over 100 KB is indexed into the knowledge base and a pointer
    is printed instead (--raw prints it all); memory holds only the first 1 MiB
    and last 256 KiB of each stream: a flood prints its first and last lines
    and says what was left out, and at most 2 MiB of it, repeated lines
    collapsed, is indexed within the deadline. The exit status is the run's
    own; 124 when the deadline or the 100 MiB output cap stopped it. Runs are
    counted in `ctxmode stats` as cli:execute.

    The host's permission rules are checked on the text first (exit 5): Bash
    deny rules on its commands, Read deny rules on the files it names. That is
    best effort: a command or a file name built at run time gets past it.
    --isolate enforces in the kernel: writes only in the project and the temp
    directory, paths the Read deny rules deny hidden, no network.

    Example: ctxmode execute --lang python "import sys; print(sys.version)"
    """
    status = run_code(
        code,
        lang=lang,
        file=file,
        timeout_ms=timeout_ms,
        intent=intent,
        isolate=isolate,
        network=network,
        raw=raw,
        project=project,
        json_=json_,
    )
    if status:
        raise typer.Exit(status)


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
    what the code prints comes back. It runs in the project directory, as for
    `ctxmode execute`; runs are counted in `ctxmode stats` as cli:execute-file.

    Example: ctxmode execute-file access.log -c "print(len(FILE_CONTENT.splitlines()))"
    """
    status = run_file(
        path,
        lang=lang,
        code=code,
        timeout_ms=timeout_ms,
        intent=intent,
        isolate=isolate,
        network=network,
        raw=raw,
        project=project,
        json_=json_,
    )
    if status:
        raise typer.Exit(status)
