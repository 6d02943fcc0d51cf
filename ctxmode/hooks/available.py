"""Whether the model can call ctxmode's tools: what every injected text that names a
``ctx_*`` tool asks first. Standard library only (the pre-tool hook asks it).

A live server for the project settles it at once (one directory listing, one small file
per server). Without one, the host's own MCP settings decide: ctxmode registered for the
project means the server is on its way (hosts start it beside the first turn); a host
whose settings ctxmode cannot read counts as registered, and so does a host running
ctxmode from its plugin (the plugin brings the server).
"""

from pathlib import Path

from ctxmode import settings
from ctxmode.platforms import descriptor
from ctxmode.platforms.host import mcp_registered


def live_for(project: Path) -> tuple[bool, bool]:
    """(any ctxmode server is live, one of them serves `project`); the markers of dead
    servers are removed on the way."""
    from ctxmode.paths import data_root
    from ctxmode.readiness import live_markers

    live = live_markers(data_root())
    return bool(live), any(m.project_dir == str(project) for m in live)


def registered(platform: str, project: Path) -> bool:
    """The host's MCP settings register ctxmode for `project` (unknown: True)."""
    if settings.plugin() == platform:
        return True
    host = descriptor(platform)
    return (mcp_registered(host, project) if host is not None else None) is not False


def tools_available(platform: str, project: Path) -> bool:
    """A server runs for `project`, or the host has one registered for it."""
    _, ours = live_for(project)
    return ours or registered(platform, project)


def server_ready(platform: str, project: Path) -> bool:
    """A server is up to take a redirect, and it is one this host can call: one for
    `project`, or any live one where the host registers ctxmode for `project`."""
    live, ours = live_for(project)
    return ours or (live and registered(platform, project))
