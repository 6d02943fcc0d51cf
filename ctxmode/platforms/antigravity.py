"""Google Antigravity (the IDE). MCP only: it runs no hook commands, so ctxmode reaches it
through the MCP server (``~/.gemini/antigravity/mcp_config.json``) and the routing rules
file setup writes (``.agent/rules/ctxmode.md`` in a workspace). Not installable from a
registry here: written from its documentation.

`parse` knows no event: a ``ctxmode hook antigravity <event>`` call answers nothing.
"""

from ctxmode.hookevent import CanonicalEvent
from ctxmode.platforms.common import no_event, say_nothing
from ctxmode.platforms.host import Host

NAME = "antigravity"

EVENTS: dict[str, CanonicalEvent] = {}

HOST = Host(
    NAME,
    EVENTS,
    config_dir="{home}/.gemini/antigravity",
    memory_files=("{home}/.gemini/GEMINI.md", "{project}/.agent/rules/ctxmode.md"),
    mcp_configs=("{config}/mcp_config.json",),
    mcp_clients=("antigravity-client", "antigravity"),
)


parse = no_event
render = say_nothing
noop = say_nothing
