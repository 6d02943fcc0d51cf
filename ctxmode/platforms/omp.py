"""Oh My Pi (``@oh-my-pi/pi-coding-agent``, ``omp``), Pi's fork, through the same extension
as Pi (``pi_extension.js``, installed with ``PLATFORM = "omp"``).

Unlike Pi it has an MCP client: the server is registered in ``.omp/mcp.json`` (or the
agent dir's ``mcp.json``, ``$PI_CODING_AGENT_DIR``, default ``~/.omp/agent``), started
with the full environment, and its tools are named ``mcp__<server>_<tool>``
(``mcp__ctxmode_ctx_search``). By default (``tools.xdev``) OMP mounts MCP tools as
``xd://`` devices: the model calls one by writing its JSON arguments to
``xd://mcp__ctxmode_ctx_search`` with the ``write`` tool, and the system prompt maps each
leaf name (``ctx_search``) to its device, so guidance names the tools by their leaf. Such a
``write`` (or a ``read`` of a device's docs) is left alone: the device tool it dispatches
gets its own ``tool_call`` and ``tool_result``.

The extension events are Pi's (see `ctxmode.platforms.pi`), with differences the shim
handles: ``session_start`` carries no reason (a session with history is a resume),
``/new``, ``/resume`` and ``/fork`` arrive as ``session_switch``, and a rewritten tool
input is returned as ``input`` rather than written into the event.
"""

from collections.abc import Mapping

from ctxmode.hookevent import HookDecision, HookEvent
from ctxmode.platforms import Output, jsplugin
from ctxmode.platforms.host import Host
from ctxmode.platforms.pi import ALIASES, EVENTS
from ctxmode.typenames import Any

NAME = "omp"

HOST = Host(
    NAME,
    {**EVENTS, "session_switch": "session_start"},
    config_var="PI_CODING_AGENT_DIR",
    config_dir="{home}/.omp/agent",
    memory_files=("{config}/AGENTS.md", "{project}/AGENTS.md", "{project}/CLAUDE.md"),
    mcp_configs=(
        "{project}/.omp/mcp.json",
        "{config}/mcp.json",
        "{project}/mcp.json",
        "{project}/.mcp.json",
    ),
    mcp_clients=("omp-coding-agent",),
)


XD_PREFIX = "xd://"


def mcp_name(name: str) -> tuple[str | None, str] | None:
    """(server, tool) of an ``mcp__<server>_<tool>`` name (the server is read up to the
    first ``_``: OMP folds every other character of a server name into one)."""
    if not name.startswith("mcp__") or "__" in name[5:]:
        return None
    server, sep, leaf = name[5:].partition("_")
    return (server, leaf) if sep and server and leaf else None


def device_call(payload: Mapping[str, Any]) -> bool:
    """A ``read``/``write`` of an ``xd://`` device: the device tool gets its own events."""
    tool_input = payload.get("tool_input")
    path = tool_input.get("path") if isinstance(tool_input, dict) else None
    return isinstance(path, str) and path.lstrip().lower().startswith(XD_PREFIX)


def parse(native_event: str, payload: dict[str, Any], env: Mapping[str, str]) -> HookEvent | None:
    if device_call(payload):
        return None
    return jsplugin.parse(HOST, native_event, payload, env, ALIASES, mcp_name)


def render(event: HookEvent, decision: HookDecision) -> Output:
    return jsplugin.render(HOST, event, decision)


def noop(native_event: str) -> Output:
    return jsplugin.noop(native_event)
