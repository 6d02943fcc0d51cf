"""`ctxmode purge`: delete this project's stored data, or one session's."""

import sys
from pathlib import Path
from typing import Annotated

import typer
from typer import _click
from typer.core import TyperCommand

from ctxmode import paths, purge
from ctxmode.cli import output
from ctxmode.cli.options import JsonOpt, ProjectOpt
from ctxmode.errors import UsageError

_LEGACY_ALL = "--legacy-project-flag"
LEGACY_ALL_NOTICE = (
    "--project without a directory is deprecated: use --all for the whole project "
    "(-p/--project DIR picks the project, as in every other command)"
)
LEGACY_DIR_NOTICE = "--dir/-C is deprecated: use -p/--project DIR"


class PurgeCommand(TyperCommand):
    """`purge`, reading the old spelling too: ``--project`` used to be the flag that
    chose the whole project. It still is where no directory follows it: at the end of
    the command line or before another option (a directory that starts with '-' is
    given as ``--project=DIR`` or ``-p DIR``). ``--project DIR`` and ``--project=DIR``
    name the project, as everywhere else."""

    def parse_args(self, ctx: _click.Context, args: list[str]) -> list[str]:
        args = list(args)
        for i, arg in enumerate(args):
            if arg == "--":
                break
            if arg == "--project" and (i + 1 == len(args) or args[i + 1].startswith("-")):
                args[i] = _LEGACY_ALL
        return super().parse_args(ctx, args)


def purge_command(
    all_: Annotated[
        bool,
        typer.Option(
            "--all",
            help="Delete the whole project: knowledge base, session events, stats files.",
        ),
    ] = False,
    session: Annotated[
        str | None,
        typer.Option("--session", help="Delete one session's events and indexed chunks only."),
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", "-n", help="List what would be deleted; delete nothing.")
    ] = False,
    project: ProjectOpt = None,
    legacy_all: Annotated[bool, typer.Option(_LEGACY_ALL, hidden=True)] = False,
    legacy_dir: Annotated[
        Path | None, typer.Option("--dir", "-C", hidden=True, file_okay=False)
    ] = None,
    json_: JsonOpt = False,
) -> None:
    """Permanently delete stored data: the whole project (--all) or one session.

    --all removes the project's knowledge base, session database, events markdown
    and stats files (with their SQLite -wal/-shm files). --session ID removes that
    session's events and the chunks indexed during it; files, other sessions and the
    project's stats stay. Only files derived from this project's directory are touched:
    another project or a sibling git worktree never is. Asks first unless --yes (required
    when stdin is not a terminal). Cannot be undone: preview with --dry-run or
    `ctxmode stats`.

    -p/--project DIR picks the project, as in other commands. The old spellings still
    work, with a notice: --project with no directory after it for --all, --dir/-C DIR
    for --project DIR.

    Example: ctxmode purge --session 7c8a1234-5678-9abc-def0-12345678abcd --dry-run
    """
    output.use_json(["purge"], json_)
    if legacy_all:
        output.warn(LEGACY_ALL_NOTICE)
    if legacy_dir is not None:
        output.warn(LEGACY_DIR_NOTICE)
        if project is not None:
            raise UsageError("give the project once: -p/--project DIR (not also --dir)")
        project = legacy_dir
    whole = all_ or legacy_all
    if whole == bool(session):
        raise UsageError("choose one scope: --all (the whole project), or --session ID")
    where = paths.project_paths(project)
    root, folder = where.root, where.project_dir
    if session:
        events, chunks = purge.session_counts(root, folder, session)
        preview = [f"{events} events and {chunks} chunks of session {session}"]
    else:
        preview = [str(p) for p in purge.existing(purge.project_targets(root, folder))]
    if dry_run:
        if json_:
            output.emit_json({"dry_run": True, "project_dir": str(folder), "would_delete": preview})
        elif session or preview:
            output.stdout.print("Would delete:")
            for item in preview:
                output.stdout.print(f"  {item}")
        else:
            output.stdout.print("Nothing to purge: no data is stored for this project.")
        return
    if not yes:
        if not sys.stdin.isatty():
            raise UsageError("purge deletes data for good: pass --yes to confirm non-interactively")
        target = f"session {session}" if session else f"all ctxmode data of {folder}"
        if not typer.confirm(f"Permanently delete {target}?", default=False, err=True):
            output.stderr.print("Nothing was deleted.")
            return
    if session:
        outcome = purge.purge_session(root, folder, session)
    else:
        _warn_live_servers(root, folder)
        outcome = purge.purge_project(root, folder)
    if json_:
        output.emit_json(
            {
                "scope": outcome.scope,
                "session_id": outcome.session_id,
                "deleted": outcome.labels,
                "removed_files": [str(p) for p in outcome.removed],
                "events": outcome.events,
                "chunks": outcome.chunks,
                "message": purge.message(outcome),
            }
        )
    else:
        output.stdout.print(purge.message(outcome))


def _warn_live_servers(root: Path, folder: Path) -> None:
    from ctxmode import dbfiles
    from ctxmode.session.where import session_db_path

    dbs = [
        paths.ProjectPaths(root, folder).content_db,
        session_db_path(folder, root, remember=False),
    ]
    held = {pid for pids in dbfiles.holders_of(dbs).values() for pid in pids}
    if held:
        output.warn(
            f"process(es) {', '.join(map(str, sorted(held)))} still have this project's "
            "databases open: a ctxmode server opens the new ones at its next call; restart "
            "anything else that holds them (or the agent)"
        )
