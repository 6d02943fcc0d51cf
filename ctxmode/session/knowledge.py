"""A session's events in the project's knowledge base, so the snapshot's search calls work.

The resume snapshot is short by design; each of its sections ends with a
``ctx_search(queries: […], source: "session-events")`` call for the full details. This
module indexes the session's events as markdown under the label
``session-events:<session id>`` (one source per session, replaced on every compaction), one
heading per event so a search returns the event itself.

Best effort and bounded: it runs at PreCompact only, on a daemon thread joined for at most
`INDEX_TIMEOUT` seconds; a busy or missing knowledge base costs the search hints, never
the compaction.
"""

import threading
from collections.abc import Sequence
from pathlib import Path

from ctxmode.session.events import StoredEvent

INDEX_TIMEOUT = 3.0
LABEL_PREFIX = "session-events"

_TITLES = {
    "prompt": "User prompts",
    "goal": "Goals",
    "decision": "Decisions",
    "file": "Files",
    "rule": "Project rules",
    "task": "Tasks",
    "plan": "Plan mode",
    "git": "Git",
    "error": "Errors",
    "blocked-on": "Blockers",
    "constraint": "Constraints",
    "cwd": "Environment",
    "env": "Environment",
    "subagent": "Subagents",
    "skill": "Skills",
    "mcp": "MCP tools",
    "external-ref": "References",
}


def label(session_id: str) -> str:
    return f"{LABEL_PREFIX}:{session_id}"


def _inert(text: str) -> str:
    """Event text that cannot open a heading or a code fence of the rendered document."""
    return "\n".join(
        "\\" + line if line.lstrip().startswith(("#", "```", "~~~")) else line
        for line in text.splitlines()
    )


def render_markdown(session_id: str, events: Sequence[StoredEvent]) -> str:
    """The events as markdown: an H2 per category, an H3 per event."""
    groups: dict[str, list[StoredEvent]] = {}
    for event in events:
        title = _TITLES.get(event.category)
        if title is not None and event.type != "mcp_tool_call":
            groups.setdefault(title, []).append(event)
    lines = [f"# Session {session_id}", ""]
    for title, items in groups.items():
        lines += [f"## {title}", ""]
        for event in items:
            lines += [f"### {event.type} {event.created_at[:19]}", "", _inert(event.data), ""]
    return "\n".join(lines)


def _index(content_db: Path, session_id: str, text: str, errors: list[BaseException]) -> None:
    try:
        from ctxmode.store import ContentStore

        with ContentStore(content_db) as store:
            store.index_text(text, label(session_id), kind="markdown", session_id=session_id)
    except Exception as exc:  # noqa: BLE001 - reported to the caller, who logs it
        errors.append(exc)


def index_session(
    content_db: Path,
    session_id: str,
    events: Sequence[StoredEvent],
    *,
    timeout: float = INDEX_TIMEOUT,
) -> BaseException | None:
    """Index the events into the knowledge base at `content_db`; the error if it failed,
    a `TimeoutError` if it did not finish in time, else None."""
    if not events:
        return None
    errors: list[BaseException] = []
    worker = threading.Thread(
        target=_index,
        args=(content_db, session_id, render_markdown(session_id, events), errors),
        name="ctxmode-session-index",
        daemon=True,
    )
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        return TimeoutError(f"indexing session events took over {timeout} s")
    return errors[0] if errors else None
