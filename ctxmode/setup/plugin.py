"""The plugin files of this repository, generated from the platform descriptors.

    python -m ctxmode.setup.plugin            # (re)write the files below
    python -m ctxmode.setup.plugin --check    # write nothing; exit 1 if one is stale

A Claude Code plugin (``.claude-plugin/marketplace.json``, ``.claude-plugin/plugin.json``,
``hooks/hooks.json``) and a Codex plugin (``.codex-plugin/plugin.json``, ``hooks.json``,
``mcp.json``; its marketplace ``.agents/plugins/marketplace.json``), both over the
repository root: their hooks and MCP server run
``bin/ctxmode-plugin``, which builds ctxmode from the plugin's own source on first use.
The hooks are each descriptor's ``hooks``, so the plugin and ``ctxmode setup`` register the
same events with the same matchers; the versions are ``ctxmode.__version__``.
"""

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import ctxmode
from ctxmode import settings
from ctxmode.platforms import descriptor
from ctxmode.platforms.host import SERVER_KEY, Host

NAME = "ctxmode"
"""The plugin's name (and its marketplace's): Claude Code installs it as ``ctxmode@ctxmode``."""
LAUNCHER = "bin/ctxmode-plugin"
DESCRIPTION = (
    "Keeps raw tool output out of the context window: a sandboxed executor, a local FTS5 "
    "knowledge base with BM25 search, and session continuity across compactions."
)
KEYWORDS = ["mcp", "context-window", "sandbox", "fts5", "bm25", "session-continuity"]
AUTHOR = {"name": "ctxmode contributors"}


def _host(name: str) -> Host:
    host = descriptor(name)
    assert host is not None, name
    return host


def hooks_file(platform: str, root_var: str) -> dict[str, Any]:
    """A plugin hooks file: the descriptor's hooks, each running the launcher."""
    hooks: dict[str, list[dict[str, Any]]] = {}
    for spec in _host(platform).hooks:
        command = f'sh "${{{root_var}}}/{LAUNCHER}" hook {platform} {spec.arg}'
        group: dict[str, Any] = {} if spec.matcher is None else {"matcher": spec.matcher}
        group["hooks"] = [{"type": "command", "command": command, "timeout": spec.timeout}]
        hooks.setdefault(spec.event, []).append(group)
    return {"description": f"ctxmode's {platform} hooks (generated)", "hooks": hooks}


def _manifest(**extra: Any) -> dict[str, Any]:
    return {
        "name": NAME,
        "version": ctxmode.__version__,
        "description": DESCRIPTION,
        "author": AUTHOR,
        "license": "MIT",
        "keywords": KEYWORDS,
        **extra,
    }


def claude_plugin() -> dict[str, Any]:
    server = {
        "command": "sh",
        "args": [f"${{CLAUDE_PLUGIN_ROOT}}/{LAUNCHER}", "serve"],
        "env": {settings.HOST_PLUGIN.name: "claude-code"},
    }
    # hooks/hooks.json and skills/ are where Claude Code looks by default; naming them
    # again here would load them twice.
    return _manifest(mcpServers={SERVER_KEY: server})


def claude_marketplace() -> dict[str, Any]:
    entry = {
        "name": NAME,
        "source": "./",
        "description": DESCRIPTION,
        "version": ctxmode.__version__,
        "author": AUTHOR,
        "category": "development",
        "keywords": KEYWORDS,
    }
    return {"name": NAME, "owner": AUTHOR, "plugins": [entry]}


def codex_plugin() -> dict[str, Any]:
    return _manifest(
        mcpServers="./.codex-plugin/mcp.json",
        hooks="./.codex-plugin/hooks.json",
        skills="./skills/",
        interface={
            "displayName": NAME,
            "shortDescription": "Tool output stays out of the context window",
            "developerName": AUTHOR["name"],
            "category": "Productivity",
        },
    )


def codex_marketplace() -> dict[str, Any]:
    """``.agents/plugins/marketplace.json``: where `codex plugin marketplace add` looks."""
    entry = {
        "name": NAME,
        "source": {"source": "local", "path": "./"},
        "policy": {"installation": "AVAILABLE"},
        "category": "Productivity",
    }
    return {"name": NAME, "interface": {"displayName": NAME}, "plugins": [entry]}


CODEX_FIRST_BUILD_S = 300  # how long Codex waits for the server's first build


def codex_mcp() -> dict[str, Any]:
    from ctxmode.setup.targets import PROXY_VARS, setting_vars

    server = {
        "command": "sh",
        "args": [f"./{LAUNCHER}", "serve"],
        "cwd": ".",
        # Codex (0.171) ignores tools/list_changed unless a feature flag is on: the server
        # waits for the first build instead of answering with no tools (and Codex waits
        # for it as long), so the first session has every tool.
        "env": {
            settings.HOST_PLUGIN.name: "codex",
            settings.PLUGIN_WAIT.name: str(CODEX_FIRST_BUILD_S),
        },
        "startup_timeout_sec": CODEX_FIRST_BUILD_S,
        # Codex starts MCP servers with a short list of variables: these pass through too,
        # so the server and the hooks share a data root and settings (as `ctxmode setup`).
        "env_vars": [*setting_vars(), *PROXY_VARS],
        # ctxmode's tools run code in its sandbox and read its own store: approved once
        # with the plugin, not per call.
        "default_tools_approval_mode": "approve",
    }
    return {"mcpServers": {SERVER_KEY: server}}


def render_all() -> dict[str, str]:
    """Relative path -> content of every generated file."""
    files = {
        ".claude-plugin/marketplace.json": claude_marketplace(),
        ".claude-plugin/plugin.json": claude_plugin(),
        "hooks/hooks.json": hooks_file("claude-code", "CLAUDE_PLUGIN_ROOT"),
        ".codex-plugin/plugin.json": codex_plugin(),
        ".codex-plugin/hooks.json": hooks_file("codex", "PLUGIN_ROOT"),
        ".codex-plugin/mcp.json": codex_mcp(),
        ".agents/plugins/marketplace.json": codex_marketplace(),
    }
    return {
        path: json.dumps(value, indent=2, ensure_ascii=False) + "\n"
        for path, value in files.items()
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ctxmode.setup.plugin")
    parser.add_argument("--check", action="store_true", help="exit 1 if a file is stale")
    parser.add_argument("--out", default=str(Path(__file__).resolve().parents[2]))
    args = parser.parse_args(argv)
    out, stale = Path(args.out), []
    for rel, text in render_all().items():
        path = out / rel
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current == text:
            continue
        stale.append(rel)
        if not args.check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    for rel in stale:
        print(f"{'stale' if args.check else 'wrote'}: {rel}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
