"""The commands scripts and agents run most, started without Typer, Rich or pydantic.

``ctxmode --version``, ``ctxmode --help`` (and ``ctxmode`` alone), ``ctxmode search ...``
and ``ctxmode execute ...`` are answered here when their arguments are plain: this module
parses argv the way click does for the options these commands declare, and calls the same
action the Typer command calls (`ctxmode.cli.actions`). Anything else (``--help`` of a
command, an unknown option, a value click would reject or convert differently, shell
completion) returns None and the Typer app takes the whole command line, so every error
and every help text is Typer's own.

The top-level help is the text Typer renders where nothing is a terminal and no variable
changes the rendering (80 columns, no colours); `ctxmode.cli.gendocs` writes it to
``help.txt`` beside this module and the docs test keeps it equal to Typer's output. Where
anything would change it, Typer renders the help itself.
"""

import os
import re
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from ctxmode import __version__

HELP_FILE = Path(__file__).with_name("help.txt")
COMPLETE_VAR = "_CTXMODE_COMPLETE"
# Variables Typer or Rich read that change how the help looks (width, colours, layout).
HELP_VARIABLES = (
    "COLUMNS",
    "TERMINAL_WIDTH",
    "FORCE_COLOR",
    "PY_COLORS",
    "GITHUB_ACTIONS",
    "TTY_COMPATIBLE",
    "_TYPER_FORCE_DISABLE_TERMINAL",
    "TYPER_USE_RICH",
    "TYPER_RICH_MARKUP_MODE",
)

_INT = re.compile(r"[0-9]+\Z")
_FLOAT = re.compile(r"[0-9]+(\.[0-9]+)?\Z")


class Invalid(Exception):
    """A value the fast path does not take: Typer decides what it means."""


class Opt(NamedTuple):
    """One option as click sees it: its names, where its value goes, and how it converts."""

    dest: str
    names: tuple[str, ...]
    convert: Callable[[str], Any] | None  # None: a flag
    flag_value: Any = True


def _int_in(low: int, high: int) -> Callable[[str], int]:
    def convert(value: str) -> int:
        if not _INT.match(value) or not low <= int(value) <= high:
            raise Invalid(value)
        return int(value)

    return convert


def _float(value: str) -> float:
    if not _FLOAT.match(value):
        raise Invalid(value)
    return float(value)


def _choice(*choices: str) -> Callable[[str], str]:
    def convert(value: str) -> str:
        if value not in choices:
            raise Invalid(value)
        return value

    return convert


def _path(*, file_okay: bool = True, dir_okay: bool = True) -> Callable[[str], Path]:
    """click.Path(file_okay, dir_okay) as Typer declares it: a path that need not exist,
    but is not of the excluded kind and is readable when it does."""

    def convert(value: str) -> Path:
        try:
            mode = os.stat(value).st_mode
        except OSError:
            return Path(value)
        if (not file_okay and stat.S_ISREG(mode)) or (not dir_okay and stat.S_ISDIR(mode)):
            raise Invalid(value)
        if not os.access(value, os.R_OK):
            raise Invalid(value)
        return Path(value)

    return convert


def _text(value: str) -> str:
    return value


_PROJECT = Opt("project", ("--project", "-p"), _path(file_okay=False))
_JSON = Opt("json_", ("--json",), None)

SEARCH = (
    Opt("limit", ("--limit", "-n"), _int_in(1, 100)),
    Opt("source", ("--source", "-s"), _text),
    Opt("content_type", ("--type", "-t"), _choice("code", "prose")),
    _PROJECT,
    _JSON,
)
EXECUTE = (
    Opt("lang", ("--lang", "-l"), _text),
    Opt("file", ("--file", "-f"), _path(dir_okay=False)),
    Opt("timeout_ms", ("--timeout-ms", "-t"), _float),
    Opt("intent", ("--intent",), _text),
    Opt("isolate", ("--isolate",), None, True),
    Opt("isolate", ("--no-isolate",), None, False),
    Opt("network", ("--network",), None, True),
    Opt("network", ("--no-network",), None, False),
    Opt("raw", ("--raw",), None),
    _PROJECT,
    _JSON,
)


