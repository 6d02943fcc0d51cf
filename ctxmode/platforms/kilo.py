"""Kilo Code CLI (npm ``@kilocode/cli``, the ``kilo`` command): a fork of OpenCode that keeps
OpenCode's plugin API, so it runs ctxmode's OpenCode shim (``opencode_plugin.js`` with its
``PLATFORM`` set to ``kilo``) and speaks its wire (`ctxmode.platforms.opencode`).

What differs is where Kilo reads things (its built-in ``kilo-config`` guide, Kilo 7.7):
project config ``kilo.json``/``kilo.jsonc`` (``opencode.json(c)`` as legacy names), config
directories ``.kilo/`` (``.kilocode/`` legacy; ``.opencode/`` is not loaded) holding
``plugins/*.js``, the user's ``~/.config/kilo/``; instructions ``AGENTS.md``, ``CLAUDE.md``,
``CONTEXT.md``. MCP servers go under ``mcp`` in OpenCode's format, and the model sees them
as ``<server>_<tool>``.
"""

from collections.abc import Mapping

from ctxmode.hookevent import HookDecision, HookEvent
from ctxmode.platforms import Output
from ctxmode.platforms import opencode as _opencode
from ctxmode.typenames import Any

NAME = "kilo"

HOST = _opencode.HOST._replace(
    name=NAME,
    project_vars=(),
    config_dir="{xdg_config}/kilo",
    memory_files=("{project}/AGENTS.md", "{project}/CLAUDE.md", "{project}/CONTEXT.md"),
    mcp_configs=tuple(
        f"{where}/{name}"
        for where in ("{project}", "{project}/.kilo", "{project}/.kilocode", "{config}")
        for name in ("kilo.json", "kilo.jsonc", "opencode.json", "opencode.jsonc")
    ),
    mcp_clients=("kilo", "Kilo Code"),
)


def parse(native_event: str, payload: dict[str, Any], env: Mapping[str, str]) -> HookEvent | None:
    return _opencode.parse_with(HOST, native_event, payload, env)


def render(event: HookEvent, decision: HookDecision) -> Output:
    return _opencode.render_with(HOST, event, decision)


def noop(native_event: str) -> Output:
    return _opencode.noop(native_event)
