"""`ctxmode hook PLATFORM EVENT`: documented here; run by `ctxmode.__main__` without Typer."""

from typing import Annotated

import typer


def hook(
    platform: Annotated[str, typer.Argument(help="Host agent, e.g. claude-code.")],
    event: Annotated[str, typer.Argument(help="Hook event, e.g. pretooluse.")],
) -> None:
    """Entry point for agents' hook settings: reads the event on stdin, answers on stdout.

    Never fails the host: on any error it answers with the platform's no-op and exit 0.

    Example: ctxmode hook claude-code pretooluse < payload.json
    """
    from ctxmode.hooks.entry import run

    raise typer.Exit(run([platform, event]))
