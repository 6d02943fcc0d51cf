"""`ctxmode stats` and `ctxmode statusline`: what ctxmode kept out of the context window."""

from typing import Annotated

import typer

from ctxmode import paths
from ctxmode.cli import output
from ctxmode.cli.options import JsonOpt, ProjectOpt


def stats(
    all_projects: Annotated[
        bool, typer.Option("--all-projects", "-a", help="Add every project's totals.")
    ] = False,
    session: Annotated[
        str | None,
        typer.Option("--session", help="Report this session id instead of the current one."),
    ] = None,
    project: ProjectOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Show what ctxmode kept out of the agent's context: this session, this project.

    Counts are measured per MCP tool call, and per run of `ctxmode execute` and
    `execute-file` (the cli:execute and cli:execute-file rows): bytes returned (to the
    agent, or printed by the CLI) and bytes that stayed in the sandbox. One formula:
    without = kept in sandbox + returned, with = max(1, returned), kept out = 1 - with /
    without. Events captured by hooks are shown apart and never counted as savings.
    Tokens are estimates (bytes / 4). What the kept-out part was worth: its tokens at
    the input price of the model the host reports using most (the turn-end hooks record
    each model's tokens), with the model named; prices from the bundled table, or
    $CTXMODE_PRICES; a model without a price shows tokens only. Read-only: it writes no
    file.

    Example: ctxmode stats --all-projects
    """
    from ctxmode.session.where import session_db_path
    from ctxmode.stats.report import as_data, build, render_text

    output.use_json(["stats"], json_)
    where = paths.project_paths(project)
    report = build(
        session_db_path(where.project_dir, where.root, remember=False),
        where.content_db,
        where.project_dir,
        all_projects=all_projects,
        session_id=session,
    )
    if json_:
        output.emit_json(as_data(report))
    else:
        output.stdout.print(render_text(report), end="")


def statusline() -> None:
    """Print one status-bar line with this session's and all projects' savings.

    Reads the stats files the server and the turn-end hooks keep up to date (with the
    host's model known, the kept-out part in dollars); needs no running server and
    starts without the CLI framework. Hosts that pipe a JSON payload on stdin (Claude
    Code: session_id, workspace.project_dir) get the figures of that session.

    For Claude Code, add "statusLine": {"type": "command", "command": "ctxmode
    statusline"} to settings.json.

    Example: echo '{"session_id": "abc"}' | ctxmode statusline
    """
    from ctxmode.stats.statusline import run

    raise typer.Exit(run())
