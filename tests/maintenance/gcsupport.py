"""Building a data root with projects of given ages and sizes, and reading it back."""

import hashlib
import os
import sqlite3
import time
from pathlib import Path

from ctxmode import dbfiles, paths
from ctxmode.session.db import SessionDB
from ctxmode.session.events import Event
from ctxmode.store import ContentStore

DAY = 86_400


def content_db(root: Path, project: Path) -> Path:
    """The project's knowledge base, created empty (at the current schema)."""
    path = root / "content" / f"{paths.project_hash(project)}.db"
    ContentStore(path).close()
    return path


def session_db(root: Path, project: Path, suffix: str = "") -> Path:
    path = root / "sessions" / f"{paths.project_hash(project)}{suffix}.db"
    SessionDB(path).close()
    return path


def add_session(db: Path, session_id: str, *, idle_days: float = 0, events: int = 3) -> None:
    with SessionDB(db) as sdb:
        sdb.add_events(
            session_id,
            [Event("file_read", f"file{n}.py") for n in range(events)],
            source_hook="test",
            project_dir="example-project",
        )
    if idle_days:
        stamp = iso(time.time() - idle_days * DAY)
        con = sqlite3.connect(db)
        con.execute(
            "UPDATE session_meta SET started_at = ?, last_event_at = ? WHERE session_id = ?",
            (stamp, stamp, session_id),
        )
        con.commit()
        con.close()


def fill(db: Path, mb: float) -> None:
    """Make a database about `mb` MB bigger (a table gc does not know about)."""
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE IF NOT EXISTS filler(b BLOB)")
    con.execute("INSERT INTO filler VALUES (zeroblob(?))", (int(mb * (1 << 20)),))
    con.commit()
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()


def iso(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(epoch))


def set_indexed_at(db: Path, label: str, days_ago: float) -> None:
    con = sqlite3.connect(db)
    con.execute(
        "UPDATE sources SET indexed_at = ? WHERE label = ?",
        (iso(time.time() - days_ago * DAY), label),
    )
    con.commit()
    con.close()


def age(db: Path, days: float) -> None:
    """Make every file of the database look last written `days` ago."""
    stamp = time.time() - days * DAY
    for path in dbfiles.family(db):
        if path.exists():
            os.utime(path, (stamp, stamp))


def age_file(path: Path, days: float) -> None:
    stamp = time.time() - days * DAY
    os.utime(path, (stamp, stamp))


def labels(db: Path) -> set[str]:
    con = sqlite3.connect(db)
    try:
        return {r[0] for r in con.execute("SELECT label FROM sources")}
    finally:
        con.close()


def snapshot(root: Path) -> dict[str, tuple[str, int, str]]:
    """Every file and directory under root: kind, mtime and content digest."""
    found: dict[str, tuple[str, int, str]] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs:
            path = Path(folder, name)
            found[str(path.relative_to(root))] = ("dir", path.stat().st_mtime_ns, "")
        for name in files:
            path = Path(folder, name)
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            found[str(path.relative_to(root))] = ("file", path.stat().st_mtime_ns, digest)
    return found
