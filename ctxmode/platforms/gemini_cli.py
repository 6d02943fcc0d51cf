"""Gemini CLI.

BeforeTool reads only the top-level ``decision``/``reason`` and
``hookSpecificOutput.tool_input`` (merged over the call's input), so pre-tool nudges are
dropped and there is no ``ask`` (it becomes a deny). AfterTool, SessionStart (no ``compact``
source) and BeforeAgent carry ``additionalContext``. MCP calls are recognised by
``mcp_context`` (the tool-name format changed across Gemini versions). A failed call shows
up as ``tool_response.error``, or as a shell result with a non-zero ``Exit Code:``.
"""

import re
from collections.abc import Mapping

from ctxmode.hookevent import CanonicalEvent, HookDecision, HookEvent
from ctxmode.platforms import Output
from ctxmode.platforms.claude_code import parse_with
from ctxmode.platforms.common import (
    CLAUDE_EVENTS,
    NOTHING,
    changed_keys,
    classify,
    context_of,
    error_text,
    failed,
    first_str,
    json_out,
    verdict,
)
from ctxmode.platforms.host import Host
from ctxmode.typenames import Any

NAME = "gemini-cli"

EVENTS: dict[str, CanonicalEvent] = {
    "beforetool": "pre_tool",
    "aftertool": "post_tool",
    "precompress": "pre_compact",
    "sessionstart": "session_start",
    "beforeagent": "prompt_submit",
    "afteragent": "stop",
    "aftermodel": "model_reply",
    **CLAUDE_EVENTS,  # the Claude names, accepted as aliases
}

WIRE_NAMES: dict[CanonicalEvent, str] = {
    "pre_tool": "BeforeTool",
    "post_tool": "AfterTool",
    "post_tool_failure": "AfterTool",
    "session_start": "SessionStart",
    "prompt_submit": "BeforeAgent",
}

HOST = Host(
    NAME,
    EVENTS,
    WIRE_NAMES,
    can_ask=False,
    pre_context=False,
    late_snapshot=True,
    speculative_compact=True,
    project_vars=("GEMINI_PROJECT_DIR", "CLAUDE_PROJECT_DIR"),
    session_vars=("GEMINI_SESSION_ID",),
    config_var="GEMINI_CLI_HOME",
    config_var_is_home=True,
    config_dir="{home}/.gemini",
    memory_files=("{config}/GEMINI.md", "{project}/GEMINI.md"),
    mcp_configs=("{project}/.gemini/settings.json", "{config}/settings.json"),
    mcp_clients=("gemini-cli",),
    parses_text_results=True,
    prompt_context=(("<hook_context>", "</hook_context>"),),
    usage="gemini-payload",
)

_EXIT = re.compile(r"^Exit Code: (-?\d+)", re.MULTILINE)


def failure(response: Any) -> str | None:
    """The error of a failed call: ``tool_response.error``, or a shell run's non-zero exit."""
    if not isinstance(response, Mapping):
        return None
    error = error_text(response.get("error"))
    if error:
        return error
    content = response.get("llmContent")
    if isinstance(content, str):
        found = _EXIT.search(content)
        if found and int(found.group(1)) != 0:
            return _shell_output(content, response.get("returnDisplay"))
    return None


def _shell_output(content: str, display: Any) -> str:
    """What a failed shell run printed, without Gemini's frame (``<untrusted_context>``,
    ``Command:``/``Directory:``/``Output:`` labels, ``Exit Code:``, ``Process Group PGID:``),
    so a test runner's or compiler's lines read as they were printed; the exit code kept."""
    exit_line = _EXIT.search(content)
    code = f"Exit code {exit_line.group(1)}\n" if exit_line else ""
    if isinstance(display, str) and display.strip():
        return code + display.strip()
    found = _OUTPUT.search(content)
    return code + found.group(1).strip() if found else content


_OUTPUT = re.compile(r"^Output: (.*?)(?=^Error: |^Exit Code: |\Z)", re.MULTILINE | re.DOTALL)


def parse(native_event: str, payload: dict[str, Any], env: Mapping[str, str]) -> HookEvent | None:
    event = parse_with(HOST, native_event, payload, env)
    if event is None:
        return None
    mcp = payload.get("mcp_context")
    if isinstance(mcp, Mapping) and event.native_tool:
        leaf = first_str(mcp, "tool_name") or event.native_tool
        named = classify(event.native_tool, mcp=(first_str(mcp, "server_name"), leaf))
        event = event._replace(
            tool=named.tool, mcp_server=named.mcp_server, mcp_tool=named.mcp_tool
        )
    if event.event == "post_tool":
        event = failed(event, failure(event.tool_response))
    return event


def render(event: HookEvent, decision: HookDecision) -> Output:
    if event.event == "pre_tool":
        v = verdict(event, decision, HOST)
        if v.kind == "deny":
            return json_out({"decision": "deny", "reason": v.reason})
        if v.kind == "modify" and v.updated_input is not None:
            changed = changed_keys(event.tool_input, v.updated_input)
            return json_out(
                {"hookSpecificOutput": {"hookEventName": "BeforeTool", "tool_input": changed}}
            )
        return NOTHING
    name = WIRE_NAMES.get(event.event)
    text = context_of(decision)
    if name and text:
        return json_out({"hookSpecificOutput": {"hookEventName": name, "additionalContext": text}})
    return NOTHING  # PreCompress is advisory and async; AfterAgent never continues


def noop(native_event: str) -> Output:
    return NOTHING