def parse(spec: tuple[Opt, ...], args: list[str]) -> tuple[dict[str, Any], list[str]]:
    """(option values, positional arguments) of `args`, as click's parser reads them for
    a command with the options `spec` and interspersed arguments.

    Raises:
        Invalid: anything click would reject, or that the fast path leaves to Typer
            (an unknown option such as ``--help``, a missing or unconvertible value).
    """
    by_name = {name: opt for opt in spec for name in opt.names}
    values: dict[str, Any] = {}
    positional: list[str] = []
    rest = list(args)

    def take(opt: Opt, attached: str | None) -> None:
        if opt.convert is None:
            if attached is not None:
                raise Invalid(opt.names[0])  # "Option '--json' does not take a value"
            values[opt.dest] = opt.flag_value
            return
        if attached is None:
            if not rest:
                raise Invalid(opt.names[0])  # "requires an argument"
            attached = rest.pop(0)
        values[opt.dest] = opt.convert(attached)

    while rest:
        arg = rest.pop(0)
        if arg == "--":
            positional += rest
            break
        if not arg.startswith("-") or len(arg) == 1:
            positional.append(arg)
            continue
        name, eq, value = arg.partition("=")
        if name in by_name and name.startswith("--"):
            take(by_name[name], value if eq else None)
        elif arg.startswith("--"):
            raise Invalid(arg)  # click: "No such option"
        else:  # short options, possibly bundled or with the value attached: -n3, -tcode
            for i, char in enumerate(arg[1:], start=2):
                short = by_name.get("-" + char)
                if short is None:
                    raise Invalid(arg)
                if short.convert is not None:
                    take(short, arg[i:] or None)
                    break
                take(short, None)
    return values, positional


def _help_renders_as_file() -> bool:
    """Would Typer render the help exactly as `help.txt` holds it? Only where no standard
    stream is a terminal (Rich takes the width from the first that is) and no variable
    changes the rendering."""
    if os.name != "posix" or any(var in os.environ for var in HELP_VARIABLES):
        return False
    return not any(os.isatty(fd) for fd in (0, 1, 2))


def _help() -> int | None:
    if not _help_renders_as_file():
        return None
    try:
        text = HELP_FILE.read_bytes()
    except OSError:  # an install without it: Typer renders the help
        return None
    sys.stdout.flush()
    sys.stdout.buffer.write(text)
    sys.stdout.flush()
    return 0


def _search(args: list[str]) -> int | None:
    values, query = parse(SEARCH, args)
    if not query:
        return None  # "Missing argument 'QUERY...'"
    from ctxmode.cli import guard
    from ctxmode.cli.actions.search import search

    return guard.run(lambda: search(query, **values))


def _execute(args: list[str]) -> int | None:
    values, positional = parse(EXECUTE, args)
    if len(positional) > 1:
        return None  # "Got unexpected extra argument"
    from ctxmode.cli import guard
    from ctxmode.cli.actions.execute import run_code

    code = positional[0] if positional else None
    return guard.run(lambda: run_code(code, **values))


_COMMANDS: dict[str, Callable[[list[str]], int | None]] = {
    "search": _search,
    "execute": _execute,
}


def run(args: list[str]) -> int | None:
    """The exit status of `args` answered here, or None: the Typer app must take it."""
    if COMPLETE_VAR in os.environ:
        return None
    if args == ["--version"]:
        sys.stdout.write(f"ctxmode {__version__}\n")
        return 0
    if args in ([], ["--help"], ["-h"]):
        return _help()
    command = _COMMANDS.get(args[0])
    if command is None:
        return None
    try:
        return command(args[1:])
    except Invalid:
        return None
