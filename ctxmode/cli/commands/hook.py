"""`ctxmode hook PLATFORM EVENT`: documented here; run by `ctxmode.__main__` without Typer."""

import sys
from typing import Annotated

import typer

from ctxmode.cli import output
from ctxmode.cli.options import complete_platform
from ctxmode.errors import UsageError
from ctxmode.platforms import PLATFORMS


def hook(
    platform: Annotated[
        str,
        typer.Argument(
            help=f"Host agent: {', '.join(PLATFORMS)}.",
            show_default=False,
            autocompletion=complete_platform,
        ),
    ],
    event: Annotated[
        str, typer.Argument(help="Hook event as the host names it, e.g. pretooluse, stop.")
    ],
) -> None:
    """Entry point for agents' hook settings: reads the event on stdin, answers on stdout.

    Turn-end events (stop, agentstop, aftermodel, afteragentresponse, sessionend) record
    the turn and the tokens the host reports per model, and never continue the turn.
    Never fails the host: on any error it answers with the platform's no-op and exit 0.
    An unknown platform is a usage error (exit 2) at a terminal; under a host (stdin
    piped) it only says so on stderr and exits 0, so a typo cannot block every tool call.

    Example: ctxmode hook claude-code pretooluse < payload.json
    """
    if platform not in PLATFORMS:
        message = f"unknown platform {platform!r}; choose one of: {', '.join(PLATFORMS)}"
        if sys.stdin is not None and not sys.stdin.isatty():
            output.warn(message)
            raise typer.Exit(0)
        raise UsageError(message)
    from ctxmode.hooks.entry import run

    raise typer.Exit(run([platform, event]))
