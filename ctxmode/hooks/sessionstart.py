"""``session_start``: open the session's context window with what it needs.

By source (missing or unknown: ``startup``; VS Code ``new`` too; Claude ``fork`` is a resume):

startup  routing block, once per session (every start where the host keeps it in a system
         prompt it rebuilds, `Host.system_routing`; none where the host drops the answer,
         `Host.start_output`: the first prompt brings it, see `ctxmode.hooks.capture`).
         Sessions idle for over a week and orphan events are cleaned up; the platform's
         instruction files (CLAUDE.md, AGENTS.md, …) are recorded as rules.
compact  routing block (the compacted context lost it) + this session's resume snapshot
         (the one PreCompact stored, else built now from its events). Upstream injected
         nothing here on Claude Code.
resume   a snapshot of the *incoming* conversation: the session's own events and those of
         the sessions it continues. A conversation resumed under a new session id (Claude
         Code ``--resume``/``--continue``, Gemini ``--resume latest``) is recognised by
         `ctxmode.session.resume` (its transcript, else the project's most recent unfinished
         session of the host), linked to it in the same transaction (two windows never
         continue the same session) and given its snapshot; a transcript naming a
         conversation this project never recorded gets none. The routing block only if the
         conversation never had it: a resumed conversation (Claude Code ``--continue``,
         ``codex exec resume``) replays the one it got at its start, so it is injected only
         for a session id that never got it whose transcript does not hold it.
clear    routing block, and the session starts clean: events recorded under its id
         before the clear are dropped, so they cannot come back at the next compaction.

The routing block names ctx_* tools, so it is injected only where the model can call
them (`ctxmode.hooks.available`).

``CTXMODE_INJECT=off`` records everything and injects nothing. A database that cannot be
opened or locked still gets the routing block injected (the error goes to the hook log).
"""

import sqlite3
from pathlib import Path

from ctxmode import settings
from ctxmode.errors import CtxError
from ctxmode.hookevent import RECORD, HookDecision, HookEvent
from ctxmode.hooks.available import tools_available
from ctxmode.hooks.guidance import ROUTING_TAG
from ctxmode.platforms import descriptor
from ctxmode.platforms.host import memory_files
from ctxmode.session import markers, where
from ctxmode.session.db import HOOK_BUSY_TIMEOUT_MS, SessionDB
from ctxmode.session.events import Event, clip, snapshot_consumed
from ctxmode.session.snapshot import build_snapshot

SOURCES = {
    "startup": "startup",
    "new": "startup",
    "init": "startup",
    "resume": "resume",
    "continue": "resume",
    "fork": "resume",
    "clear": "clear",
    "compact": "compact",
    "compaction": "compact",
}
# Events that say nothing about the work itself (a resume with only these has no state):
# lifecycle records and the instruction files every startup records.
NO_WORK = frozenset(
    {
        "session_start", "turn_end", "compaction_summary", "snapshot_built",
        "snapshot_consumed", "rule", "rule_content", "resumed_from",
    }
)  # fmt: skip
MAX_RULE_FILE_BYTES = 1_000_000
RENEWED = frozenset({"compact", "clear"})
"""Sources that start a new context window: the routing block goes in again."""
_SCAN_CHUNK = 1 << 20


def source_of(event: HookEvent) -> str:
    raw = (event.source or event.raw.get("trigger") or "").strip().lower()
    return SOURCES.get(raw, "startup")


def instruction_files(platform: str, project: Path) -> list[Path]:
    """The host's instruction files recorded as rules at startup (existing or not)."""
    host = descriptor(platform)
    return memory_files(host, project) if host is not None else []


def _rule_events(platform: str, project: Path) -> list[Event]:
    from ctxmode.session.redact import redact_text

    out: list[Event] = []
    for path in instruction_files(platform, project):
        try:
            if not path.is_file() or path.stat().st_size > MAX_RULE_FILE_BYTES:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if text.strip():
            out += [Event("rule", str(path)), Event("rule_content", redact_text(clip(text)))]
    return out


def transcript_has_routing(event: HookEvent) -> bool:
    """Whether the conversation's transcript already holds the routing block (a resumed
    conversation under a session id ctxmode has not seen)."""
    path = event.transcript_path
    if not path:
        return False
    tag, tail = ROUTING_TAG.encode(), b""
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(_SCAN_CHUNK):
                if tag in tail + chunk:
                    return True
                tail = chunk[-len(tag) :]
    except OSError:
        return False
    return False


