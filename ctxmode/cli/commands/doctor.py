"""`ctxmode doctor`: check this machine and project, and say how to fix what is wrong."""

import sys

import typer

from ctxmode.cli import output
from ctxmode.cli.options import JsonOpt, ProjectOpt
from ctxmode.errors import CtxError, ExitCode, UsageError

_STYLES = {"[OK]": "green", "[INFO]": "cyan", "[WARN]": "yellow", "[FAIL]": "bold red"}


def doctor(project: ProjectOpt = None, json_: JsonOpt = False) -> None:
    """Check Python, SQLite, runtimes, storage, databases, host setup and the server.

    One line per check: [OK], [INFO], [WARN] or [FAIL], then what was found
    and, when something is wrong, "— fix:" and what to do. INFO is an optional
    thing that is absent (a language runtime not installed), with "— to use
    it:" and how to get it; a runtime that is installed but does not work is a
    WARN. No settings file or database is changed. The report is safe to paste
    into a bug report: the home directory shows as ~, the user name as <user>,
    and secrets as ***. Exit 0 without failures (warnings allowed), 1 when a
    check fails.

    With --json, data is {"version", "checks": [{"name", "status", "detail",
    "fix"}], "summary": {"ok", "info", "warn", "fail"}}; status is OK, INFO,
    WARN or FAIL and fix is null when there is nothing to do.

    Example: ctxmode doctor --json
    """
    output.use_json(["doctor"], json_)
    from ctxmode import doctor as core
    from ctxmode.doctor.redact import redact
    from ctxmode.paths import resolve_project

    try:
        project_dir = resolve_project(project)
    except UsageError as exc:
        if project is not None:
            raise type(exc)(redact(str(exc))) from None
        project_dir = None  # home directory or filesystem root: global checks only
    except CtxError as exc:  # a --project that does not exist: its path is redacted too
        raise type(exc)(redact(str(exc))) from None
    checks = core.run_checks(project_dir)
    code = int(ExitCode.ERROR) if core.failed(checks) else int(ExitCode.OK)
    if json_:
        data = core.as_data(checks)
        errors = [
            {"code": "check_failed", "message": f"{c['name']}: {c['detail']}"}
            for c in data["checks"]
            if c["status"] == "FAIL"
        ]
        output.emit_json(data, exit_code=code, errors=errors)
    else:
        _print(core.render_text(checks))
    if code:
        raise typer.Exit(code)


def _print(text: str) -> None:
    """The report as is; on a terminal the status tags are coloured."""
    con = output.stdout
    if not con.is_terminal:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    from rich.text import Text

    for row in text.splitlines():
        styled = Text(row)
        tag = row.split(" ", 1)[0]
        if tag in _STYLES:
            styled.stylize(_STYLES[tag], 0, len(tag))
        con.print(styled)
