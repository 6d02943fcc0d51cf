"""How the SDK server ends: on stdin EOF, on SIGTERM/SIGINT/SIGHUP, or when the process
that started it dies (the watchdog), and always with every child it started killed; and
its housekeeping. The steps are `ctxmode.server.upkeep`'s, run here as tasks."""

import logging
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio

from ctxmode.server import upkeep

log = logging.getLogger("ctxmode.server")


# Called to end the process from a watcher: cleans up, then exits without waiting for
# the stdin reader (a thread blocked in read() that no cancellation reaches).
Stop = Callable[[], Awaitable[None]]


async def watch_parent(stop: Stop, parent: int) -> None:
    """Stop when our parent process, `parent` at start-up, goes away (we get re-parented)."""
    if parent <= 1:
        return  # started by init or detached on purpose: nothing to watch
    while True:
        await anyio.sleep(upkeep.WATCHDOG_INTERVAL_S)
        if upkeep.parent_gone(parent):
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
    left behind; a while after, the daily storage budget check. Neither is imported
    before then, so they cost the start-up nothing."""
    await anyio.sleep(upkeep.REAP_DELAY_S)
    await anyio.to_thread.run_sync(lambda: upkeep.reap_leftovers(root), abandon_on_cancel=True)
    await anyio.sleep(upkeep.HOUSEKEEPING_DELAY_S - upkeep.REAP_DELAY_S)
    await anyio.to_thread.run_sync(
        lambda: upkeep.collect_if_due(root, project_dir), abandon_on_cancel=True
    )
