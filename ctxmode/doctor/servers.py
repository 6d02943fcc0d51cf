"""Whether an MCP server is running: hooks send the agent to ``ctx_*`` tools only while one
runs (`ctxmode.readiness`), and the agent has those tools only if a server of its own runs."""

import json
from pathlib import Path

from ctxmode.doctor.model import Check, ok, warn

NO_SERVER = (
    "no ctxmode server running (hooks won't redirect to ctx_* tools until the agent starts one)"
)
START_FIX = "start the agent in this project; it starts `ctxmode serve` itself"


def _project_hash_of(root: Path, pid: int) -> str | None:
    """The project hash a server's marker names (None when unreadable)."""
    from ctxmode.paths import project_hash
    from ctxmode.readiness import markers_dir

    try:
        body = json.loads((markers_dir(root) / f"{pid}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    value = body.get("project_dir") if isinstance(body, dict) else None
    return project_hash(value) if isinstance(value, str) and value else None


def server_check(root: Path, project_dir: Path | None) -> list[Check]:
    """Live servers (stale markers are dropped by `live_servers`), this project's counted."""
    from ctxmode.paths import project_hash
    from ctxmode.readiness import live_servers

    pids = live_servers(root)
    if not pids:
        return [warn("server", NO_SERVER, START_FIX)]
    if project_dir is None:
        return [ok("server", f"{len(pids)} server(s) running")]
    mine = project_hash(project_dir)
    here = sum(1 for pid in pids if _project_hash_of(root, pid) == mine)
    if here:
        others = len(pids) - here
        tail = f" ({others} for other projects)" if others else ""
        return [ok("server", f"{here} server(s) running for this project{tail}")]
    return [
        warn(
            "server",
            f"no ctxmode server running for this project ({len(pids)} for other projects); "
            "hooks redirect to ctx_* tools while any server runs, tools this agent lacks",
            START_FIX,
        )
    ]
