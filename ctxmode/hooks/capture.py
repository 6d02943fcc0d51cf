"""Record what happened: tool calls (``post_tool``, ``post_tool_failure``), prompts
(``prompt_submit``) and turn ends (``stop``) become session events.

The hot path: extraction in memory, then one small SQLite transaction with a short busy
timeout. A locked or broken database raises, and the dispatcher fails open (the host
carries on; the error goes to the hook log).

Hosts that never start a session again after compacting (VS Code and the Copilot runtime,
Gemini's asynchronous PreCompress) get the session's pending resume snapshot with the next
tool result or prompt instead (their descriptor's ``late_snapshot``). A snapshot is pending
only after a real compaction (see `ctxmode.hooks.compact`). Hosts that drop a session
start's answer (their descriptor's ``start_output``: Qwen Code) get the routing block with the
session's first prompt.

A call that passes a check the session saw fail (the same command, or one covering it:
`ctxmode.session.extract.covers`) records that the failure was fixed, and the failure stops
outranking routine events. Only sessions that recorded a failure look (a marker file says so).
"""

from pathlib import Path

from ctxmode import settings
from ctxmode.hookevent import RECORD, HookDecision, HookEvent
from ctxmode.platforms import descriptor
from ctxmode.session import extract, markers, where
from ctxmode.session.db import HOOK_BUSY_TIMEOUT_MS, SessionDB
from ctxmode.session.events import Event, snapshot_consumed
from ctxmode.session.redact import redact_text

_TOOL_EVENTS = frozenset({"post_tool", "post_tool_failure"})


def _events(event: HookEvent, session_id: str) -> list[Event]:
    if event.event in _TOOL_EVENTS:
        found = extract.tool_events(event)
        return found + markers.consume(session_id, event.tool or event.native_tool or "")
    if event.event == "prompt_submit":
        return extract.prompt_events(event.prompt or "")
    if event.event == "stop":
        return extract.stop_events(event)
    return []


def handle(event: HookEvent) -> HookDecision:
    """Record the call's events; hand back a pending snapshot where the host needs it so."""
    session_id = where.session_id_of(event)
    events = _events(event, session_id)
    host = descriptor(event.platform)
    late = (
        host is not None
        and host.late_snapshot
        and (event.event == "prompt_submit" or (event.event == "post_tool" and host.post_context))
        and settings.inject_enabled()
    )
    check = extract.passed_check(event) if markers.has_failures(session_id) else None
    if not events and not late and check is None:
        return RECORD
    project = where.project_of(event)
    # A host that drops session starts' answers gets the routing block with the first prompt.
    offer = (
        host is not None
        and not host.start_output
        and event.event == "prompt_submit"
        and settings.inject_enabled()
        and _tools_available(event.platform, project)
    )
    routing = False
    snapshot = None
    with SessionDB(where.session_db_path(project), busy_timeout_ms=HOOK_BUSY_TIMEOUT_MS) as sdb:
        with sdb.transaction():
            if check is not None:
                events = events + _fixed(sdb, session_id, *check)
            sdb.add_events(
                session_id,
                events,
                source_hook=event.event,
                project_dir=str(project),
                platform=event.platform,
            )
            routing = offer and sdb.claim_routing(session_id)
            resume = sdb.take_resume(session_id) if late else None
            if resume is not None:
                snapshot = resume.snapshot
                sdb.add_events(
                    session_id,
                    [snapshot_consumed(snapshot, "after compaction, with a tool result")],
                    source_hook=event.event,
                    project_dir=str(project),
                )
    if any(e.type == "error_tool" for e in events):
        markers.note_failure(session_id)
    routed = _routing_block(event.platform) if routing else ""
    context = "\n\n".join(p for p in (routed, snapshot) if p)
    if context:
        return HookDecision("context", context=context)
    return RECORD


def _tools_available(platform: str, project: Path) -> bool:
    from ctxmode.hooks.available import tools_available

    return tools_available(platform, project)


def _routing_block(platform: str) -> str:
    from ctxmode.hooks.guidance import routing_block

    return routing_block(platform)


def _fixed(sdb: SessionDB, session_id: str, key: extract.CheckKey, label: str) -> list[Event]:
    """The session's open failures that a passing `key` shows fixed, marked so; one
    ``error_fixed`` event per failed check (its first line, then what passed); else, when
    it ran the runner of an open failure on less, one ``check_passed`` event."""
    found: dict[str, list[int]] = {}
    same_runner = False
    for event_id, head in sdb.open_failures(session_id):
        failed = extract.label_key(head)
        if failed is not None and extract.covers(key, failed):
            found.setdefault(head, []).append(event_id)
        elif failed is not None and failed[:2] == key[:2]:
            same_runner = True
    passed = redact_text(label)
    # A narrower run of the same runner passed: the tests it covers pass now (followed test
    # by test in `ctxmode.session.failures`), the failure as a whole stays open.
    out = [Event("check_passed", passed)] if same_runner and not found else []
    if found:
        sdb.mark_fixed([i for ids in found.values() for i in ids])
    return out + [Event("error_fixed", f"{head}\npassed: {passed}") for head in found]
