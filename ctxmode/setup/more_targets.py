"""Setup of Copilot CLI, Kimi Code, Antigravity (IDE and CLI) and Zed: which files each one
reads and what ctxmode writes into them (the hosts' documentation, and for Copilot CLI its
real behaviour, 1.0.102).

`ctxmode.setup.targets` imports this module for its platform table, so nothing here
imports it back (the shared helpers are in `ctxmode.setup.entries`).
"""

import json
from pathlib import Path
from typing import Any

from ctxmode.setup.command import Command
from ctxmode.setup.entries import SERVER_NAME, config_dir, stdio
from ctxmode.setup.model import (
    HookEntry,
    JsonTarget,
    PlatformPlan,
    Scope,
    ServerEntry,
    Setting,
    Target,
)

COPILOT_HOOKS = "ctxmode-copilot-cli.json"
COPILOT_EVENTS = (
    ("sessionStart", "sessionstart", 30),
    ("userPromptSubmitted", "userpromptsubmitted", 10),
    ("preToolUse", "pretooluse", 10),
    ("postToolUse", "posttooluse", 10),
    ("postToolUseFailure", "posttoolusefailure", 10),
    ("preCompact", "precompact", 30),
)


def _copilot_hook(cmd: Command, platform: str, event: str, arg: str, timeout: int) -> HookEntry:
    """A Copilot runtime command hook: the same command for bash and PowerShell."""
    command = cmd.hook(platform, arg)
    item = {"type": "command", "bash": command, "powershell": command, "timeoutSec": timeout}
    return HookEntry(event, command, None, item)


def copilot_hooks_dir(scope: Scope) -> Path:
    """Where Copilot CLI loads hook files: ``.github/hooks`` or ``$COPILOT_HOME/hooks``."""
    if scope.project is None:
        return config_dir("copilot-cli") / "hooks"
    return scope.project / ".github" / "hooks"


def _holds_ctxmode(path: Path) -> bool:
    """Whether a JSON MCP file registers a ``ctxmode serve`` server (by content)."""
    from ctxmode.setup.jsonfile import is_our_server

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    return isinstance(servers, dict) and any(is_our_server(v) for v in servers.values())


def _recorded_server(platform: str, scope: Scope, path: Path) -> bool:
    """Whether this platform's own setup wrote an MCP server into `path` before."""
    from ctxmode.setup import record

    data, _ = record.load(record.path_for(platform, scope))
    return any(
        f.get("path") == str(path) and f.get("servers") for f in (data or {}).get("files", [])
    )


def copilot_cli(scope: Scope, cmd: Command) -> PlatformPlan:
    """`.github/hooks/ctxmode-copilot-cli.json` (camelCase events, version 1) + the workspace
    MCP file; global: `$COPILOT_HOME/hooks/` + `$COPILOT_HOME/mcp-config.json`.

    Copilot CLI reads a workspace's `.mcp.json` and ignores `.github/mcp.json` while the
    former exists, so the server goes into `.mcp.json` when there is one (in the shape
    Claude Code also reads), or not at all when `.mcp.json` already runs ctxmode.
    """
    p = "copilot-cli"
    hooks = tuple(_copilot_hook(cmd, p, e, a, t) for e, a, t in COPILOT_EVENTS)
    hooks_dir = copilot_hooks_dir(scope)
    targets: list[Target] = [
        JsonTarget(
            hooks_dir / COPILOT_HOOKS,
            hooks=hooks,
            settings=(Setting(("version",), 1, structural=True),),
            dedicated=True,
        )
    ]
    notes = [
        "Copilot CLI denies every tool call whose preToolUse hook fails to run, so keep "
        "ctxmode on PATH for it (check with: ctxmode --version).",
    ]
    full = stdio(cmd, type="local", tools=["*"])
    if scope.project is None:
        server: tuple[Path, dict[str, Any]] | None = (
            config_dir(p) / "mcp-config.json",
            full,
        )
    else:
        dot = scope.project / ".mcp.json"
        if dot.exists() and (_recorded_server(p, scope, dot) or not _holds_ctxmode(dot)):
            server = (dot, stdio(cmd))
            notes.append(
                "Copilot CLI reads .mcp.json (and then not .github/mcp.json), so the ctxmode "
                "server is registered there."
            )
        elif dot.exists():
            server = None
            notes.append("Copilot CLI uses the ctxmode server already registered in .mcp.json.")
        else:
            server = (scope.project / ".github" / "mcp.json", full)
        notes.append(
            "Copilot CLI loads a repository's hooks and MCP servers only in a folder you "
            "trust (it asks once; headless: --trust-folder or COPILOT_ALLOW_ALL=true)."
        )
    if server is not None:
        path, value = server
        targets.append(
            JsonTarget(path, servers=(ServerEntry(("mcpServers",), SERVER_NAME, value),))
        )
    others = [
        f.name
        for f in (
            hooks_dir / "ctxmode-vscode-copilot.json",
            hooks_dir / "ctxmode-jetbrains-copilot.json",
        )
        if f.exists()
    ]
    warnings = (
        [
            f"Copilot CLI also runs {', '.join(others)} in {hooks_dir}, so every hook would "
            "run twice there. Keep only the one for the agent you use (ctxmode uninstall "
            "<platform>)."
        ]
        if others
        else []
    )
    return PlatformPlan(p, scope, tuple(targets), tuple(notes), tuple(warnings))
