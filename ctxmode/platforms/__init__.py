"""Per-host knowledge: parse a host's stdin into a normalised `HookEvent`, render a
`HookDecision` in that host's wire format, and the host's facts in one descriptor
(`ctxmode.platforms.host.Host`). One small module per platform, looked up here by name and
imported only when used (the hook path must start fast).

Each platform module provides:

    NAME: str
    HOST: Host
        # events, capabilities, tool prefix, project/session variables, config dir,
        # memory files, MCP settings files (see `ctxmode.platforms.host`)
    def parse(native_event: str, payload: dict, env: Mapping[str, str]) -> HookEvent | None
        # None: an event this platform's ctxmode hook does not handle (answer no-op)
    def render(event: HookEvent, decision: HookDecision) -> Output
    def noop(native_event: str) -> Output
        # what to answer when anything goes wrong (fail open; never a non-zero exit where
        # the host fails closed)
"""

import functools
import importlib
from types import ModuleType

from ctxmode.typenames import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctxmode.platforms.host import Host

PLATFORMS = {
    "claude-code": "ctxmode.platforms.claude_code",
    "qwen-code": "ctxmode.platforms.qwen_code",
    "gemini-cli": "ctxmode.platforms.gemini_cli",
    "codex": "ctxmode.platforms.codex",
    "vscode-copilot": "ctxmode.platforms.vscode_copilot",
    "jetbrains-copilot": "ctxmode.platforms.jetbrains_copilot",
    "cursor": "ctxmode.platforms.cursor",
    "kiro": "ctxmode.platforms.kiro",
    "opencode": "ctxmode.platforms.opencode",
    "kilo": "ctxmode.platforms.kilo",
    "copilot-cli": "ctxmode.platforms.copilot_cli",
    "kimi": "ctxmode.platforms.kimi",
    "antigravity-cli": "ctxmode.platforms.antigravity_cli",
    "antigravity": "ctxmode.platforms.antigravity",
    "zed": "ctxmode.platforms.zed",
    "pi": "ctxmode.platforms.pi",
    "omp": "ctxmode.platforms.omp",
    "openclaw": "ctxmode.platforms.openclaw",
}


class Output(NamedTuple):
    """What the hook process prints and how it exits."""

    stdout: str | None = None
    stderr: str | None = None
    exit_code: int = 0


def load(name: str) -> ModuleType:
    """The adapter module of platform `name`.

    Raises:
        KeyError: not a platform ctxmode knows.
    """
    return importlib.import_module(PLATFORMS[name])


def descriptor(name: str) -> "Host | None":
    """The descriptor of platform `name`; None for a name ctxmode does not know."""
    if name not in PLATFORMS:
        return None
    found: Host = load(name).HOST
    return found


def descriptors() -> "list[Host]":
    """Every platform's descriptor, in `PLATFORMS` order (loaded once per process)."""
    return list(_all_descriptors())


@functools.cache
def _all_descriptors() -> "tuple[Host, ...]":
    return tuple(load(name).HOST for name in PLATFORMS)


def for_client(client: str | None) -> str | None:
    """The platform whose MCP client introduces itself as `client` (``clientInfo.name``).

    Matched against the descriptors' ``mcp_clients``: the same name, case aside, else the
    longest one `client` starts with when a separator follows it (``gemini-cli`` for
    ``gemini-cli-mcp-client``). None for a client no descriptor names.
    """
    if not client:
        return None
    wanted = client.strip().lower()
    best: tuple[int, str] | None = None
    for host in descriptors():
        for name in host.mcp_clients:
            known = name.lower()
            if wanted == known:
                return host.name
            follows = wanted[len(known) : len(known) + 1]
            if wanted.startswith(known) and follows and not follows.isalnum():
                if best is None or len(known) > best[0]:
                    best = (len(known), host.name)
    return best[1] if best else None
