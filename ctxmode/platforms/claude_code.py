"""Claude Code: the reference protocol. Qwen Code and Codex speak
dialects of it and reuse `parse_with` / `render_with`.

Decisions go in ``hookSpecificOutput`` (``permissionDecision`` + ``permissionDecisionReason``,
``updatedInput``, ``additionalContext``); "no opinion" is empty stdout; exit 0 always: exit 2
would block, and at PreCompact it would block compaction.
"""

from collections.abc import Mapping
from typing import Any

from ctxmode.hooks.model import CanonicalEvent, HookDecision, HookEvent
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
    project_dir,
    rewrite,
    subagent,
    uuid_in,
    verdict,
)

NAME = "claude-code"

EVENTS: dict[str, CanonicalEvent] = {**CLAUDE_EVENTS, "posttoolusefailure": "post_tool_failure"}

WIRE_NAMES: dict[CanonicalEvent, str] = {
    "pre_tool": "PreToolUse",
    "post_tool": "PostToolUse",
    "post_tool_failure": "PostToolUseFailure",
    "pre_compact": "PreCompact",
    "session_start": "SessionStart",
    "prompt_submit": "UserPromptSubmit",
    "stop": "Stop",
}


def foreign(payload: Mapping[str, Any]) -> bool:
    """A VS Code or Cursor payload reaching a claude-code hook.

    VS Code runs the hooks of ``.claude/settings*.json`` for every tool with its own payload
    (``hookEventName``, ``sessionId``); Cursor does the same with third-party hooks enabled
    (``conversation_id``, ``cursor_version``). Our Claude answer would be misread there, so
    such calls pass through; the host's own ctxmode hook handles them.
    """
    if "hook_event_name" not in payload and ("hookEventName" in payload or "sessionId" in payload):
        return True
    return "cursor_version" in payload or (
        "conversation_id" in payload and "session_id" not in payload
    )


def parse_with(
    platform: str,
    native_event: str,
    payload: dict[str, Any],
    env: Mapping[str, str],
    *,
    events: Mapping[str, CanonicalEvent] = EVENTS,
    env_vars: tuple[str, ...] = ("CLAUDE_PROJECT_DIR",),
    session_vars: tuple[str, ...] = (),
    aliases: Mapping[str, str] | None = None,
) -> HookEvent | None:
    """A Claude-shaped payload (``session_id``, ``tool_name``, ``tool_input``, ...) as an event."""
    canonical = events.get(native_event)
    if canonical is None:
        return None
    tool_input = as_object(payload.get("tool_input"))
    named = classify(payload.get("tool_name"), aliases)
    session = (
        first_str(payload, "session_id")
        or uuid_in(payload.get("transcript_path"))
        or first_str(env, *session_vars)
        or ""
    )
    return hook_event(
        platform,
        canonical,
        native_event,
        payload,
        named,
        tool_input,
        session_id=session,
        project=project_dir(payload, env, env_vars),
        response=payload.get("tool_response"),
        error=error_text(payload.get("error")) if canonical == "post_tool_failure" else None,
        in_subagent=subagent(payload),
        prompt_keys=("submitted_prompt", "prompt", "message"),
        transcript_keys=("transcript_path",),
    )


def render_with(
    event: HookEvent,
    decision: HookDecision,
    *,
    can_ask: bool = True,
    can_modify: bool = True,
    pre_context: bool = True,
) -> Output:
    """The Claude wire, cut down to what a dialect supports."""
    name = WIRE_NAMES[event.event]
    if event.event == "pre_tool":
        v = verdict(
            event, decision, can_ask=can_ask, can_modify=can_modify, pre_context=pre_context
        )
        if v.kind in ("deny", "ask"):
            return hook_specific(name, permission(v.kind, v.reason))
        if v.kind == "modify":
            return hook_specific(name, rewrite(v))
        if v.kind == "context":
            return hook_specific(name, {"additionalContext": v.context})
        return NOTHING
    if event.event in ("post_tool", "post_tool_failure", "session_start", "prompt_submit"):
        text = context_of(decision)
        return hook_specific(name, {"additionalContext": text}) if text else NOTHING
    return NOTHING  # pre_compact (never block compaction), stop (never continue the turn)


def parse(native_event: str, payload: dict[str, Any], env: Mapping[str, str]) -> HookEvent | None:
    if foreign(payload):
        return None
    return parse_with(NAME, native_event, payload, env, session_vars=("CLAUDE_SESSION_ID",))


def render(event: HookEvent, decision: HookDecision) -> Output:
    return render_with(event, decision)


def noop(native_event: str) -> Output:
    return NOTHING
