"""Rendering for the CLI: one JSON envelope under --json, Rich for people, stderr for noise."""

import json
import sys
from typing import Any

from rich.console import Console

RESULT_VERSION = "1"

# Markup off: labels, paths and output often contain [brackets]. Styled lines opt in.
stdout = Console(highlight=False, soft_wrap=True, markup=False)
stderr = Console(stderr=True, highlight=False, markup=False)


class _Mode:
    json = False
    command: list[str] = []


mode = _Mode()


def use_json(command: list[str], enabled: bool) -> None:
    """Called by each command first, so errors raised later render in the same format."""
    mode.json = enabled
    mode.command = command


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


def emit_json(data: Any, *, exit_code: int = 0, errors: list[dict[str, str]] | None = None) -> None:
    doc = envelope(mode.command, data, exit_code=exit_code, errors=errors)
    sys.stdout.write(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
    sys.stdout.flush()


def error(message: str, code: str, exit_code: int) -> None:
    """Report a failed command: the JSON envelope on stdout, or a line on stderr."""
    if mode.json:
        emit_json(None, exit_code=exit_code, errors=[{"code": code, "message": message}])
    else:
        stderr.print(f"[bold red]Error:[/] {_escape(message)}", markup=True)


def warn(message: str) -> None:
    stderr.print(f"[yellow]Warning:[/] {_escape(message)}", markup=True)


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)
