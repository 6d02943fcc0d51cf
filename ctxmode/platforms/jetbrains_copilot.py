"""JetBrains Copilot plugin on the GitHub Copilot runtime.

Payloads and answers are the Copilot shapes of `vscode_copilot` (flat keys plus a
``hookSpecificOutput`` mirror). A redirect is always a flat ``permissionDecision: deny``:
whether this runtime applies ``modifiedArgs`` (camelCase configs even send the arguments as
a JSON string) is not settled, and a rewrite it ignored would let the original call run.
preToolUse is fail-closed here, so every path exits 0.
"""

from collections.abc import Mapping

from ctxmode.hookevent import HookDecision, HookEvent
from ctxmode.platforms import Output
from ctxmode.platforms.common import NOTHING
from ctxmode.platforms.host import Host
from ctxmode.platforms.vscode_copilot import EVENTS, parse_copilot, render_copilot
from ctxmode.typenames import Any

NAME = "jetbrains-copilot"

HOST = Host(
    NAME,
    EVENTS,
    redirect_as_deny=True,
    late_snapshot=True,
    project_vars=("IDEA_INITIAL_DIRECTORY",),
    payload_project_first=True,
    config_dir="{xdg_config}/JetBrains",
    memory_files=("{project}/.github/copilot-instructions.md",),
    mcp_clients=("JetBrains Client", "IntelliJ IDEA", "PyCharm"),
)


def parse(native_event: str, payload: dict[str, Any], env: Mapping[str, str]) -> HookEvent | None:
    return parse_copilot(HOST, native_event, payload, env)


def render(event: HookEvent, decision: HookDecision) -> Output:
    return render_copilot(HOST, event, decision)


def noop(native_event: str) -> Output:
    return NOTHING
