"""Zed's agent. MCP only: Zed runs no hook commands, so ctxmode reaches it through the MCP
server (``context_servers`` in ``~/.config/zed/settings.json`` or a project's
``.zed/settings.json``). Not installable from a registry here: written from its
documentation.

`parse` knows no event: a ``ctxmode hook zed <event>`` call answers nothing.
"""

from collections.abc import Mapping
from typing import Any

from ctxmode.hookevent import CanonicalEvent, HookDecision, HookEvent
from ctxmode.platforms import Output
from ctxmode.platforms.common import NOTHING
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


def parse(native_event: str, payload: dict[str, Any], env: Mapping[str, str]) -> HookEvent | None:
    return None


def render(event: HookEvent, decision: HookDecision) -> Output:
    return NOTHING


def noop(native_event: str) -> Output:
    return NOTHING
