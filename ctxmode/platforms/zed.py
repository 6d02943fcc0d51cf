"""Zed's agent. MCP only: Zed runs no hook commands, so ctxmode reaches it through the MCP
server (``context_servers`` in ``~/.config/zed/settings.json`` or a project's
``.zed/settings.json``). Not installable from a registry here: written from its
documentation.

`parse` knows no event: a ``ctxmode hook zed <event>`` call answers nothing.
"""

from ctxmode.hookevent import CanonicalEvent
from ctxmode.platforms.common import no_event, say_nothing
from ctxmode.platforms.host import Host

NAME = "zed"

EVENTS: dict[str, CanonicalEvent] = {}

HOST = Host(
    NAME,
    EVENTS,
    config_dir="{xdg_config}/zed",
    memory_files=("{project}/.rules", "{project}/AGENTS.md"),
    mcp_configs=("{project}/.zed/settings.json", "{config}/settings.json"),
    mcp_clients=("Zed", "zed"),
)


parse = no_event
render = say_nothing
noop = say_nothing
