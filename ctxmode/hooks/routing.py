"""The pre-tool routing rules: what ctxmode says about a tool call before it runs.

In order (upstream's order, with ctxmode's corrections):

1. **Security.** Shell commands (Bash, and the code, commands and paths handed to
   ctxmode's own ``ctx_execute``/``ctx_execute_file``/``ctx_batch_execute``/``ctx_index``)
   are checked against the user's permission rules: a deny is ``deny`` ("Blocked by
   security policy: …"), an ask rule is ``ask``. This never depends on anything else.
2. **Redirects.** Bash that would print an HTTP response (curl/wget to stdout, an
   interpreter making an inline HTTP call), a build tool's log, and WebFetch are
   redirected to ``ctx_fetch_and_index``/``ctx_execute``, but only while a ctxmode server
   runs and the calling agent can use its tools; otherwise they pass through.
3. **Nudges.** Read, Grep, Bash whose output is not structurally bounded, and external
   MCP tools get one line of advice: once per session per kind, external MCP tools on
   calls 1, N+1, 2N+1, … Own ctx tools never get one.
4. **Sub-agents.** An Agent launch of a general-purpose sub-agent gets the routing block
   appended to its prompt (``CTXMODE_SUBAGENT_ROUTING``: ``auto``, ``all``, ``off``).

A redirect of a Bash call is a ``modify`` decision that carries both the replacement input
(the command becomes an ``echo`` of the explanation) and, as ``reason``, the same text:
an adapter whose host cannot rewrite input (or should not) renders it as a deny.

Everything that needs the outside world (is a server running, the throttle markers, the
policy) comes in as a callable, asked only when a rule needs it, so a Read call never
loads the security policy and a Glob call touches no file at all.
"""

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ctxmode.hooks import guidance
from ctxmode.hooks.model import ALLOW, HookDecision, HookEvent

if TYPE_CHECKING:
    from ctxmode.security import Policy, Verdict

NUDGE_EVERY_DEFAULT = 10
NUDGE_EVERY_VARS = ("CTXMODE_EXTERNAL_MCP_NUDGE_EVERY", "CONTEXT_MODE_EXTERNAL_MCP_NUDGE_EVERY")
SUBAGENT_VARS = ("CTXMODE_SUBAGENT_ROUTING", "CONTEXT_MODE_SUBAGENT_ROUTING")

# Sub-agent types known to have every tool, MCP tools included.
FULL_TOOL_AGENTS = frozenset({"general-purpose"})

# Hosts whose adapters drop advisory context at pre-tool time (Gemini BeforeTool, Kiro,
# Codex, Qwen): a nudge there would only use up its once-per-session marker.
NO_PRETOOL_CONTEXT = frozenset({"gemini-cli", "kiro", "codex", "qwen-code"})

_PROMPT_FIELDS = ("prompt", "request", "objective", "question", "query", "task")
_PATH_FIELDS = ("file_path", "path", "absolute_path", "filePath", "filename", "target_file")


class Probe:
    """What a decision may need beyond the payload; each is called only when needed.

    A plain class, not a dataclass: importing `dataclasses` costs the hook process ~8 ms.
    """

    __slots__ = ("server_ready", "once", "every", "policy", "file_size")

    def __init__(
        self,
        server_ready: Callable[[], bool] = lambda: False,
        once: Callable[[str], bool] = lambda kind: True,
        every: Callable[[str, int], bool] = lambda kind, period: True,
        policy: Callable[[], "Policy | None"] = lambda: None,
        file_size: Callable[[str], int | None] = lambda path: None,
    ) -> None:
        self.server_ready = server_ready
        self.once = once
        self.every = every
        self.policy = policy
        self.file_size = file_size

    def _fields(self) -> tuple[object, ...]:
        return (self.server_ready, self.once, self.every, self.policy, self.file_size)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Probe)
        return self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # mutable, like the dataclass it replaced

    def __repr__(self) -> str:
        return (
            f"Probe(server_ready={self.server_ready!r}, once={self.once!r}, "
            f"every={self.every!r}, policy={self.policy!r}, file_size={self.file_size!r})"
        )


# -- payload helpers ---------------------------------------------------------------------


def extract_urls(tool_input: dict[str, Any]) -> list[str]:
    """The URLs of a fetch call: ``url``, ``urls[]``, ``requests[].url``, else any URL in
    the ``prompt``/``query`` text (Gemini's ``web_fetch`` has only a prompt)."""
    found: list[str] = []
    url = tool_input.get("url")
    if isinstance(url, str) and url.strip():
        found.append(url.strip())
    for key in ("urls", "requests"):
        items = tool_input.get(key)
        if isinstance(items, list):
            for item in items:
                value = item.get("url") if isinstance(item, dict) else item
                if isinstance(value, str) and value.strip():
                    found.append(value.strip())
    if not found:
        from ctxmode.hooks.bash import urls_in

        for key in ("prompt", "query", "input", "text"):
            text = tool_input.get(key)
            if isinstance(text, str):
                found.extend(urls_in(text))
    return list(dict.fromkeys(found))


