"""Qwen Code: the Claude Code protocol with Gemini tool names.

Differences from Claude Code: a PreToolUse answer needs both ``permissionDecision`` and
``permissionDecisionReason``, so a context-only nudge is not a documented form and is
dropped (nudges belong in PostToolUse); ``ask`` is kept (Qwen turns it into a deny when
headless); prompts may arrive as ``submitted_prompt``.
"""

from collections.abc import Mapping
from typing import Any

from ctxmode.hookevent import HookDecision, HookEvent
from ctxmode.platforms import Output
from ctxmode.platforms.claude_code import EVENTS, WIRE_NAMES, parse_with, render_with
from ctxmode.platforms.common import NOTHING
from ctxmode.platforms.host import SERVER_KEY, Host

NAME = "qwen-code"

HOST = Host(
    NAME,
    EVENTS,
    WIRE_NAMES,
    pre_context=False,
    tool_prefix=f"mcp__{SERVER_KEY}__",
    project_vars=("QWEN_PROJECT_DIR",),
    config_dir="{home}/.qwen",
    memory_files=("{config}/QWEN.md", "{project}/QWEN.md"),
    mcp_configs=("{project}/.qwen/settings.json", "{config}/settings.json"),
)


def parse(native_event: str, payload: dict[str, Any], env: Mapping[str, str]) -> HookEvent | None:
    return parse_with(HOST, native_event, payload, env)


def render(event: HookEvent, decision: HookDecision) -> Output:
    return render_with(HOST, event, decision)


def noop(native_event: str) -> Output:
    return NOTHING
