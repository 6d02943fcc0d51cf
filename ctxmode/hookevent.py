"""What every hook handler reasons about, whatever the host: one normalised event in, one
decision out. Platform adapters (`ctxmode.platforms`) translate both ways; the session
store, routing and capture read these types and never a host's own payload shapes.
Standard library only, and imports nothing of ctxmode but `ctxmode.typenames` (every layer
may import it).

Canonical events: ``pre_tool``, ``post_tool``, ``post_tool_failure``, ``pre_compact``,
``session_start``, ``prompt_submit``, ``stop``.

Canonical tools (the Claude Code name family the router reasons about): ``Bash``, ``Read``,
``Grep``, ``Glob``, ``WebFetch``, ``WebSearch``, ``Edit``, ``Write``, ``NotebookEdit``,
``Task`` (todo/task tracking), ``Agent`` (sub-agent), ``AskUserQuestion``, ``ctx`` (one of
ctxmode's own ``ctx_*`` tools, leaf name in ``mcp_tool``), ``mcp`` (any other MCP tool),
``other``.
"""

from pathlib import Path

from ctxmode.typenames import Any, Literal, NamedTuple

CanonicalEvent = Literal[
    "pre_tool",
    "post_tool",
    "post_tool_failure",
    "pre_compact",
    "session_start",
    "prompt_submit",
    "stop",
    "model_reply",
    "session_end",
]
DecisionKind = Literal["allow", "deny", "ask", "modify", "context", "record"]

SANDBOX_TOOLS = (
    "ctx_batch_execute",
    "ctx_search",
    "ctx_execute",
    "ctx_execute_file",
    "ctx_fetch_and_index",
    "ctx_index",
)
META_TOOLS = ("ctx_stats", "ctx_doctor", "ctx_upgrade", "ctx_purge", "ctx_insight")
SERVER_TOOLS = SANDBOX_TOOLS + META_TOOLS
"""The tools `ctxmode serve` offers (tests keep this equal to the server's catalogue)."""
OWN_TOOLS = frozenset(SERVER_TOOLS)


class HookEvent(NamedTuple):
    """One host hook call, normalised.

    A named tuple, not a dataclass: importing `dataclasses` costs every hook process ~8 ms.
    The ``{}`` defaults of ``tool_input`` and ``raw`` are shared: treat both as read-only.
    """

    platform: str
    event: CanonicalEvent
    native_event: str
    session_id: str = ""  # "" when the host sends none (Kiro)
    project_dir: Path | None = None
    cwd: str | None = None
    tool: str | None = None  # canonical tool name (see module docstring)
    native_tool: str | None = None
    tool_input: dict[str, Any] = {}  # as the host sent it
    tool_response: Any = None
    error: str | None = None  # post_tool_failure / a failed call's error text
    source: str | None = None  # session_start: startup | resume | clear | compact
    prompt: str | None = None  # prompt_submit
    mcp_server: str | None = None
    mcp_tool: str | None = None  # leaf MCP tool name (ctx_execute for our own tools)
    subagent: bool = False  # the call comes from a sub-agent, when the host says so
    transcript_path: str | None = None
    raw: dict[str, Any] = {}
    # Read once from ``tool_input`` by `ctxmode.platforms.normalise`:
    command: str | None = None  # Bash: the script the shell runs
    paths: tuple[str, ...] = ()  # the files the call names (patch targets included)
    patch: tuple[tuple[str, str], ...] = ()  # apply_patch: (Add|Update|Delete|Move, path)
    urls: tuple[str, ...] = ()  # the URLs the call targets or names, each once


class HookDecision(NamedTuple):
    """What ctxmode wants the host to do. `allow` means "no opinion"."""

    kind: DecisionKind = "allow"
    reason: str | None = None  # deny / ask: the text the model must read
    updated_input: dict[str, Any] | None = None  # modify: the complete new tool input
    context: str | None = None  # context (or alongside allow/modify): advisory text

    @property
    def blocks(self) -> bool:
        return self.kind in ("deny", "ask")


ALLOW = HookDecision()
RECORD = HookDecision("record")
