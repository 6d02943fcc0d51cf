"""OpenCode through ctxmode's plugin shim, ``opencode_plugin.js``.

OpenCode loads JavaScript plugins, not commands. The shim forwards each plugin hook to
``ctxmode hook opencode <event>`` with a Claude-shaped payload (``hook_event_name``,
``session_id``, ``cwd``, ``tool_name``, ``tool_input``, plus ``output``/``metadata`` after a
call) and applies the answer, always one JSON object:
``{"decision": "allow|deny|modify|context", "reason", "updatedInput", "additionalContext"}``.
deny: the shim throws (OpenCode blocks the call and shows the reason); modify: it assigns
``updatedInput`` over ``output.args``; context: pushed into the compaction context or the
system prompt. There is no ``ask``: it becomes a deny.

Shim hooks and their events: ``tool.execute.before`` = pretooluse, ``tool.execute.after`` =
posttooluse, ``experimental.session.compacting`` = precompact,
``experimental.chat.system.transform`` = sessionstart (OpenCode has no session-start hook),
``chat.message`` = userpromptsubmit.

The system prompt is rebuilt for every request and never stored, so the routing block is
asked for at every start of the shim (``system_routing``): a session continued by a new
process (``opencode run --continue``) gets it again. ``--continue`` replays the whole
history under the same session id; a compaction gets the snapshot through
``experimental.session.compacting`` (``compact_context``).

Kilo Code (``ctxmode.platforms.kilo``) is a fork with the same plugin API: it loads the
same shim (its ``PLATFORM`` constant set to ``kilo``) and uses `parse_with`/`render_with`.
"""

from collections.abc import Mapping

from ctxmode.hookevent import CanonicalEvent, HookDecision, HookEvent
from ctxmode.platforms import Output
from ctxmode.platforms.common import (
    CLAUDE_EVENTS,
    ToolName,
    as_object,
    classify,
    context_of,
    first_str,
    hook_event,
    json_out,
    pick,
    verdict,
)
from ctxmode.platforms.host import Host
from ctxmode.typenames import Any

NAME = "opencode"

EVENTS: dict[str, CanonicalEvent] = {
    **CLAUDE_EVENTS,
    "tool.execute.before": "pre_tool",
    "tool.execute.after": "post_tool",
    "experimental.session.compacting": "pre_compact",
    "experimental.chat.system.transform": "session_start",
    "chat.message": "prompt_submit",
}

HOST = Host(
    NAME,
    EVENTS,
    can_ask=False,
    compact_context=True,
    system_routing=True,
    project_vars=("OPENCODE_PROJECT_DIR",),
    payload_project_first=True,
    config_dir="{xdg_config}/opencode",
    memory_files=("{project}/AGENTS.md",),
    mcp_configs=(
        "{project}/opencode.json",
        "{project}/opencode.jsonc",
        "{config}/opencode.json",
        "{config}/opencode.jsonc",
    ),
    mcp_clients=("opencode",),
)

# OpenCode's built-in tools; any other name with an underscore is an MCP <server>_<tool>.
NATIVE_TOOLS = frozenset(
    {
        "bash",
        "read",
        "edit",
        "write",
        "apply_patch",
        "patch",
        "multiedit",
        "glob",
        "grep",
        "list",
        "webfetch",
        "websearch",
        "codesearch",
        "todowrite",
        "todoread",
        "question",
        "skill",
        "task",
        "lsp",
        "invalid",
    }
)

ALLOW = {"decision": "allow"}


def tool_name(name: str | None) -> ToolName:
    named = classify(name)
    if named.tool == "other" and name and name not in NATIVE_TOOLS and "_" in name.strip("_"):
        server, _, leaf = name.partition("_")
        return ToolName("mcp", name, server, leaf)
    return named


def _failure(payload: Mapping[str, Any]) -> str | None:
    metadata = payload.get("metadata")
    if not isinstance(metadata, Mapping):
        return None
    code = metadata.get("exit")
    if isinstance(code, int) and not isinstance(code, bool) and code != 0:
        output = payload.get("output")
        return output if isinstance(output, str) and output else f"exit code {code}"
    return None


def parse(native_event: str, payload: dict[str, Any], env: Mapping[str, str]) -> HookEvent | None:
    return parse_with(HOST, native_event, payload, env)


def parse_with(
    host: Host, native_event: str, payload: dict[str, Any], env: Mapping[str, str]
) -> HookEvent | None:
    """A shim payload of `host` (OpenCode, or a fork that loads the same shim)."""
    canonical = host.events.get(native_event)
    if canonical is None:
        return None
    tool_input = as_object(pick(payload, "tool_input", "args"))
    named = tool_name(first_str(payload, "tool_name", "tool"))
    error = _failure(payload) if canonical == "post_tool" else None
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
        session_id=first_str(payload, "session_id", "sessionID"),
        response=pick(payload, "output", "tool_response"),
        error=error,
        cwd_keys=("cwd", "directory"),
    )


def render(event: HookEvent, decision: HookDecision) -> Output:
    return render_with(HOST, event, decision)


def render_with(host: Host, event: HookEvent, decision: HookDecision) -> Output:
    """The shim's answer for `host`."""
    if event.event == "pre_tool":
        v = verdict(event, decision, host)
        if v.kind == "deny":
            return json_out({"decision": "deny", "reason": v.reason})
        if v.kind == "modify":
            answer: dict[str, Any] = {"decision": "modify", "updatedInput": v.updated_input}
            if v.context:
                answer["additionalContext"] = v.context
            return json_out(answer)
        if v.kind == "context":
            return json_out({"decision": "context", "additionalContext": v.context})
        return json_out(ALLOW)
    text = context_of(decision)
    if event.event == "pre_compact":  # the shim pushes a non-empty text into output.context
        return json_out({"decision": "context", "additionalContext": text or ""})
    if text and event.event != "stop":
        return json_out({"decision": "context", "additionalContext": text})
    return json_out(ALLOW)


def noop(native_event: str) -> Output:
    return json_out(ALLOW)
