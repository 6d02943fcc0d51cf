"""Pi (``@mariozechner/pi-coding-agent``) through ctxmode's extension, ``pi_extension.js``.

Pi has no MCP client ("No MCP" is a design principle) and no hook commands: extensions
are TypeScript/JavaScript modules in ``.pi/extensions/`` or ``~/.pi/agent/extensions/``.
ctxmode's extension starts ``ctxmode serve`` when the first prompt is about to reach the
model, registers the server's tools with ``pi.registerTool`` under their own names
(``ctx_search``), and stops the server when Pi shuts the session down.

Extension events and what they are (the shim passes the name as ``ctxmode hook pi
<event>``, the contract of `ctxmode.platforms.jsplugin`): ``tool_call`` = pre-tool (block
with a reason, or rewrite ``event.input``; ``ask`` is a confirm dialog where Pi has a UI
and a block in print and JSON modes), ``tool_result`` = post-tool (``isError`` marks a
failed call; context is appended to the result), ``before_agent_start`` = prompt submit,
``session_start`` = session start (``reason``; a ``startup`` that opens a session with
history, ``pi --continue``, is a resume; ``reload`` is skipped),
``session_before_compact`` = pre-compact, ``session_compact`` = session start after
compaction. Session-start context enters the conversation as a custom message: at the next
prompt, or at once after a compaction.
"""

from collections.abc import Mapping

from ctxmode.hookevent import CanonicalEvent, HookDecision, HookEvent
from ctxmode.platforms import Output, jsplugin
from ctxmode.platforms.common import CLAUDE_EVENTS
from ctxmode.platforms.host import Host
from ctxmode.typenames import Any

NAME = "pi"

EVENTS: dict[str, CanonicalEvent] = {
    **CLAUDE_EVENTS,
    "tool_call": "pre_tool",
    "tool_result": "post_tool",
    "before_agent_start": "prompt_submit",
    "session_start": "session_start",
    "session_before_compact": "pre_compact",
    "session_compact": "session_start",
}

HOST = Host(
    NAME,
    EVENTS,
    config_var="PI_CODING_AGENT_DIR",
    config_dir="{home}/.pi/agent",
    memory_files=("{config}/AGENTS.md", "{project}/AGENTS.md", "{project}/CLAUDE.md"),
    mcp_clients=("pi-ctxmode",),
)

# Pi's built-in tools whose names the shared alias table does not know.
ALIASES = {"find": "Glob", "ls": "Glob"}


def parse(native_event: str, payload: dict[str, Any], env: Mapping[str, str]) -> HookEvent | None:
    return jsplugin.parse(HOST, native_event, payload, env, ALIASES)


def render(event: HookEvent, decision: HookDecision) -> Output:
    return jsplugin.render(HOST, event, decision)


def noop(native_event: str) -> Output:
    return jsplugin.noop(native_event)
