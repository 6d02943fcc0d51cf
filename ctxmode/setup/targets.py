"""Which files each host reads, and what ctxmode writes into them (per the hosts' documentation,
"Registration" per platform). One function per platform; all paths are computed at call
time from the environment (HOME, XDG_CONFIG_HOME, CLAUDE_CONFIG_DIR, CODEX_HOME, ...).
"""

import json
import os
import re
import sys
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from ctxmode.errors import UsageError
from ctxmode.setup import jsplugins, more_targets
from ctxmode.setup.command import Command
from ctxmode.setup.entries import SERVER_NAME as SERVER_NAME
from ctxmode.setup.entries import config_dir as config_dir
from ctxmode.setup.entries import stdio
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

_SHIM_DEFAULT = 'process.env.CTXMODE_BIN || "ctxmode"'
_stdio = stdio
# Read by urllib when the server fetches a URL; not ctxmode settings, so not in the registry.
PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy")


def setting_vars() -> list[str]:
    """Every environment variable name ctxmode reads (its data root, ``CTXMODE_*``
    settings and their upstream aliases), for hosts that start the MCP server with a
    filtered environment: forwarding the names keeps hooks and server on the same data
    root and settings, whatever the user sets later."""
    from ctxmode import settings

    return [name for var in settings.REGISTRY if var.role == settings.READ for name in var.names]


# --- where hosts keep their settings ------------------------------------------------------


def _env_dir(var: str) -> Path | None:
    value = os.environ.get(var, "").strip()
    return Path(value).expanduser() if value else None


def claude_dir() -> Path:
    return config_dir("claude-code")


def claude_json() -> Path:
    """Claude Code's user state file (user-scope MCP servers live here)."""
    from ctxmode.platforms.claude_code import CLAUDE_JSON, HOST
    from ctxmode.platforms.host import paths

    return paths(HOST, (CLAUDE_JSON,), None)[0]


def gemini_dir() -> Path:
    return config_dir("gemini-cli")


def codex_home() -> Path:
    return config_dir("codex")


def xdg_config() -> Path:
    return _env_dir("XDG_CONFIG_HOME") or Path.home() / ".config"


def vscode_user_dir() -> Path:
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "Code" / "User"
    if sys.platform == "win32":
        return (_env_dir("APPDATA") or Path.home() / "AppData" / "Roaming") / "Code" / "User"
    return xdg_config() / "Code" / "User"


def jetbrains_mcp() -> Path:
    if sys.platform == "win32":
        base = _env_dir("LOCALAPPDATA") or Path.home() / "AppData" / "Local"
        return base / "github-copilot" / "intellij" / "mcp.json"
    return xdg_config() / "github-copilot" / "intellij" / "mcp.json"


def opencode_plugin_source() -> str | None:
    """The OpenCode plugin shim shipped as package data (None if this build lacks it)."""
    try:
        return (resources.files("ctxmode.platforms") / "opencode_plugin.js").read_text(
            encoding="utf-8"
        )
    except (FileNotFoundError, ModuleNotFoundError, OSError):
        return None


# --- building entries -----------------------------------------------------------------------


def _nested(
    cmd: Command, platform: str, event: str, arg: str, matcher: str | None, **extra: Any
) -> HookEntry:
    """A Claude-shaped matcher group holding one command handler."""
    command = cmd.hook(platform, arg)
    handler: dict[str, Any] = {"type": "command"}
    if "name" in extra:
        handler["name"] = extra.pop("name")
    handler["command"] = command
    handler.update(extra)
    item: dict[str, Any] = {"matcher": matcher} if matcher is not None else {}
    item["hooks"] = [handler]
    return HookEntry(event, command, matcher, item)


def _registered(cmd: Command, platform: str) -> tuple[HookEntry, ...]:
    """The hooks the platform's descriptor declares, each as a matcher group."""
    from ctxmode.platforms import descriptor

    host = descriptor(platform)
    specs = host.hooks if host is not None else ()
    return tuple(
        _nested(cmd, platform, h.event, h.arg, h.matcher, timeout=h.timeout) for h in specs
    )