def read_path(tool_input: dict[str, Any]) -> str | None:
    """The file a Read-like call reads (Kiro: ``operations[0].path``)."""
    for key in _PATH_FIELDS:
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            return value
    operations = tool_input.get("operations")
    if isinstance(operations, list) and operations and isinstance(operations[0], dict):
        value = operations[0].get("path")
        if isinstance(value, str) and value:
            return value
    return None


def can_call_ctx(event: HookEvent) -> bool:
    """Can the agent making this call use ctx tools? Sub-agents only when general-purpose."""
    if not event.subagent:
        return True
    kind = event.raw.get("agent_type") or event.raw.get("subagent_type")
    return isinstance(kind, str) and kind in FULL_TOOL_AGENTS


def nudge_every() -> int:
    """N of the external-MCP nudge: the env value when it is an integer in 1..100, else 10."""
    for var in NUDGE_EVERY_VARS:
        raw = os.environ.get(var, "").strip()
        if raw:
            try:
                value = int(raw)
            except ValueError:
                return NUDGE_EVERY_DEFAULT
            return value if 1 <= value <= 100 else NUDGE_EVERY_DEFAULT
    return NUDGE_EVERY_DEFAULT


# -- decisions ---------------------------------------------------------------------------


def decide(event: HookEvent, probe: Probe) -> HookDecision:
    """The pre-tool decision for ``event``."""
    tool = event.tool
    if tool == "Bash":
        return _bash(event, probe)
    if tool == "ctx":
        return _own_tool(event, probe)
    if tool == "WebFetch":
        if not (can_call_ctx(event) and probe.server_ready()):
            return ALLOW
        urls = extract_urls(event.tool_input)
        return HookDecision("deny", reason=guidance.webfetch_redirect(event.platform, urls))
    if tool == "Agent":
        return _agent(event, probe)
    if tool in ("Read", "Grep", "mcp"):
        text = nudge_for(event, probe)
        return HookDecision("context", context=text) if text else ALLOW
    return ALLOW


def nudge_for(event: HookEvent, probe: Probe) -> str | None:
    """The advice this call earns, if any, counting it against the throttle.

    None when injection is off, the agent cannot call ctx tools, the host would drop the
    text at pre-tool time, or the nudge was already shown (once per session per kind;
    external MCP tools every N calls).
    """
    if not guidance.inject_enabled() or not can_call_ctx(event):
        return None
    if event.platform in NO_PRETOOL_CONTEXT:
        return None
    platform, tool = event.platform, event.tool
    if tool == "Read":
        path = read_path(event.tool_input)
        size = probe.file_size(_absolute(path, event)) if path else None
        if path and size is not None and size > guidance.LARGE_READ_BYTES:
            first = probe.once("read")
            key = "read-" + _digest(_absolute(path, event))
            if probe.once(key) or first:
                return guidance.large_read_nudge(platform, path, size)
            return None
        return guidance.read_nudge(platform) if probe.once("read") else None
    if tool == "Grep":
        return guidance.grep_nudge(platform) if probe.once("grep") else None
    if tool == "Bash":
        return guidance.bash_nudge(platform) if probe.once("bash") else None
    if tool == "mcp":
        return guidance.mcp_nudge(platform) if probe.every("external-mcp", nudge_every()) else None
    return None


def _bash(event: HookEvent, probe: Probe) -> HookDecision:
    from ctxmode.hooks.bash import classify_bash, shell_command

    command = shell_command(event.tool_input)
    if not command.strip():
        return ALLOW
    policy = probe.policy()
    if policy is not None:
        from ctxmode.security import check_command

        blocked = security_decision(check_command(policy, command))
        if blocked is not None:
            return blocked
    route = classify_bash(command)
    if route.kind == "bounded":
        return ALLOW
    if route.kind == "other":
        text = nudge_for(event, probe)
        return HookDecision("context", context=text) if text else ALLOW
    if not (can_call_ctx(event) and probe.server_ready()):
        return ALLOW
    platform = event.platform
    if route.kind == "fetch":
        reason = guidance.fetch_redirect(platform, route.detail, route.url)
    elif route.kind == "inline_http":
        reason = guidance.inline_http_redirect(platform)
    else:
        reason = guidance.build_redirect(platform, route.detail, command.strip())
    powershell = (event.native_tool or "").lower() in ("powershell", "pwsh")
    updated = _replace_command(event.tool_input, reason, powershell=powershell)
    return HookDecision("modify", reason=reason, updated_input=updated)


