"""What a host is, declared once: each platform module's ``HOST`` descriptor. Standard
library only (the hook path reads it).

Routing, capture, compaction, session start, guidance, timeline, the security settings
and setup read these facts from the descriptor instead of keeping their own per-platform
sets. Paths are templates over ``{home}``, ``{config}`` (the host's config directory),
``{root}`` (the host's config variable when set, else the home directory: Claude Code
keeps ``.claude.json`` there), ``{xdg_config}`` and ``{project}``.
"""

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path

from ctxmode.hookevent import CanonicalEvent
from ctxmode.lazyre import LazyPattern
from ctxmode.typenames import NamedTuple

SERVER_KEY = "ctxmode"
"""The MCP server name ctxmode registers under; the hosts derive tool names from it."""
OWN_SERVERS = frozenset({"ctxmode", "context-mode", "context_mode"})
"""Server keys that are ctxmode's (ours, and upstream's for a migrated config)."""

_MAX_CONFIG_BYTES = 32 * 1024 * 1024
_JSON_SERVER_KEY = LazyPattern(r"""["'](?:ctxmode|context-mode|context_mode)["']\s*:""")
_TOML_SERVER = LazyPattern(
    r"""^\s*\[mcp_servers\.["']?(?:ctxmode|context-mode|context_mode)["']?\]""", re.MULTILINE
)


class HookSpec(NamedTuple):
    """One hook ctxmode registers on a host: ``ctxmode hook <platform> <arg>`` on `event`."""

    event: str
    """The host's event name, as its hook configuration spells it (``PreToolUse``)."""
    arg: str
    """The event name ctxmode's hook command takes (``pretooluse``)."""
    matcher: str | None
    """Which tools fire it (None: the event has no matcher, or every tool)."""
    timeout: int
    """Seconds (or the host's own unit) the host waits for the hook."""


class Host(NamedTuple):
    """One agent host, as ctxmode needs to know it."""

    name: str
    events: Mapping[str, CanonicalEvent]
    """The host's hook event names (lower-cased) and what each one is."""
    wire_names: Mapping[CanonicalEvent, str] = {}
    """The event name the host expects back in ``hookEventName``, where it wants one."""
    can_ask: bool = True
    """A pre-tool hook can ask the user to confirm."""
    can_modify: bool = True
    """A pre-tool hook can rewrite the tool input."""
    redirect_as_deny: bool = False
    """Rewrites that replace the call are sent as a deny (rewrite support unverified)."""
    pre_context: bool = True
    """A pre-tool hook can add context for the model before the tool runs."""
    late_snapshot: bool = False
    """No session start after compaction: the snapshot rides on the next tool result."""
    post_context: bool = True
    """A post-tool answer's context reaches the model (not Kimi Code's: its late snapshot
    waits for the next prompt)."""
    compact_context: bool = False
    """The pre-compact answer itself carries the snapshot into the compacted context."""
    speculative_compact: bool = False
    """The pre-compact hook fires on every turn with trigger ``auto``, before the host
    decides whether to compact (Gemini's PreCompress): only ``manual`` is a compaction."""
    tool_prefix: str | None = None
    """How the model sees ctxmode's tools (``mcp__ctxmode__``); None where it varies."""
    plugin_tool_prefix: str | None = None
    """The tool prefix when ctxmode runs from the host's plugin (``$CTXMODE_PLUGIN``)."""
    deferred_tools: str | None = None
    """The call that loads deferred MCP tools, over ``{names}`` (Claude's ToolSearch)."""
    project_vars: tuple[str, ...] = ()
    """Environment variables naming the project, in order."""
    payload_project_first: bool = False
    """The payload's cwd/workspace wins over `project_vars` (an IDE's launch directory)."""
    session_vars: tuple[str, ...] = ()
    """Environment variables carrying the session id where the payload has none."""
    config_var: str | None = None
    """The variable that moves the host's config directory."""
    config_var_is_home: bool = False
    """`config_var` replaces the home directory (``$GEMINI_CLI_HOME/.gemini``) rather
    than naming the config directory itself."""
    config_dir: str | None = None
    """The config directory, as a template."""
    memory_files: tuple[str, ...] = ()
    """The instruction files the host loads into every session (templates)."""
    mcp_configs: tuple[str, ...] = ()
    """The files where the host registers MCP servers (templates)."""
    mcp_clients: tuple[str, ...] = ()
    """``clientInfo.name`` prefixes the host's MCP client sends at initialize."""
    parses_text_results: bool = False
    """The MCP client parses a result's first text item into ``structuredContent`` and
    rejects anything but an object (Gemini CLI 0.61)."""
    prompt_context: tuple[tuple[str, str], ...] = ()
    """Host-added context around a submitted prompt: (opening, closing) tag pairs."""
    start_output: bool = True
    """The host uses a session start's answer. False: it runs the hook but drops the answer
    (Qwen Code 0.15, which also never starts a headless session), so the routing block
    goes with the session's first prompt and snapshots with the next prompt or tool result
    (`late_snapshot`)."""
    usage: str | None = None
    """Where the host reports its model's real token usage, read at a turn end (see
    `ctxmode.session.hostusage`): ``claude-transcript``, ``codex-rollout`` or
    ``gemini-payload``; None where ctxmode knows no such record."""
    hooks: tuple[HookSpec, ...] = ()
    """The hooks ctxmode registers on the host (by setup, or in a plugin's hooks file)."""
    system_routing: bool = False
    """The routing block goes into a system prompt the host rebuilds for every request and
    never stores (OpenCode's plugin shim): a session continued by a new host process needs
    it again, so every session start gets it."""