def routing_block(platform: str) -> str:
    """The routing block of ``ctxmode.hooks.guidance`` (looked up at call time)."""
    from ctxmode.hooks.guidance import routing_block as block

    return block(platform)


def _log(message: str) -> None:
    from ctxmode.hooks.entry import _log as log

    log(message)


def handle(event: HookEvent) -> HookDecision:
    """Record the start; inject the routing block and, after compaction or on resume, the
    session's snapshot."""
    source = source_of(event)
    session_id = where.session_id_of(event)
    project = where.project_of(event)
    inject = settings.inject_enabled()
    # Read before the transaction: it may read the host's settings files.
    want_routing = offer = inject and tools_available(event.platform, project)
    snapshot = ""
    try:
        with SessionDB(where.session_db_path(project), busy_timeout_ms=HOOK_BUSY_TIMEOUT_MS) as sdb:
            want_routing, snapshot = _start(sdb, event, source, session_id, project, inject, offer)
    except (CtxError, sqlite3.Error, OSError) as exc:
        _log(f"{event.platform} session_start ({source}): {type(exc).__name__}: {exc}")
    parts = []
    if want_routing:
        try:
            parts.append(routing_block(event.platform))
        except Exception as exc:  # noqa: BLE001 - the snapshot must still get through
            _log(f"{event.platform} session_start: routing block: {type(exc).__name__}: {exc}")
    parts.append(snapshot)
    context = "\n\n".join(p for p in parts if p and p.strip())
    if context:
        return HookDecision("context", context=context)
    return RECORD


def _start(
    sdb: SessionDB,
    event: HookEvent,
    source: str,
    session_id: str,
    project: Path,
    inject: bool,
    offer: bool,
) -> tuple[bool, str]:
    """Everything the database does for one session start, in one transaction; `offer`:
    the routing block may go in (injection on, and the model can call the tools)."""
    record = {"source_hook": "session_start", "project_dir": str(project)}
    snapshot = ""
    with sdb.transaction():
        if source == "startup":
            sdb.cleanup_old_sessions()
            sdb.delete_orphans()
        elif source == "clear":
            sdb.delete_session(session_id)
        sdb.ensure_session(session_id, str(project), event.platform)
        started = [Event("session_start", f"session {source} ({event.platform})")]
        if source == "startup":
            started += _rule_events(event.platform, project)
        sdb.add_events(session_id, started, platform=event.platform, **record)
        host = descriptor(event.platform)
        if host is not None and not host.start_output:
            # The host drops this answer (Qwen Code, as seen): it carries the routing block
            # for a version that reads it, but claims nothing, so the session's first prompt
            # still brings it; the next prompt or tool result takes a pending snapshot.
            return offer and source in ("startup", "clear"), ""
        again = source in RENEWED or (host is not None and host.system_routing)
        want_routing = offer and sdb.claim_routing(session_id, again=again)
        if want_routing and source == "resume" and transcript_has_routing(event):
            want_routing = False
        if not inject or source in ("startup", "clear"):
            return want_routing, ""
        how = "after compaction"
        if source == "compact":
            stored = sdb.take_resume(session_id)
            snapshot = stored.snapshot if stored is not None else _fresh(sdb, session_id, project)
        else:
            how = "on resume"
            snapshot = _fresh(sdb, session_id, project)
            if snapshot:
                sdb.mark_resume_consumed(session_id)  # live events win over a stored snapshot
            else:
                from ctxmode.session.resume import continued_session

                prior, why = continued_session(sdb, event, session_id, NO_WORK)
                if prior is not None:
                    sdb.add_events(session_id, [Event("resumed_from", prior)], **record)
                    if markers.has_failures(prior):
                        markers.note_failure(session_id)
                    sdb.mark_resume_consumed(prior)
                    snapshot = _fresh(sdb, session_id, project)
                    how = f"on resume, from session {prior} ({why})"
                else:
                    _log(f"{event.platform} session_start (resume): nothing injected: {why}")
        if snapshot:
            sdb.add_events(session_id, [snapshot_consumed(snapshot, how)], **record)
    return want_routing, snapshot


def _fresh(sdb: SessionDB, session_id: str, project: Path) -> str:
    """A snapshot of the conversation's events now (the session's own and those of the
    sessions it continues); empty when it has no work recorded."""
    events = sdb.conversation_events(session_id)
    if all(e.type in NO_WORK for e in events):
        return ""
    meta = sdb.meta(session_id)
    return build_snapshot(
        events, compact_count=meta.compact_count if meta else 0, project_dir=project
    )
