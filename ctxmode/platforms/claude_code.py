"""Claude Code: the reference protocol. Qwen Code and Codex speak
dialects of it and reuse `parse_with` / `render_with`.

Decisions go in ``hookSpecificOutput`` (``permissionDecision`` + ``permissionDecisionReason``,
``updatedInput``, ``additionalContext``); "no opinion" is empty stdout; exit 0 always: exit 2
would block, and at PreCompact it would block compaction.
"""

import json
from collections.abc import Mapping
from pathlib import Path

from ctxmode.hookevent import CanonicalEvent, HookDecision, HookEvent
from ctxmode.lazyre import LazyPattern
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
    rewrite,
    subagent,
    uuid_in,
    verdict,
)
from ctxmode.platforms.host import SERVER_KEY, HookSpec, Host, paths
from ctxmode.typenames import Any

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

CLAUDE_JSON = "{root}/.claude.json"
"""Claude Code's user state file: user-scope MCP servers and each project's own."""

TOOLS = "Bash|PowerShell|Read|Grep|WebFetch|Agent"
"""The built-in tools the pre-tool hook routes (the shell, reads, searches, fetches, agents)."""

HOOKS = (
    HookSpec("PreToolUse", "pretooluse", TOOLS, 10),
    # `mcp__` alone is an exact name in Claude Code and matches nothing (spec gotcha 1).
    HookSpec("PreToolUse", "pretooluse", "mcp__.*", 10),
    HookSpec("PostToolUse", "posttooluse", "*", 10),
    # Failing commands fire PostToolUseFailure, not PostToolUse (spec gotcha 2).
    HookSpec("PostToolUseFailure", "posttoolusefailure", "Bash|PowerShell", 10),
    HookSpec("PreCompact", "precompact", None, 30),
    HookSpec("SessionStart", "sessionstart", None, 30),
    HookSpec("UserPromptSubmit", "userpromptsubmit", None, 10),
    HookSpec("Stop", "stop", None, 10),
)
"""Every event ctxmode handles here, with its matcher and timeout in seconds."""

HOST = Host(
    NAME,
    EVENTS,
    WIRE_NAMES,
    tool_prefix=f"mcp__{SERVER_KEY}__",
    # A plugin's server is named plugin_<plugin>_<server>; the plugin is called ctxmode too.
    plugin_tool_prefix=f"mcp__plugin_{SERVER_KEY}_{SERVER_KEY}__",
    deferred_tools='ToolSearch(query: "select:{names}")',
    project_vars=("CLAUDE_PROJECT_DIR",),
    session_vars=("CLAUDE_SESSION_ID",),
    config_var="CLAUDE_CONFIG_DIR",
    config_dir="{home}/.claude",
    memory_files=("{config}/CLAUDE.md", "{project}/CLAUDE.md", "{project}/.claude/CLAUDE.md"),
    mcp_configs=("{project}/.mcp.json", CLAUDE_JSON),
    mcp_clients=("claude-code",),
    usage="claude-transcript",
    hooks=HOOKS,
)


SETTINGS_FILES = (
    "{project}/.claude/settings.local.json",
    "{project}/.claude/settings.json",
    "{config}/settings.json",
)
"""The settings files that hold hooks and enabled plugins, nearest first."""
PLUGIN_ID = f"{SERVER_KEY}@"
"""How ctxmode's plugin is keyed in ``enabledPlugins`` (``ctxmode@<marketplace>``)."""
PLUGIN_REMOVE = "claude plugin uninstall {id}"
PLUGIN_UPDATE = "claude plugin marketplace update {marketplace} && claude plugin update {id}"
_SETUP_HOOK = LazyPattern(r"\bhook\s+claude-code\b")


def _texts(project: Path | None, env: Mapping[str, str]) -> list[tuple[Path, str]]:
    out = []
    for path in paths(HOST, SETTINGS_FILES, project, env):
        text = _text(path)
        if text is not None:
            out.append((path, text))
    return out


def _text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def setup_hooks(project: Path | None, env: Mapping[str, str]) -> list[Path]:
    """The settings files with a ``ctxmode hook claude-code`` entry (`ctxmode setup`'s)."""
    return [path for path, text in _texts(project, env) if _SETUP_HOOK.search(text)]


def enabled_plugin(project: Path | None, env: Mapping[str, str]) -> tuple[str, Path] | None:
    """(the plugin id, the settings file) where ctxmode's plugin is enabled, nearest first."""
    for path, text in _texts(project, env):
        if PLUGIN_ID not in text:
            continue
        try:
            enabled = json.loads(text).get("enabledPlugins")
        except (ValueError, AttributeError):
            continue
        for key, on in enabled.items() if isinstance(enabled, dict) else ():
            if isinstance(key, str) and key.startswith(PLUGIN_ID):
                return (key, path) if on is True else None
    return None


def steps_aside(event: HookEvent, env: Mapping[str, str]) -> bool:
    """A plugin hook when `ctxmode setup` registered hooks too: those answer, not this one."""
    project = event.project_dir or (Path(event.cwd) if event.cwd else None)
    return bool(setup_hooks(project, env))


def foreign(payload: Mapping[str, Any], env: Mapping[str, str] | None = None) -> bool:
    """A VS Code, Cursor or Copilot CLI payload reaching a claude-code hook.

    VS Code runs the hooks of ``.claude/settings*.json`` for every tool with its own payload
    (``hookEventName``, ``sessionId``); Cursor does the same with third-party hooks enabled
    (``conversation_id``, ``cursor_version``); Copilot CLI runs them with its VS Code-style
    payload (``hook_event_name`` and an ISO ``timestamp``, ``COPILOT_CLI=1`` in the hook's
    environment). Our Claude answer would be misread there, so such calls pass through; the
    host's own ctxmode hook handles them.
    """
    if "hook_event_name" not in payload and ("hookEventName" in payload or "sessionId" in payload):
        return True
    if env is not None and env.get("COPILOT_CLI") == "1" and "timestamp" in payload:
        return True
    return "cursor_version" in payload or (
        "conversation_id" in payload and "session_id" not in payload
    )


def parse_with(
    host: Host,
    native_event: str,
    payload: dict[str, Any],
    env: Mapping[str, str],
    *,
    aliases: Mapping[str, str] | None = None,
) -> HookEvent | None:
    """A Claude-shaped payload (``session_id``, ``tool_name``, ``tool_input``, ...) as an event."""
    canonical = host.events.get(native_event)
    if canonical is None:
        return None
    tool_input = as_object(payload.get("tool_input"))
    named = classify(payload.get("tool_name"), aliases)
    return hook_event(
        host,
        canonical,
        native_event,
        payload,
        env,
        named,
        tool_input,
        session_id=first_str(payload, "session_id") or uuid_in(payload.get("transcript_path")),
        response=payload.get("tool_response"),
        error=error_text(payload.get("error")) if canonical == "post_tool_failure" else None,
        in_subagent=subagent(payload),
        prompt_keys=("submitted_prompt", "prompt", "message"),
        transcript_keys=("transcript_path",),
    )


def render_with(host: Host, event: HookEvent, decision: HookDecision) -> Output:
    """The Claude wire, cut down to what `host` (a dialect) supports."""
    name = WIRE_NAMES[event.event]
    if event.event == "pre_tool":
        v = verdict(event, decision, host)
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
    if foreign(payload, env):
        return None
    return parse_with(HOST, native_event, payload, env)


def render(event: HookEvent, decision: HookDecision) -> Output:
    return render_with(HOST, event, decision)


def noop(native_event: str) -> Output:
    return NOTHING
