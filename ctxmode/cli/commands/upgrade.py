"""`ctxmode upgrade`: upgrade with the tool that installed ctxmode, then let the new code
migrate the databases and re-run setup."""

import shlex
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ctxmode import __version__, paths
from ctxmode.cli import output
from ctxmode.cli.options import JsonOpt
from ctxmode.errors import UsageError

if TYPE_CHECKING:  # the upgrade module loads only when this command runs
    from ctxmode.upgrade import Finished, IndexUnreachable, Install, Latest


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

    Detects pipx, uv tool or pip (virtualenv, --user, system Python), and
    whether ctxmode came from PyPI or from a repository, and runs that
    tool's upgrade command with its output on stderr. Then a new process
    of the upgraded code migrates every database and re-runs `ctxmode
    setup` for every platform set up, so hook commands stay right.
    Restart your agents afterwards. An editable (development) install is
    not changed: update the checkout yourself (git pull, then
    pip install -e .); upgrade then only migrates and sets up again.
    --check changes nothing and shows what applies; PyPI out of reach
    shows "unknown".

    Exit status: 0 when done, and when you decline at the prompt
    (nothing was changed); 1 when the upgrade or the step after it
    failed; 2 without a terminal and without --yes; 4 when ctxmode cannot
    upgrade itself (an externally managed Python, PEP 668; an install
    from a local directory or archive; a source tree), and when the
    version did not change and the package index could not be reached
    (nothing newer could be checked; the error says why).

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
    if not install.command and not install.development:
        from ctxmode.errors import EnvironmentProblem

        raise EnvironmentProblem(f"ctxmode cannot upgrade itself here: {install.detail}")
    if not _confirm(install, yes):
        if json_:
            output.emit_json({"cancelled": True, "method": install.method})
        return
    if install.development:
        if not json_:  # under --json the envelope's detail says it
            detail = install.detail[:1].upper() + install.detail[1:]
            output.stdout.print(f"{detail}; the package step is skipped.")
    else:
        up.run_command(install, sys.stderr)
    done = up.run_finish(after_upgrade=not install.development)
    latest = _looked_up(install, done)
    unchecked = _unchecked(latest)
    if json_:
        data = {
            "upgraded_from": __version__,
            "method": install.method,
            "command": install.command,
            "detail": install.detail,
            "package_step": "skipped" if install.development else "ran",
            "latest": None if latest is None else latest.version,
            "index_problem": None if latest is None else latest.problem,
            "finish": done,
        }
        if unchecked is None:
            output.emit_json(data)
            return
        error = {"code": unchecked.code, "message": str(unchecked)}
        output.emit_json(data, exit_code=unchecked.exit_code, errors=[error])
        raise typer.Exit(unchecked.exit_code)
    if not install.development and unchecked is None:
        output.stdout.print(f"Upgraded ctxmode with {install.method}: {_change(done, latest)}.")
    _render_finish(done)
    if unchecked is not None:
        output.error(str(unchecked), unchecked.code, unchecked.exit_code)
        raise typer.Exit(unchecked.exit_code)
    output.stdout.print("Restart your agents so they start the new ctxmode MCP server.")


def _looked_up(install: "Install", done: dict[str, Any]) -> "Latest | None":
    """What the package index says, asked only when the package step ran and left this
    version installed: was there nothing newer, or could nothing be checked? (A tool
    that cannot reach its index may still exit 0: pip keeps what is installed.)"""
    if install.development or done["version"] != __version__:
        return None
    from ctxmode import upgrade as up

    return up.probe()


def _unchecked(latest: "Latest | None") -> "IndexUnreachable | None":
    """The error for an upgrade that changed nothing because the index was out of reach."""
    if latest is None or latest.problem is None:
        return None
    from ctxmode import upgrade as up

    return up.IndexUnreachable(
        f"ctxmode {__version__} is still installed, and whether a newer version exists "
        f"could not be checked: the package index did not answer ({latest.problem}). "
        "Check the network or proxy (CTXMODE_PYPI_URL names the index asked), then run "
        "ctxmode upgrade again."
    )


def _change(done: dict[str, Any], latest: "Latest | None") -> str:
    """The version line's end: old → new, or why the version did not change."""
    from ctxmode import upgrade as up

    new = done["version"]
    if new != __version__:
        return f"{__version__} → {new}"
    if latest is not None and latest.version is not None and up.newer(latest.version, new):
        output.warn(
            f"the package index offers ctxmode {latest.version}, but the upgrade left {new} "
            "installed: the index the tool uses may lag behind, or the new release may not "
            "support this Python"
        )
        return f"{new} (version unchanged)"
    return f"{new} (version unchanged: it is the newest release)"


def _confirm(install: "Install", yes: bool) -> bool:
    """Whether to go on: --yes, or the user said yes at the terminal."""
    if yes:
        return True
    if sys.stdin is None or not sys.stdin.isatty():
        raise UsageError(
            "ctxmode upgrade asks before it changes anything, and stdin is not a terminal: "
            "pass --yes to upgrade without asking (ctxmode upgrade --check shows what it does)."
        )
    if install.development:
        question = (
            f"Migrate the databases and re-run setup for ctxmode {__version__} "
            "(a development install: its code is not changed)?"
        )
    else:
        question = f"Upgrade ctxmode {__version__} with: {shlex.join(install.command)}?"
    if typer.confirm(question, default=True, err=True):
        return True
    output.stderr.print("Cancelled; nothing was changed.")
    return False


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
        "package_step": _package_step(install),
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
    con.print(f"command:    {_command_line(install)}")
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


def _package_step(install: "Install") -> str:
    """What `ctxmode upgrade` would do about the package: run the command, skip it (a
    development install: only the step after it runs), or refuse (exit 4)."""
    if install.command:
        return "run"
    return "skipped" if install.development else "impossible"


def _command_line(install: "Install") -> str:
    step = _package_step(install)
    if step == "run":
        return shlex.join(install.command)
    if step == "skipped":
        return "none (upgrade only migrates the databases and re-runs setup)"
    return "none (ctxmode cannot upgrade itself here)"


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


def _render_finish(data: dict[str, Any]) -> None:
    con = output.stdout
    dbs = data["databases"]
    migrated = [d for d in dbs if d["from"] != d["to"] and not d["problem"]]
    con.print(f"Databases: {len(dbs)} checked, {len(migrated)} migrated.")
    for d in migrated:
        con.print(f"  migrated {paths.home_relative(d['path'])} (schema {d['from']} → {d['to']})")
    for d in dbs:
        if d["problem"]:
            output.warn(f"{paths.home_relative(d['path'])}: {d['problem']}")
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
