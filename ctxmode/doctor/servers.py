"""Whether an MCP server is running: hooks send the agent to ``ctx_*`` tools only while one
runs (`ctxmode.readiness`), and the agent has those tools only if a server of its own runs."""

from pathlib import Path

from ctxmode.doctor.model import Check, ok, warn
from ctxmode.wording import plural

NO_SERVER = (
    "no ctxmode server running (hooks won't redirect to ctx_* tools until the agent starts one)"
)
START_FIX = "start the agent in this project; it starts `ctxmode serve` itself"


def server_check(root: Path, project_dir: Path | None) -> list[Check]:
    """Live servers (stale markers are dropped by `live_servers`), this project's counted."""
    from ctxmode.paths import project_hash
    from ctxmode.readiness import live_servers, read_markers

    pids = live_servers(root)
    if not pids:
        return [warn("server", NO_SERVER, START_FIX)]
    if project_dir is None:
        return [ok("server", f"{plural(len(pids), 'server')} running")]
    mine = project_hash(project_dir)
    named = {m.pid: m.project_dir for m in read_markers(root) if m.live}
    here = sum(1 for pid in pids if named.get(pid) and project_hash(str(named[pid])) == mine)
    if here:
        others = len(pids) - here
        tail = f" ({others} for other projects)" if others else ""
        return [ok("server", f"{plural(here, 'server')} running for this project{tail}")]
    return [
        warn(
            "server",
            f"no ctxmode server running for this project ({len(pids)} for other projects); "
            "hooks redirect to ctx_* tools while any server runs, tools this agent lacks",
            START_FIX,
        )
    ]
