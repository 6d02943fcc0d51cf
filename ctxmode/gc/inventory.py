"""gc's inventory of the data root, read-only: projects and their databases, running
servers and processes that hold files open, rows that would expire, stale small files."""

import os
import sqlite3
from pathlib import Path

from ctxmode import dbfiles, paths
from ctxmode.gc.limits import DAY
from ctxmode.gc.model import Database, Expiry, Project, StaleFile

STALE_FILE_SECONDS = DAY

# Bytes on disk per byte of row text, roughly: chunk text plus its FTS postings for
# sources, event data plus its indexes for sessions. Only used to estimate a plan.
CONTENT_OVERHEAD = 2.5
SESSION_OVERHEAD = 2.0

_HEX = frozenset("0123456789abcdef")


def _is_hash(text: str) -> bool:
    return len(text) == 16 and set(text) <= _HEX


def _scan(root: Path) -> dict[str, Project]:
    """Every project with a database under `root`, with the small files that go with it.

    Databases are ``content/<hash>.db`` and ``sessions/<hash><suffix>.db`` (suffix empty
    or ``__…``); other files in ``sessions/`` named after the hash (events markdown, stats,
    cleanup markers, the cached worktree suffix) belong to the project and go with it.
    Damaged copies set aside (``….corrupt-<ms>``) are never touched.
    """
    projects: dict[str, Project] = {}

    def project(key: str) -> Project:
        return projects.setdefault(key, Project(key))

    for kind, folder in (("content", root / "content"), ("session", root / "sessions")):
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        for name in names:
            path = folder / name
            key, rest = name[:16], name[16:]
            if name.startswith(".") and name.endswith(".suffix") and _is_hash(name[1:17]):
                project(name[1:17]).extras.append(path)
                continue
            if not _is_hash(key) or ".corrupt-" in name or name.endswith(dbfiles.SIDECARS):
                continue
            if (
                kind == "content"
                and rest == ".db"
                or (
                    kind == "session"
                    and name.endswith(".db")
                    and (rest == ".db" or rest[:2] == "__")
                )
            ):
                if path.is_file():
                    project(key).databases.append(
                        Database(path, kind, dbfiles.family_size(path), dbfiles.last_written(path))
                    )
            elif kind == "session" and path.is_file():
                project(key).extras.append(path)
    return {k: p for k, p in projects.items() if p.databases}


