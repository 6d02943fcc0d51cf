"""`ctxmode search`: query the project's knowledge base."""

from enum import Enum
from typing import Annotated

import typer

from ctxmode.cli import output
from ctxmode.cli.context import open_store
from ctxmode.cli.options import JsonOpt, ProjectOpt
from ctxmode.errors import NotFoundError, UsageError
from ctxmode.store import SearchResult


class ContentType(str, Enum):
    code = "code"
    prose = "prose"


def search(
    query: Annotated[list[str], typer.Argument(help="Words to search for.", show_default=False)],
    limit: Annotated[
        int, typer.Option("--limit", "-n", help="Results to show.", min=1, max=100)
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

    Example: ctxmode search "connection pool timeout" --limit 3
    """
    output.use_json(["search"], json_)
    text = " ".join(query).strip()
    if not text:
        raise UsageError("empty query: pass the words to search for")
    store, _ = open_store(project)
    with store:
        if store.chunk_count() == 0:
            raise NotFoundError(
                "the knowledge base of this project is empty; index something first: "
                "ctxmode index PATH (or pass --project DIR)"
            )
        result = store.search(
            text, limit=limit, source=source, content_type=type_.value if type_ else None
        )
    if json_:
        output.emit_json(_as_data(result))
    else:
        _render(result)


def _as_data(result: SearchResult) -> dict[str, object]:
    return {
        "query": result.query,
        "corrections": result.corrections,
        "refresh": {
            "refreshed": result.refresh.refreshed,
            "dropped": result.refresh.dropped,
        },
        "hits": [
            {
                "source": h.source,
                "title": h.title,
                "content_type": h.content_type,
                "layer": h.layer,
                "score": h.score,
                "file_path": h.file_path,
                "start_line": h.start_line,
                "end_line": h.end_line,
                "snippet": h.snippet,
            }
            for h in result.hits
        ],
    }


def _render(result: SearchResult) -> None:
    from rich.text import Text

    con = output.stdout
    refresh = result.refresh
    if refresh.refreshed:
        output.stderr.print(f"re-indexed {len(refresh.refreshed)} changed source(s)")
    if refresh.dropped:
        output.stderr.print(
            f"dropped {len(refresh.dropped)} source(s) whose file was deleted: "
            + ", ".join(refresh.dropped[:5])
        )
    if result.corrections:
        fixed = ", ".join(f"{a} → {b}" for a, b in result.corrections.items())
        output.stderr.print(f"also searched for: {fixed}")
    if not result.hits:
        con.print("No results.")
        return
    for n, hit in enumerate(result.hits, 1):
        where = hit.source
        if hit.start_line is not None:
            where += f":{hit.start_line}-{hit.end_line}"
        header = Text.assemble(
            (f"{n}. ", "bold"),
            (where, "bold cyan"),
            "  ",
            (hit.title, "bold"),
            (f"  [{hit.layer}]", "dim"),
        )
        con.print(header)
        con.print(Text(hit.snippet))
        con.print()
