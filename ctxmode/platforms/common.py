"""What the platform adapters share: tool-name aliases, MCP name parsing, accessors for the
fields hosts spell differently, and the step from a `HookDecision` to what a host can do.

Tool names are normalised here once (the hosts' documented names), so routing and capture see
``Bash``/``Read``/``Edit``/... whatever the host called the tool. Tool *inputs* stay as the
host sent them: a rewrite must go back in the host's own schema. `refine` looks
into the input only where one host tool covers two canonical ones (Kiro ``fs_write``,
``apply_patch``).
"""

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from ctxmode import settings
from ctxmode.hookevent import OWN_TOOLS, CanonicalEvent, HookDecision, HookEvent
from ctxmode.lazyre import LazyPattern
from ctxmode.platforms import Output
from ctxmode.platforms.host import OWN_SERVERS, Host, strip_prompt_context
from ctxmode.platforms.normalise import normalise, patch_targets, patch_text, shell_command
from ctxmode.typenames import Any, Literal, NamedTuple

NOTHING = Output()


def no_event(native_event: str, payload: dict[str, Any], env: Mapping[str, str]) -> None:
    """`parse` of a host that runs no hook commands (MCP only): no event is ours."""
    return None


def say_nothing(*_: object) -> Output:
    """`render` and `noop` of a host that runs no hook commands: nothing to answer."""
    return NOTHING


# The Claude Code event names that most hosts, or their Claude-compatible
# modes, also send; adapters add their own names to these.
CLAUDE_EVENTS: dict[str, CanonicalEvent] = {
    "pretooluse": "pre_tool",
    "posttooluse": "post_tool",
    "precompact": "pre_compact",
    "sessionstart": "session_start",
    "userpromptsubmit": "prompt_submit",
    "stop": "stop",
}

# canonical name: every host's names for it (the hosts' documentation; upstream TOOL_ALIASES plus
# the names upstream misses). Claude Code's legacy sub-agent tool is `Task`; the Copilot
# runtime and OpenCode call theirs `task`.
_TABLE = {
    "Bash": "Bash PowerShell bash powershell shell Shell run_shell_command run_in_terminal "
    "execute_bash local_shell exec_command shell_command container.exec exec",
    "Read": "Read read read_file read_many_files view fs_read",
    "Grep": "Grep grep grep_search search_file_content grep_files rg",
    "Glob": "Glob glob file_search",
    "WebFetch": "WebFetch web_fetch webfetch fetch_webpage fetch mcp_web_fetch mcp_fetch_tool",
    "WebSearch": "WebSearch web_search websearch google_web_search",
    "Edit": "Edit MultiEdit edit multiedit replace replace_string_in_file "
    "multi_replace_string_in_file insert_edit_into_file str_replace_editor "
    "str_replace_based_edit_tool patch apply_patch",
    "Write": "Write write write_file create_file create fs_write",
    "NotebookEdit": "NotebookEdit edit_notebook_file",
    "Task": "TaskCreate TaskUpdate TodoWrite todo_write write_todos manage_todo_list "
    "update_todo todo_list todowrite",
    "Agent": "Agent Task task delegate_to_agent runSubagent run_subagent",
    "AskUserQuestion": "AskUserQuestion ask_user_question ask_user question",
}
ALIASES = {name: canonical for canonical, names in _TABLE.items() for name in names.split()}

