"""`ctxmode sources`: what the project's knowledge base holds."""

from ctxmode.cli import output
from ctxmode.cli.context import open_store
from ctxmode.cli.options import JsonOpt, ProjectOpt
from ctxmode.store import SourceInfo
from ctxmode.wording import plural


def sources(project: ProjectOpt = None, json_: JsonOpt = False) -> None:
    """List indexed sources with their chunk counts and sizes.

    Example: ctxmode sources --json
    """
    output.use_json(["sources"], json_)
    store, _ = open_store(project)
    with store:
        render_sources(store.sources(), json_)


def render_sources(items: list[SourceInfo], json_: bool) -> None:
    if json_:
        output.emit_json(
            {
                "sources": [
                    {
                        "label": s.label,
                        "kind": s.kind,
                        "chunks": s.chunks,
                        "code_chunks": s.code_chunks,
                        "bytes": s.bytes,
                        "file_path": s.file_path,
                        "indexed_at": s.indexed_at,
                    }
                    for s in items
                ]
            }
        )
        return
    if not items:
        output.stdout.print("The knowledge base is empty. Index something: ctxmode index PATH")
        return
    from rich.table import Table

    table = Table(box=None, header_style="bold")
    table.add_column("source", overflow="fold")
    table.add_column("kind")
    table.add_column("chunks", justify="right")
    table.add_column("bytes", justify="right")
    table.add_column("indexed (UTC)")
    for s in items:
        table.add_row(
            s.label, s.kind, str(s.chunks), f"{s.bytes:,}", s.indexed_at[:19].replace("T", " ")
        )
    output.stdout.print(table)
    output.stdout.print(
        f"{plural(len(items), 'source')}, {plural(sum(s.chunks for s in items), 'chunk')}, "
        f"{sum(s.bytes for s in items):,} bytes"
    )
