"""`ctxmode search`: query the project's knowledge base.

The work is `ctxmode.cli.actions.search`; plain invocations skip Typer altogether
(`ctxmode.cli.fast`). This module declares the command for help, completion, the man page
and every invocation the fast path leaves to Typer.
"""

from enum import Enum
from typing import Annotated

import typer
from typer import _click
from typer.core import TyperCommand

from ctxmode.cli.actions.search import dash_hint
from ctxmode.cli.actions.search import search as run_search
from ctxmode.cli.options import JsonOpt, ProjectOpt
from ctxmode.store.query import MAX_HITS


class ContentType(str, Enum):
    code = "code"
    prose = "prose"


class QueryCommand(TyperCommand):
    """`search`, with a hint when a query word that starts with '-' was taken for an option."""

    def parse_args(self, ctx: _click.Context, args: list[str]) -> list[str]:
        given = list(args)  # the parser consumes `args`
        try:
            return super().parse_args(ctx, args)
        except _click.exceptions.NoSuchOption as exc:
            word = next((a for a in given if a.startswith(exc.option_name)), exc.option_name)
            exc.message = f"{exc.message.rstrip('.')}; {dash_hint(word)}"
            raise


def search(
    query: Annotated[list[str], typer.Argument(help="Words to search for.", show_default=False)],
    limit: Annotated[
        int, typer.Option("--limit", "-n", help="Results to show.", min=1, max=MAX_HITS)
    ] = 5,
    source: Annotated[
        str | None,
        typer.Option("--source", "-s", help="Only sources whose label contains this text."),
    ] = None,
    type_: Annotated[
        ContentType | None, typer.Option("--type", "-t", help="Only code or only prose chunks.")
    ] = None,
    project: ProjectOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Search indexed content: exact words, identifiers, fragments, typos, CJK.

    Results show the source, lines, title and the matching lines of each chunk. Sources
    backed by files are checked first: changed files are re-indexed, deleted ones dropped.
    Exits 0 when something matched and 1 when nothing did (like grep), 3 when the
    knowledge base is empty. A query that starts with '-' goes after '--'.

    Example: ctxmode search "connection pool timeout" --limit 3
    """
    code = run_search(
        query,
        limit=limit,
        source=source,
        content_type=type_.value if type_ else None,
        project=project,
        json_=json_,
    )
    if code:
        raise typer.Exit(code)
