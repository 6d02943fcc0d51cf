"""VS Code Copilot (hooks.md section 8), and the payload/answer shapes it shares with the
GitHub Copilot runtime (section 9) that `jetbrains_copilot` reuses.

The same ``.github/hooks/*.json`` file is read by VS Code's local agent harness (decisions
nested in ``hookSpecificOutput``) and by the Copilot runtime harness (flat
``permissionDecision``/``modifiedArgs``/``additionalContext``), so every answer carries both
shapes; each harness ignores the keys it does not read. Payloads come as VS Code's
(``sessionId``, ``hookEventName``, camelCase tool inputs), the runtime's PascalCase form
(snake_case, Claude tool names, ``tool_result``) or its camelCase form (``toolName``,
``toolArgs`` possibly a JSON string). VS Code ignores matchers, so every tool reaches the
hook; SessionStart's source is always ``new``; UserPromptSubmit and PreCompact have no
context channel. Exit 0 always: the runtime's preToolUse denies the call on any other code.
"""

import json
from collections.abc import Mapping
from typing import Any

from ctxmode.hooks.model import CanonicalEvent, HookDecision, HookEvent
from ctxmode.platforms import Output
from ctxmode.platforms.common import (
    NOTHING,
    as_object,
    classify,
    context_of,
    error_text,
    essential_rewrite,
    first_str,
    json_out,
    project_dir,
    reason_text,
    refine,
    source,
    subagent,
    uuid_in,
    verdict,
)

NAME = "vscode-copilot"

EVENTS: dict[str, CanonicalEvent] = {
    "pretooluse": "pre_tool",
    "posttooluse": "post_tool",
    "posttoolusefailure": "post_tool_failure",
    "precompact": "pre_compact",
    "sessionstart": "session_start",
    "userpromptsubmit": "prompt_submit",
    "userpromptsubmitted": "prompt_submit",
    "stop": "stop",
    "agentstop": "stop",
}

_FAILED = ("failure", "error")
MODIFY_REASON = "Routed to the ctxmode sandbox"


def _result_failure(payload: Mapping[str, Any]) -> str | None:
    """The error text of a failed call, from the runtime's tool result or ``is_error``."""
    for key, kind_key, text_key in (
        ("tool_result", "result_type", "text_result_for_llm"),
        ("toolResult", "resultType", "textResultForLlm"),
    ):
        result = payload.get(key)
        if isinstance(result, Mapping) and result.get(kind_key) in _FAILED:
            return first_str(result, text_key) or json.dumps(result, ensure_ascii=False)
    if payload.get("is_error") is True:
        response = payload.get("tool_response")
        return response if isinstance(response, str) and response else "tool call failed"
    return None


def parse_copilot(
    platform: str,
    native_event: str,
    payload: dict[str, Any],
    env: Mapping[str, str],
    env_vars: tuple[str, ...],
) -> HookEvent | None:
    """Any of the three Copilot payload shapes as an event."""
    canonical = EVENTS.get(native_event)
    if canonical is None:
        return None
    tool_input = as_object(payload.get("tool_input", payload.get("toolArgs")))
    named = classify(first_str(payload, "tool_name", "toolName"))
    response = payload.get("tool_response")
    if response is None:
        response = payload.get("tool_result", payload.get("toolResult"))
    error = None
    if canonical == "post_tool_failure":
        error = error_text(payload.get("error")) or _result_failure(payload) or "tool call failed"
    elif canonical == "post_tool":
        error = _result_failure(payload)
        if error:
            canonical = "post_tool_failure"
    return HookEvent(
        platform=platform,
        event=canonical,
        native_event=native_event,
        session_id=first_str(payload, "session_id", "sessionId")
        or uuid_in(payload.get("transcript_path"))
        or "",
        project_dir=project_dir(payload, env, env_vars, payload_first=True),
        cwd=first_str(payload, "cwd"),
        tool=refine(named.tool, named.native, tool_input),
        native_tool=named.native,
        tool_input=tool_input,
        tool_response=response,
        error=error,
        source=source(payload.get("source")) if canonical == "session_start" else None,
        prompt=first_str(payload, "prompt") if canonical == "prompt_submit" else None,
        mcp_server=named.mcp_server,
        mcp_tool=named.mcp_tool,
        subagent=subagent(payload),
        transcript_path=first_str(payload, "transcript_path", "transcriptPath"),
        raw=payload,
    )


def _both(event_name: str, flat: dict[str, Any], nested: dict[str, Any]) -> Output:
    return json_out({**flat, "hookSpecificOutput": {"hookEventName": event_name, **nested}})


def render_copilot(
    event: HookEvent, decision: HookDecision, *, redirect_as_deny: bool = False
) -> Output:
    """Flat (Copilot runtime) and nested (VS Code) keys in one answer.

    With `redirect_as_deny`, a rewrite that replaces the call is sent as a deny instead.
    """
    if event.event == "pre_tool":
        v = verdict(event, decision)
        if v.kind == "modify" and redirect_as_deny and essential_rewrite(event):
            reason = reason_text(event, decision)
            return _both(
                "PreToolUse",
                {"permissionDecision": "deny", "permissionDecisionReason": reason},
                {"permissionDecision": "deny", "permissionDecisionReason": reason},
            )
        if v.kind in ("deny", "ask"):
            fields = {"permissionDecision": v.kind, "permissionDecisionReason": v.reason}
            return _both("PreToolUse", fields, fields)
        if v.kind == "modify":
            nested: dict[str, Any] = {
                "permissionDecision": "allow",
                "permissionDecisionReason": v.reason or MODIFY_REASON,
                "updatedInput": v.updated_input,
            }
            if v.context:
                nested["additionalContext"] = v.context
            flat = {"permissionDecision": "allow", "modifiedArgs": v.updated_input}
            return _both("PreToolUse", flat, nested)
        if v.kind == "context":  # the runtime has no pre-tool context for command hooks
            return _both("PreToolUse", {}, {"additionalContext": v.context})
        return NOTHING
    text = context_of(decision)
    if not text:
        return NOTHING
    if event.event in ("post_tool", "post_tool_failure"):
        name = "PostToolUseFailure" if event.native_event == "posttoolusefailure" else "PostToolUse"
        return _both(name, {"additionalContext": text}, {"additionalContext": text})
    if event.event == "session_start":
        return _both("SessionStart", {"additionalContext": text}, {"additionalContext": text})
    return NOTHING  # prompt, pre-compact: no context channel; stop: never continue


def parse(native_event: str, payload: dict[str, Any], env: Mapping[str, str]) -> HookEvent | None:
    return parse_copilot(NAME, native_event, payload, env, ("VSCODE_CWD",))


def render(event: HookEvent, decision: HookDecision) -> Output:
    return render_copilot(event, decision)


def noop(native_event: str) -> Output:
    return NOTHING
