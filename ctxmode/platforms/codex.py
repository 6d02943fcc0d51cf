"""OpenAI Codex CLI: the Claude Code shapes, deny-first.

PreToolUse accepts ``deny`` with a non-empty reason and little else across builds: ``ask`` is
rejected, ``updatedInput`` and ``additionalContext`` only exist in the newest codex-rs and
older builds fail open on them. So ``ask`` and redirects become ``deny`` (upstream dropped
redirects and let curl run), pre-tool nudges are dropped, and PreCompact answers nothing.
A Bash call that exited non-zero arrives as a PostToolUse whose output starts with
``Exit code: N``; it is reported as a failed call.
"""

import json
import re
from collections.abc import Mapping

from ctxmode.hookevent import CanonicalEvent, HookDecision, HookEvent
from ctxmode.platforms import Output
from ctxmode.platforms.claude_code import WIRE_NAMES, parse_with, render_with
from ctxmode.platforms.common import CLAUDE_EVENTS, NOTHING, failed
from ctxmode.platforms.host import HookSpec, Host
from ctxmode.typenames import Any

NAME = "codex"

EVENTS: dict[str, CanonicalEvent] = dict(CLAUDE_EVENTS)

SHELL_TOOLS = "Bash|exec_command|shell|shell_command|local_shell|apply_patch|Edit|Write"
"""The names Codex builds give their shell and patch tools in a hook payload (0.171 sends
``Bash`` for ``exec_command`` and ``apply_patch`` as is; older builds sent the tool's own
name)."""

HOOKS = (
    # Codex matchers of only [A-Za-z0-9_|] are exact lists; this one is a regex.
    HookSpec("PreToolUse", "pretooluse", f"^({SHELL_TOOLS})$|^mcp__.*", 30),
    HookSpec("PostToolUse", "posttooluse", None, 10),
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
    can_ask=False,
    can_modify=False,
    pre_context=False,
    session_vars=("CODEX_THREAD_ID",),
    config_var="CODEX_HOME",
    config_dir="{home}/.codex",
    memory_files=(
        "{config}/AGENTS.md",
        "{config}/AGENTS.override.md",
        "{project}/AGENTS.md",
        "{project}/AGENTS.override.md",
    ),
    mcp_configs=("{project}/.codex/config.toml", "{config}/config.toml"),
    mcp_clients=("Codex", "codex-mcp-client"),
    usage="codex-rollout",
    hooks=HOOKS,
)

_EXIT = re.compile(r"\A\s*Exit code:?\s*(-?\d+)", re.IGNORECASE)


def failure(response: Any) -> str | None:
    """The output of a shell call that exited non-zero, else None."""
    if isinstance(response, str):
        found = _EXIT.match(response)
        return response if found and int(found.group(1)) != 0 else None
    if isinstance(response, dict):
        code = response.get("exit_code", response.get("exitCode"))
        if isinstance(code, int) and not isinstance(code, bool) and code != 0:
            return json.dumps(response, ensure_ascii=False)
        if response.get("is_error") is True:
            return json.dumps(response, ensure_ascii=False)
    return None


def parse(native_event: str, payload: dict[str, Any], env: Mapping[str, str]) -> HookEvent | None:
    event = parse_with(HOST, native_event, payload, env)
    if event is None or event.event != "post_tool" or event.tool != "Bash":
        return event
    return failed(event, failure(event.tool_response))


def render(event: HookEvent, decision: HookDecision) -> Output:
    if event.event == "post_tool_failure":  # Codex has no such event: answer as PostToolUse
        event = event._replace(event="post_tool")
    return render_with(HOST, event, decision)


def noop(native_event: str) -> Output:
    return NOTHING
