"""`ctxmode doctor`: what works, what does not, and how to fix it, in one short report.

The CLI command and the ``ctx_doctor`` MCP tool share this core::

    checks = run_checks(project_dir)   # list[Check], never raises
    text = render_text(checks)         # the plain-text report, redacted
    data = as_data(checks)             # the --json data, redacted

Modules: `model` (a check as data), `system`, `runtimes`, `storage`, `hosts`, `servers`
(the checks), `run` (order and guarding), `redact`, `report` (rendering).
"""

from ctxmode.doctor.model import Check, Status
from ctxmode.doctor.report import as_data, failed, render_text, summary
from ctxmode.doctor.run import run_checks

__all__ = ["Check", "Status", "as_data", "failed", "render_text", "run_checks", "summary"]
