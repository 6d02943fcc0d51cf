"""``pre_compact``: the host is about to compact the conversation; keep the session's state.

Builds the resume snapshot from the session's events within the byte budget, stores it
(unconsumed) and records the compaction, all in one transaction; then indexes the events
into the project's knowledge base so the snapshot's search calls find the details. Never
blocks compaction: errors surface to the dispatcher, which fails open.

OpenCode's shim pushes the snapshot into the compaction context itself, so it gets the
snapshot back as context; every other host takes it at the next session start.
"""

from collections.abc import Sequence
from pathlib import Path

from ctxmode import paths
from ctxmode.hooks.model import RECORD, HookDecision, HookEvent
from ctxmode.session import where
from ctxmode.session.db import HOOK_BUSY_TIMEOUT_MS, SessionDB
from ctxmode.session.events import Event, StoredEvent
from ctxmode.session.snapshot import build_snapshot

COMPACT_CONTEXT_PLATFORMS = frozenset({"opencode"})


def handle(event: HookEvent) -> HookDecision:
    """Store the session's resume snapshot; OpenCode also gets it back as context."""
    session_id = where.session_id_of(event)
    project = where.project_of(event)
    snapshot = ""
    with SessionDB(where.session_db_path(project), busy_timeout_ms=HOOK_BUSY_TIMEOUT_MS) as sdb:
        with sdb.transaction():
            events = sdb.events(session_id)
            if not events:
                return RECORD
            compactions = sdb.increment_compact_count(session_id)
            snapshot = build_snapshot(
                events,
                compact_count=compactions,
                project_dir=project,
                event_count=sdb.event_count(session_id),
            )
            sdb.upsert_resume(session_id, snapshot, len(events))
            files = {e.data for e in events if e.type in ("file_read", "file_edit", "file_write")}
            size = len(snapshot.encode("utf-8"))
            sdb.add_events(
                session_id,
                [
                    Event(
                        "compaction_summary",
                        f"Session compacted ({compactions}). {len(events)} events,"
                        f" {len(files)} files touched.",
                    ),
                    Event(
                        "snapshot_built",
                        f"Snapshot built. {size} bytes for {len(events)} events.",
                        bytes_avoided=size,
                    ),
                ],
                source_hook="pre_compact",
                project_dir=str(project),
                platform=event.platform,
            )
    _index(project, session_id, events)
    if event.platform in COMPACT_CONTEXT_PLATFORMS and where.injection_enabled():
        return HookDecision("context", context=snapshot)
    return RECORD


def _index(project: Path, session_id: str, events: Sequence[StoredEvent]) -> None:
    from ctxmode.session.knowledge import index_session

    content_db = paths.ProjectPaths(paths.data_root(), project).content_db
    problem = index_session(content_db, session_id, events)
    if problem is not None:
        from ctxmode.hooks.entry import _log

        _log(f"pre_compact: session events not indexed: {type(problem).__name__}: {problem}")
