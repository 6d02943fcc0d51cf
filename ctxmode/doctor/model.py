"""One line of the doctor's report, as data.

A check is a plain value so that the CLI, its ``--json`` envelope and the MCP server all
render the same list, and so that redaction can rewrite any field before anything is shown.
"""

from typing import Literal, NamedTuple

Status = Literal["OK", "INFO", "WARN", "FAIL"]
STATUSES: tuple[Status, ...] = ("OK", "INFO", "WARN", "FAIL")


class Check(NamedTuple):
    """The outcome of one check: ``fix`` says what to do, for WARN and FAIL; for INFO (an
    optional thing that is absent, nothing wrong) what would enable it."""

    name: str
    status: Status
    detail: str
    fix: str | None = None


def ok(name: str, detail: str) -> Check:
    return Check(name, "OK", detail)


def info(name: str, detail: str, enable: str | None = None) -> Check:
    return Check(name, "INFO", detail, enable)


def warn(name: str, detail: str, fix: str | None = None) -> Check:
    return Check(name, "WARN", detail, fix)


def fail(name: str, detail: str, fix: str | None = None) -> Check:
    return Check(name, "FAIL", detail, fix)