_UUID = LazyPattern(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


# -- tool names -----------------------------------------------------------------------------


class ToolName(NamedTuple):
    """A host tool name, normalised."""

    tool: str | None  # canonical (see ctxmode.hookevent)
    native: str | None
    mcp_server: str | None = None
    mcp_tool: str | None = None


def own_server(server: str | None) -> bool:
    """Whether an MCP server key is ctxmode's (plain, or a Claude plugin-scoped key)."""
    if not server:
        return False
    key = server.lower()
    if key in OWN_SERVERS:
        return True
    return key.startswith("plugin_") and any(key.endswith("_" + s) for s in OWN_SERVERS)


def own_leaf(name: str) -> str | None:
    """The ``ctx_*`` tool a name ends with (after a ``_ - / : .`` separator), if any."""
    if name in OWN_TOOLS:
        return name
    for leaf in sorted(OWN_TOOLS, key=len, reverse=True):
        if name.endswith(leaf) and len(name) > len(leaf) and name[-len(leaf) - 1] in "_-/:.":
            return leaf
    return None


def split_mcp(name: str) -> tuple[str | None, str] | None:
    """(server, tool) for every MCP naming pattern hosts use, else None.

    ``mcp__<server>__<tool>`` (Claude, Qwen, Codex, Gemini), ``<server>__<tool>`` (older
    Gemini on a name clash), ``MCP:<tool>`` (Cursor, no server), ``@<server>/<tool>`` (Kiro),
    ``mcp_<server>_<tool>`` (VS Code, newer Gemini; split at the first ``_`` unless the name
    ends with one of ctxmode's tools).
    """
    if name.startswith("mcp__"):
        server, sep, leaf = name[5:].partition("__")
        return (server, leaf) if sep and server and leaf else None
    if name[:4].upper() == "MCP:":
        return (None, name[4:]) if name[4:] else None
    if name.startswith("@"):
        server, sep, leaf = name[1:].partition("/")
        return (server, leaf) if sep and server and leaf else None
    if name.startswith("mcp_") and len(name) > 4:
        rest = name[4:]
        leaf_own = own_leaf(rest)
        if leaf_own and rest != leaf_own:
            return rest[: -len(leaf_own) - 1], leaf_own
        server, sep, leaf = rest.partition("_")
        return (server, leaf) if sep and server and leaf else None
    if "__" in name.strip("_"):
        server, _, leaf = name.partition("__")
        return (server, leaf) if server and leaf else None
    return None


def classify(
    name: Any,
    aliases: Mapping[str, str] | None = None,
    mcp: tuple[str | None, str] | None = None,
) -> ToolName:
    """Normalise a host tool name.

    `aliases` are platform-specific names checked first, then the shared table (exact
    built-in names, Cursor's ``mcp_web_fetch`` included); `mcp` is an authoritative
    (server, tool) pair when the host says the call is an MCP call (Gemini ``mcp_context``).
    MCP tools become ``ctx`` (ours: the leaf is a ``ctx_*`` tool or the server is ctxmode's)
    or ``mcp``; unknown names become ``other``.
    """
    if not isinstance(name, str) or not name:
        return ToolName(None, None)
    if mcp is None:
        for table in (aliases or {}, ALIASES):
            if name in table:
                return ToolName(table[name], name)
    parts = mcp or split_mcp(name)
    if parts is not None:
        server, leaf = parts
        ours = own_leaf(leaf)
        if ours or own_server(server):
            return ToolName("ctx", name, server, ours or leaf)
        return ToolName("mcp", name, server, leaf)
    ours = own_leaf(name)
    if ours:
        prefix = name[: -len(ours)].rstrip("_-/:.")
        return ToolName("ctx", name, prefix or None, ours)
    if name.startswith("tracker_"):  # Gemini's task tracker family
        return ToolName("Task", name)
    return ToolName("other", name)


def refine(tool: str | None, native: str | None, tool_input: Mapping[str, Any]) -> str | None:
    """Edit vs Write where the host uses one tool for both (Kiro ``fs_write``, ``apply_patch``)."""
    if native in ("write", "fs_write") and isinstance(tool_input.get("command"), str):
        return "Write" if tool_input["command"] == "create" else "Edit"
    if native == "apply_patch":
        ops = {op for op, _ in patch_targets(patch_text(tool_input))}
        if ops == {"Add"}:
            return "Write"
    return tool


# -- field accessors (every spelling hosts use) -------------------------------------------------


def pick(payload: Mapping[str, Any], *keys: str) -> Any:
    """The value of the first of `keys` the payload has (even a null one), else None."""
    for key in keys:
        if key in payload:
            return payload[key]
    return None


def first_str(payload: Mapping[str, Any], *keys: str) -> str | None:
    """The first non-blank string among `keys`."""
    for key in keys:
        value = payload.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None


def as_object(value: Any) -> dict[str, Any]:
    """A tool input as a dict: objects as they are, JSON-object strings parsed, else {}."""
    if isinstance(value, dict):
        return value
    if isinstance(value, str) and value.strip().startswith("{"):
        try:
            parsed = json.loads(value)
        except ValueError:
            return {}
        return parsed if isinstance(parsed, dict) else {}
    return {}


def error_text(value: Any) -> str | None:
    """An error as text: a string, or an object's ``message``."""
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, Mapping):
        message = first_str(value, "message", "error", "text")
        if message:
            return message
    return None


def uuid_in(path: Any) -> str | None:
    """The last UUID in a transcript path (Claude names transcripts ``<session id>.jsonl``)."""
    if not isinstance(path, str):
        return None
    found = _UUID.findall(path)
    return found[-1] if found else None


