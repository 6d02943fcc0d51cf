"""VS Code Copilot, and the payload/answer shapes it shares with the
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

from ctxmode.hookevent import CanonicalEvent, HookDecision, HookEvent
from ctxmode.platforms import Output
from ctxmode.platforms.common import (
    CLAUDE_EVENTS,
    NOTHING,
    as_object,
    classify,
    context_of,
    error_text,
    first_str,
    hook_event,
    hook_specific,
    permission,
    pick,
    rewrite,
    subagent,
    uuid_in,
    verdict,
)
from ctxmode.platforms.host import Host
from ctxmode.typenames import Any

NAME = "vscode-copilot"

# The Copilot family's event names (Copilot CLI's too): Claude Code's plus its camelCase ones.
EVENTS: dict[str, CanonicalEvent] = {
    **CLAUDE_EVENTS,
    "posttoolusefailure": "post_tool_failure",
    "userpromptsubmitted": "prompt_submit",
    "agentstop": "stop",
}

HOST = Host(
    NAME,
    EVENTS,
    late_snapshot=True,
    project_vars=("VSCODE_CWD",),
    payload_project_first=True,
    config_dir="{home}/.vscode",
    memory_files=("{project}/.github/copilot-instructions.md",),
    mcp_configs=("{project}/.vscode/mcp.json",),
    mcp_clients=("Visual-Studio-Code",),
)

_FAILED = ("failure", "error")


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
    host: Host, native_event: str, payload: dict[str, Any], env: Mapping[str, str]
) -> HookEvent | None:
    """Any of the three Copilot payload shapes as an event."""
    canonical = host.events.get(native_event)
    if canonical is None:
        return None
    tool_input = as_object(pick(payload, "tool_input", "toolArgs"))
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
    return hook_event(
        host,
        canonical,
        native_event,
        payload,
        env,
        named,
        tool_input,
        session_id=first_str(payload, "session_id", "sessionId")
        or uuid_in(payload.get("transcript_path")),
        response=response,
        error=error,
        in_subagent=subagent(payload),
        transcript_keys=("transcript_path", "transcriptPath"),
    )


def render_copilot(host: Host, event: HookEvent, decision: HookDecision) -> Output:
    """Flat (Copilot runtime) and nested (VS Code) keys in one answer."""
    if event.event == "pre_tool":
        v = verdict(event, decision, host)
        if v.kind in ("deny", "ask"):
            fields = permission(v.kind, v.reason)
            return hook_specific("PreToolUse", fields, flat=fields)
        if v.kind == "modify":
            flat = {"permissionDecision": "allow", "modifiedArgs": v.updated_input}
            return hook_specific("PreToolUse", rewrite(v), flat=flat)
        if v.kind == "context":  # the runtime has no pre-tool context for command hooks
            return hook_specific("PreToolUse", {"additionalContext": v.context})
        return NOTHING
    text = context_of(decision)
    if not text:
        return NOTHING
    context = {"additionalContext": text}
    if event.event in ("post_tool", "post_tool_failure"):
        name = "PostToolUseFailure" if event.native_event == "posttoolusefailure" else "PostToolUse"
        return hook_specific(name, context, flat=context)
    if event.event == "session_start":
        return hook_specific("SessionStart", context, flat=context)
    return NOTHING  # prompt, pre-compact: no context channel; stop: never continue


def parse(native_event: str, payload: dict[str, Any], env: Mapping[str, str]) -> HookEvent | None:
    return parse_copilot(HOST, native_event, payload, env)


def render(event: HookEvent, decision: HookDecision) -> Output:
    return render_copilot(HOST, event, decision)


def noop(native_event: str) -> Output:
    return NOTHING
