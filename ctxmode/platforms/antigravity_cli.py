"""Google Antigravity CLI (``agy``). Not installable from a registry here: written from the
documentation and the payloads others recorded from agy 1.0.x, covered by fixtures.

agy reads Claude-shaped hook groups from ``~/.gemini/config/hooks.json`` (and a
workspace's ``.antigravitycli/hooks.json``); only PreToolUse and PostToolUse run. The
payload is agy's own: ``conversationId``, ``stepIdx``, ``toolCall {name, args}`` (agy's
tool names: ``run_command`` with ``CommandLine``, ``view_file``, ``grep_search``,
``read_url_content``, ``write_to_file``, ...; arguments in PascalCase),
``workspace.current_dir`` or ``workspacePaths``, ``transcriptPath``, and ``error`` after a
failed call. The answer is ``{"decision": "deny"|"ask", "reason": ...}``; nothing else is
read, so redirects are denies and nudges are dropped. ``{"decision": "allow"}`` would skip
the user's approval, so "no opinion" is empty stdout. Exit 0 always.
"""

import os
from collections.abc import Mapping

from ctxmode.hookevent import CanonicalEvent, HookDecision, HookEvent
from ctxmode.platforms import Output
from ctxmode.platforms.common import (
    NOTHING,
    as_object,
    classify,
    error_text,
    first_str,
    hook_event,
    json_out,
    verdict,
)
from ctxmode.platforms.host import Host
from ctxmode.typenames import Any

NAME = "antigravity-cli"

EVENTS: dict[str, CanonicalEvent] = {
    "pretooluse": "pre_tool",
    "posttooluse": "post_tool",
    "stop": "stop",
}

HOST = Host(
    NAME,
    EVENTS,
    can_modify=False,
    pre_context=False,
    config_dir="{home}/.gemini/config",
    memory_files=("{home}/.gemini/GEMINI.md", "{project}/GEMINI.md", "{project}/AGENTS.md"),
    mcp_configs=("{config}/mcp_config.json",),
    mcp_clients=("antigravity-cli", "agy"),
)

# agy's tool names and the argument holding what the shared readers look for.
ALIASES = {
    "run_command": "Bash",
    "view_file": "Read",
    "view_file_outline": "Read",
    "grep_search": "Grep",
    "find_by_name": "Glob",
    "read_url_content": "WebFetch",
    "web_fetch": "WebFetch",
    "search_web": "WebSearch",
    "write_to_file": "Write",
    "replace_file_content": "Edit",
    "multi_replace_file_content": "Edit",
    "edit_file": "Edit",
}
_ARGS = {
    "command": ("CommandLine", "Command"),
    "file_path": ("AbsolutePath", "FilePath", "TargetFile", "Path"),
    "url": ("Url", "URL"),
    "pattern": ("Query", "Pattern"),
    "content": ("CodeContent", "Content"),
}


def tool_input(args: Any) -> dict[str, Any]:
    """agy's arguments, plus the shared readers' names for the ones they look for."""
    found = dict(as_object(args))
    for key, names in _ARGS.items():
        if key not in found:
            value = next((found[n] for n in names if isinstance(found.get(n), str)), None)
            if value is not None:
                found[key] = value
    return found


def project(payload: Mapping[str, Any]) -> str | None:
    workspace = payload.get("workspace")
    if isinstance(workspace, Mapping):
        current = first_str(workspace, "current_dir")
        if current:
            return current
    paths = payload.get("workspacePaths")
    if isinstance(paths, list) and paths and isinstance(paths[0], str) and paths[0]:
        return paths[0]
    return first_str(payload, "cwd")


def parse(native_event: str, payload: dict[str, Any], env: Mapping[str, str]) -> HookEvent | None:
    canonical = EVENTS.get(native_event)
    if canonical is None:
        return None
    call = payload.get("toolCall")
    call = call if isinstance(call, Mapping) else {}
    named = classify(first_str(call, "name"), ALIASES)
    error = error_text(payload.get("error")) if canonical == "post_tool" else None
    if error:
        canonical = "post_tool_failure"
    where = project(payload)
    shaped = {**payload, "cwd": where} if where else payload
    return hook_event(
        HOST,
        canonical,
        native_event,
        shaped,
        env,
        named,
        tool_input(call.get("args")),
        session_id=first_str(payload, "conversationId", "conversation_id") or f"pid-{os.getppid()}",
        response=payload.get("error") if error else None,
        error=error,
        transcript_keys=("transcriptPath",),
    )


def render(event: HookEvent, decision: HookDecision) -> Output:
    if event.event == "pre_tool":
        v = verdict(event, decision, HOST)
        if v.kind in ("deny", "ask"):
            return json_out({"decision": v.kind, "reason": v.reason})
    return NOTHING


def noop(native_event: str) -> Output:
    return NOTHING
