"""Rendering for the CLI: one JSON envelope under --json, Rich for people, stderr for noise.

Rich is imported only when something is styled for a terminal: `say`, `note`, `warn` and
`error` write plain text to a pipe or a file, byte for byte what Rich would have written
there (control characters dropped, tabs expanded), so scripted runs never load it. Piped
output is never wrapped: a line or a table row stays one line whatever its length.
"""

import json
import os
import sys
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

    stdout: Console
    stderr: Console

RESULT_VERSION = "1"
UNWRAPPED = 100_000  # the width of a console that is not a terminal: nothing wraps
_CONTROL = dict.fromkeys((7, 8, 11, 12, 13))  # what Rich strips from text: BEL BS VT FF CR
TAB_SIZE = 8


class _Mode:
    json = False
    command: list[str] = []


mode = _Mode()


def use_json(command: list[str], enabled: bool) -> None:
    """Called by each command first, so errors raised later render in the same format."""
    mode.json = enabled
    mode.command = command


def styled(stream: IO[str]) -> bool:
    """Would Rich treat `stream` as a terminal (colours, wrapping, live displays)? The same
    rules as ``rich.console.Console.is_terminal``: TTY_COMPATIBLE, FORCE_COLOR, isatty."""
    compatible = os.environ.get("TTY_COMPATIBLE", "")
    if compatible in ("0", "1"):
        return compatible == "1"
    force = os.environ.get("FORCE_COLOR")
    if force is not None:
        return force != ""
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _console(err: bool) -> "Console":
    from rich.console import Console

    if styled(sys.stderr if err else sys.stdout):
        # stdout never wraps (long lines are copied from it); messages wrap at the width
        return Console(stderr=err, soft_wrap=not err, **_COMMON)
    return Console(stderr=err, soft_wrap=True, width=UNWRAPPED, **_COMMON)


# Markup off: labels, paths and output often contain [brackets]; styled lines opt in.
# Emoji codes off: a ":memo:" in a file name stays as it is.
_COMMON: dict[str, Any] = {"highlight": False, "markup": False, "emoji": False}


def _get(name: str) -> "Console":
    console = globals().get(name)
    if console is None:
        console = globals()[name] = _console(name == "stderr")
    return console


def __getattr__(name: str) -> Any:
    """`stdout` and `stderr`, the Rich consoles, made on first use."""
    if name in ("stdout", "stderr"):
        return _get(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def plain(text: str) -> str:
    """`text` as Rich prints it where nothing is styled: control characters other than
    newline and tab dropped, tabs expanded to the next multiple of 8 cells."""
    text = text.translate(_CONTROL)
    if "\t" not in text:
        return text
    if text.isascii():
        return text.expandtabs(TAB_SIZE)
    from rich.cells import cell_len  # wide characters count two cells

    lines = []
    for line in text.split("\n"):
        parts = line.split("\t")
        column, out = 0, []
        for part in parts[:-1]:
            column += cell_len(part) + 1
            pad = (TAB_SIZE - column % TAB_SIZE) % TAB_SIZE
            out.append(part + " " * (1 + pad))
            column += pad
        out.append(parts[-1])
        lines.append("".join(out))
    return "\n".join(lines)


def say(text: str = "", *, style: str | None = None, err: bool = False) -> None:
    """One line (or several) on stdout, or on stderr with `err`; `style` on a terminal."""
    stream = sys.stderr if err else sys.stdout
    if styled(stream):
        _get("stderr" if err else "stdout").print(text, style=style)
    else:
        stream.write(plain(text) + "\n")


def note(text: str) -> None:
    """A remark on stderr: what happened besides the answer (re-indexed, dropped, ...)."""
    say(text, err=True)


def envelope(
    command: list[str], data: Any, *, exit_code: int = 0, errors: list[dict[str, str]] | None = None
) -> dict[str, Any]:
    return {
        "ctxmode_result_version": RESULT_VERSION,
        "command": command,
        "status": "ok" if exit_code == 0 else "error",
        "exit_code": exit_code,
        "data": data,
        "errors": errors or [],
    }


JSON_WRITE_CHARS = 1 << 16  # the indented encoder's pieces are written in batches this big


def emit_json(data: Any, *, exit_code: int = 0, errors: list[dict[str, str]] | None = None) -> None:
    """Write the envelope as it is encoded: joining the encoder's pieces first held millions
    of small strings at once for a large result (`index --json` of 100,000 files: +120 MB)."""
    doc = envelope(mode.command, data, exit_code=exit_code, errors=errors)
    batch: list[str] = []
    size = 0
    for piece in json.JSONEncoder(ensure_ascii=False, indent=2).iterencode(doc):
        batch.append(piece)
        size += len(piece)
        if size >= JSON_WRITE_CHARS:
            sys.stdout.write("".join(batch))
            batch.clear()
            size = 0
    batch.append("\n")
    sys.stdout.write("".join(batch))
    sys.stdout.flush()


def error(message: str, code: str, exit_code: int) -> None:
    """Report a failed command: the JSON envelope on stdout, or a line on stderr."""
    if mode.json:
        emit_json(None, exit_code=exit_code, errors=[{"code": code, "message": message}])
    else:
        _tagged("[bold red]Error:[/]", "Error:", message)


def warn(message: str) -> None:
    _tagged("[yellow]Warning:[/]", "Warning:", message)


def _tagged(markup: str, tag: str, message: str) -> None:
    sys.stdout.flush()  # what the command printed comes before what went wrong
    if styled(sys.stderr):
        from rich.markup import escape

        _get("stderr").print(f"{markup} {escape(message)}", markup=True)
    else:
        sys.stderr.write(plain(f"{tag} {message}") + "\n")
