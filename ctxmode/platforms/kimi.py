"""Kimi Code CLI (npm ``@moonshot-ai/kimi-code``; the host's own hook runner read in 2.1.0).

Hooks are ``[[hooks]]`` tables in ``$KIMI_CODE_HOME/config.toml`` (``~/.kimi-code``). The
payload is Claude's, snake_case: ``hook_event_name``, ``session_id``, ``cwd``,
``tool_name`` (``Bash``, ``Read``, ``Edit``, ``Write``, ``Grep``, ``Glob``, ``FetchURL``,
``Agent``, ``mcp__<server>__<tool>``), ``tool_input``, ``tool_output`` (the first 2,000
characters) after a call, ``error`` on PostToolUseFailure, ``prompt`` (a string or
content parts) at UserPromptSubmit, ``source`` at SessionStart, ``trigger`` at PreCompact.

The runner reads one thing from a PreToolUse answer: ``hookSpecificOutput.permissionDecision
== "deny"`` with its reason (or exit 2 with the reason on stderr), so ``ask`` and redirects
become a deny and nudges are dropped. The only context channel is UserPromptSubmit's
``message``, appended to the prompt as a ``<hook_result>`` block; SessionStart and
PostToolUse answers are not read. A snapshot after a compaction therefore rides on the
next prompt (``late_snapshot``). Crashes and timeouts let the call run; exit 0 always.
"""

from collections.abc import Mapping

from ctxmode.hookevent import CanonicalEvent, HookDecision, HookEvent
from ctxmode.platforms import Output
from ctxmode.platforms.claude_code import WIRE_NAMES, parse_with
from ctxmode.platforms.common import (
    CLAUDE_EVENTS,
    NOTHING,
    context_of,
    hook_specific,
    json_out,
    permission,
    verdict,
)
from ctxmode.platforms.host import SERVER_KEY, Host
from ctxmode.typenames import Any

NAME = "kimi"

EVENTS: dict[str, CanonicalEvent] = {
    **CLAUDE_EVENTS,
    "posttoolusefailure": "post_tool_failure",
    "sessionend": "session_end",
}

HOST = Host(
    NAME,
    EVENTS,
    WIRE_NAMES,
    can_ask=False,
    can_modify=False,
    pre_context=False,
    late_snapshot=True,
    post_context=False,
    tool_prefix=f"mcp__{SERVER_KEY}__",
    config_var="KIMI_CODE_HOME",
    config_dir="{home}/.kimi-code",
    memory_files=("{config}/AGENTS.md", "{project}/AGENTS.md", "{project}/.kimi-code/AGENTS.md"),
    mcp_configs=(
        "{project}/.kimi-code/mcp.json",
        "{project}/.mcp.json",
        "{config}/mcp.json",
    ),
    mcp_clients=("kimi-code", "kimi", "Kimi Code"),
)

ALIASES = {"FetchURL": "WebFetch", "SearchWeb": "WebSearch"}


def prompt_text(value: Any) -> Any:
    """A prompt given as content parts (``[{"type": "text", "text": ...}]``) as one string."""
    if isinstance(value, list):
        return "\n".join(
            str(p.get("text") or "") for p in value if isinstance(p, Mapping) and "text" in p
        )
    return value


def parse(native_event: str, payload: dict[str, Any], env: Mapping[str, str]) -> HookEvent | None:
    if isinstance(payload.get("prompt"), list):
        payload = {**payload, "prompt": prompt_text(payload["prompt"])}
    if "tool_output" in payload and "tool_response" not in payload:
        payload = {**payload, "tool_response": payload["tool_output"]}
    return parse_with(HOST, native_event, payload, env, aliases=ALIASES)


def render(event: HookEvent, decision: HookDecision) -> Output:
    if event.event == "pre_tool":
        v = verdict(event, decision, HOST)
        if v.kind == "deny":
            return hook_specific("PreToolUse", permission("deny", v.reason))
        return NOTHING
    text = context_of(decision)
    if text and event.event == "prompt_submit":
        return json_out({"message": text})
    return NOTHING  # SessionStart, PostToolUse, PreCompact: answers not read; Stop: no block


def noop(native_event: str) -> Output:
    return NOTHING
