"""The marker that says "a ctxmode MCP server is running": hooks redirect the agent to
ctx_* tools only while one exists, so it must exist exactly while a server runs.

One file per server, ``<data root>/servers/<pid>.json``. ``ctxmode serve`` publishes it
as the first thing it does, in state ``starting``, and rewrites it as ``ready`` once it
serves: hosts send the model its first turn while the server is still loading, and by
the time the model acts on a redirect the server is up. Both states count as live for
hooks; only the process matters. A marker whose process is gone
(a server killed with SIGKILL) is stale: `live_servers` ignores it and deletes it;
`read_markers` reports it (``live`` false) and leaves it, for readers that must not
change anything (a gc dry run, doctor).

This module is on the hook path: it imports nothing heavy (`pid_alive` loads psutil
only where there is no POSIX ``kill``).
"""

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

from ctxmode.typenames import NamedTuple

_POSIX = os.name == "posix"

STARTING = "starting"  # the process runs and is loading the server
READY = "ready"  # the server answers tool calls


class Marker(NamedTuple):
    """One server's readiness marker, as read from disk."""

    pid: int
    project_dir: str | None  # None when the marker cannot be read or names no project
    live: bool  # its process still runs
    path: Path
    state: str = READY  # STARTING or READY (markers written before states were ready)


def markers_dir(root: Path) -> Path:
    return root / "servers"


def write_marker(root: Path, project_dir: Path, state: str = READY) -> Path:
    """Publish this process as a running server in `state`; returns the marker's path.

    The marker appears whole or not at all (written aside, then renamed), and the file
    written aside never outlives a failed write.

    Raises:
        OSError: the marker could not be written (read-only or full disk, ...).
    """
    folder = markers_dir(root)
    folder.mkdir(parents=True, exist_ok=True)
    marker = folder / f"{os.getpid()}.json"
    body = {
        "pid": os.getpid(),
        "project_dir": str(project_dir),
        "started": time.time(),
        "state": state,
    }
    tmp = marker.with_suffix(".tmp")
    try:
        tmp.write_text(json.dumps(body), encoding="utf-8")
        os.replace(tmp, marker)
    except BaseException:
        try:
            tmp.unlink()
        except OSError:
            pass  # never created, or already gone
        raise
    return marker


def remove_marker(marker: Path) -> None:
    try:
        marker.unlink()
    except FileNotFoundError:
        pass


def pid_alive(pid: int) -> bool:
    """Whether a process with this id exists. When in doubt, True: callers use it to
    protect what a running process uses, and a wrong "dead" loses data.

    POSIX: ``kill(pid, 0)`` (no signal is sent). Elsewhere (Windows) `os.kill` would
    send a real signal or fail, so ``psutil.pid_exists`` answers instead.
    """
    if pid <= 0:  # kill(0, …) and kill(-n, …) address process groups, not a process
        return False
    if not _POSIX:
        import psutil

        try:
            return bool(psutil.pid_exists(pid))
        except Exception:  # an unexpected platform error: stay on the safe side
            return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    except OSError:
        return True
    return True


def _marker_files(folder: Path) -> Iterator[tuple[int, Path]]:
    """(pid, path) of every marker file in `folder` (none when it cannot be listed)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        stem = name[: -len(".json")]
        if not name.endswith(".json") or not stem.isascii() or not stem.isdigit():
            continue
        yield int(stem), folder / name


def read_markers(root: Path) -> list[Marker]:
    """Every readiness marker under `root`, live or not; reads only (nothing is removed)."""
    found = []
    for pid, path in _marker_files(markers_dir(root)):
        project_dir = None
        state = READY
        try:
            body = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            body = None
        if isinstance(body, dict):
            if isinstance(body.get("project_dir"), str):
                project_dir = body["project_dir"] or None
            if body.get("state") == STARTING:
                state = STARTING
        found.append(Marker(pid, project_dir, pid_alive(pid), path, state))
    return found


def live_servers(root: Path) -> list[int]:
    """PIDs of running servers, starting or ready; stale markers are removed on the way."""
    return [marker.pid for marker in live_markers(root)]


def live_markers(root: Path) -> list[Marker]:
    """The markers of running servers (with the project each serves); stale markers are
    removed on the way."""
    live = []
    for marker in read_markers(root):
        if marker.live:
            live.append(marker)
        else:
            remove_marker(marker.path)
    return live
