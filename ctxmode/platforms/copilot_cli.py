"""GitHub Copilot CLI (npm ``@github/copilot``), verified against 1.0.102.

ctxmode registers the camelCase events in ``.github/hooks/ctxmode-copilot-cli.json`` (or
``$COPILOT_HOME/hooks/``), so payloads are the camelCase form: ``sessionId``, ``cwd``,
``toolName`` (``bash``, ``view``, ``create``, ``edit``, ``grep``, ``glob``, ``web_fetch``,
``task``; MCP tools as ``<server>-<tool>``, ours ``ctxmode-ctx_search``), ``toolArgs`` (an
object), ``toolResult {resultType, textResultForLlm}`` after a call. A shell command that
exits non-zero is still a ``success`` result whose text ends ``<shellId: N completed with
exit code K>``; it is reported as a failed call.

Answers are flat JSON, each form checked against the real CLI: preToolUse
``permissionDecision`` (deny: the model reads ``Denied by preToolUse hook: <reason>``;
ask in ``-p`` mode is a deny), ``modifiedArgs`` (the call runs with them), and
``additionalContext`` on preToolUse, postToolUse(Failure), sessionStart and
userPromptSubmitted. preCompact's output is not read and no session start follows a
compaction, so the snapshot rides on the next tool result or prompt (``late_snapshot``).
preToolUse fails closed: a hook that exits non-zero denies the call ("hook errored"), so
every path exits 0; a timeout or unreadable stdout lets the call run.
"""

import re
from collections.abc import Mapping

from ctxmode.hookevent import CanonicalEvent, HookDecision, HookEvent
from ctxmode.platforms import Output
from ctxmode.platforms.common import (
    NOTHING,
    ToolName,
    classify,
    context_of,
    failed,
    json_out,
    permission,
    verdict,
)
from ctxmode.platforms.host import SERVER_KEY, Host
from ctxmode.platforms.vscode_copilot import EVENTS as COPILOT_EVENTS
from ctxmode.platforms.vscode_copilot import parse_copilot
from ctxmode.typenames import Any

NAME = "copilot-cli"

EVENTS: dict[str, CanonicalEvent] = dict(COPILOT_EVENTS)  # PascalCase names accepted too

HOST = Host(
    NAME,
    EVENTS,
    late_snapshot=True,
    tool_prefix=f"{SERVER_KEY}-",
    project_vars=("COPILOT_PROJECT_DIR",),
    config_var="COPILOT_HOME",
    config_dir="{home}/.copilot",
    memory_files=(
        "{config}/copilot-instructions.md",
        "{project}/AGENTS.md",
        "{project}/.github/copilot-instructions.md",
    ),
    mcp_configs=("{project}/.mcp.json", "{project}/.github/mcp.json", "{config}/mcp-config.json"),
    mcp_clients=("copilot-cli", "GitHub Copilot CLI", "github-copilot-cli"),
)

_SHELL_EXIT = re.compile(r"<shellId: \S+ completed with exit code (-?\d+)>\s*\Z")
_SHELLS = frozenset({"bash", "powershell"})


def tool_name(name: Any) -> ToolName:
    """Copilot's names: built-ins through the shared table, MCP tools ``<server>-<tool>``."""
    named = classify(name)
    if named.tool == "other" and isinstance(name, str) and "-" in name.strip("-"):
        server, _, leaf = name.rpartition("-")
        return ToolName("mcp", name, server, leaf)
    return named


def shell_failure(native_tool: str | None, response: Any) -> str | None:
    """The result text of a shell call that exited non-zero, else None."""
    if (native_tool or "").lower() not in _SHELLS or not isinstance(response, Mapping):
        return None
    text = response.get("textResultForLlm", response.get("text_result_for_llm"))
    if not isinstance(text, str):
        return None
    found = _SHELL_EXIT.search(text)
    return text if found and int(found.group(1)) != 0 else None


def parse(native_event: str, payload: dict[str, Any], env: Mapping[str, str]) -> HookEvent | None:
    event = parse_copilot(HOST, native_event, payload, env)
    if event is None:
        return None
    if event.native_tool and event.tool == "other":
        named = tool_name(event.native_tool)
        event = event._replace(
            tool=named.tool, mcp_server=named.mcp_server, mcp_tool=named.mcp_tool
        )
    if event.event == "post_tool":
        event = failed(event, shell_failure(event.native_tool, event.tool_response))
    return event


def render(event: HookEvent, decision: HookDecision) -> Output:
    if event.event == "pre_tool":
        v = verdict(event, decision, HOST)
        if v.kind in ("deny", "ask"):
            return json_out(permission(v.kind, v.reason))
        if v.kind == "modify":
            answer: dict[str, Any] = {
                "permissionDecision": "allow",
                "modifiedArgs": v.updated_input,
            }
            if v.context:
                answer["additionalContext"] = v.context
            return json_out(answer)
        if v.kind == "context":
            return json_out({"additionalContext": v.context})
        return NOTHING
    text = context_of(decision)
    if text and event.event in ("post_tool", "post_tool_failure", "session_start", "prompt_submit"):
        return json_out({"additionalContext": text})
    return NOTHING  # preCompact: output not read; agentStop: never force another turn


def noop(native_event: str) -> Output:
    return NOTHING
