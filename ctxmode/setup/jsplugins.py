"""Setup of the hosts that load ctxmode as an in-process plugin, not as commands: Pi and
Oh My Pi (the extension shim ``pi_extension.js``) and the OpenClaw gateway
(``openclaw_plugin.js``). The shims ship as package data; setup writes them with
``shim_common.js`` written in and the platform and the executable filled in
(``--command``), so the file on disk is exactly what setup wrote and uninstall can tell it
from a file the user edited.

`ctxmode.setup.targets` imports this module for its platform table; the shared helpers
come from `ctxmode.setup.entries`.
"""

import json
import os
from importlib import resources
from pathlib import Path

from ctxmode import settings
from ctxmode.errors import UsageError
from ctxmode.setup.command import Command
from ctxmode.setup.entries import SERVER_NAME, config_dir, stdio
from ctxmode.setup.model import (
    JsonTarget,
    PlainFileTarget,
    PlatformPlan,
    Scope,
    ServerEntry,
    Setting,
    Target,
)

_EXE_DEFAULT = 'process.env.CTXMODE_BIN || "ctxmode"'
_COMMON = "shim_common.js"
_INCLUDE = f"/* ctxmode: {_COMMON} */"


def shim_source(name: str) -> str | None:
    """A shim shipped as package data (None if this build lacks it)."""
    try:
        return (resources.files("ctxmode.platforms") / name).read_text(encoding="utf-8")
    except (FileNotFoundError, ModuleNotFoundError, OSError):
        return None


def baked(name: str, cmd: Command, constants: dict[str, str]) -> tuple[str, list[str]]:
    """Shim `name` as setup installs it, and warnings: ``shim_common.js`` written in,
    ``const <NAME> = "<value>";`` lines set to `constants`, and a ``--command`` executable
    as the fallback of ``$CTXMODE_BIN``. "" when this build lacks a file it needs."""
    text, common = shim_source(name) or "", shim_source(_COMMON) or ""
    if not text or (_INCLUDE in text and not common):
        return "", []
    text = text.replace(_INCLUDE, common.rstrip("\n"), 1)
    for constant, value in constants.items():
        line = next((x for x in text.splitlines() if x.startswith(f"const {constant} = ")), None)
        if line is not None:
            text = text.replace(line, f"const {constant} = {json.dumps(value)};", 1)
    warnings = []
    if cmd.executable != Command().executable:
        if _EXE_DEFAULT in text:
            text = text.replace(
                _EXE_DEFAULT, f"process.env.CTXMODE_BIN || {json.dumps(cmd.executable)}"
            )
        else:
            warnings.append(f"the {name} shim runs `ctxmode` from PATH, not --command.")
    return text, warnings


def pi(scope: Scope, cmd: Command) -> PlatformPlan:
    """The extension in `.pi/extensions/ctxmode.js` (or the agent dir's `extensions/`,
    `$PI_CODING_AGENT_DIR`, default `~/.pi/agent`). Pi has no MCP configuration: the
    extension starts `ctxmode serve` itself and registers its tools."""
    base = config_dir("pi") if scope.project is None else scope.project / ".pi"
    shim, warnings = baked("pi_extension.js", cmd, {"PLATFORM": "pi"})
    notes = (
        "Restart Pi (or run /reload) so it loads the extension; it starts the ctxmode "
        "MCP server with the first prompt.",
    )
    target = PlainFileTarget(base / "extensions" / "ctxmode.js", shim)
    return PlatformPlan("pi", scope, (target,), notes, tuple(warnings))


def omp(scope: Scope, cmd: Command) -> PlatformPlan:
    """The extension in `.omp/extensions/ctxmode.js` + `mcpServers.ctxmode` in
    `.omp/mcp.json`; global: under the agent dir (`$PI_CODING_AGENT_DIR`, default
    `~/.omp/agent`)."""
    base = config_dir("omp") if scope.project is None else scope.project / ".omp"
    shim, warnings = baked("pi_extension.js", cmd, {"PLATFORM": "omp"})
    targets: tuple[Target, ...] = (
        PlainFileTarget(base / "extensions" / "ctxmode.js", shim),
        JsonTarget(
            base / "mcp.json",
            servers=(ServerEntry(("mcpServers",), SERVER_NAME, stdio(cmd, type="stdio")),),
        ),
    )
    notes = ("Restart Oh My Pi so it loads the extension and the MCP server.",)
    return PlatformPlan("omp", scope, targets, notes, tuple(warnings))


def openclaw_state() -> Path:
    """OpenClaw's state directory: ``$OPENCLAW_STATE_DIR``, else ``.openclaw`` in
    ``$OPENCLAW_HOME`` or the home directory."""
    if os.environ.get("OPENCLAW_STATE_DIR", "").strip():
        return config_dir("openclaw")
    home = os.environ.get("OPENCLAW_HOME", "").strip()
    return Path(home).expanduser() / ".openclaw" if home else config_dir("openclaw")


def openclaw(scope: Scope, cmd: Command) -> PlatformPlan:
    """The plugin as `<state dir>/ctxmode/ctxmode.js` (the file name is the plugin id),
    listed in `plugins.load.paths` and enabled with conversation access (its prompt hook
    needs it), + `mcp.servers.ctxmode`, in `openclaw.json` (`$OPENCLAW_CONFIG_PATH`, else in
    the state dir). OpenClaw has no per-project configuration: global scope only.

    Raises:
        UsageError: a project scope.
    """
    if scope.project is not None:
        raise UsageError(
            "OpenClaw reads plugins and MCP servers from the user's configuration only: "
            "run `ctxmode setup openclaw --global`."
        )
    state = openclaw_state()
    given = os.environ.get("OPENCLAW_CONFIG_PATH", "").strip()
    config = Path(given).expanduser() if given else state / "openclaw.json"
    plugin = state / "ctxmode" / "ctxmode.js"
    shim, warnings = baked("openclaw_plugin.js", cmd, {})
    entry = ("plugins", "entries", "ctxmode")
    target = JsonTarget(
        config,
        servers=(ServerEntry(("mcp", "servers"), SERVER_NAME, stdio(cmd)),),
        settings=(
            Setting(("plugins", "load", "paths"), [str(plugin)], merge=True),
            Setting((*entry, "enabled"), True, force=True),
            Setting((*entry, "hooks", "allowConversationAccess"), True, force=True),
        ),
    )
    notes = [
        "OpenClaw reloads plugins and MCP servers by itself (hybrid reload mode); otherwise "
        "restart the gateway. Check with: openclaw plugins inspect ctxmode --runtime",
    ]
    moved = [
        variable.names[0]
        for variable in (settings.DIR, settings.XDG_DATA_HOME)
        if variable.get() is not None
    ]
    if moved:
        notes.append(
            f"OpenClaw starts MCP servers without {' or '.join(moved)}: add them to "
            "mcp.servers.ctxmode.env so the server and the hooks share one data directory."
        )
    return PlatformPlan(
        "openclaw", scope, (PlainFileTarget(plugin, shim), target), tuple(notes), tuple(warnings)
    )
