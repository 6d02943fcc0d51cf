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
    PlainFileTarget,
    PlatformPlan,
    Scope,
    ServerEntry,
    Setting,
    Target,
    TomlTarget,
)

COPILOT_HOOKS = "ctxmode-copilot-cli.json"
COPILOT_EVENTS = (
    ("sessionStart", "sessionstart", 30),
    ("userPromptSubmitted", "userpromptsubmitted", 10),
    ("preToolUse", "pretooluse", 10),
    ("postToolUse", "posttooluse", 10),
    ("postToolUseFailure", "posttoolusefailure", 10),
    ("preCompact", "precompact", 30),
    ("agentStop", "agentstop", 10),
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


# No SessionStart: Kimi does not read its answer, and the hook would use up the routing
# block and the resume snapshot there (the snapshot comes with the next prompt instead).
KIMI_EVENTS = (
    ("UserPromptSubmit", "userpromptsubmit", None, 10),
    ("PreToolUse", "pretooluse", "Bash|Read|Grep|FetchURL|Agent|mcp__", 10),
    ("PostToolUse", "posttooluse", None, 10),
    ("PostToolUseFailure", "posttoolusefailure", None, 10),
    ("PreCompact", "precompact", None, 30),
    ("Stop", "stop", None, 10),
    ("SessionEnd", "sessionend", None, 10),
)


def kimi(scope: Scope, cmd: Command) -> PlatformPlan:
    """`[[hooks]]` tables in `$KIMI_CODE_HOME/config.toml` + `$KIMI_CODE_HOME/mcp.json`
    (global); a project gets `.kimi-code/mcp.json` (Kimi reads hooks only from the user's
    config.toml)."""
    p = "kimi"
    server = ServerEntry(("mcpServers",), SERVER_NAME, stdio(cmd))
    if scope.project is not None:
        mcp = JsonTarget(scope.project / ".kimi-code" / "mcp.json", servers=(server,))
        notes = (
            "Kimi Code reads hooks only from $KIMI_CODE_HOME/config.toml: run `ctxmode setup "
            "kimi --global` once for the routing and session hooks.",
        )
        return PlatformPlan(p, scope, (mcp,), notes)
    base = config_dir(p)
    hooks = []
    for event, arg, matcher, timeout in KIMI_EVENTS:
        command = cmd.hook(p, arg)
        item: dict[str, Any] = {"event": event}
        if matcher is not None:
            item["matcher"] = matcher
        item.update(command=command, timeout=timeout)
        hooks.append(HookEntry(event, command, matcher, item))
    targets: tuple[Target, ...] = (
        TomlTarget(base / "config.toml", hooks=tuple(hooks)),
        JsonTarget(base / "mcp.json", servers=(server,)),
    )
    notes = ("Restart Kimi Code so it loads the hooks and the ctxmode MCP server.",)
    return PlatformPlan(p, scope, targets, notes)


AGY_PRE_MATCHER = "run_command|view_file|grep_search|read_url_content|web_fetch"


def antigravity_cli(scope: Scope, cmd: Command) -> PlatformPlan:
    """Claude-shaped hook groups in `~/.gemini/config/hooks.json` (or a workspace's
    `.antigravitycli/hooks.json`) + `mcpServers` in `~/.gemini/config/mcp_config.json`."""
    p = "antigravity-cli"
    base = config_dir(p)
    hooks = []
    for event, arg, matcher in (
        ("PreToolUse", "pretooluse", AGY_PRE_MATCHER),
        ("PostToolUse", "posttooluse", ""),
        ("Stop", "stop", ""),
    ):
        command = cmd.hook(p, arg)
        item = {"matcher": matcher, "hooks": [{"type": "command", "command": command}]}
        hooks.append(HookEntry(event, command, matcher, item))
    server = ServerEntry(("mcpServers",), SERVER_NAME, stdio(cmd))
    if scope.project is None:
        targets: tuple[Target, ...] = (
            JsonTarget(base / "hooks.json", hooks=tuple(hooks)),
            JsonTarget(base / "mcp_config.json", servers=(server,)),
        )
        notes: tuple[str, ...] = ("Start a new agy session to load the hooks and the server.",)
    else:
        targets = (
            JsonTarget(scope.project / ".antigravitycli" / "hooks.json", hooks=tuple(hooks)),
        )
        notes = (
            "agy reads MCP servers from ~/.gemini/config/mcp_config.json only: run `ctxmode "
            "setup antigravity-cli --global` once for the ctxmode server.",
        )
    return PlatformPlan(p, scope, targets, notes)


def rules_text(platform: str) -> str:
    """The routing rules as a Markdown file ("" when injected guidance is off)."""
    from ctxmode.hooks.guidance import routing_block

    block = routing_block(platform)
    if not block:
        return ""
    return (
        "# ctxmode\n\n"
        "This host runs no ctxmode hooks, so these rules are how its tools are chosen.\n\n"
        f"{block}\n"
    )


def antigravity(scope: Scope, cmd: Command) -> PlatformPlan:
    """`mcpServers` in `~/.gemini/antigravity/mcp_config.json` (global; Antigravity has no
    workspace MCP file) and, for a project, the routing rules in `.agent/rules/ctxmode.md`
    (Antigravity runs no hooks: rules are its only routing)."""
    p = "antigravity"
    server = ServerEntry(("mcpServers",), SERVER_NAME, stdio(cmd))
    if scope.project is None:
        targets: tuple[Target, ...] = (
            JsonTarget(config_dir(p) / "mcp_config.json", servers=(server,)),
        )
        notes: tuple[str, ...] = (
            "Reload the MCP servers in Antigravity (Agent panel > MCP servers > Refresh). It "
            "runs no hooks: run `ctxmode setup antigravity` in each project for its routing "
            "rules.",
        )
        return PlatformPlan(p, scope, targets, notes)
    text = rules_text(p)
    rules = scope.project / ".agent" / "rules" / "ctxmode.md"
    targets = (PlainFileTarget(rules, text),) if text else ()
    notes = (
        "Antigravity reads MCP servers from ~/.gemini/antigravity/mcp_config.json only: run "
        "`ctxmode setup antigravity --global` once for the ctxmode server.",
    )
    if not text:
        notes += ("Injected guidance is off (CTXMODE_INJECT), so no rules file was written.",)
    return PlatformPlan(p, scope, targets, notes)


def zed(scope: Scope, cmd: Command) -> PlatformPlan:
    """`context_servers.ctxmode` in `~/.config/zed/settings.json` (or a project's
    `.zed/settings.json`; JSONC, comments kept). Zed runs no hooks."""
    p = "zed"
    base = config_dir(p) if scope.project is None else scope.project / ".zed"
    server = ServerEntry(("context_servers",), SERVER_NAME, stdio(cmd))
    notes = (
        "Zed runs no hooks, so only the rules it reads steer it to the ctx_* tools: add the "
        "routing rules to the project's rules file (.rules or AGENTS.md; Zed reads the "
        "first one it finds).",
    )
    return PlatformPlan(p, scope, (JsonTarget(base / "settings.json", servers=(server,)),), notes)
