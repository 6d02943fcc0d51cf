"""How the server ends: on stdin EOF, on SIGTERM/SIGINT/SIGHUP, or when the process that
started it dies (the watchdog), and always with every child it started killed.

Upstream's server could outlive its client: one user counted 188 orphaned servers using
8.8 GB. Here the parent is polled every second; a changed parent pid means the client is
gone, and the server shuts down like on EOF.
"""

import logging
import os
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio

WATCHDOG_INTERVAL_S = 1.0
REAP_DELAY_S = 0.5  # leftovers of dead servers are killed this long after start-up
HOUSEKEEPING_DELAY_S = 60.0  # the daily gc check waits this long after start-up

log = logging.getLogger("ctxmode.server")


# Called to end the process from a watcher: cleans up, then exits without waiting for
# the stdin reader (a thread blocked in read() that no cancellation reaches).
Stop = Callable[[], Awaitable[None]]


async def watch_parent(stop: Stop, parent: int) -> None:
    """Stop when our parent process, `parent` at start-up, goes away (we get re-parented)."""
    if parent <= 1:
        return  # started by init or detached on purpose: nothing to watch
    while True:
        await anyio.sleep(WATCHDOG_INTERVAL_S)
        if os.getppid() != parent:
            log.warning("parent process %d is gone; shutting down", parent)
            await stop()
            return


async def watch_signals(stop: Stop) -> None:
    """Stop on SIGTERM, SIGINT or SIGHUP."""
    wanted = [signal.SIGTERM, signal.SIGINT]
    if hasattr(signal, "SIGHUP"):
        wanted.append(signal.SIGHUP)
    with anyio.open_signal_receiver(*wanted) as received:
        async for signum in received:
            log.info("signal %d received; shutting down", signum)
            await stop()
            return


async def housekeeping(root: Path, project_dir: Path) -> None:
    """Soon after start-up, kill what runs of dead ctxmode processes of this data root
    left behind (`procs.reap_dead_owners`: their watchdog died with them); a while after,
    the daily storage budget check (`ctxmode.gc.auto`). Neither is imported before then,
    so they cost the start-up nothing."""
    await anyio.sleep(REAP_DELAY_S)
    from ctxmode.executor import procs

    killed = await anyio.to_thread.run_sync(
        lambda: procs.reap_dead_owners(root), abandon_on_cancel=True
    )
    if killed:
        log.info("killed %d processes left by runs of a dead ctxmode process", len(killed))
    await anyio.sleep(HOUSEKEEPING_DELAY_S - REAP_DELAY_S)
    from ctxmode.gc import auto

    if not auto.enabled():
        return
    await anyio.to_thread.run_sync(
        lambda: auto.run_if_due(root, project_dir), abandon_on_cancel=True
    )
