"""JetBrains Copilot plugin on the GitHub Copilot runtime.

Payloads and answers are the Copilot shapes of `vscode_copilot` (flat keys plus a
``hookSpecificOutput`` mirror). A redirect is always a flat ``permissionDecision: deny``:
whether this runtime applies ``modifiedArgs`` (camelCase configs even send the arguments as
a JSON string) is not settled, and a rewrite it ignored would let the original call run.
preToolUse is fail-closed here, so every path exits 0.
"""

from collections.abc import Mapping
from typing import Any

from ctxmode.hooks.model import HookDecision, HookEvent
from ctxmode.platforms import Output
from ctxmode.platforms.common import NOTHING
from ctxmode.platforms.vscode_copilot import parse_copilot, render_copilot

NAME = "jetbrains-copilot"


def parse(native_event: str, payload: dict[str, Any], env: Mapping[str, str]) -> HookEvent | None:
    return parse_copilot(NAME, native_event, payload, env, ("IDEA_INITIAL_DIRECTORY",))


def render(event: HookEvent, decision: HookDecision) -> Output:
    return render_copilot(event, decision, redirect_as_deny=True)


def noop(native_event: str) -> Output:
    return NOTHING