def _replace_command(
    tool_input: dict[str, Any], reason: str, *, powershell: bool = False
) -> dict[str, Any]:
    """All of the original input, with the command turned into an echo of ``reason``."""
    key = "command" if "command" in tool_input or "cmd" not in tool_input else "cmd"
    replacement: str | list[str] = guidance.echo_command(reason, powershell=powershell)
    if isinstance(tool_input.get(key), list):
        replacement = ["echo", reason]
    return {**tool_input, key: replacement}


def security_decision(verdict: "Verdict", *, batch_label: str | None = None) -> HookDecision | None:
    """``deny``/``ask`` for a deny or ask verdict, else None (carry on routing)."""
    from ctxmode.security import Decision, deny_message

    if verdict.decision is Decision.DENY:
        reason = deny_message(verdict, surface="hook", batch_label=batch_label)
        return HookDecision("deny", reason=reason)
    if verdict.decision is Decision.ASK and verdict.rule is not None:
        reason = guidance.ask_reason(verdict.rule.raw, verdict.rule.scope.value)
        return HookDecision("ask", reason=reason)
    return None


def _own_tool(event: HookEvent, probe: Probe) -> HookDecision:
    """ctxmode's own tools: only the user's permission rules apply, never a nudge."""
    leaf = event.mcp_tool or ""
    args = event.tool_input
    if leaf not in ("ctx_execute", "ctx_execute_file", "ctx_batch_execute", "ctx_index"):
        return ALLOW
    policy = probe.policy()
    if policy is None:
        return ALLOW
    from ctxmode.security import check_code, check_command, check_path

    project = event.project_dir
    path = args.get("path")
    if leaf in ("ctx_execute_file", "ctx_index") and isinstance(path, str) and path:
        blocked = security_decision(check_path(policy, path, project))
        if blocked is not None:
            return blocked
    code, language = args.get("code"), args.get("language")
    if leaf in ("ctx_execute", "ctx_execute_file") and isinstance(code, str):
        lang = language if isinstance(language, str) and language else "shell"
        blocked = security_decision(check_code(policy, lang, code))
        if blocked is not None:
            return blocked
    commands = args.get("commands")
    if leaf == "ctx_batch_execute" and isinstance(commands, list):
        for entry in commands:
            if isinstance(entry, dict):
                command, label = entry.get("command"), entry.get("label")
            else:
                command, label = entry, None
            if not isinstance(command, str):
                continue
            name = label if isinstance(label, str) and label else command
            blocked = security_decision(check_command(policy, command), batch_label=name)
            if blocked is not None:
                return blocked
    return ALLOW


def subagent_mode() -> str:
    """``CTXMODE_SUBAGENT_ROUTING``: ``auto`` (default), ``all`` or ``off``."""
    for var in SUBAGENT_VARS:
        value = os.environ.get(var, "").strip().lower()
        if value:
            if value in ("0", "off", "false", "no", "none"):
                return "off"
            return "all" if value in ("all", "always", "1", "on", "true", "yes") else "auto"
    return "auto"


def _agent(event: HookEvent, probe: Probe) -> HookDecision:
    """Append the sub-agent routing block to the prompt of a sub-agent that can use it.

    ``auto`` injects only into general-purpose agents (no type given counts as one, and a
    ``Bash`` agent becomes general-purpose so it gets the ctx tools): read-only or
    fixed-tool agents (Explore, Plan, custom ones) cannot act on it and stall (#724).
    Nothing is injected while no ctxmode server runs.
    """
    mode = subagent_mode()
    if mode == "off" or not guidance.inject_enabled():
        return ALLOW
    args = event.tool_input
    kind = next((args[k] for k in ("subagent_type", "agent_type", "agent_name") if k in args), None)
    if mode == "auto" and kind not in (None, "", "general-purpose", "Bash"):
        return ALLOW
    key = next((k for k in _PROMPT_FIELDS if k in args), "prompt")
    prompt = args.get(key, "")
    if not isinstance(prompt, str) or "<context_window_protection>" in prompt:
        return ALLOW
    if not probe.server_ready():
        return ALLOW
    block = guidance.routing_block(event.platform, subagent=True)
    updated = {**args, key: f"{prompt}\n\n{block}" if prompt else block}
    if kind == "Bash":
        updated["subagent_type"] = "general-purpose"
    return HookDecision("modify", updated_input=updated)


def _absolute(path: str, event: HookEvent) -> str:
    if os.path.isabs(path):
        return path
    base = event.cwd or (str(event.project_dir) if event.project_dir else None)
    return os.path.join(base, path) if base else path


def _digest(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:16]


def file_size(path: str) -> int | None:
    """Size of a regular file, None for anything else."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    import stat

    return st.st_size if stat.S_ISREG(st.st_mode) else None
