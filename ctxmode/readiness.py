"""The marker that says "a ctxmode MCP server is running": hooks redirect the agent to
ctx_* tools only while one exists, so it must exist exactly while a server runs.

One file per server, ``<data root>/servers/<pid>.json``. A marker whose process is gone
(a server killed with SIGKILL) is stale: `live_servers` ignores it and deletes it.
"""

import json
import os
import time
from pathlib import Path


def markers_dir(root: Path) -> Path:
    return root / "servers"


def write_marker(root: Path, project_dir: Path) -> Path:
    """Publish this process as a running server; returns the marker's path."""
    folder = markers_dir(root)
    folder.mkdir(parents=True, exist_ok=True)
    marker = folder / f"{os.getpid()}.json"
    body = {"pid": os.getpid(), "project_dir": str(project_dir), "started": time.time()}
    tmp = marker.with_suffix(".tmp")
    tmp.write_text(json.dumps(body), encoding="utf-8")
    os.replace(tmp, marker)
    return marker


def remove_marker(marker: Path) -> None:
    try:
        marker.unlink()
    except FileNotFoundError:
        pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def live_servers(root: Path) -> list[int]:
    """PIDs of running servers; stale markers are removed on the way."""
    folder = markers_dir(root)
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    alive = []
    for name in names:
        if not name.endswith(".json"):
            continue
        try:
            pid = int(name[: -len(".json")])
        except ValueError:
            continue
        if _alive(pid):
            alive.append(pid)
        else:
            remove_marker(folder / name)
    return alive
