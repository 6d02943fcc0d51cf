"""`ctxmode search`: query the project's knowledge base (no Typer, Rich only on a terminal)."""

import shlex
import sys
from pathlib import Path

from ctxmode.cli import output
from ctxmode.errors import ExitCode, NotFoundError, UsageError
from ctxmode.store import SearchHit, SearchResult
from ctxmode.wording import plural

NO_MATCH = int(ExitCode.ERROR)  # like grep and rg: 1 when nothing matched


def search(
    query: list[str],
    *,
    limit: int = 5,
    source: str | None = None,
    content_type: str | None = None,
    project: Path | None = None,
    json_: bool = False,
) -> int:
    """Search and print the hits; 0 when something matched, `NO_MATCH` when nothing did.

    Raises:
        UsageError: an empty query.
        NotFoundError: the knowledge base is empty.
    """
    from ctxmode.cli.context import open_store

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
        result = store.search(text, limit=limit, source=source, content_type=content_type)
    code = 0 if result.hits else NO_MATCH
    if json_:
        errors = [] if result.hits else [{"code": "no_match", "message": f"nothing matched {text}"}]
        output.emit_json(as_data(result), exit_code=code, errors=errors)
    else:
        render(result)
    return code


def dash_hint(word: str) -> str:
    """What to say when a query word that starts with '-' was taken for an option."""
    return (
        f"to search for a word that starts with '-', put -- before the query: "
        f"ctxmode search -- {shlex.quote(word)}"
    )


def as_data(result: SearchResult) -> dict[str, object]:
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


def render(result: SearchResult) -> None:
    refresh = result.refresh
    if refresh.refreshed:
        output.note(f"re-indexed {plural(len(refresh.refreshed), 'changed source')}")
    if refresh.dropped:
        output.note(
            f"dropped {plural(len(refresh.dropped), 'source')} whose file was deleted: "
            + ", ".join(refresh.dropped[:5])
        )
    if result.corrections:
        fixed = ", ".join(f"{a} → {b}" for a, b in result.corrections.items())
        output.note(f"also searched for: {fixed}")
    if not result.hits:
        output.say("No results.")
        return
    if output.styled(sys.stdout):
        _render_styled(result)
        return
    lines = []
    for n, hit in enumerate(result.hits, 1):
        lines += [f"{n}. {_where(hit)}  {hit.title}  [{hit.layer}]", hit.snippet, ""]
    output.say("\n".join(lines))


def _where(hit: SearchHit) -> str:
    if hit.start_line is None:
        return hit.source
    return f"{hit.source}:{hit.start_line}-{hit.end_line}"


def _render_styled(result: SearchResult) -> None:
    from rich.text import Text

    con = output.stdout
    for n, hit in enumerate(result.hits, 1):
        header = Text.assemble(
            (f"{n}. ", "bold"),
            (_where(hit), "bold cyan"),
            "  ",
            (hit.title, "bold"),
            (f"  [{hit.layer}]", "dim"),
        )
        con.print(header)
        con.print(Text(hit.snippet))
        con.print()
