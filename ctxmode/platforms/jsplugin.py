"""What the in-process plugin hosts share: Pi and Oh My Pi (``pi_extension.js``) and the
OpenClaw gateway (``openclaw_plugin.js``) load JavaScript, not commands, so a small shim
shipped as package data forwards each host event to ``ctxmode hook <platform> <event>``
(the event argument is the host's own event name) and applies the answer.

stdin, one JSON object: ``hook_event_name``, ``session_id``, ``cwd``, then per event
``tool_name``/``tool_input`` (before a tool), ``tool_response`` (the result as text) and
``is_error`` (after it), ``prompt``, ``source`` (a session start: ``startup``, ``resume``,
``compact``; ``reload`` for a host that reloads its plugins in the same conversation).

stdout, always one JSON object, OpenCode's shim contract plus ``ask``: ``{"decision":
"allow|deny|ask|modify|context", "reason", "updatedInput", "additionalContext"}``.
``ask``: the shim asks the user where the host can, else blocks with the reason.
``modify``: the tool runs with ``updatedInput``. Where context goes is each host's own
(its platform module says). Anything going wrong lets the call through: no answer is
``allow``.
"""

from collections.abc import Callable, Mapping

from ctxmode.hookevent import CanonicalEvent, HookDecision, HookEvent
from ctxmode.platforms import Output
from ctxmode.platforms.common import (
    as_object,
    classify,
    first_str,
    hook_event,
    json_out,
    pick,
    verdict,
)
from ctxmode.platforms.host import Host
from ctxmode.platforms.opencode import render_with
from ctxmode.typenames import Any

ALLOW = {"decision": "allow"}
ALLOW_OUT = json_out(ALLOW)
SKIPPED_SOURCES = frozenset({"reload"})
"""Session starts that continue the same context window: nothing to record or inject."""
COMPACTED = frozenset({"session_compact", "after_compaction"})
"""Host events after a compaction: a session start with source ``compact``."""


def error_of(payload: Mapping[str, Any]) -> str | None:
    """The result text of a call the host reports as failed (``is_error``)."""
    if payload.get("is_error") is not True:
        return None
    text = payload.get("tool_response")
    return text if isinstance(text, str) and text.strip() else "tool call failed"


def parse(
    host: Host,
    native_event: str,
    payload: dict[str, Any],
    env: Mapping[str, str],
    aliases: Mapping[str, str] | None = None,
    mcp_name: Callable[[str], tuple[str | None, str] | None] | None = None,
) -> HookEvent | None:
    """A shim payload as a normalised event (None: nothing to do for this event).

    `aliases`: the host's own tool names; `mcp_name`: (server, tool) of a name in the
    host's MCP naming, None for any other name.
    """
    canonical: CanonicalEvent | None = host.events.get(native_event)
    if canonical is None:
        return None
    if canonical == "session_start":
        given = first_str(payload, "source", "reason") or ""
        if given.lower() in SKIPPED_SOURCES:
            return None
        if native_event in COMPACTED:
            payload = {**payload, "source": "compact"}
    name = first_str(payload, "tool_name")
    named = classify(name, aliases, mcp_name(name) if mcp_name and name else None)
    error = error_of(payload) if canonical == "post_tool" else None
    if error:
        canonical = "post_tool_failure"
    return hook_event(
        host,
        canonical,
        native_event,
        payload,
        env,
        named,
        as_object(pick(payload, "tool_input", "params", "input")),
        session_id=first_str(payload, "session_id", "sessionId"),
        response=pick(payload, "tool_response", "result"),
        error=error,
        source_keys=("source", "reason"),
        prompt_keys=("prompt",),
    )


def render(host: Host, event: HookEvent, decision: HookDecision) -> Output:
    """The answer the shim applies: OpenCode's shim contract, plus ``ask``."""
    if event.event == "pre_tool":
        v = verdict(event, decision, host)
        if v.kind == "ask":
            return json_out({"decision": "ask", "reason": v.reason})
    return render_with(host, event, decision)


def noop(native_event: str) -> Output:
    return ALLOW_OUT