def _servers(root: Path) -> tuple[set[str], list[StaleFile]]:
    """Hashes of projects a running server names, and readiness markers of dead ones.

    Reads only: `readiness.live_servers` would delete the dead markers, which a dry run
    must not do.
    """
    import json

    live: set[str] = set()
    dead: list[StaleFile] = []
    folder = root / "servers"
    try:
        names = os.listdir(folder)
    except OSError:
        return live, dead
    for name in names:
        if not name.endswith(".json") or not name[:-5].isdigit():
            continue
        marker = folder / name
        if not _alive(int(name[:-5])):
            dead.append(StaleFile(marker, _size(marker), "server"))
            continue
        try:
            body = json.loads(marker.read_text(encoding="utf-8"))
            project_dir = str(body["project_dir"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        live.update({paths.project_hash(project_dir), paths.legacy_project_hash(project_dir)})
    return live, dead


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _inspect(db: Database, cutoff: str) -> tuple[Database, list[Expiry], str | None]:
    """Read one database without changing it: its pages, and which rows would expire.

    Returns the database with its page counts (or its problem), the expiries, and the
    project directory it names (session databases record it).
    """
    from dataclasses import replace

    expiries: list[Expiry] = []
    project_dir: str | None = None
    wal = _size(Path(f"{db.path}-wal"))
    try:
        con = dbfiles.open_readonly(db.path)
    except sqlite3.Error as exc:
        return replace(db, problem=f"cannot be opened: {exc}"), [], None
    try:
        version = int(con.execute("PRAGMA user_version").fetchone()[0])
        page_size = int(con.execute("PRAGMA page_size").fetchone()[0])
        pages = int(con.execute("PRAGMA page_count").fetchone()[0])
        free = int(con.execute("PRAGMA freelist_count").fetchone()[0])
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if db.kind == "content":
            from ctxmode.store.schema import MIGRATIONS as CONTENT

            if version > len(CONTENT):
                return replace(db, problem="written by a newer ctxmode"), [], None
            if "sources" in tables:
                expiries += _content_expiries(con, db, cutoff)
        else:
            from ctxmode.session.schema import MIGRATIONS as SESSION

            if version > len(SESSION):
                return replace(db, problem="written by a newer ctxmode"), [], None
            if {"session_meta", "session_events"} <= tables:
                expiries += _session_expiries(con, db, cutoff)
                row = con.execute(
                    "SELECT project_dir FROM session_meta WHERE project_dir != ''"
                    " ORDER BY started_at DESC LIMIT 1"
                ).fetchone()
                project_dir = row[0] if row else None
    except sqlite3.Error as exc:
        return replace(db, problem=f"cannot be read: {exc}"), [], None
    finally:
        con.close()
    db = replace(db, wal_bytes=wal, free_bytes=free * page_size, page_bytes=pages * page_size)
    return db, expiries, project_dir


def _estimate(size: int, share: float, stored: float) -> int:
    """Bytes rows take on disk: their share of the file, but no more than their text
    times the storage overhead (a small file is mostly schema, not rows)."""
    return int(min(size * min(share, 1.0), stored))


def _file_gone(path: str) -> bool:
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return True
    except OSError:
        return False  # unreadable is not gone: keep it
    return False


def _content_expiries(con: sqlite3.Connection, db: Database, cutoff: str) -> list[Expiry]:
    rows = con.execute("SELECT label, file_path, indexed_at, bytes FROM sources").fetchall()
    total = sum(r["bytes"] or 0 for r in rows) or 1
    old = [r for r in rows if r["file_path"] is None and r["indexed_at"] < cutoff]
    gone = [r for r in rows if r["file_path"] is not None and _file_gone(r["file_path"])]
    if not old and not gone:
        return []
    parts = []
    if old:
        parts.append(f"{len(old)} without a file indexed before {cutoff[:10]}")
    if gone:
        parts.append(f"{len(gone)} whose file was deleted")
    chosen = old + gone
    text = sum(r["bytes"] or 0 for r in chosen)
    return [
        Expiry(
            db.path,
            "sources",
            tuple(r["label"] for r in chosen),
            len(chosen),
            ", ".join(parts),
            _estimate(db.size, text / total, text * CONTENT_OVERHEAD),
        )
    ]


def _session_expiries(con: sqlite3.Connection, db: Database, cutoff: str) -> list[Expiry]:
    from ctxmode.session.db import RETENTION_DAYS, now_iso

    total = con.execute("SELECT coalesce(sum(length(data)), 0) FROM session_events").fetchone()[0]
    total = total or 1
    found: list[Expiry] = []
    old = con.execute(
        "SELECT m.session_id,"
        " (SELECT count(*) FROM session_events e WHERE e.session_id = m.session_id),"
        " (SELECT coalesce(sum(length(data)), 0) FROM session_events e"
        "  WHERE e.session_id = m.session_id)"
        " FROM session_meta m WHERE COALESCE(m.last_event_at, m.started_at) < ?",
        (cutoff,),
    ).fetchall()
    if old:
        events = sum(r[1] for r in old)
        data = sum(r[2] for r in old)
        found.append(
            Expiry(
                db.path,
                "sessions",
                tuple(r[0] for r in old),
                len(old),
                f"{len(old)} idle since before {cutoff[:10]} ({events} events)",
                _estimate(db.size, data / total, data * SESSION_OVERHEAD),
            )
        )
    # The same condition as SessionDB.delete_orphans, read-only.
    orphans = con.execute(
        "SELECT count(*), coalesce(sum(length(data)), 0) FROM session_events"
        " WHERE session_id NOT IN (SELECT session_id FROM session_meta)"
        " AND NOT (session_id GLOB '*-*-*-*-*' AND created_at >= ?)",
        (now_iso(-RETENTION_DAYS * DAY),),
    ).fetchone()
    if orphans[0]:
        found.append(
            Expiry(
                db.path,
                "orphans",
                (),
                orphans[0],
                f"{orphans[0]} events of no recorded session",
                _estimate(db.size, orphans[1] / total, orphans[1] * SESSION_OVERHEAD),
            )
        )
    return found


def _stale_files(root: Path, now: float) -> list[StaleFile]:
    cutoff = now - STALE_FILE_SECONDS
    markers = root / "markers"
    found = [
        StaleFile(entry, _size(entry), "marker")
        for entry in _entries(markers)
        if entry.is_file() and _mtime(entry) < cutoff
    ]
    for entry in _entries(root / "guidance"):
        newest, size = _tree_stats(entry)
        if newest < cutoff:
            found.append(StaleFile(entry, size, "guidance"))
    skip = {markers, root / "guidance"}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if Path(folder, d) not in skip]
        for name in files:
            path = Path(folder, name)
            if name.endswith(".tmp") and _mtime(path) < cutoff:
                found.append(StaleFile(path, _size(path), "tmp"))
    return found


def _entries(folder: Path) -> list[Path]:
    try:
        return sorted(folder.iterdir())
    except OSError:
        return []


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return float("inf")  # vanished or unreadable: not stale


def _tree_stats(path: Path) -> tuple[float, int]:
    """Newest mtime and total size of a file, or of a directory and everything in it."""
    newest, size = _mtime(path), _size(path) if path.is_file() else 0
    if path.is_dir() and not path.is_symlink():
        for folder, _, files in os.walk(path):
            newest = max(newest, _mtime(Path(folder)))
            for name in files:
                newest = max(newest, _mtime(Path(folder, name)))
                size += _size(Path(folder, name))
    return newest, size
