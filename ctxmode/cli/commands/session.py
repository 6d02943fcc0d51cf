"""`ctxmode session …`: what the session database recorded."""

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from ctxmode import paths
from ctxmode.cli import output
from ctxmode.cli.options import BareHelpGroup, ProjectOpt
from ctxmode.errors import NotFoundError
from ctxmode.wording import plural

session_app = typer.Typer(
    name="session",
    cls=BareHelpGroup,
    help="Inspect session continuity: the events hooks recorded, per session.",
    no_args_is_help=True,
)

SessionOpt = Annotated[
    str | None,
    typer.Option(
        "--session",
        "-s",
        help="Session id (default: the most recently active session).",
        show_default=False,
    ),
]
LinesJsonOpt = Annotated[
    bool,
    typer.Option("--json", help="Print one JSON object per line (JSON Lines) on stdout."),
]


def _databases(project: Path | None) -> list[Path]:
    """The project's session database files (with --project), else every project's."""
    from ctxmode.session import where

    if project is not None:
        directory = paths.resolve_project(project)
        found = [where.session_db_path(directory)]
    else:
        found = sorted(where.sessions_dir().glob("*.db"))
    return [p for p in found if p.is_file()]


def _event_json(event: object) -> dict[str, object]:
    from ctxmode.session.events import StoredEvent

    assert isinstance(event, StoredEvent)
    return {
        "kind": event.kind,
        "type": event.type,
        "data": event.data,
        "session_id": event.session_id,
        "created_at": event.created_at,
        "priority": event.priority,
        "bytes_avoided": event.bytes_avoided,
        "bytes_returned": event.bytes_returned,
    }


@session_app.command("events")
def events(
    session: SessionOpt = None,
    project: ProjectOpt = None,
    limit: Annotated[
        int, typer.Option("--limit", "-n", min=1, help="At most this many (the newest).")
    ] = 1000,
    json_: LinesJsonOpt = False,
) -> None:
    """List a session's recorded events, oldest first.

    Without --project every project's session database is searched for the session.
    With --json, each line is {"kind", "type", "data", "session_id", "created_at", …};
    kind is one of file_read, file_edit, file_write, git, error, task, prompt, snapshot,
    session, rule, or the event type itself.

    Example: ctxmode session events --json --session 4f1c2b9e-8a7d-4e3b-9c61-2d5e7f0a1b3c
    """
    from ctxmode.session.db import SessionDB

    output.use_json(["session", "events"], False)  # JSON Lines, not the result envelope
    wanted = (session or "").strip()
    found: list[object] = []
    latest: tuple[str, str, Path] | None = None
    for path in _databases(project):
        with SessionDB(path) as sdb:
            if wanted:
                if sdb.has_session(wanted):
                    found += sdb.events(wanted, limit=limit)
                continue
            for meta in sdb.sessions()[:1]:
                stamp = meta.last_event_at or meta.started_at
                if latest is None or stamp > latest[0]:
                    latest = (stamp, meta.session_id, path)
    if not wanted and latest is not None:
        wanted = latest[1]
        with SessionDB(latest[2]) as sdb:
            found = list(sdb.events(wanted, limit=limit))
    if wanted and not found and not _known(wanted, project):
        raise NotFoundError(f"no session {wanted!r} in the session database")
    if json_:
        for event in found:
            sys.stdout.write(json.dumps(_event_json(event), ensure_ascii=False) + "\n")
        sys.stdout.flush()
        return
    _render(wanted, found)


def _known(session_id: str, project: Path | None) -> bool:
    from ctxmode.session.db import SessionDB

    for path in _databases(project):
        with SessionDB(path) as sdb:
            if sdb.has_session(session_id):
                return True
    return False


def _render(session_id: str, found: list[object]) -> None:
    con = output.stdout
    if not session_id:
        con.print("No sessions recorded yet. Hooks record them: ctxmode hook PLATFORM EVENT")
        return
    con.print(f"session {session_id}: {plural(len(found), 'event')}")
    for item in found:
        event = _event_json(item)
        text = " ".join(str(event["data"]).split())
        if len(text) > 100:
            text = text[:99] + "…"
        stamp = str(event["created_at"])[:19].replace("T", " ")
        con.print(f"{stamp}  {event['kind']:<12} {text}")


@session_app.command("list")
def list_sessions(project: ProjectOpt = None, json_: LinesJsonOpt = False) -> None:
    """List recorded sessions, most recently active first.

    Example: ctxmode session list --json
    """
    from ctxmode.session.db import SessionDB

    output.use_json(["session", "list"], False)
    rows: list[dict[str, object]] = []
    for path in _databases(project):
        with SessionDB(path) as sdb:
            rows.extend(
                {
                    "session_id": meta.session_id,
                    "project_dir": meta.project_dir,
                    "platform": meta.platform,
                    "started_at": meta.started_at,
                    "last_event_at": meta.last_event_at,
                    "events": sdb.event_count(meta.session_id),
                    "compactions": meta.compact_count,
                    "database": str(path),
                }
                for meta in sdb.sessions()
            )
    rows.sort(key=lambda r: str(r["last_event_at"] or r["started_at"]), reverse=True)
    if json_:
        for row in rows:
            sys.stdout.write(json.dumps(row, ensure_ascii=False) + "\n")
        sys.stdout.flush()
        return
    if not rows:
        output.stdout.print("No sessions recorded yet.")
        return
    for row in rows:
        stamp = str(row["last_event_at"] or row["started_at"])[:19].replace("T", " ")
        output.stdout.print(
            f"{stamp}  {row['session_id']}  {row['platform'] or '-':<18} {row['events']:>5} "
            f"{'event ' if row['events'] == 1 else 'events'}  {row['project_dir']}"
        )
