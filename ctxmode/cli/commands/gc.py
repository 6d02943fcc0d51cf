"""`ctxmode gc`: keep all of ctxmode's databases within one age and size budget."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ctxmode.cli import output
from ctxmode.cli.options import JsonOpt
from ctxmode.errors import CtxError, EnvironmentProblem

if TYPE_CHECKING:  # the collector loads only when gc runs
    from ctxmode.gc import Report


def _current_project() -> Path | None:
    """The project gc is run from, if any: it is never deleted whole."""
    from ctxmode import paths

    try:
        return paths.resolve_project()
    except CtxError:  # the home directory or a filesystem root: no project
        return None


def gc(
    dry_run: Annotated[
        bool, typer.Option("--dry-run", "-n", help="Print the plan; delete nothing.")
    ] = False,
    max_age_days: Annotated[
        int | None,
        typer.Option(
            "--max-age-days",
            min=1,
            metavar="N",
            help="Projects unused, sessions idle and fetched sources older than this go "
            "(default: $CTXMODE_GC_MAX_AGE_DAYS, else 30).",
            show_default=False,
        ),
    ] = None,
    max_size: Annotated[
        int | None,
        typer.Option(
            "--max-size",
            min=1,
            metavar="MB",
            help="Budget for all content and session databases together; least recently "
            "used projects go first (default: $CTXMODE_GC_MAX_MB, else 500).",
            show_default=False,
        ),
    ] = None,
    json_: JsonOpt = False,
) -> None:
    """Free disk space: expire old data, drop unused projects, compact.

    One budget across all projects: 30 days and 500 MB by default
    (1 MB = 2^20 bytes). Projects unused for longer than the max age
    are deleted whole; inside the others, idle sessions, fetched pages
    and command output older than that, and sources of deleted files
    go. Indexed files that still exist never expire: every search
    re-checks them. Over the size budget, the least recently used
    projects go. Projects in use by another process or a running
    server, and the current one, are never deleted; a database or
    folder that cannot be read is reported and left alone. Then
    databases are checkpointed and, when it pays, vacuumed (only
    checkpointed while in use); stale marker and temporary files go.

    A running `ctxmode serve` applies the same budget by itself, at
    most once a day, a minute after it starts, never to the project it
    serves. CTXMODE_GC=off turns that off.

    Example: ctxmode gc --dry-run --max-size 200
    """
    output.use_json(["gc"], json_)
    from ctxmode import gc as collector

    limits = collector.budget(max_age_days, max_size)
    try:
        plan = collector.plan(limits=limits, current=_current_project())
        report = plan.preview() if dry_run else collector.apply(plan)
    except OSError as exc:  # the scan skips what it cannot read; this is what is left
        raise EnvironmentProblem(f"gc cannot use the data directory: {exc}") from exc
    if json_:
        output.emit_json(_data(report))
    else:
        _render(report)


def _data(report: "Report") -> dict[str, Any]:
    return {
        "dry_run": report.dry_run,
        "budget": {
            "max_age_days": report.budget.max_age_days,
            "max_bytes": report.budget.max_bytes,
        },
        "actions": [
            {
                "action": a.action,
                "target": a.target,
                "detail": a.detail,
                "count": a.count,
                "bytes": a.bytes,
                "estimated": a.estimated,
            }
            for a in report.actions
        ],
        "notes": [{"target": n.target, "message": n.message} for n in report.notes],
        "total_before": report.total_before,
        "freed": report.freed,
        "total_after": report.total_after,
        "over_budget": report.over_budget,
    }


def _render(report: "Report") -> None:
    from rich.table import Table

    from ctxmode.gc import MB, human

    con = output.stdout
    if report.actions:
        table = Table(box=None, header_style="bold")
        table.add_column("action")
        table.add_column("target", overflow="fold")
        table.add_column("detail", overflow="fold")
        table.add_column("bytes", justify="right")
        for a in report.actions:
            size = "" if a.bytes is None else ("~" if a.estimated else "") + human(a.bytes)
            table.add_row(a.action, a.target, a.detail, size)
        con.print(table)
    else:
        con.print("Nothing to collect.")
    for note in report.notes:
        output.stderr.print(f"note: {note.target}: {note.message}")
    limit = f"{report.budget.max_bytes / MB:g} MB"
    over = ", over budget" if report.over_budget else ""
    if report.dry_run:
        con.print(
            f"would free ~{human(report.freed)}, leaving ~{human(report.total_after)} "
            f"of {limit} budget{over} (dry run: nothing was deleted)"
        )
    else:
        con.print(
            f"freed {human(report.freed)}, now {human(report.total_after)} of {limit} budget{over}"
        )
