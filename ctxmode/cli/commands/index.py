"""`ctxmode index`: put files, directories or stdin into the project's knowledge base."""

import sys
from pathlib import Path
from typing import Annotated

import typer

from ctxmode.cli import output
from ctxmode.cli.commands.sources import render_sources
from ctxmode.cli.context import open_store
from ctxmode.cli.options import JsonOpt, ProjectOpt
from ctxmode.errors import CtxError, ExitCode, InputError, NotFoundError, UsageError
from ctxmode.store import ContentStore
from ctxmode.store.files import MAX_FILE_BYTES
from ctxmode.store.indexer import BAD_NAME, IndexRun, index_paths

_PROGRESS_AFTER = 20


def index(
    paths: Annotated[
        list[str] | None,
        typer.Argument(
            help="Files, directories or globs to index; '-' reads stdin.", show_default=False
        ),
    ] = None,
    source: Annotated[
        str | None,
        typer.Option(
            "--source",
            "-s",
            help="Label for a single file or stdin; a prefix for the files of a directory.",
        ),
    ] = None,
    kind: Annotated[
        str | None,
        typer.Option(
            help="How to chunk stdin: markdown, plain, json, or a language (python, go, ...). "
            "Default: judged from the label's extension, else markdown.",
        ),
    ] = None,
    max_file_size: Annotated[
        int, typer.Option(help="Skip files larger than this many bytes.", min=1)
    ] = MAX_FILE_BYTES,
    hidden: Annotated[bool, typer.Option(help="Also index hidden files and directories.")] = False,
    refresh: Annotated[
        bool,
        typer.Option(
            "--refresh",
            help="Re-hash every file-backed source; re-index changed files, drop deleted ones.",
        ),
    ] = False,
    list_: Annotated[
        bool, typer.Option("--list", help="List the indexed sources instead of indexing.")
    ] = False,
    project: ProjectOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Index files, directories or stdin for search.

    Directories are walked with .gitignore honoured; binary files, files over
    --max-file-size, hidden entries and VCS/cache directories are skipped. Indexing a
    label again replaces what it held.

    Example: ctxmode index README.md docs/ 'src/**/*.py'
    """
    output.use_json(["index"], json_)
    if list_:
        store, _ = open_store(project)
        with store:
            render_sources(store.sources(), json_)
        return
    if not paths and not refresh:
        raise UsageError("nothing to index: pass PATH..., '-' for stdin, --refresh or --list")
    store, where = open_store(project)
    with store:
        refreshed = store.refresh(rehash=True) if refresh else None
        run = IndexRun()
        names = list(paths or [])
        if "-" in names:
            names.remove("-")
            if sys.stdin.isatty():
                raise UsageError("'-' reads stdin, but stdin is a terminal; pipe text in")
            data = sys.stdin.buffer.read()
            if b"\x00" in data[:8192]:
                raise InputError("refusing to index stdin: it looks like binary data")
            text = data.decode("utf-8", "replace")
            run.indexed.append(store.index_text(text, source or "stdin", kind=kind))
        if names:
            run_files(store, names, where.project_dir, source, max_file_size, hidden, run)
    _report(run, refreshed, json_)


def run_files(
    store: ContentStore,
    names: list[str],
    project: Path,
    source: str | None,
    max_bytes: int,
    hidden: bool,
    run: IndexRun,
) -> None:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    bar = Progress(
        TextColumn("indexing"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.description}"),
        console=output.stderr,
        transient=True,
    )
    task = None

    def progress(done: int, total: int, name: str) -> None:
        nonlocal task
        if total < _PROGRESS_AFTER:
            return
        if task is None:
            bar.start()
            task = bar.add_task("", total=total)
        bar.update(task, completed=done, description=name[-60:])

    try:
        result = index_paths(
            store,
            names,
            project=project,
            cwd=Path.cwd(),
            label=source,
            max_bytes=max_bytes,
            include_hidden=hidden,
            deny=store.deny,
            progress=progress,
        )
    finally:
        bar.stop()
    run.indexed.extend(result.indexed)
    run.skipped.extend(result.skipped)


def _report(run: IndexRun, refreshed: object, json_: bool) -> None:
    from ctxmode.store import RefreshReport

    errors = run.errors
    exit_code = ExitCode.OK
    if errors:
        worst = errors[0]
        exit_code = (
            NotFoundError.exit_code
            if worst.code == "not_found"
            else ExitCode.DENIED
            if worst.code == "denied"
            else CtxError.exit_code
        )
    if json_:
        data = {
            "indexed": [
                {
                    "label": r.label,
                    "chunks": r.chunks,
                    "code_chunks": r.code_chunks,
                    "bytes": r.bytes,
                    "file_path": r.file_path,
                    "unchanged": r.unchanged,
                }
                for r in run.indexed
            ],
            "skipped": [{"path": p.path, "reason": p.message, "code": p.code} for p in run.skipped],
            "totals": {
                "sources": len(run.indexed),
                "chunks": sum(r.chunks for r in run.indexed),
                "bytes": sum(r.bytes for r in run.indexed),
                "unchanged": sum(r.unchanged for r in run.indexed),
            },
        }
        if isinstance(refreshed, RefreshReport):
            data["refresh"] = {
                "refreshed": refreshed.refreshed,
                "dropped": refreshed.dropped,
                "denied": refreshed.denied,
                "failed": refreshed.failed,
            }
        output.emit_json(
            data,
            exit_code=int(exit_code),
            errors=[{"code": p.code, "message": p.message} for p in errors],
        )
    else:
        con = output.stdout
        if isinstance(refreshed, RefreshReport):
            con.print(
                f"refresh: {len(refreshed.refreshed)} re-indexed, {len(refreshed.dropped)} "
                f"dropped (file deleted), {len(refreshed.denied)} left alone (denied)"
            )
            for label in refreshed.dropped:
                con.print(f"  dropped {label}")
        unchanged = sum(r.unchanged for r in run.indexed)
        for r in run.indexed:
            if r.unchanged and len(run.indexed) > 1:
                continue  # counted below: a re-index of a big tree is not a page per file
            con.print(
                f"{'unchanged' if r.unchanged else 'indexed'} {r.label}: {r.chunks} chunks "
                f"({r.code_chunks} code), {r.bytes:,} bytes",
            )
        if unchanged and len(run.indexed) > 1:
            con.print(f"{unchanged} unchanged since indexed (size and mtime, else content)")
        if len(run.indexed) > 1:
            con.print(
                f"{len(run.indexed)} sources, {sum(r.chunks for r in run.indexed)} chunks, "
                f"{sum(r.bytes for r in run.indexed):,} bytes"
            )
        quiet = [p for p in run.skipped if not p.explicit and p.code != BAD_NAME]
        if quiet:
            output.stderr.print(f"skipped {len(quiet)} file(s) (binary, too large or unreadable)")
        for p in run.skipped:
            if not p.explicit and p.code == BAD_NAME:
                output.stderr.print(p.message, markup=False, highlight=False)
        for p in errors:
            output.error(p.message, p.code, int(exit_code))
    if exit_code:
        raise typer.Exit(int(exit_code))
