"""gc's inventory of the data root, read-only: projects and their databases, running
servers and processes that hold files open, rows that would expire, stale small files."""

import os
import re
import sqlite3
from pathlib import Path

from ctxmode import dbfiles, paths, readiness
from ctxmode.gc.limits import DAY
from ctxmode.gc.model import Database, Expiry, Note, Project, StaleFile, relative

STALE_FILE_SECONDS = DAY

# Bytes on disk per byte of row text, roughly: chunk text plus its FTS postings for
# sources, event data plus its indexes for sessions. Only used to estimate a plan.
CONTENT_OVERHEAD = 2.5
SESSION_OVERHEAD = 2.0

_HEX = frozenset("0123456789abcdef")

# A database family renamed away by `apply` right before it is unlinked:
# ``<name>.gc-<pid>`` and its sidecars (``<name>.gc-<pid>-wal`` …).
TRASH_MARK = dbfiles.TRASH_MARK
_TRASH = re.compile(r"\.gc-(\d+)(?:-wal|-shm|-journal)?$")


def _is_hash(text: str) -> bool:
    return len(text) == 16 and set(text) <= _HEX


def trash_pid(name: str) -> int | None:
    """The pid of the gc that renamed this file away, if it is such a file."""
    found = _TRASH.search(name)
    return int(found.group(1)) if found else None


def _unreadable(notes: list[Note] | None, root: Path, path: Path, exc: OSError) -> None:
    if notes is not None:
        why = exc.strerror or str(exc)
        notes.append(Note(relative(root, path), f"cannot be read ({why}); skipped"))


def scan(root: Path, notes: list[Note] | None = None) -> dict[str, Project]:
    """Every project with a database under `root`, with the small files that go with it.

    Databases are ``content/<hash>.db`` and ``sessions/<hash><suffix>.db`` (suffix empty
    or ``__…``); other files in ``sessions/`` named after the hash (events markdown, stats,
    cleanup markers, the cached worktree suffix) belong to the project and go with it.
    Damaged copies set aside (``….corrupt-<ms>``) and files `apply` is deleting
    (``….gc-<pid>``) are never part of a project. A folder or file that cannot be read
    (no permission) is skipped, with a note in `notes` when given.
    """
    projects: dict[str, Project] = {}

    def project(key: str) -> Project:
        return projects.setdefault(key, Project(key))

    for kind, folder in (("content", root / "content"), ("session", root / "sessions")):
        try:
            names = sorted(os.listdir(folder))
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:
            _unreadable(notes, root, folder, exc)
            continue
        for name in names:
            path = folder / name
            key, rest = name[:16], name[16:]
            if name.startswith(".") and name.endswith(".suffix") and _is_hash(name[1:17]):
                project(name[1:17]).extras.append(path)
                continue
            if (
                not _is_hash(key)
                or ".corrupt-" in name
                or name.endswith(dbfiles.SIDECARS)
                or trash_pid(name) is not None
            ):
                continue
            try:
                regular = path.is_file()
            except OSError as exc:
                _unreadable(notes, root, path, exc)
                continue
            if not regular:
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
                project(key).databases.append(
                    Database(path, kind, dbfiles.family_size(path), dbfiles.last_written(path))
                )
            elif kind == "session":
                project(key).extras.append(path)
    return {k: p for k, p in projects.items() if p.databases}


def servers(root: Path) -> tuple[set[str], list[StaleFile]]:
    """Hashes of projects a running server names, and readiness markers of dead ones.

    Reads only (`readiness.read_markers`): `readiness.live_servers` would delete the dead
    markers, which a dry run must not do.
    """
    live: set[str] = set()
    dead: list[StaleFile] = []
    for marker in readiness.read_markers(root):
        if not marker.live:
            dead.append(StaleFile(marker.path, file_size(marker.path), "server"))
        elif marker.project_dir:
            d = marker.project_dir
            live.update({paths.project_hash(d), paths.legacy_project_hash(d)})
    return live, dead


def file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def inspect_database(db: Database, cutoff: str) -> tuple[Database, list[Expiry], str | None]:
    """Read one database without changing it: its pages, and which rows would expire.

    Returns the database with its page counts (or its problem), the expiries, and the
    project directory it names (session databases record it).
    """
    from dataclasses import replace

    expiries: list[Expiry] = []
    project_dir: str | None = None
    wal = file_size(Path(f"{db.path}-wal"))
    try:
        con = dbfiles.open_readonly(db.path)
    except (sqlite3.Error, OSError) as exc:
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


def file_gone(path: str) -> bool:
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
    gone = [r for r in rows if r["file_path"] is not None and file_gone(r["file_path"])]
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


def stale_files(root: Path, now: float) -> list[StaleFile]:
    """Small files nobody needs any more: hook markers and guidance directories older
    than a day, ``*.tmp`` files older than a day, and files of databases a gc was
    deleting when it stopped (its process is gone). Unreadable entries are skipped."""
    cutoff = now - STALE_FILE_SECONDS
    markers = root / "markers"
    found = [
        StaleFile(entry, file_size(entry), "marker")
        for entry in _entries(markers)
        if _is_file(entry) and file_mtime(entry) < cutoff
    ]
    for entry in _entries(root / "guidance"):
        newest, size = tree_stats(entry)
        if newest < cutoff:
            found.append(StaleFile(entry, size, "guidance"))
    for databases in (root / "content", root / "sessions"):
        for entry in _entries(databases):
            pid = trash_pid(entry.name)
            if pid is not None and not readiness.pid_alive(pid) and _is_file(entry):
                found.append(StaleFile(entry, file_size(entry), "trash"))
    skip = {markers, root / "guidance"}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if Path(folder, d) not in skip]
        for name in files:
            path = Path(folder, name)
            if name.endswith(".tmp") and file_mtime(path) < cutoff:
                found.append(StaleFile(path, file_size(path), "tmp"))
    return found


def _entries(folder: Path) -> list[Path]:
    try:
        return sorted(folder.iterdir())
    except OSError:
        return []


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:
        return False


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir() and not path.is_symlink()
    except OSError:
        return False


def file_mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return float("inf")  # vanished or unreadable: not stale


def tree_stats(path: Path) -> tuple[float, int]:
    """Newest mtime and total size of a file, or of a directory and everything in it."""
    newest, size = file_mtime(path), file_size(path) if _is_file(path) else 0
    if _is_dir(path):
        for folder, _, files in os.walk(path):
            newest = max(newest, file_mtime(Path(folder)))
            for name in files:
                newest = max(newest, file_mtime(Path(folder, name)))
                size += file_size(Path(folder, name))
    return newest, size
