"""The OpenClaw gateway (npm ``openclaw``) through ctxmode's plugin, ``openclaw_plugin.js``.

OpenClaw runs native plugins in the gateway process; the plugin forwards its typed hooks
as ``ctxmode hook openclaw <hook>`` (the contract of `ctxmode.platforms.jsplugin`):
``before_tool_call`` = pre-tool (``block``/``blockReason``, rewritten ``params``, ``ask``
as a plugin approval request; OpenClaw fails the call closed if the hook takes 15 s, the
shim gives up after 10), ``after_tool_call`` = post-tool (observation only: no context goes
back), ``before_prompt_build`` = prompt submit, the session's first prompt build in a
gateway process = session start (``resume`` when the session already has messages),
``before_compaction`` = pre-compact, ``after_compaction`` = session start after compaction.

Nothing a hook adds is stored: OpenClaw rebuilds the system prompt for every turn, so the
shim appends a session's start context (routing block, snapshot) to every prompt it builds
(``appendSystemContext``) and a session continued by a new gateway process gets the routing
block again (`Host.system_routing`). There is no channel for advisory context before a tool
runs.

The ctx_* tools come from the ``ctxmode`` MCP server in ``mcp.servers`` and are named
``<server>__<tool>`` (``ctxmode__ctx_search``); OpenClaw keeps them behind its Tool Search:
the model finds them with ``tool_search`` and calls them with ``tool_call(id, args)``, which
then runs the tool under its own name with its own tool hooks, so the wrappers themselves
are left alone. OpenClaw starts MCP servers with HOME, PATH, SHELL, TERM, USER and LOGNAME
only (the MCP SDK's default environment) plus the entry's ``env``.
"""

from collections.abc import Mapping

from ctxmode.hookevent import CanonicalEvent, HookDecision, HookEvent
from ctxmode.platforms import Output, jsplugin
from ctxmode.platforms.common import CLAUDE_EVENTS
from ctxmode.platforms.host import SERVER_KEY, Host
from ctxmode.typenames import Any

NAME = "openclaw"

EVENTS: dict[str, CanonicalEvent] = {
    **CLAUDE_EVENTS,
    "before_tool_call": "pre_tool",
    "after_tool_call": "post_tool",
    "before_prompt_build": "prompt_submit",
    "session_start": "session_start",
    "before_compaction": "pre_compact",
    "after_compaction": "session_start",
}

HOST = Host(
    NAME,
    EVENTS,
    pre_context=False,
    system_routing=True,
    tool_prefix=f"{SERVER_KEY}__",
    deferred_tools='tool_search(query: "ctxmode"), then tool_call(id: "ctxmode__<name>", args)',
    config_var="OPENCLAW_STATE_DIR",
    config_dir="{home}/.openclaw",
    memory_files=("{project}/AGENTS.md",),
    mcp_configs=("{config}/openclaw.json",),
    mcp_clients=("openclaw-bundle-mcp",),
)

# OpenClaw's Tool Search wrappers: the tool they reach gets its own hook calls.
WRAPPERS = frozenset({"tool_call", "tool_search", "tool_describe", "tool_search_code"})
ALIASES = {"ls": "Glob"}


def parse(native_event: str, payload: dict[str, Any], env: Mapping[str, str]) -> HookEvent | None:
    if payload.get("tool_name") in WRAPPERS:
        return None
    return jsplugin.parse(HOST, native_event, payload, env, ALIASES)


def render(event: HookEvent, decision: HookDecision) -> Output:
    return jsplugin.render(HOST, event, decision)


def noop(native_event: str) -> Output:
    return jsplugin.noop(native_event)