def _flat(command: str, event: str, item: dict[str, Any], matcher: str | None = None) -> HookEntry:
    return HookEntry(event, command, matcher, item)


def _server(container: str, value: dict[str, Any]) -> ServerEntry:
    return ServerEntry((container,), SERVER_NAME, value)


_CLAUDE_HOOK = re.compile(r"\bhook\s+claude-code\b")


def _files_running(paths: list[Path], pattern: re.Pattern[str]) -> list[Path]:
    found = []
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if pattern.search(text):
            found.append(path)
    return found


def _claude_settings_files(scope: Scope) -> list[Path]:
    files = [claude_dir() / "settings.json"]
    if scope.project is not None:
        files[:0] = [
            scope.project / ".claude" / "settings.json",
            scope.project / ".claude" / "settings.local.json",
        ]
    return files


# --- platforms ------------------------------------------------------------------------------


def claude_code(scope: Scope, cmd: Command) -> PlatformPlan:
    """`.claude/settings.json` hooks + `.mcp.json` (project), or `~/.claude/settings.json` +
    `~/.claude.json` (global)."""
    p = "claude-code"
    if scope.project is None:
        settings, mcp = claude_dir() / "settings.json", claude_json()
    else:
        settings, mcp = scope.project / ".claude" / "settings.json", scope.project / ".mcp.json"
    hooks = _registered(cmd, p)
    warnings = []
    vscode = {vscode_hooks_file(Scope(None)), vscode_hooks_file(scope)}
    if any(f.exists() for f in vscode):
        warnings.append(_double_vscode(settings))
    notes = ["Restart Claude Code so it loads the hooks and the ctxmode MCP server."]
    if scope.project is not None:
        notes.append(
            "Claude Code asks once to approve the project MCP server in .mcp.json "
            "(or approve it with /mcp)."
        )
    return PlatformPlan(
        p,
        scope,
        (
            JsonTarget(settings, hooks=hooks),
            JsonTarget(mcp, servers=(_server("mcpServers", _stdio(cmd)),)),
        ),
        tuple(notes),
        tuple(warnings),
    )


QWEN_SETTINGS_VERSION = 4
"""The settings format of Qwen Code 0.15 (its ``"$version"`` key)."""


