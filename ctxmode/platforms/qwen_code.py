"""Qwen Code: the Claude Code protocol with Gemini tool names.

Differences from Claude Code: a PreToolUse answer needs both ``permissionDecision`` and
``permissionDecisionReason``, so a context-only nudge is not a documented form and is
dropped (nudges belong in PostToolUse); ``ask`` is kept (Qwen turns it into a deny when
headless); prompts may arrive as ``submitted_prompt``.
"""

from collections.abc import Mapping
from typing import Any

from ctxmode.hooks.model import HookDecision, HookEvent
from ctxmode.platforms import Output
from ctxmode.platforms.claude_code import parse_with, render_with
from ctxmode.platforms.common import NOTHING

NAME = "qwen-code"


def parse(native_event: str, payload: dict[str, Any], env: Mapping[str, str]) -> HookEvent | None:
    return parse_with(NAME, native_event, payload, env, env_vars=("QWEN_PROJECT_DIR",))


def render(event: HookEvent, decision: HookDecision) -> Output:
    return render_with(event, decision, pre_context=False)


def noop(native_event: str) -> Output:
    return NOTHING
