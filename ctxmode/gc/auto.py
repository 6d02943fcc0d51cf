"""gc without anyone running it: a server applies the budget at most once a day.

A data root only stays within its budget if something enforces it, and nobody runs
maintenance commands by hand. So each ``ctxmode serve`` checks, a while after it starts,
whether a day has passed since the last collection (``<root>/gc.last``) and if so runs the
same plan and apply as ``ctxmode gc``, with the project it serves as the current one
(never deleted whole). Everything gc protects stays protected: live databases, the
current project, unreadable files. ``CTXMODE_GC=off`` turns it off.
"""

import logging
import os
import time
from pathlib import Path

from ctxmode.gc.limits import DAY

log = logging.getLogger("ctxmode.gc")

STAMP = "gc.last"
ENV = "CTXMODE_GC"
START_DELAY_S = 60.0


def enabled() -> bool:
    return os.environ.get(ENV, "").strip().lower() not in ("off", "0", "false", "no")


def due(root: Path, now: float | None = None) -> bool:
    """True when no collection ran in the last day."""
    now = time.time() if now is None else now
    try:
        return now - (root / STAMP).stat().st_mtime >= DAY
    except OSError:
        return True


def run_if_due(root: Path, project_dir: Path | None) -> bool:
    """Collect once if due; return whether it ran. Never raises."""
    if not enabled() or not due(root):
        return False
    try:
        root.mkdir(parents=True, exist_ok=True)
        (root / STAMP).write_text(time.strftime("%Y-%m-%dT%H:%M:%SZ\n", time.gmtime()))
        from ctxmode.gc import apply, plan

        report = apply(plan(root, current=project_dir))
    except Exception:  # housekeeping must never take a server down
        log.exception("automatic gc failed")
        return False
    log.info(
        "automatic gc: %d actions, freed %d bytes, %d bytes stored (budget %d)",
        len(report.actions),
        report.freed,
        report.total_after,
        report.budget.max_bytes,
    )
    return True
