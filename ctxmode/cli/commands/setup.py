"""`ctxmode setup PLATFORM` and `ctxmode uninstall PLATFORM`: register ctxmode's hooks and
MCP server with a host agent, and take them out again."""

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ctxmode import paths
from ctxmode.cli import output
from ctxmode.cli.options import JsonOpt, ProjectOpt, complete_platform
from ctxmode.errors import UsageError
from ctxmode.platforms import PLATFORMS

if TYPE_CHECKING:  # the setup package loads only when a setup command runs
    from ctxmode.setup.model import FileChange, SetupResult

PlatformArg = Annotated[
    str,
    typer.Argument(
        help=f"Host agent: {', '.join(PLATFORMS)}.",
        show_default=False,
        autocompletion=complete_platform,
    ),
]
GlobalOpt = Annotated[
    bool,
    typer.Option("--global", "-g", help="Use the user's global settings instead of the project's."),
]
DryRunOpt = Annotated[
    bool,
    typer.Option(
        "--dry-run",
        "-n",
        help="Print a unified diff of every file that would change; write nothing.",
    ),
]
CommandOpt = Annotated[
    str | None,
    typer.Option(
        "--command",
        metavar="PATH",
        help="The ctxmode executable hosts run (default: `ctxmode`, found on PATH). Pin a "
        "stable path: one under the temp dir or a cache folder works but is warned about.",
        show_default=False,
    ),
]


def _project(global_: bool, project: Path | None) -> Path | None:
    if global_ and project is not None:
        raise UsageError("--global and --project exclude each other.")
    return None if global_ else paths.resolve_project(project)


def setup(
    platform: PlatformArg,
    global_: GlobalOpt = False,
    project: ProjectOpt = None,
    dry_run: DryRunOpt = False,
    command: CommandOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Register ctxmode's hooks and MCP server in a host agent's settings.

    Writes `ctxmode hook <platform> <event>` hooks and a `ctxmode serve`
    MCP server into the project's settings files (or, with --global, the
    user's), keeping every entry and key it does not own. Running it again
    changes nothing; `ctxmode uninstall` removes exactly what it wrote.
    JSON with comments (JSONC) and TOML are edited in place, in the
    file's own style. A file that cannot be parsed is never rewritten
    (exit 1); ctxmode missing from PATH is exit 4. --dry-run runs the
    same checks and exits with the code the real run would.

    Example: ctxmode setup claude-code --dry-run
    """
    output.use_json(["setup"], json_)
    from ctxmode.setup import setup as run_setup

    result = run_setup(
        platform, project=_project(global_, project), command=command, dry_run=dry_run
    )
    _render(result, json_)


def uninstall(
    platform: PlatformArg,
    global_: GlobalOpt = False,
    project: ProjectOpt = None,
    dry_run: DryRunOpt = False,
    json_: JsonOpt = False,
) -> None:
    """Remove what `ctxmode setup` registered for a host agent, and nothing else.

    Finds ctxmode's entries by their command, so it works after the host
    reformatted or reordered its files. The user's own hooks and keys stay;
    containers, files and directories setup created go once empty, and
    flags it changed get their old values back. Files it never wrote are
    left alone; with nothing to remove it exits 0.

    Example: ctxmode uninstall claude-code --global
    """
    output.use_json(["uninstall"], json_)
    from ctxmode.setup import uninstall as run_uninstall

    result = run_uninstall(platform, project=_project(global_, project), dry_run=dry_run)
    _render(result, json_)


def _shown(path: Path, project: Path | None) -> str:
    if project is not None and path.is_relative_to(project):
        return str(path.relative_to(project))
    home = Path.home()
    return "~/" + str(path.relative_to(home)) if path.is_relative_to(home) else str(path)


def _summary(change: "FileChange") -> str:
    hooks = Counter(e["event"] for e in change.entries if e["kind"] == "hook")
    parts = []
    if hooks:
        parts.append("hooks " + ", ".join(f"{ev}×{n}" if n > 1 else ev for ev, n in hooks.items()))
    parts += [e["key"] for e in change.entries if e["kind"] in ("server", "setting")]
    if any(e["kind"] == "file" for e in change.entries):
        parts.append("plugin file")
    return "; ".join(parts)


def _data(result: "SetupResult") -> dict[str, Any]:
    project = result.scope.project
    return {
        "platform": result.platform,
        "scope": result.scope.name,
        "project": None if project is None else str(project),
        "command": result.command,
        "dry_run": result.dry_run,
        "changed": result.changed,
        "files": [
            {
                "path": str(c.path),
                "action": c.action,
                "entries": list(c.entries),
                "diff": c.diff() or None,
            }
            for c in result.changes
        ],
        "record": str(result.record_path),
        "warnings": list(result.warnings),
        "notes": list(result.notes),
    }


_VERBS = {
    "create": ("created", "would create"),
    "update": ("updated", "would update"),
    "delete": ("deleted", "would delete"),
    "unchanged": ("unchanged", "unchanged"),
}


def _render(result: "SetupResult", json_: bool) -> None:
    if json_:
        output.emit_json(_data(result))
        return
    con = output.stdout
    project = result.scope.project
    if result.dry_run:
        for change in result.changes:
            for line in change.diff().splitlines():
                style = {"+": "green", "-": "red", "@": "cyan"}.get(line[:1])
                con.print(line, style=None if line[:3] in ("---", "+++") else style)
    where = "global settings" if project is None else f"project {project}"
    con.print(f"ctxmode {result.operation} {result.platform} ({where}):")
    shown = [c for c in result.changes if result.operation == "setup" or c.action != "unchanged"]
    width = max((len(_shown(c.path, project)) for c in shown), default=0)
    for change in shown:
        verb = _VERBS[change.action][1 if result.dry_run else 0]
        if result.operation == "uninstall" and change.action == "update":
            verb = "would clean" if result.dry_run else "cleaned"
        con.print(f"  {verb:<12} {_shown(change.path, project):<{width}}  {_summary(change)}")
    if not shown:
        con.print("  nothing of ctxmode's was found; nothing to remove.")
    for warning in result.warnings:
        output.warn(warning)
    if result.dry_run:
        con.print("Dry run: nothing was written.")
    elif result.operation == "setup":
        if not result.changed:
            con.print("Already set up; nothing changed.")
        con.print(f"Ownership record: {result.record_path}")
    for note in result.notes if result.changed and not result.dry_run else ():
        con.print(f"Next: {note}")
