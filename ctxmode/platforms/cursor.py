"""Cursor.

Every answer is a JSON object: Cursor treats empty stdout as an invalid response, so "no
opinion" is ``{}`` (never ``{"permission":"allow"}``, which would skip the user's approval).
A deny names the ctx tool in ``agent_message``, the model-facing field; ``user_message`` is
only shown to the human. ``updated_input`` is unverified, so a redirect is a deny and only a
sub-agent prompt rewrite is sent as ``updated_input``. Sessions are keyed by
``conversation_id``, projects by ``workspace_roots[0]``; MCP tools are ``MCP:<tool>``.
"""

from collections.abc import Mapping

from ctxmode.hookevent import CanonicalEvent, HookDecision, HookEvent
from ctxmode.platforms import Output
from ctxmode.platforms.common import (
    as_object,
    classify,
    context_of,
    error_text,
    first_str,
    hook_event,
    json_out,
    pick,
    uuid_in,
    verdict,
)
from ctxmode.platforms.host import Host
from ctxmode.typenames import Any

NAME = "cursor"

EVENTS: dict[str, CanonicalEvent] = {
    "pretooluse": "pre_tool",
    "beforeshellexecution": "pre_tool",
    "posttooluse": "post_tool",
    "aftershellexecution": "post_tool",
    "posttoolusefailure": "post_tool_failure",
    "precompact": "pre_compact",
    "sessionstart": "session_start",
    "beforesubmitprompt": "prompt_submit",
    "stop": "stop",
    "afteragentresponse": "model_reply",
}

HOST = Host(
    NAME,
    EVENTS,
    redirect_as_deny=True,
    project_vars=("CURSOR_CWD",),
    payload_project_first=True,
    session_vars=("CURSOR_TRACE_ID",),
    config_dir="{home}/.cursor",
    mcp_configs=("{project}/.cursor/mcp.json", "{config}/mcp.json"),
    mcp_clients=("cursor-vscode",),
)

_SHELL_EVENTS = ("beforeshellexecution", "aftershellexecution")


def parse(native_event: str, payload: dict[str, Any], env: Mapping[str, str]) -> HookEvent | None:
    canonical = EVENTS.get(native_event)
    if canonical is None:
        return None
    if native_event in _SHELL_EVENTS:
        command = first_str(payload, "command") or ""
        named = classify("Shell")
        tool_input: dict[str, Any] = {"command": command}
        response: Any = payload.get("output")
    else:
        tool_input = as_object(payload.get("tool_input"))
        named = classify(first_str(payload, "tool_name"))
        response = pick(payload, "tool_output", "tool_response")
    error = error_text(pick(payload, "error_message", "error"))
    if canonical == "post_tool" and error:
        canonical = "post_tool_failure"
    return hook_event(
        HOST,
        canonical,
        native_event,
        payload,
        env,
        named,
        tool_input,
        session_id=first_str(payload, "conversation_id", "session_id")
        or first_str(env, *HOST.session_vars)
        or uuid_in(payload.get("transcript_path")),
        response=response,
        error=error if canonical == "post_tool_failure" else None,
        source_keys=("source", "trigger"),
        transcript_keys=("transcript_path",),
    )


def render(event: HookEvent, decision: HookDecision) -> Output:
    if event.event == "pre_tool":
        v = verdict(event, decision, HOST)
        if v.kind == "modify":  # only a sub-agent prompt rewrite: redirects come as a deny
            return json_out({"updated_input": v.updated_input})
        if v.kind in ("deny", "ask"):
            return json_out(
                {"permission": v.kind, "agent_message": v.reason, "user_message": v.reason}
            )
        if v.kind == "context":
            return json_out({"agent_message": v.context})
        return json_out({})
    if event.event == "prompt_submit":
        return json_out({"continue": True})
    text = context_of(decision)
    if text and event.event in ("post_tool", "post_tool_failure", "session_start"):
        return json_out({"additional_context": text})
    return json_out({})  # stop: never a followup_message (it would continue the loop)


def noop(native_event: str) -> Output:
    return json_out({"continue": True} if native_event == "beforesubmitprompt" else {})
