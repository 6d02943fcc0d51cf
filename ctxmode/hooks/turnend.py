"""Turn ends and model replies: what the turn was (a ``turn_end`` event, through
`ctxmode.hooks.capture`), and what the host says its model used (tokens per model, in
``model_usage``), so stats can say what the context kept out was worth.

``stop`` (Claude Code, Codex, Copilot CLI, Cursor, Kimi, Antigravity CLI) records the turn
end, then reads the host's record where its descriptor names one (``usage``): the part of
the transcript the turn added, from the offset the last turn end stopped at.
``model_reply`` (Gemini CLI AfterModel, Cursor afterAgentResponse) takes tokens from the
payload, or records the reply. ``session_end`` (Kimi SessionEnd) records that the session
closed. Nothing here answers the host: a turn end never continues the turn.

Reading usage never breaks the turn end: the event is recorded first, and an unreadable
transcript counts nothing (the next turn end tries again from the same offset).
"""

import os

from ctxmode.hookevent import RECORD, HookDecision, HookEvent
from ctxmode.platforms import descriptor
from ctxmode.session import hostusage, modelusage, where
from ctxmode.session.db import HOOK_BUSY_TIMEOUT_MS, SessionDB, now_iso
from ctxmode.session.events import Event
from ctxmode.session.extract import stop_events
from ctxmode.session.hostusage import TokenUsage

FILE_SOURCES = ("claude-transcript", "codex-rollout")


def handle(event: HookEvent) -> HookDecision:
    if event.event == "stop":
        from ctxmode.hooks import capture

        capture.handle(event)
    host = descriptor(event.platform)
    source = host.usage if host is not None else None
    if event.event == "stop" and source in FILE_SOURCES:
        _from_file(event, source or "")
    elif event.event == "model_reply":
        _model_reply(event, source)
    elif event.event == "session_end":
        _record(event, [Event("session_end", _reason(event))])
    return RECORD


def _reason(event: HookEvent) -> str:
    reason = event.raw.get("reason")
    return f"session ended ({reason})" if isinstance(reason, str) and reason else "session ended"


def _record(event: HookEvent, events: list[Event]) -> None:
    project = where.project_of(event)
    with SessionDB(where.session_db_path(project), busy_timeout_ms=HOOK_BUSY_TIMEOUT_MS) as sdb:
        sdb.add_events(
            where.session_id_of(event),
            events,
            source_hook=event.event,
            project_dir=str(project),
            platform=event.platform,
        )


def _model_reply(event: HookEvent, source: str | None) -> None:
    if source == "gemini-payload":
        found = hostusage.from_gemini(event.raw)
        if found is not None:
            _add(event, {found[0]: found[1]})
        return
    events = stop_events(event)  # the reply's text, where the payload has it (Cursor)
    if events and "\n" in events[0].data:
        _record(event, [Event("agent_reply", events[0].data.partition("\n")[2])])


def _from_file(event: HookEvent, source: str) -> None:
    session_id = where.session_id_of(event)
    project = where.project_of(event)
    with SessionDB(where.session_db_path(project), busy_timeout_ms=HOOK_BUSY_TIMEOUT_MS) as sdb:
        with sdb.transaction() as con:
            cursor = modelusage.cursor(con, session_id)
            path = event.transcript_path or cursor.path
            if not path and source == "codex-rollout":
                path = hostusage.codex_rollout(session_id, os.environ) or ""
            if not path:
                return
            read = hostusage.read_claude if source == "claude-transcript" else hostusage.read_codex
            try:
                found, moved = read(path, cursor)
            except OSError:
                return  # not there (yet): the next turn end reads from the same offset
            now = now_iso()
            modelusage.add(con, session_id, found, now)
            modelusage.move_cursor(con, session_id, moved, now)
    if found:
        _refresh_stats(event, session_id)


def _add(event: HookEvent, found: dict[str, TokenUsage]) -> None:
    session_id = where.session_id_of(event)
    project = where.project_of(event)
    with SessionDB(where.session_db_path(project), busy_timeout_ms=HOOK_BUSY_TIMEOUT_MS) as sdb:
        with sdb.transaction() as con:
            sdb.ensure_session(session_id, str(project), event.platform)
            modelusage.add(con, session_id, found, now_iso())
    _refresh_stats(event, session_id)


def _refresh_stats(event: HookEvent, session_id: str) -> None:
    """Put the session's tokens in the project's stats file, where the server keeps one
    (status lines read it)."""
    from ctxmode.stats.statsfile import refresh

    refresh(where.session_db_path(where.project_of(event)), session_id)
