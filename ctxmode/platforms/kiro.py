"""Kiro CLI: no JSON protocol.

preToolUse blocks with exit 2 and the reason on stderr (which reaches the model); it cannot
ask, rewrite or add context, so ``ask`` and redirects become that block and nudges are
dropped. agentSpawn and userPromptSubmit add their plain-text stdout to the agent context.
Payloads carry no session id: like upstream, the session is ``pid-<parent pid>`` (the Kiro
process, which is the same for every hook of one agent run). MCP tools are
``@<server>/<tool>``.
"""

import os
from collections.abc import Mapping

from ctxmode.hookevent import CanonicalEvent, HookDecision, HookEvent
from ctxmode.platforms import Output
from ctxmode.platforms.common import (
    NOTHING,
    as_object,
    classify,
    context_of,
    first_str,
    hook_event,
    verdict,
)
from ctxmode.platforms.host import SERVER_KEY, Host
from ctxmode.typenames import Any

NAME = "kiro"

EVENTS: dict[str, CanonicalEvent] = {
    "pretooluse": "pre_tool",
    "posttooluse": "post_tool",
    "agentspawn": "session_start",
    "sessionstart": "session_start",  # Kiro v3 hook files
    "userpromptsubmit": "prompt_submit",
    "stop": "stop",
}

HOST = Host(
    NAME,
    EVENTS,
    can_ask=False,
    can_modify=False,
    pre_context=False,
    tool_prefix=f"@{SERVER_KEY}/",
    config_dir="{home}/.kiro",
    mcp_configs=("{project}/.kiro/settings/mcp.json", "{config}/settings/mcp.json"),
    mcp_clients=("Kiro CLI",),
)


def session_id(payload: Mapping[str, Any]) -> str:
    return first_str(payload, "session_id", "sessionId") or f"pid-{os.getppid()}"


def failure(response: Any) -> str | None:
    """The result text of a call Kiro reports as ``success: false``."""
    if not isinstance(response, Mapping) or response.get("success") is not False:
        return None
    result = response.get("result")
    if isinstance(result, list):
        text = "\n".join(str(r) for r in result if r not in (None, ""))
    else:
        text = str(result or "")
    return text or "tool call failed"


def parse(native_event: str, payload: dict[str, Any], env: Mapping[str, str]) -> HookEvent | None:
    canonical = EVENTS.get(native_event)
    if canonical is None:
        return None
    tool_input = as_object(payload.get("tool_input"))
    named = classify(first_str(payload, "tool_name"))
    response = payload.get("tool_response")
    error = failure(response) if canonical == "post_tool" else None
    if error:
        canonical = "post_tool_failure"
    return hook_event(
        HOST,
        canonical,
        native_event,
        payload,
        env,
        named,
        tool_input,
        session_id=session_id(payload),
        response=response,
        error=error,
    )


def render(event: HookEvent, decision: HookDecision) -> Output:
    if event.event == "pre_tool":
        v = verdict(event, decision, HOST)
        if v.kind == "deny":
            return Output(stderr=v.reason, exit_code=2)
        return NOTHING
    text = context_of(decision)
    if text and event.event in ("session_start", "prompt_submit"):
        return Output(stdout=text)
    return NOTHING


def noop(native_event: str) -> Output:
    return NOTHING
