"""The ``pre_tool`` handler: wires the routing rules (`ctxmode.hooks.routing`) to the
outside world.

It runs as a whole process before every matching tool call, so it opens no database and
imports only the standard library, `ctxmode.paths`, `ctxmode.readiness` and, for shell
commands and ctxmode's own tools, `ctxmode.security`. Each piece of the outside world is
looked up only when a rule asks for it: the permission rules (a few ``stat`` calls and
small JSON files), whether a ctxmode server runs (one directory listing) and the nudge
markers under ``<data root>/guidance/``.
"""

import os
from pathlib import Path

from ctxmode.hookevent import HookDecision, HookEvent
from ctxmode.hooks import routing
from ctxmode.hooks.throttle import Throttle, session_key

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctxmode.security import Policy


def handle(event: HookEvent) -> HookDecision:
    """The decision for one pre-tool event (see `ctxmode.hooks.routing` for the rules).

    A denial or a redirect leaves a marker for the session's next PostToolUse, which
    records it as an event (only PostToolUse writes the session database).
    """
    decision = routing.decide(event, probe_for(event))
    if decision.kind in ("deny", "modify"):
        try:
            leave_marker(event, decision)
        except Exception:  # a marker is bookkeeping: the decision stands regardless
            pass
    return decision


def leave_marker(event: HookEvent, decision: HookDecision) -> None:
    from ctxmode.session import markers
    from ctxmode.session.where import session_id_of

    tool = event.tool or event.native_tool or ""
    session = session_id_of(event)
    if tool == "WebFetch" and decision.kind == "deny":
        urls = " ".join(event.urls)
        markers.write_redirect(session, tool, "webfetch_redirected", 0, urls[:200])
    elif tool == "Bash" and decision.kind == "modify":
        command = event.command or ""
        markers.write_redirect(session, tool, "bash_redirected", 0, command[:200])
    elif decision.kind == "deny":
        markers.write_rejected(session, tool, decision.reason or "")


def project_of(event: HookEvent) -> Path:
    """The project whose permission rules apply: the host's, else the call's cwd."""
    if event.project_dir is not None:
        return Path(event.project_dir)
    if event.cwd:
        return Path(event.cwd)
    return Path(os.getcwd())


def probe_for(event: HookEvent) -> routing.Probe:
    """The real-world lookups for ``event``, each done at most once and only on demand."""
    from ctxmode.paths import data_root

    throttle: list[Throttle] = []

    def marks() -> Throttle:
        if not throttle:
            key = session_key(event.session_id, event.project_dir or event.cwd)
            throttle.append(Throttle(data_root(), key))
        return throttle[0]

    ready: list[bool] = []

    def server_ready() -> bool:
        if not ready:
            from ctxmode.hooks.available import server_ready as ready_for

            ready.append(ready_for(event.platform, project_of(event)))
        return ready[0]

    available: list[bool] = []

    def tools_available() -> bool:
        if not available:
            from ctxmode.hooks.available import tools_available as available_for

            available.append(available_for(event.platform, project_of(event)))
        return available[0]

    def policy() -> "Policy":
        from ctxmode.security import load_policy

        return load_policy(project_of(event), platform=event.platform)

    return routing.Probe(
        server_ready=server_ready,
        tools_available=tools_available,
        once=lambda kind: marks().once(kind),
        every=lambda kind, period: marks().every(kind, period),
        policy=policy,
        file_size=routing.file_size,
    )
