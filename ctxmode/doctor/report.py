"""The report in its two forms: plain text (the CLI and the ``ctx_doctor`` MCP tool return
the same string) and the data of the ``--json`` envelope. Both redact first.

The text is deliberately plain, with no markdown: some MCP clients render tool results as
markdown and choke on headings or task lists, and a bug report pastes it verbatim.
"""

from collections.abc import Sequence
from typing import Any

from ctxmode import __version__
from ctxmode.doctor.model import Check
from ctxmode.doctor.redact import redact_checks

FIX_SEPARATOR = " — fix: "
ENABLE_SEPARATOR = " — to use it: "


def summary(checks: Sequence[Check]) -> dict[str, int]:
    return {
        "ok": sum(c.status == "OK" for c in checks),
        "info": sum(c.status == "INFO" for c in checks),
        "warn": sum(c.status == "WARN" for c in checks),
        "fail": sum(c.status == "FAIL" for c in checks),
    }


def failed(checks: Sequence[Check]) -> bool:
    return any(c.status == "FAIL" for c in checks)


def line(check: Check) -> str:
    """``[STATUS] name: detail``, plus ``— fix: ...`` on WARN and FAIL lines that have one
    and ``— to use it: ...`` on INFO lines."""
    text = f"[{check.status}] {check.name}: {check.detail}"
    if check.fix and check.status != "OK":
        text += f"{ENABLE_SEPARATOR if check.status == 'INFO' else FIX_SEPARATOR}{check.fix}"
    return text


def summary_line(checks: Sequence[Check]) -> str:
    counts = summary(checks)
    warnings = "warning" if counts["warn"] == 1 else "warnings"
    failures = "failure" if counts["fail"] == 1 else "failures"
    return (
        f"{counts['ok']} ok, {counts['info']} info, {counts['warn']} {warnings}, "
        f"{counts['fail']} {failures}"
    )


def render_text(checks: Sequence[Check]) -> str:
    """The whole report: a header, a blank line, one line per check, the summary."""
    safe = redact_checks(checks)
    lines = [f"ctxmode doctor {__version__}", "", *(line(c) for c in safe), summary_line(safe)]
    return "\n".join(lines) + "\n"


def as_data(checks: Sequence[Check]) -> dict[str, Any]:
    """The ``data`` of the ``--json`` envelope."""
    safe = redact_checks(checks)
    return {
        "version": __version__,
        "checks": [c._asdict() for c in safe],
        "summary": summary(safe),
    }