def _stamp(path: Path, key: str, value: Any) -> tuple[Setting, ...]:
    """The top-level `key` a host writes into a config file that lacks it when it loads
    the file (Qwen Code's ``$version``, which also migrates the file and leaves a
    ``.orig`` copy; OpenCode's and Kilo's ``$schema``). A file setup creates gets it, so
    the host leaves the file alone and uninstall can delete it; a file that has it keeps
    its own value; a user's file without it is left to the host."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = None
    except (OSError, UnicodeDecodeError):
        return ()
    if text is not None and f'"{key}"' not in text:
        return ()
    return (Setting((key,), value, structural=True),)


def qwen_code(scope: Scope, cmd: Command) -> PlatformPlan:
    """`.qwen/settings.json` (or `~/.qwen/settings.json`): Claude's hook shape, timeouts in
    milliseconds, plus `mcpServers`."""
    p = "qwen-code"
    base = config_dir(p) if scope.project is None else scope.project / ".qwen"
    settings = base / "settings.json"
    tools = "run_shell_command|read_file|read_many_files|grep_search|web_fetch"
    hooks = (
        _nested(cmd, p, "PreToolUse", "pretooluse", tools, timeout=10000),
        _nested(cmd, p, "PreToolUse", "pretooluse", "mcp__.*", timeout=10000),
        _nested(cmd, p, "PostToolUse", "posttooluse", "*", timeout=10000),
        _nested(
            cmd, p, "PostToolUseFailure", "posttoolusefailure", "run_shell_command", timeout=10000
        ),
        _nested(cmd, p, "PreCompact", "precompact", None, timeout=30000),
        _nested(cmd, p, "SessionStart", "sessionstart", None, timeout=30000),
        _nested(cmd, p, "UserPromptSubmit", "userpromptsubmit", None, timeout=10000),
    )
    target = JsonTarget(
        settings,
        hooks=hooks,
        servers=(_server("mcpServers", _stdio(cmd)),),
        settings=_stamp(settings, "$version", QWEN_SETTINGS_VERSION),
    )
    return PlatformPlan(p, scope, (target,), ("Restart Qwen Code to load the hooks and server.",))


def gemini_cli(scope: Scope, cmd: Command) -> PlatformPlan:
    """`.gemini/settings.json` (or `$GEMINI_CLI_HOME/.gemini/settings.json`): hooks with
    names and millisecond timeouts, `mcpServers`, and `hooksConfig.enabled`."""
    p = "gemini-cli"
    base = gemini_dir() if scope.project is None else scope.project / ".gemini"
    tools = (
        "run_shell_command|read_file|read_many_files|grep_search|search_file_content|"
        "web_fetch|mcp_.*"
    )

    def hook(event: str, matcher: str | None, timeout: int) -> HookEntry:
        arg = event.lower()
        return _nested(cmd, p, event, arg, matcher, name=f"ctxmode-{arg}", timeout=timeout)

    hooks = (
        hook("BeforeTool", tools, 10000),
        hook("AfterTool", "*", 10000),
        hook("PreCompress", None, 30000),
        hook("SessionStart", None, 30000),
        hook("BeforeAgent", None, 10000),
        # Fires for every streamed chunk; the one that finishes a reply carries its tokens.
        hook("AfterModel", None, 10000),
    )
    # Gemini CLI redacts MCP servers' environment; under GitHub Actions it keeps only its
    # own short list plus security.environmentVariableRedaction.allowed.
    allowed = ("security", "environmentVariableRedaction", "allowed")
    target = JsonTarget(
        base / "settings.json",
        hooks=hooks,
        servers=(_server("mcpServers", _stdio(cmd)),),
        settings=(
            Setting(("hooksConfig", "enabled"), True, force=True),
            Setting(allowed, setting_vars(), merge=True),
        ),
    )
    notes = (
        "Restart Gemini CLI. Builds older than hooksConfig also need "
        '"tools": {"enableHooks": true} in ~/.gemini/settings.json.',
    )
    return PlatformPlan(p, scope, (target,), notes)


def codex(scope: Scope, cmd: Command) -> PlatformPlan:
    """`.codex/hooks.json` + `.codex/config.toml` (or `$CODEX_HOME/...`): hooks in Claude's
    shape, `[mcp_servers.ctxmode]`, and `[features] hooks = true`."""
    p = "codex"
    base = codex_home() if scope.project is None else scope.project / ".codex"
    hooks = _registered(cmd, p)
    hooks_file = base / "hooks.json"
    # Codex starts MCP servers with a short whitelist of variables (HOME, PATH, LANG, ...);
    # env_vars names more to pass through from its own environment, as the hooks see it.
    forwarded = [*setting_vars(), *PROXY_VARS]
    config = TomlTarget(
        base / "config.toml",
        servers=(_server("mcp_servers", _stdio(cmd, env_vars=forwarded)),),
        settings=(Setting(("features", "hooks"), True, force=True),),
    )
    notes = ["Restart Codex. Newer builds ask you to review and trust new hooks once."]
    if scope.project is not None:
        notes.append("Codex reads a project's .codex/ only when you trust the project.")
    return PlatformPlan(p, scope, (JsonTarget(hooks_file, hooks=hooks), config), tuple(notes))


def vscode_hooks_file(scope: Scope) -> Path:
    base = (
        Path.home() / ".copilot" / "hooks"
        if scope.project is None
        else (scope.project / ".github" / "hooks")
    )
    return base / "ctxmode-vscode-copilot.json"


def _double_vscode(claude_file: Path) -> str:
    return (
        f"VS Code also runs the claude-code hooks in {claude_file} (it reads Claude settings "
        "and ignores their matchers), so both ctxmode entries fire there. The claude-code hook "
        "passes VS Code's calls through, but to avoid the extra process set VS Code's "
        '"chat.hookFilesLocations" to leave out the .claude files.'
    )


def vscode_copilot(scope: Scope, cmd: Command) -> PlatformPlan:
    """`.github/hooks/ctxmode-vscode-copilot.json` (or `~/.copilot/hooks/`) + `.vscode/mcp.json`
    (or the VS Code user `mcp.json`, key `servers`). Flat hook lists; VS Code ignores matchers."""
    p = "vscode-copilot"
    events = (
        ("SessionStart", "sessionstart", 30),
        ("UserPromptSubmit", "userpromptsubmit", 10),
        ("PreToolUse", "pretooluse", 10),
        ("PostToolUse", "posttooluse", 10),
        ("PreCompact", "precompact", 30),
    )
    hooks = tuple(
        _flat(
            cmd.hook(p, arg),
            event,
            {"type": "command", "command": cmd.hook(p, arg), "timeout": timeout},
        )
        for event, arg, timeout in events
    )
    mcp = (
        vscode_user_dir() / "mcp.json"
        if scope.project is None
        else (scope.project / ".vscode" / "mcp.json")
    )
    targets: tuple[Target, ...] = (
        JsonTarget(vscode_hooks_file(scope), hooks=hooks, dedicated=True),
        JsonTarget(mcp, servers=(_server("servers", _stdio(cmd, type="stdio")),)),
    )
    warnings = [
        _double_vscode(f) for f in _files_running(_claude_settings_files(scope), _CLAUDE_HOOK)
    ]
    if jetbrains_hooks_file(scope).exists():
        warnings.append(_double_copilot(scope))
    notes = ("Reload VS Code; hooks are a preview feature and may need enabling by policy.",)
    return PlatformPlan(p, scope, targets, notes, tuple(warnings))


def jetbrains_hooks_file(scope: Scope) -> Path:
    return vscode_hooks_file(scope).with_name("ctxmode-jetbrains-copilot.json")


def _double_copilot(scope: Scope) -> str:
    where = "~/.copilot/hooks" if scope.project is None else ".github/hooks"
    return (
        f"Both vscode-copilot and jetbrains-copilot hook files are in {where}; VS Code and the "
        "Copilot runtime each read both, so every hook runs twice. Keep only the one for the "
        "editor you use (ctxmode uninstall <platform>)."
    )


def jetbrains_copilot(scope: Scope, cmd: Command) -> PlatformPlan:
    """`.github/hooks/ctxmode-jetbrains-copilot.json` (or `~/.copilot/hooks/`), GitHub Copilot
    runtime format with PascalCase events; MCP in the user-level `mcp.json` (global only)."""
    p = "jetbrains-copilot"
    events = (
        ("SessionStart", "sessionstart", 30),
        ("UserPromptSubmit", "userpromptsubmit", 10),
        ("PreToolUse", "pretooluse", 10),
        ("PostToolUse", "posttooluse", 10),
        ("PostToolUseFailure", "posttoolusefailure", 10),
        ("PreCompact", "precompact", 30),
    )
    hooks = []
    for event, arg, timeout in events:
        command = cmd.hook(p, arg)
        item = {"type": "command", "bash": command, "powershell": command, "timeoutSec": timeout}
        hooks.append(_flat(command, event, item))
    targets: list[Target] = [
        JsonTarget(
            jetbrains_hooks_file(scope),
            hooks=tuple(hooks),
            settings=(Setting(("version",), 1, structural=True),),
            dedicated=True,
        )
    ]
    notes = [
        "Restart the IDE. The Copilot runtime fails closed on preToolUse errors, so keep "
        "ctxmode on PATH for the IDE (check with: ctxmode --version)."
    ]
    if scope.project is None:
        targets.append(JsonTarget(jetbrains_mcp(), servers=(_server("servers", _stdio(cmd)),)))
    else:
        notes.append(
            "Copilot for JetBrains reads MCP servers only from its user-level mcp.json: run "
            "`ctxmode setup jetbrains-copilot --global` once, or add the server in Settings."
        )
    warnings = [_double_copilot(scope)] if vscode_hooks_file(scope).exists() else []
    return PlatformPlan(p, scope, tuple(targets), tuple(notes), tuple(warnings))


def cursor(scope: Scope, cmd: Command) -> PlatformPlan:
    """`.cursor/hooks.json` (version 1, flat camelCase events) + `.cursor/mcp.json`, or the
    same under `~/.cursor/`."""
    p = "cursor"
    base = config_dir(p) if scope.project is None else scope.project / ".cursor"
    pre = cmd.hook(p, "pretooluse")
    matcher = "Shell|Read|Grep|WebFetch|Task|MCP:.*"
    hooks = (
        _flat(pre, "preToolUse", {"command": pre, "matcher": matcher, "timeout": 10}, matcher),
        *(
            _flat(cmd.hook(p, arg), event, {"command": cmd.hook(p, arg)})
            for event, arg in (
                ("postToolUse", "posttooluse"),
                ("sessionStart", "sessionstart"),
                ("afterAgentResponse", "afteragentresponse"),
                ("stop", "stop"),
            )
        ),
    )
    targets = (
        JsonTarget(
            base / "hooks.json", hooks=hooks, settings=(Setting(("version",), 1, structural=True),)
        ),
        JsonTarget(base / "mcp.json", servers=(_server("mcpServers", _stdio(cmd)),)),
    )
    warnings = []
    if _files_running(_claude_settings_files(scope), _CLAUDE_HOOK):
        warnings.append(
            "The claude-code hooks are registered too; with Cursor's third-party hooks enabled "
            "Cursor runs them as well. Turn that option off or uninstall one of the two."
        )
    return PlatformPlan(p, scope, targets, ("Restart Cursor.",), tuple(warnings))


def kiro(scope: Scope, cmd: Command) -> PlatformPlan:
    """A `ctxmode` agent in `.kiro/agents/ctxmode.json` (Kiro CLI 2.x hooks live in agent
    definitions; matchers are globs, one per entry) + `.kiro/settings/mcp.json`."""
    p = "kiro"
    base = config_dir(p) if scope.project is None else scope.project / ".kiro"
    pre = cmd.hook(p, "pretooluse")
    hooks: list[HookEntry] = [
        _flat(cmd.hook(p, "agentspawn"), "agentSpawn", {"command": cmd.hook(p, "agentspawn")}),
        _flat(
            cmd.hook(p, "userpromptsubmit"),
            "userPromptSubmit",
            {"command": cmd.hook(p, "userpromptsubmit")},
        ),
    ]
    for glob in ("shell", "execute_bash", "read", "fs_read", "web_fetch"):
        item = {"matcher": glob, "command": pre, "timeout_ms": 10000}
        hooks.append(_flat(pre, "preToolUse", item, glob))
    post = cmd.hook(p, "posttooluse")
    hooks.append(_flat(post, "postToolUse", {"command": post, "timeout_ms": 10000}))
    agent = JsonTarget(
        base / "agents" / "ctxmode.json",
        hooks=tuple(hooks),
        settings=(
            Setting(("name",), "ctxmode", structural=True),
            Setting(
                ("description",),
                "Default tools plus ctxmode's context-saving hooks.",
                structural=True,
            ),
            Setting(("tools",), ["*"], structural=True),
            Setting(("includeMcpJson",), True, structural=True),
        ),
        dedicated=True,
    )
    mcp = JsonTarget(base / "settings" / "mcp.json", servers=(_server("mcpServers", _stdio(cmd)),))
    notes = (
        "Kiro runs hooks from the agent in use: start it with `kiro-cli chat --agent ctxmode` "
        "or make it the default (`kiro-cli settings chat.defaultAgent ctxmode`).",
    )
    return PlatformPlan(p, scope, (agent, mcp), notes)


def _opencode_family(
    p: str, scope: Scope, cmd: Command, project_dir: str, config: str, schema: str, host: str
) -> PlatformPlan:
    """OpenCode and forks that keep its plugin API: the plugin shim (`PLATFORM` set to `p`)
    in `<project>/<project_dir>/plugins/ctxmode.js` + `mcp.ctxmode` in `<project>/<config>.json`
    (or the `.jsonc` the project has); global: both in the host's config directory."""
    if scope.project is None:
        base = config_dir(p)
        plugins = base / "plugins"
    else:
        base = scope.project
        plugins = base / project_dir / "plugins"
    path = base / f"{config}.json"
    if not path.exists() and (base / f"{config}.jsonc").exists():
        path = base / f"{config}.jsonc"
    server = {"type": "local", "command": cmd.serve(), "enabled": True}
    shim = (opencode_plugin_source() or "").replace(
        'const PLATFORM = "opencode";', f"const PLATFORM = {json.dumps(p)};"
    )
    warnings = []
    if shim and cmd.executable != Command().executable:
        # The shim runs $CTXMODE_BIN or `ctxmode`; bake --command in as the fallback.
        if _SHIM_DEFAULT in shim:
            shim = shim.replace(_SHIM_DEFAULT, f"{_SHIM_DEFAULT[:-9]}{json.dumps(cmd.executable)}")
        else:
            warnings.append(
                f"the {host} plugin runs `ctxmode` from PATH (or $CTXMODE_BIN), not --command."
            )
    targets = (
        PlainFileTarget(plugins / "ctxmode.js", shim),
        JsonTarget(
            path,
            servers=(ServerEntry(("mcp",), SERVER_NAME, server),),
            settings=_stamp(path, "$schema", schema),
        ),
    )
    notes = (f"Restart {host} so it loads the plugin and the MCP server.",)
    return PlatformPlan(p, scope, targets, notes, tuple(warnings))


