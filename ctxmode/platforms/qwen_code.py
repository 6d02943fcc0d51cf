"""Qwen Code: the Claude Code protocol with Gemini tool names.

Differences from Claude Code, as Qwen Code 0.15 behaves:

* PreToolUse: ``updatedInput`` is never applied (only a PermissionRequest hook's is), so a
  redirect is a deny with the reason; ``ask`` blocks the call like a deny (the user is not
  asked), so it is sent as a deny that says so; a context-only answer is not acted on
  (nudges belong in PostToolUse, whose ``additionalContext`` reaches the model).
* SessionStart runs only in the interactive UI and after a compaction, and its answer is
  dropped everywhere; UserPromptSubmit's ``additionalContext`` is added to the prompt (with
  ``<`` and ``>`` escaped). So the routing block goes with a session's first prompt, and a
  snapshot after compaction with the next prompt or tool result (``late_snapshot``).
  ``--continue`` keeps the session id and replays the whole history, routing block included.
* MCP tools are deferred: the model loads them with ``tool_search`` first.
* Prompts may arrive as ``submitted_prompt``.
"""

from collections.abc import Mapping

from ctxmode.hookevent import HookDecision, HookEvent
from ctxmode.platforms import Output
from ctxmode.platforms.claude_code import EVENTS, WIRE_NAMES, parse_with, render_with
from ctxmode.platforms.common import NOTHING
from ctxmode.platforms.host import SERVER_KEY, Host
from ctxmode.typenames import Any

NAME = "qwen-code"

HOST = Host(
    NAME,
    EVENTS,
    WIRE_NAMES,
    can_ask=False,
    can_modify=False,
    pre_context=False,
    late_snapshot=True,
    start_output=False,
    tool_prefix=f"mcp__{SERVER_KEY}__",
    deferred_tools='tool_search(query: "select:{names}")',
    project_vars=("QWEN_PROJECT_DIR",),
    config_dir="{home}/.qwen",
    memory_files=("{config}/QWEN.md", "{project}/QWEN.md"),
    mcp_configs=("{project}/.qwen/settings.json", "{config}/settings.json"),
    mcp_clients=("qwen-cli-mcp-client", "qwen-code"),
)


def parse(native_event: str, payload: dict[str, Any], env: Mapping[str, str]) -> HookEvent | None:
    return parse_with(HOST, native_event, payload, env)


def render(event: HookEvent, decision: HookDecision) -> Output:
    return render_with(HOST, event, decision)


def noop(native_event: str) -> Output:
    return NOTHING
