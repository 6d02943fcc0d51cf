"""Helpers for watching processes and files a run leaves behind (bounded polls, no sleeps)."""

import shutil
import time
from collections.abc import Iterable
from pathlib import Path

import psutil
import pytest

# How long the kernel gets to finish off killed processes before a test calls them survivors.
REAP_WITHIN_S = 5.0


def alive(pid: int) -> bool:
    """True while `pid` runs; a zombie (killed, not yet reaped by its new parent) is dead."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def survivors(pids: Iterable[int], within: float = REAP_WITHIN_S) -> list[int]:
    """The pids still alive once they had `within` seconds to die (a bounded poll, not a sleep)."""
    pending = list(pids)
    deadline = time.monotonic() + within
    while pending and time.monotonic() < deadline:
        pending = [pid for pid in pending if alive(pid)]
        if pending:
            time.sleep(0.02)
    return [pid for pid in pending if alive(pid)]


def wait_for_file(path: Path, within: float = 20.0) -> str:
    """The text of `path` once a run has written it (bounded poll)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            if text.endswith("\n"):
                return text
        time.sleep(0.01)
    raise AssertionError(f"{path} was never written")


def read_pids(path: Path) -> list[int]:
    return [int(line) for line in path.read_text(encoding="utf-8").split()]


def zombies() -> list[int]:
    """Our dead, uncollected children (read from /proc: Linux)."""
    from ctxmode.executor.procs import _children

    out = []
    for pid in _children():
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
                if handle.read().rsplit(")", 1)[1].split()[0] == "Z":
                    out.append(pid)
        except OSError:  # noqa: PERF203 - it may be gone meanwhile
            continue
    return out


def needs(command: str) -> pytest.MarkDecorator:
    return pytest.mark.skipif(shutil.which(command) is None, reason=f"{command} not installed")
