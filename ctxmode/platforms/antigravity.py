"""Google Antigravity (the IDE). MCP only: it runs no hook commands, so ctxmode reaches it
through the MCP server (``~/.gemini/antigravity/mcp_config.json``) and the routing rules
file setup writes (``.agent/rules/ctxmode.md`` in a workspace). Not installable from a
registry here: written from its documentation.

`parse` knows no event: a ``ctxmode hook antigravity <event>`` call answers nothing.
"""

from collections.abc import Mapping
from typing import Any

from ctxmode.hookevent import CanonicalEvent, HookDecision, HookEvent
from ctxmode.platforms import Output
from ctxmode.platforms.common import NOTHING
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


def parse(native_event: str, payload: dict[str, Any], env: Mapping[str, str]) -> HookEvent | None:
    return None


def render(event: HookEvent, decision: HookDecision) -> Output:
    return NOTHING


def noop(native_event: str) -> Output:
    return NOTHING
