"""``pre_compact``: the host is about to compact the conversation; keep the session's state.

Builds the resume snapshot from the session's events within the byte budget, stores it
(unconsumed) and records the compaction, all in one transaction; then indexes the events
into the project's knowledge base so the snapshot's search calls find the details. Never
blocks compaction: errors surface to the dispatcher, which fails open.

OpenCode's shim pushes the snapshot into the compaction context itself, so it gets the
snapshot back as context (``compact_context``); every other host takes it at the next
session start, or with its next tool result (``late_snapshot``).

Only a real compaction counts. Gemini fires PreCompress with trigger ``auto`` on every turn,
before it decides whether to compress (``speculative_compact``): such a call builds the
snapshot and records that it did, but counts no compaction, stores nothing to inject and
indexes nothing (that would re-index the whole session every turn); ``/compress`` (trigger
``manual``) is a compaction.
"""

from collections.abc import Sequence
from pathlib import Path

from ctxmode import paths, settings
from ctxmode.hookevent import RECORD, HookDecision, HookEvent
from ctxmode.platforms import descriptor
from ctxmode.session import where
from ctxmode.session.db import HOOK_BUSY_TIMEOUT_MS, SessionDB
from ctxmode.session.events import Event, StoredEvent
from ctxmode.session.snapshot import build_snapshot

_FILE_EVENTS = frozenset({"file_read", "file_edit", "file_write"})


def speculative(event: HookEvent) -> bool:
    """A pre-compact call that does not mean the host compacts (Gemini's every-turn check)."""
    host = descriptor(event.platform)
    trigger = event.raw.get("trigger")
    return host is not None and host.speculative_compact and trigger != "manual"


def handle(event: HookEvent) -> HookDecision:
    """Store the session's resume snapshot; OpenCode also gets it back as context.

    A speculative call (Gemini's every-turn PreCompress) only builds the snapshot (see the
    module docstring).
    """
    host = descriptor(event.platform)
    real = not speculative(event)
    session_id = where.session_id_of(event)
    project = where.project_of(event)
    snapshot = ""
    with SessionDB(where.session_db_path(project), busy_timeout_ms=HOOK_BUSY_TIMEOUT_MS) as sdb:
        with sdb.transaction():
            events = sdb.conversation_events(session_id)
            if not events:
                return RECORD
            if real:
                compactions = sdb.increment_compact_count(session_id)
            else:
                meta = sdb.meta(session_id)
                compactions = meta.compact_count if meta else 0
            snapshot = build_snapshot(
                events,
                compact_count=compactions,
                project_dir=project,
                event_count=sdb.event_count(session_id),
            )
            size = len(snapshot.encode("utf-8"))
            recorded = [
                Event(
                    "snapshot_built",
                    f"Snapshot built. {size} bytes for {len(events)} events."
                    + ("" if real else " Not a compaction (trigger auto): nothing to inject."),
                    bytes_avoided=size if real else 0,
                )
            ]
            if real:
                sdb.upsert_resume(session_id, snapshot, len(events))
                files = {e.data for e in events if e.type in _FILE_EVENTS}
                summary = (
                    f"Session compacted ({compactions}). {len(events)} events,"
                    f" {len(files)} files touched."
                )
                recorded.insert(0, Event("compaction_summary", summary))
            sdb.add_events(
                session_id,
                recorded,
                source_hook="pre_compact",
                project_dir=str(project),
                platform=event.platform,
            )
    if not real:
        return RECORD
    _index(project, session_id, events)
    if host is not None and host.compact_context and settings.inject_enabled():
        return HookDecision("context", context=snapshot)
    return RECORD


def _index(project: Path, session_id: str, events: Sequence[StoredEvent]) -> None:
    from ctxmode.session.knowledge import index_session

    content_db = paths.ProjectPaths(paths.data_root(), project).content_db
    problem = index_session(content_db, session_id, events)
    if problem is not None:
        from ctxmode.hooks.entry import _log

        _log(f"pre_compact: session events not indexed: {type(problem).__name__}: {problem}")