def source(value: Any) -> str:
    """A session-start source as ``startup|resume|clear|compact``."""
    text = value.strip().lower() if isinstance(value, str) else ""
    if text in ("resume", "fork", "continue"):
        return "resume"
    if text in ("clear", "compact"):
        return text
    return "startup"  # startup, new (VS Code), missing


def project_dir(payload: Mapping[str, Any], env: Mapping[str, str], host: Host) -> Path | None:
    """``CTXMODE_PROJECT_DIR``, then the host's own project variables and the payload's
    ``cwd``/``workspaceFolder``/``workspace_roots[0]`` (in that order, or the payload first
    for hosts whose variable is where the IDE was launched, not the workspace)."""
    override = settings.project_dir(env)
    if override is not None:
        return Path(override)
    own = _env_path(env, host.project_vars)
    given = _payload_project(payload)
    first, second = (given, own) if host.payload_project_first else (own, given)
    return first or second


def _payload_project(payload: Mapping[str, Any]) -> Path | None:
    roots = payload.get("workspace_roots") or payload.get("workspaceRoots")
    if isinstance(roots, list) and roots and isinstance(roots[0], str) and roots[0]:
        return Path(roots[0])
    for key in ("workspaceFolder", "workspace_folder", "cwd"):
        value = payload.get(key)
        if isinstance(value, str) and value:
            return Path(value)
    return None


def _env_path(env: Mapping[str, str], names: Iterable[str]) -> Path | None:
    for var in names:
        value = (env.get(var) or "").strip()
        if value:
            return Path(value)
    return None


def subagent(payload: Mapping[str, Any]) -> bool:
    """Whether the payload comes from inside a sub-agent (Claude/Codex ``agent_id``)."""
    return bool(first_str(payload, "agent_id", "agentId"))


# -- events -------------------------------------------------------------------------------


def hook_event(
    host: Host,
    event: CanonicalEvent,
    native_event: str,
    payload: dict[str, Any],
    env: Mapping[str, str],
    named: ToolName,
    tool_input: dict[str, Any],
    *,
    session_id: str | None,
    response: Any = None,
    error: str | None = None,
    in_subagent: bool = False,
    cwd_keys: tuple[str, ...] = ("cwd",),
    source_keys: tuple[str, ...] = ("source",),
    prompt_keys: tuple[str, ...] = ("prompt",),
    transcript_keys: tuple[str, ...] = (),
) -> HookEvent:
    """A parsed payload as a normalised event, filled the way every adapter fills it.

    The tool comes from `named` (refined by its input, see `refine`); the session id from
    the payload, else the host's session variables; the project from `project_dir`;
    ``cwd``, the transcript and the session-start source and submitted prompt (each at its
    own event only, the prompt without host-added context) from the first of their
    `*_keys` the payload has; the command, paths and URLs from `normalise`; the payload
    itself is kept as ``raw``.
    """
    prompt = first_str(payload, *prompt_keys) if event == "prompt_submit" else None
    return normalise(
        HookEvent(
            platform=host.name,
            event=event,
            native_event=native_event,
            session_id=session_id or first_str(env, *host.session_vars) or "",
            project_dir=project_dir(payload, env, host),
            cwd=first_str(payload, *cwd_keys),
            tool=refine(named.tool, named.native, tool_input),
            native_tool=named.native,
            tool_input=tool_input,
            tool_response=response,
            error=error,
            source=source(pick(payload, *source_keys)) if event == "session_start" else None,
            prompt=strip_prompt_context(host, prompt) if prompt else prompt,
            mcp_server=named.mcp_server,
            mcp_tool=named.mcp_tool,
            subagent=in_subagent,
            transcript_path=first_str(payload, *transcript_keys),
            raw=payload,
        )
    )


def failed(event: HookEvent, error: str | None) -> HookEvent:
    """`event` as a ``post_tool_failure`` carrying `error` when there is one, else unchanged."""
    return event._replace(event="post_tool_failure", error=error) if error else event


# -- decisions ------------------------------------------------------------------------------

VerdictKind = Literal["allow", "deny", "ask", "modify", "context"]

DEFAULT_REASON = (
    "ctxmode blocked this call. Use the ctx_* tools instead (ctx_execute, ctx_batch_execute, "
    "ctx_fetch_and_index, ctx_search): only what you print enters the context window."
)
CANNOT_ASK = " (this host cannot ask for confirmation, so ctxmode blocked the call)"


