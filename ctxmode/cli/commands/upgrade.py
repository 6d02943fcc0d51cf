"""`ctxmode upgrade`: upgrade with the tool that installed ctxmode, then let the new code
migrate the databases and re-run setup."""

import json
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ctxmode import __version__
from ctxmode.cli import output
from ctxmode.cli.options import JsonOpt
from ctxmode.errors import UsageError

if TYPE_CHECKING:  # the upgrade module loads only when this command runs
    from ctxmode.upgrade import Finished, Install


def upgrade(
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Only report: versions, install method, the command it would run, "
            "database schemas and the platforms set up.",
        ),
    ] = False,
    yes: Annotated[
        bool,
        typer.Option("--yes", "-y", help="Upgrade without asking (required without a terminal)."),
    ] = False,
    finish: Annotated[bool, typer.Option("--finish", hidden=True)] = False,
    json_: JsonOpt = False,
) -> None:
    """Upgrade ctxmode the way it was installed, then migrate and set up again.

    Detects pipx, uv tool, pip (virtualenv, --user, system Python) or an
    editable git checkout, and runs that tool's upgrade command with its
    output on stderr. Then a new process of the upgraded code migrates
    every database and re-runs `ctxmode setup` for every platform set
    up, so hook commands stay right. Restart your agents afterwards.
    --check changes nothing; PyPI out of reach shows "unknown". Without
    a terminal, --yes is required (exit 2); a failed upgrade is exit 1
    and touches nothing else.

    Example: ctxmode upgrade --check
    """
    output.use_json(["upgrade"], json_)
    from ctxmode import upgrade as up

    if finish:
        if check:
            raise UsageError("--finish and --check exclude each other.")
        _emit_finish(_finish_data(up.finish()), json_)
        return
    install = up.current_install()
    if check:
        _emit_check(install, json_)
        return
    if not install.command:
        from ctxmode.errors import EnvironmentProblem

        raise EnvironmentProblem(f"ctxmode cannot upgrade itself here: {install.detail}")
    _confirm(install, yes)
    up.run_command(install, sys.stderr)
    code, out, err = up.run_finish(json_output=True)
    if err:
        sys.stderr.write(err)
    try:
        parsed = json.loads(out) if code == 0 else None
    except ValueError:
        parsed = None
    done = parsed.get("data") if isinstance(parsed, dict) else None
    if not isinstance(done, dict):
        raise up.UpgradeFailed(
            f"ctxmode was upgraded, but the step after it failed (exit {code}). "
            "Run it again: ctxmode upgrade --finish"
        )
    if json_:
        output.emit_json(
            {
                "upgraded_from": __version__,
                "method": install.method,
                "command": install.command,
                "detail": install.detail,
                "finish": done,
            }
        )
        return
    new = done["version"]
    change = f"{__version__} → {new}" if new != __version__ else f"{new} (version unchanged)"
    output.stdout.print(f"Upgraded ctxmode with {install.method}: {change}.")
    _render_finish(done)
    output.stdout.print("Restart your agents so they start the new ctxmode MCP server.")


def _confirm(install: "Install", yes: bool) -> None:
    if yes:
        return
    if sys.stdin is None or not sys.stdin.isatty():
        raise UsageError(
            "ctxmode upgrade asks before it changes anything, and stdin is not a terminal: "
            "pass --yes to upgrade without asking (ctxmode upgrade --check shows what it does)."
        )
    question = f"Upgrade ctxmode {__version__} with: {shlex.join(install.command)}?"
    if not typer.confirm(question, default=True, err=True):
        output.stderr.print("Cancelled; nothing was changed.")
        raise typer.Exit(1)


# --------------------------------------------------------------------------- --check


def _emit_check(install: "Install", json_: bool) -> None:
    from ctxmode import upgrade as up

    latest = up.latest_version()
    statuses = up.database_status()
    records, warnings = up.setup_records()
    behind = [s for s in statuses if s.state == "behind"]
    update = up.newer(latest)
    data = {
        "installed": __version__,
        "latest": latest or "unknown",
        "update_available": update,
        "method": install.method,
        "command": install.command,
        "detail": install.detail,
        "databases": [
            {
                "path": str(s.path),
                "kind": s.kind,
                "version": s.version,
                "current": s.current,
                "state": s.state,
            }
            for s in statuses
        ],
        "schemas_behind": len(behind),
        "platforms": [
            {"platform": r.platform, "scope": r.scope, "project": r.project, "command": r.command}
            for r in records
        ],
        "warnings": warnings,
    }
    if json_:
        output.emit_json(data)
        return
    con = output.stdout
    available = {True: " (an upgrade is available)", False: " (up to date)", None: ""}
    shown = latest or "unknown (PyPI out of reach, or ctxmode not published there)"
    con.print(f"installed:  ctxmode {__version__}")
    con.print(f"latest:     {shown}{available[update]}")
    con.print(f"method:     {install.method} ({install.detail})")
    con.print(f"command:    {shlex.join(install.command) if install.command else 'none'}")
    unreadable = sum(1 for s in statuses if s.state == "unreadable")
    line = f"databases:  {len(statuses)}"
    if behind:
        line += f", {len(behind)} behind this version's schema (migrated when next opened)"
    if unreadable:
        line += f", {unreadable} unreadable"
    con.print(line)
    setups = ", ".join(
        f"{r.platform} ({'global' if r.project is None else r.project})" for r in records
    )
    con.print(f"platforms:  {setups or 'none set up'}")
    for warning in warnings:
        output.warn(warning)


# --------------------------------------------------------------------------- --finish


def _finish_data(done: "Finished") -> dict[str, Any]:
    return {
        "version": __version__,
        "databases": [
            {
                "path": str(m.path),
                "kind": m.kind,
                "from": m.before,
                "to": m.after,
                "problem": m.problem,
            }
            for m in done.databases
        ],
        "setups": [
            {
                "platform": s.platform,
                "scope": s.scope,
                "project": s.project,
                "changed": s.changed,
                "problem": s.problem,
                "warnings": list(s.warnings),
            }
            for s in done.setups
        ],
        "warnings": done.warnings,
        "problems": done.problems,
    }


def _emit_finish(data: dict[str, Any], json_: bool) -> None:
    if json_:
        output.emit_json(data)
    else:
        _render_finish(data)


def _shown(path: str) -> str:
    home = Path.home()
    p = Path(path)
    return "~/" + str(p.relative_to(home)) if p.is_relative_to(home) else path


def _render_finish(data: dict[str, Any]) -> None:
    con = output.stdout
    dbs = data["databases"]
    migrated = [d for d in dbs if d["from"] != d["to"] and not d["problem"]]
    con.print(f"Databases: {len(dbs)} checked, {len(migrated)} migrated.")
    for d in migrated:
        con.print(f"  migrated {_shown(d['path'])} (schema {d['from']} → {d['to']})")
    for d in dbs:
        if d["problem"]:
            output.warn(f"{_shown(d['path'])}: {d['problem']}")
    if not data["setups"]:
        con.print("Setup: no platform is set up.")
    for s in data["setups"]:
        where = "global" if s["project"] is None else s["project"]
        if s["problem"]:
            output.warn(f"setup {s['platform']} ({where}): {s['problem']}")
            continue
        state = "updated" if s["changed"] else "unchanged"
        con.print(f"Setup {s['platform']} ({where}): {state}.")
        for warning in s["warnings"]:
            output.warn(warning)
    for warning in data["warnings"]:
        output.warn(warning)
