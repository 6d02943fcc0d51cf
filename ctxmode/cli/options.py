"""Options shared by several commands, and the group class of the command groups."""

from pathlib import Path
from typing import Annotated

import typer
from typer import _click
from typer.core import TyperGroup

JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print one JSON document (the result envelope) on stdout.")
]
ProjectOpt = Annotated[
    Path | None,
    typer.Option(
        "--project",
        "-p",
        help="Project directory (default: $CTXMODE_PROJECT_DIR, the host's project variable, "
        "the enclosing git work tree, or the current directory).",
        file_okay=False,
        show_default=False,
    ),
]


def complete_platform(incomplete: str) -> list[str]:
    """Host agent names that start with what was typed, from the platform registry as it
    is when completion runs (platforms are added there, not here)."""
    from ctxmode.platforms import PLATFORMS

    return [name for name in PLATFORMS if name.startswith(incomplete)]


class BareHelpGroup(TyperGroup):
    """A group that, run without a command, prints its help on stdout and exits 0 (click
    prints it on stderr as a usage error)."""

    def parse_args(self, ctx: _click.Context, args: list[str]) -> list[str]:
        if not args and self.no_args_is_help and not ctx.resilient_parsing:
            typer.echo(ctx.get_help(), color=ctx.color)
            ctx.exit(0)
        return super().parse_args(ctx, args)
