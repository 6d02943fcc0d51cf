"""What a server does besides answering: notice that its client is gone, kill what runs
of dead ctxmode processes left behind, and the daily storage budget check. The steps, and
the threads that run them while the SDK is not loaded (`ctxmode.server.direct`); the SDK
server runs the same steps as tasks (`ctxmode.server.lifecycle`).

Upstream's server could outlive its client: one user counted 188 orphaned servers using
8.8 GB. Here the parent is polled every second; a changed parent pid means the client is
gone, and the server shuts down like on EOF.

Standard library only at import: this runs on the start-up path.
"""

import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path

WATCHDOG_INTERVAL_S = 1.0
REAP_DELAY_S = 0.5  # leftovers of dead servers are killed this long after start-up
HOUSEKEEPING_DELAY_S = 60.0  # the daily gc check waits this long after start-up

log = logging.getLogger("ctxmode.server")


def parent_gone(parent: int) -> bool:
    """Whether the process that started us, `parent` at start-up, has gone (we were
    re-parented). Never for a server started by init or detached on purpose."""
    return parent > 1 and os.getppid() != parent


def reap_leftovers(root: Path) -> None:
    """Kill what runs of dead ctxmode processes of this data root left behind
    (`procs.reap_dead_owners`: their watchdog died with them)."""
    from ctxmode.executor import procs

    killed = procs.reap_dead_owners(root)
    if killed:
        log.info("killed %d processes left by runs of a dead ctxmode process", len(killed))


def collect_if_due(root: Path, project_dir: Path) -> None:
    """The daily storage budget check (`ctxmode.gc.auto`), when enabled."""
    from ctxmode.gc import auto

    if auto.enabled():
        auto.run_if_due(root, project_dir)


def start_threads(
    root: Path, project_dir: Path, parent: int, stop: Callable[[], None], ended: threading.Event
) -> None:
    """The watchdog and the housekeeping as daemon threads, until `ended` is set: `stop`
    is called (from the watchdog's thread) when the parent goes away."""

    def watchdog() -> None:
        while not ended.wait(WATCHDOG_INTERVAL_S):
            if parent_gone(parent):
                log.warning("parent process %d is gone; shutting down", parent)
                stop()
                return

    def housekeeping() -> None:
        if ended.wait(REAP_DELAY_S):
            return
        reap_leftovers(root)
        if not ended.wait(HOUSEKEEPING_DELAY_S - REAP_DELAY_S):
            collect_if_due(root, project_dir)

    for name, target in (("watchdog", watchdog), ("housekeeping", housekeeping)):
        threading.Thread(target=target, name=f"ctxmode-{name}", daemon=True).start()
