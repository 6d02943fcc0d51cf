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

from ctxmode import settings
from ctxmode.hookevent import ALLOW, HookDecision, HookEvent
from ctxmode.hooks import guidance
from ctxmode.platforms import descriptor
from ctxmode.typenames import Any

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctxmode.security import Policy, Verdict


# Sub-agent types known to have every tool, MCP tools included.
FULL_TOOL_AGENTS = frozenset({"general-purpose"})

_PROMPT_FIELDS = ("prompt", "request", "objective", "question", "query", "task")


class Probe:
    """What a decision may need beyond the payload; each is called only when needed.

    A plain class, not a dataclass: importing `dataclasses` costs the hook process ~8 ms.
    """

    __slots__ = ("server_ready", "tools_available", "once", "every", "policy", "file_size")

    def __init__(
        self,
        server_ready: Callable[[], bool] = lambda: False,
        tools_available: Callable[[], bool] = lambda: True,
        once: Callable[[str], bool] = lambda kind: True,
        every: Callable[[str, int], bool] = lambda kind, period: True,
        policy: Callable[[], "Policy | None"] = lambda: None,
        file_size: Callable[[str], int | None] = lambda path: None,
    ) -> None:
        self.server_ready = server_ready
        self.tools_available = tools_available
        self.once = once
        self.every = every
        self.policy = policy
        self.file_size = file_size

    def _fields(self) -> tuple[object, ...]:
        return (
            self.server_ready,
            self.tools_available,
            self.once,
            self.every,
            self.policy,
            self.file_size,
        )

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Probe)
        return self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # mutable, like the dataclass it replaced

    def __repr__(self) -> str:
        return (
            f"Probe(server_ready={self.server_ready!r}, "
            f"tools_available={self.tools_available!r}, once={self.once!r}, "
            f"every={self.every!r}, policy={self.policy!r}, file_size={self.file_size!r})"
        )


# -- payload helpers ---------------------------------------------------------------------


def can_call_ctx(event: HookEvent) -> bool:
    """Can the agent making this call use ctx tools? Sub-agents only when general-purpose."""
    if not event.subagent:
        return True
    kind = event.raw.get("agent_type") or event.raw.get("subagent_type")
    return isinstance(kind, str) and kind in FULL_TOOL_AGENTS


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
        urls = list(event.urls)
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
    text at pre-tool time (its descriptor says so: a nudge there would only use up its
    once-per-session marker), the nudge was already shown (once per session per kind;
    external MCP tools every N calls), or the model has no ctxmode tools to call (the host
    registers no ctxmode server). That last one is asked only of a nudge about to be
    shown, so the host's settings are read at most once per kind and session.
    """
    if not settings.inject_enabled() or not can_call_ctx(event):
        return None
    host = descriptor(event.platform)
    if host is not None and not host.pre_context:
        return None
    text = _nudge_text(event, probe)
    return text if text is not None and probe.tools_available() else None


def _nudge_text(event: HookEvent, probe: Probe) -> str | None:
    platform, tool = event.platform, event.tool
    if tool == "Read":
        path = event.paths[0] if event.paths else None
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
        every = settings.nudge_every()
        return guidance.mcp_nudge(platform) if probe.every("external-mcp", every) else None
    return None


def _bash(event: HookEvent, probe: Probe) -> HookDecision:
    from ctxmode.hooks.bash import classify_bash

    command = event.command or ""
    if not command.strip():
        return ALLOW
    policy = probe.policy()
    if policy is not None:
        from ctxmode.security import check_command

        blocked = security_decision(check_command(policy, command))
        if blocked is not None:
            return blocked
    from ctxmode.security.model import CHECK_MAX_CHARS

    if len(command) > CHECK_MAX_CHARS:  # not read (see `too_long`): not routed either
        return ALLOW
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
        from ctxmode.security import ask_message

        reason = ask_message(verdict) or guidance.ask_reason(
            verdict.rule.raw, verdict.rule.scope.value
        )
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
    from ctxmode.security import check_path, check_run

    project = event.project_dir
    path = args.get("path")
    if leaf in ("ctx_execute_file", "ctx_index") and isinstance(path, str) and path:
        blocked = security_decision(check_path(policy, path, project))
        if blocked is not None:
            return blocked
    code, language = args.get("code"), args.get("language")
    if leaf in ("ctx_execute", "ctx_execute_file") and isinstance(code, str):
        lang = language if isinstance(language, str) and language else "shell"
        blocked = security_decision(check_run(policy, lang, code, project))
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
            verdict = check_run(policy, "shell", command, project)
            blocked = security_decision(verdict, batch_label=name)
            if blocked is not None:
                return blocked
    return ALLOW


def _agent(event: HookEvent, probe: Probe) -> HookDecision:
    """Append the sub-agent routing block to the prompt of a sub-agent that can use it.

    ``auto`` injects only into general-purpose agents (no type given counts as one, and a
    ``Bash`` agent becomes general-purpose so it gets the ctx tools): read-only or
    fixed-tool agents (Explore, Plan, custom ones) cannot act on it and stall (#724).
    Nothing is injected while no ctxmode server runs.
    """
    mode = settings.subagent_routing()
    if mode == "off" or not settings.inject_enabled():
        return ALLOW
    args = event.tool_input
    kind = next((args[k] for k in ("subagent_type", "agent_type", "agent_name") if k in args), None)
    if mode == "auto" and kind not in (None, "", "general-purpose", "Bash"):
        return ALLOW
    key = next((k for k in _PROMPT_FIELDS if k in args), "prompt")
    prompt = args.get(key, "")
    if not isinstance(prompt, str) or guidance.ROUTING_TAG in prompt:
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
    from ctxmode.digest import sha256_hex

    return sha256_hex(text.encode("utf-8", "replace"))[:16]


def file_size(path: str) -> int | None:
    """Size of a regular file, None for anything else."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    import stat

    return st.st_size if stat.S_ISREG(st.st_mode) else None
