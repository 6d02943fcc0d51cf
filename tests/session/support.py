"""Helpers shared by the session and session-hook tests (tests/hooks imports this module as
``session.support``: pytest puts tests/ on ``sys.path``)."""

from pathlib import Path
from typing import Any

from ctxmode.hookevent import HookEvent
from ctxmode.platforms.normalise import normalise
from ctxmode.session import where
from ctxmode.session.db import SessionDB

PROJECT = Path("/home/dev/projects/acme-api")  # need not exist, like the hook fixtures'


def hook_event(event: str = "post_tool", **fields: Any) -> HookEvent:
    """A canonical hook event with sensible defaults (Claude Code, session s1, PROJECT)."""
    fields.setdefault("platform", "claude-code")
    fields.setdefault("native_event", event)
    fields.setdefault("session_id", "s1")
    fields.setdefault("project_dir", PROJECT)
    if "tool" in fields:
        fields.setdefault("native_tool", fields["tool"])
    return normalise(HookEvent(event=event, **fields))  # type: ignore[arg-type]


def bash(command: str, response: Any = "", **fields: Any) -> HookEvent:
    return hook_event(
        tool="Bash", tool_input={"command": command}, tool_response=response, **fields
    )


def open_db(project: Path = PROJECT) -> SessionDB:
    """The session database a hook for `project` writes (under the test's CTXMODE_DIR)."""
    return SessionDB(where.session_db_path(project))


def stored(session_id: str = "s1", project: Path = PROJECT) -> list[tuple[str, str]]:
    """(type, data) of a session's events, oldest first."""
    with open_db(project) as sdb:
        return [(e.type, e.data) for e in sdb.events(session_id)]