def _home(env: Mapping[str, str]) -> str:
    return (env.get("HOME") or "").strip() or str(Path.home())


def _xdg_config(env: Mapping[str, str]) -> str:
    return (env.get("XDG_CONFIG_HOME") or "").strip() or os.path.join(_home(env), ".config")


def _user_path(value: str, env: Mapping[str, str]) -> str:
    """A directory named by a variable: ``~`` is `env`'s home, a relative path absolute."""
    if value == "~":
        return _home(env)
    if value.startswith(("~/", "~\\")):
        return os.path.join(_home(env), value[2:])
    return os.path.abspath(value)


def _root(host: Host, env: Mapping[str, str]) -> str:
    value = (env.get(host.config_var) or "").strip() if host.config_var else ""
    return _user_path(value, env) if value else _home(env)


def _fields(
    host: Host, env: Mapping[str, str], project: Path | None, config: str
) -> dict[str, str]:
    return {
        "home": _root(host, env) if host.config_var_is_home else _home(env),
        "root": _root(host, env),
        "config": config,
        "xdg_config": _xdg_config(env),
        "project": str(project) if project is not None else "",
    }


def config_dir(host: Host, env: Mapping[str, str] | None = None) -> Path | None:
    """The host's config directory (``$CLAUDE_CONFIG_DIR`` or ``~/.claude``, ...)."""
    env = os.environ if env is None else env
    if host.config_var and not host.config_var_is_home:
        value = (env.get(host.config_var) or "").strip()
        if value:
            return Path(_user_path(value, env))
    if host.config_dir is None:
        return None
    return Path(host.config_dir.format(**_fields(host, env, None, "")))


def paths(
    host: Host,
    templates: tuple[str, ...],
    project: Path | None,
    env: Mapping[str, str] | None = None,
) -> list[Path]:
    """`templates` as paths; those that need a project are left out without one."""
    env = os.environ if env is None else env
    found = config_dir(host, env)
    fields = _fields(host, env, project, str(found) if found is not None else "")
    return [
        Path(t.format(**fields)) for t in templates if project is not None or "{project}" not in t
    ]


def memory_files(
    host: Host, project: Path | None, env: Mapping[str, str] | None = None
) -> list[Path]:
    """The host's instruction files for `project` (existing or not)."""
    return paths(host, host.memory_files, project, env)


def mcp_registered(
    host: Host, project: Path | None, env: Mapping[str, str] | None = None
) -> bool | None:
    """Whether the host has ctxmode registered as an MCP server for `project`.

    None where ctxmode cannot tell: the host's MCP settings are not known here, or none of
    its settings files exists. Claude Code's user file (``~/.claude.json``) counts its
    top-level servers and this project's own entry only.
    """
    seen = False
    for path in paths(host, host.mcp_configs, project, env):
        try:
            if path.stat().st_size > _MAX_CONFIG_BYTES:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if _registers(path, text, project):
            return True
        seen = True
    return False if seen else None


def _registers(path: Path, text: str, project: Path | None) -> bool:
    if path.suffix == ".toml":
        return bool(_TOML_SERVER.search(text))
    try:
        data = json.loads(text)
    except ValueError:  # JSONC (comments, trailing commas): the key is enough
        return bool(_JSON_SERVER_KEY.search(text))
    if not isinstance(data, dict):
        return False
    tables = [data.get(k) for k in ("mcpServers", "servers", "mcp", "context_servers")]
    nested = data.get("mcp")
    if isinstance(nested, dict):  # OpenClaw: mcp.servers
        tables.append(nested.get("servers"))
    projects = data.get("projects")
    if isinstance(projects, dict) and project is not None:
        entry = projects.get(str(project))
        if isinstance(entry, dict):
            tables.append(entry.get("mcpServers"))
    return any(
        isinstance(table, dict) and any(str(k).lower() in OWN_SERVERS for k in table)
        for table in tables
    )


def strip_prompt_context(host: Host, prompt: str) -> str:
    """The user's own words: host-added context blocks at the start of `prompt` removed
    (Gemini puts the session-start context in ``<hook_context>`` before the prompt)."""
    text, removed = prompt.lstrip(), False
    while True:
        for opening, closing in host.prompt_context:
            end = text.find(closing, len(opening)) if text.startswith(opening) else -1
            if end >= 0:
                text, removed = text[end + len(closing) :].lstrip(), True
                break
        else:
            return text.rstrip() if removed else prompt