class Verdict(NamedTuple):
    """A pre-tool decision cut down to what one host can do."""

    kind: VerdictKind
    reason: str = ""
    updated_input: dict[str, Any] | None = None
    context: str | None = None


def _echo_text(command: Any) -> str | None:
    """The message of an ``echo "…"`` redirect command (the router's modify rewrite)."""
    if not isinstance(command, str) or not command.lstrip().startswith("echo"):
        return None
    import shlex

    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if not words or words[0] != "echo":
        return None
    words = words[1:]
    while words and words[0] in ("-n", "-e", "-E", "-ne", "-en"):
        words = words[1:]
    text = " ".join(words)
    return text or None


def reason_text(event: HookEvent, decision: HookDecision) -> str:
    """Non-empty text for the model: the reason, the redirect message, or a default."""
    echoed = None
    if decision.updated_input is not None:
        before = shell_command(event.tool_input)
        after = shell_command(decision.updated_input)
        if after != before:
            echoed = _echo_text(after)
    if decision.kind == "modify" and echoed:
        return echoed
    for text in (decision.reason, echoed, decision.context):
        if isinstance(text, str) and text.strip():
            return text
    return DEFAULT_REASON


def context_of(decision: HookDecision) -> str | None:
    text = decision.context
    return text if isinstance(text, str) and text.strip() else None


def essential_rewrite(event: HookEvent) -> bool:
    """Whether a rewrite replaces the call itself (a redirect) rather than adding to it.

    Only the sub-agent prompt augmentation (tool ``Agent``) keeps the call's purpose; when a
    host cannot apply it, the sub-agent simply starts without the routing block.
    """
    return event.tool != "Agent"


def verdict(event: HookEvent, decision: HookDecision, host: Host) -> Verdict:
    """The pre-tool decision as `host` can carry it out.

    ``ask`` becomes ``deny`` where the host cannot ask; ``modify`` becomes ``deny`` with the
    redirect text where it cannot rewrite (or passes through, for a sub-agent prompt); advisory
    context is dropped where the host has no pre-tool context channel. With the host's
    ``redirect_as_deny``, a rewrite that replaces the call is a ``deny`` even where the host can
    rewrite (one whose rewrite support is unverified), and only a sub-agent prompt is rewritten.
    """
    can_ask, can_modify = host.can_ask, host.can_modify
    context = context_of(decision) if host.pre_context else None
    kind = decision.kind
    if kind in ("deny", "ask"):
        reason = reason_text(event, decision)
        if kind == "ask" and not can_ask:
            return Verdict("deny", reason + CANNOT_ASK)
        return Verdict(kind, reason)
    if kind == "modify" and isinstance(decision.updated_input, dict):
        if (host.redirect_as_deny or not can_modify) and essential_rewrite(event):
            return Verdict("deny", reason_text(event, decision))
        if not can_modify:
            return Verdict("context", context=context) if context else Verdict("allow")
        updated = {**event.tool_input, **decision.updated_input}
        return Verdict("modify", decision.reason or "", updated, context)
    if context:
        return Verdict("context", context=context)
    return Verdict("allow")


# -- output ---------------------------------------------------------------------------------


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def json_out(value: Mapping[str, Any]) -> Output:
    return Output(stdout=dumps(value))


MODIFY_REASON = "Routed to the ctxmode sandbox"


def hook_specific(
    event_name: str, fields: Mapping[str, Any], *, flat: Mapping[str, Any] | None = None
) -> Output:
    """A ``hookSpecificOutput`` answer (the Claude wire, also read by Gemini and VS Code),
    with `flat` top-level keys beside it (the Copilot runtime's)."""
    return json_out({**(flat or {}), "hookSpecificOutput": {"hookEventName": event_name, **fields}})


def permission(kind: str, reason: str) -> dict[str, Any]:
    """The Claude-style pre-tool decision fields (``deny``/``ask`` and why)."""
    return {"permissionDecision": kind, "permissionDecisionReason": reason}


def rewrite(v: Verdict) -> dict[str, Any]:
    """The Claude-style fields of a ``modify`` verdict: allow the call with its new input."""
    fields = {**permission("allow", v.reason or MODIFY_REASON), "updatedInput": v.updated_input}
    if v.context:
        fields["additionalContext"] = v.context
    return fields


def changed_keys(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """The keys of `after` whose values differ from `before` (all of `after` if none do)."""
    diff = {k: v for k, v in after.items() if k not in before or before[k] != v}
    return diff or dict(after)
