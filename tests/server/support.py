"""Helpers shared by the server tests: one tool call, deny rules, bounded polls."""

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import psutil

# Generous: calls run real subprocesses on a possibly busy machine. Not a performance bound.
CALL_S = 60.0
# How long a process gets to go away after it was told to (bounded poll, not a sleep).
EXIT_WITHIN_S = 20.0


async def call(client: Any, name: str, args: dict[str, Any] | None = None) -> tuple[str, bool]:
    """Call one tool; return (the single text content, is_error)."""
    with anyio.fail_after(CALL_S):
        result = await client.call_tool(name, args or {})
    assert len(result.content) == 1
    assert result.content[0].type == "text"
    return result.content[0].text, bool(result.is_error)


def deny(project: Path, *rules: str) -> None:
    """Write `rules` as permissions.deny in <project>/.claude/settings.json."""
    folder = project / ".claude"
    folder.mkdir(exist_ok=True)
    body = {"permissions": {"deny": list(rules)}}
    (folder / "settings.json").write_text(json.dumps(body), encoding="utf-8")


def wait_until(predicate: Callable[[], bool], within: float = EXIT_WITHIN_S) -> bool:
    """Poll `predicate` until it holds or `within` seconds pass; return its last value."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def alive(pid: int) -> bool:
    """True while `pid` runs; a zombie (dead, not yet reaped by its new parent) is dead."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def survivors(pids: list[int], within: float = EXIT_WITHIN_S) -> list[int]:
    """The pids still alive once they had `within` seconds to die."""
    wait_until(lambda: not any(alive(pid) for pid in pids), within)
    return [pid for pid in pids if alive(pid)]


def kill_all(pids: list[int]) -> None:
    """Teardown: make sure nothing a test started outlives it."""
    for pid in pids:
        try:
            psutil.Process(pid).kill()
        except psutil.Error:  # noqa: PERF203 - each may already be gone
            pass
