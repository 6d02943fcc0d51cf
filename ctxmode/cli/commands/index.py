"""`ctxmode index`: put files, directories or stdin into the project's knowledge base.

Quiet by default: a progress bar on a terminal while a tree is read, then one summary line
(indexed, unchanged, skipped, dropped: counts and bytes). ``-v`` names every file, ``-q``
prints errors only, ``--json`` the whole report as data.
"""

import sys
from pathlib import Path
from typing import Annotated

import typer

from ctxmode.cli import output
from ctxmode.cli.commands.sources import render_sources
from ctxmode.cli.context import open_store
from ctxmode.cli.options import JsonOpt, ProjectOpt
from ctxmode.errors import CtxError, ExitCode, InputError, NotFoundError, UsageError
from ctxmode.store import ContentStore, RefreshReport
from ctxmode.store.files import MAX_FILE_BYTES, PLAIN_WALK, WalkOptions
from ctxmode.store.indexer import BAD_NAME, IndexRun, index_paths
from ctxmode.wording import plural

_PROGRESS_AFTER = 20  # files: fewer are read before a bar would be worth drawing


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
    include: Annotated[
        list[str] | None,
        typer.Option(
            "--include",
            metavar="GLOB",
            help="In directories, index only files matching GLOB (their path under the "
            "directory, or their name: '*.md', 'src/**/*.py'). Repeatable.",
            show_default=False,
        ),
    ] = None,
    exclude: Annotated[
        list[str] | None,
        typer.Option(
            "--exclude",
            metavar="GLOB",
            help="In directories, skip files and directories matching GLOB ('dist', "
            "'*.min.js'), besides the VCS and cache directories always skipped. Repeatable.",
            show_default=False,
        ),
    ] = None,
    max_depth: Annotated[
        int | None,
        typer.Option(
            "--max-depth",
            metavar="N",
            help="Enter at most N levels of subdirectories: 0 indexes only the files directly "
            "in a directory named. Default: no limit.",
            show_default=False,
        ),
    ] = None,
    max_files: Annotated[
        int | None,
        typer.Option(
            "--max-files",
            metavar="N",
            help="List at most N files from the directories named (together); the summary "
            "says when more were left out. Default: no limit.",
            show_default=False,
        ),
    ] = None,
    ext: Annotated[
        list[str] | None,
        typer.Option(
            "--ext",
            metavar="EXT",
            help="In directories, index only files with this extension (md or .md, any "
            "case). Repeatable.",
            show_default=False,
        ),
    ] = None,
    no_gitignore: Annotated[
        bool,
        typer.Option("--no-gitignore", help="Walk directories without honouring .gitignore."),
    ] = False,
    follow_symlinks: Annotated[
        bool,
        typer.Option(
            "--follow-symlinks",
            help="Enter symlinked directories that stay inside the directory named (each "
            "real directory once).",
        ),
    ] = False,
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
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose", "-v", help="Name every file: indexed, unchanged, skipped, dropped."
        ),
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print errors only.")] = False,
    project: ProjectOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Index files, directories or stdin for search.

    Directories are walked with .gitignore honoured; binary files, files over
    --max-file-size, hidden entries and VCS/cache directories are skipped. Indexing a
    label again replaces what it held; a file whose size and mtime (else content) did
    not change is not read again and counts as unchanged.

    --include, --exclude, --ext, --max-depth, --max-files, --no-gitignore and
    --follow-symlinks narrow or widen the walk of the directories named; files and globs
    named are indexed as they are.

    Prints one summary line: how many sources were indexed (chunks, bytes), unchanged,
    skipped and dropped; on a terminal a progress bar runs meanwhile. -v names every
    file, -q prints only errors, --json gives the whole report as data.

    Example: ctxmode index README.md docs/ 'src/**/*.py'
    """
    output.use_json(["index"], json_)
    if verbose and quiet:
        raise UsageError("choose one: --verbose or --quiet")
    walk = _walk_options(include, exclude, max_depth, max_files, ext, no_gitignore, follow_symlinks)
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
            bar = not (json_ or quiet) and output.styled(sys.stderr)
            run_files(
                store, names, where.project_dir, source, max_file_size, hidden, run, bar, walk
            )
    _report(run, refreshed, json_, verbose=verbose, quiet=quiet, max_files=max_files)


def _walk_options(
    include: list[str] | None,
    exclude: list[str] | None,
    max_depth: int | None,
    max_files: int | None,
    ext: list[str] | None,
    no_gitignore: bool,
    follow_symlinks: bool,
) -> WalkOptions:
    """The directory-walk flags as `WalkOptions`; a bad value is a usage error."""
    if max_depth is not None and max_depth < 0:
        raise UsageError(f"--max-depth must be 0 or more, not {max_depth}")
    if max_files is not None and max_files < 1:
        raise UsageError(f"--max-files must be 1 or more, not {max_files}")
    for value in ext or []:
        if not value.strip().lstrip("."):
            raise UsageError(f"--ext needs an extension such as md or .md, not {value!r}")
    for flag, patterns in (("--include", include), ("--exclude", exclude)):
        if any(not p for p in patterns or []):
            raise UsageError(f"{flag} needs a pattern, not an empty string")
    return WalkOptions(
        include=tuple(include or ()),
        exclude=tuple(exclude or ()),
        max_depth=max_depth,
        max_files=max_files,
        extensions=tuple(ext) if ext else None,
        respect_gitignore=not no_gitignore,
        follow_symlinks=follow_symlinks,
    )


def run_files(
    store: ContentStore,
    names: list[str],
    project: Path,
    source: str | None,
    max_bytes: int,
    hidden: bool,
    run: IndexRun,
    show_bar: bool = False,
    walk: WalkOptions = PLAIN_WALK,
) -> None:
    """Index `names` into `run`; `show_bar`: a progress bar on stderr for a long run;
    `walk`: how directories named are walked."""
    bar = None
    task = None

    def progress(done: int, total: int, name: str) -> None:
        nonlocal bar, task
        if not show_bar or total < _PROGRESS_AFTER:
            return
        if bar is None:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

            bar = Progress(
                TextColumn("indexing"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.description}"),
                console=output.stderr,
                transient=True,
            )
            bar.start()
            task = bar.add_task("", total=total)
        assert task is not None
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
            walk=walk,
        )
    finally:
        if bar is not None:
            bar.stop()
    run.indexed.extend(result.indexed)
    run.skipped.extend(result.skipped)
    run.capped = run.capped or result.capped


def _report(
    run: IndexRun,
    refreshed: object,
    json_: bool,
    *,
    verbose: bool = False,
    quiet: bool = False,
    max_files: int | None = None,
) -> None:
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
        if run.capped:
            data["capped"] = {"max_files": max_files}
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
        refresh = refreshed if isinstance(refreshed, RefreshReport) else None
        if not quiet:
            if verbose:
                _list_files(run, refresh)
            else:
                for p in run.skipped:
                    if not p.explicit and p.code == BAD_NAME:
                        output.note(p.message)  # its name cannot be shown anywhere else
            output.say(summary(run, refresh, verbose=verbose, max_files=max_files))
        for p in errors:
            output.error(p.message, p.code, int(exit_code))
    if exit_code:
        raise typer.Exit(int(exit_code))


def _list_files(run: IndexRun, refresh: RefreshReport | None) -> None:
    """-v: one line per file, what happened to it and why."""
    for r in run.indexed:
        if r.unchanged:
            output.say(f"unchanged {r.label}")
        else:
            output.say(
                f"indexed {r.label}: {plural(r.chunks, 'chunk')} ({r.code_chunks} code), "
                f"{r.bytes:,} bytes"
            )
    for p in run.skipped:
        if not p.explicit:
            output.say(p.message)  # "skipping PATH: why"
    if refresh is not None:
        for label in refresh.refreshed:
            output.say(f"re-indexed {label} (changed)")
        for label in refresh.dropped:
            output.say(f"dropped {label} (file deleted)")
        for label in refresh.denied:
            output.say(f"left alone {label} (a Read deny rule matches it)")


def summary(
    run: IndexRun,
    refresh: RefreshReport | None = None,
    *,
    verbose: bool = False,
    max_files: int | None = None,
) -> str:
    """The one line an index prints: indexed, unchanged, skipped, dropped, with sizes;
    and, when --max-files ended the walk, that files were left out."""
    fresh = [r for r in run.indexed if not r.unchanged]
    same = [r for r in run.indexed if r.unchanged]
    parts = [f"indexed {plural(len(fresh), 'source')}"]
    if fresh:
        chunks = plural(sum(r.chunks for r in fresh), "chunk")
        parts[0] += f" ({chunks}, {sum(r.bytes for r in fresh):,} bytes)"
    if same:
        parts.append(f"{len(same):,} unchanged ({sum(r.bytes for r in same):,} bytes)")
    skipped = [p for p in run.skipped if not p.explicit]
    if skipped:
        parts.append(f"{len(skipped):,} skipped" + ("" if verbose else " (-v names them)"))
    if refresh is not None:
        if refresh.refreshed:
            parts.append(f"{len(refresh.refreshed):,} re-indexed (changed)")
        if refresh.dropped:
            parts.append(f"{len(refresh.dropped):,} dropped (file deleted)")
        if refresh.denied:
            parts.append(f"{len(refresh.denied):,} left alone (denied)")
    line = ", ".join(parts)
    if run.capped:
        cap = f" {max_files:,}" if max_files is not None else ""
        line += f"; stopped at --max-files{cap}: more files were left out, not indexed"
    return line