def opencode(scope: Scope, cmd: Command) -> PlatformPlan:
    """The plugin shim in `.opencode/plugins/ctxmode.js` (it calls `ctxmode hook opencode
    <event>`) + `mcp.ctxmode` in `opencode.json`; global: under `$XDG_CONFIG_HOME/opencode/`."""
    schema = "https://opencode.ai/config.json"
    return _opencode_family("opencode", scope, cmd, ".opencode", "opencode", schema, "OpenCode")


def kilo(scope: Scope, cmd: Command) -> PlatformPlan:
    """Kilo Code CLI, an OpenCode fork: the same shim in `.kilo/plugins/ctxmode.js` (it calls
    `ctxmode hook kilo <event>`) + `mcp.ctxmode` in `kilo.json`; global: under
    `$XDG_CONFIG_HOME/kilo/`."""
    schema = "https://app.kilo.ai/config.json"
    return _opencode_family("kilo", scope, cmd, ".kilo", "kilo", schema, "Kilo Code")


PLATFORMS: dict[str, Callable[[Scope, Command], PlatformPlan]] = {
    "claude-code": claude_code,
    "qwen-code": qwen_code,
    "gemini-cli": gemini_cli,
    "codex": codex,
    "vscode-copilot": vscode_copilot,
    "jetbrains-copilot": jetbrains_copilot,
    "cursor": cursor,
    "kiro": kiro,
    "opencode": opencode,
    "kilo": kilo,
    "copilot-cli": more_targets.copilot_cli,
    "kimi": more_targets.kimi,
    "antigravity-cli": more_targets.antigravity_cli,
    "antigravity": more_targets.antigravity,
    "zed": more_targets.zed,
    "pi": jsplugins.pi,
    "omp": jsplugins.omp,
    "openclaw": jsplugins.openclaw,
}


def require(platform: str) -> Callable[[Scope, Command], PlatformPlan]:
    """The plan builder of `platform`.

    Raises:
        UsageError: not a platform ctxmode supports.
    """
    builder = PLATFORMS.get(platform)
    if builder is None:
        raise UsageError(f"unknown platform {platform!r}; choose one of: {', '.join(PLATFORMS)}.")
    return builder


def plan(platform: str, scope: Scope, cmd: Command) -> PlatformPlan:
    """Every file `platform` needs for `scope`.

    Raises:
        UsageError: not a platform ctxmode supports.
    """
    return require(platform)(scope, cmd)
