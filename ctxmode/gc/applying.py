"""gc's apply: carry a plan out, re-checking every step against the disk first."""

import shutil
import sqlite3
import time
from pathlib import Path

from ctxmode import db as sqlitedb
from ctxmode import dbfiles
from ctxmode.errors import CtxError
from ctxmode.gc.inventory import (
    STALE_FILE_SECONDS,
    _file_gone,
    _mtime,
    _scan,
    _servers,
    _size,
    _tree_stats,
)
from ctxmode.gc.limits import DAY, Budget
from ctxmode.gc.model import (
    Action,
    Deletion,
    Expiry,
    Note,
    Plan,
    Project,
    Report,
    StaleFile,
    _deletion_action,
    _file_actions,
    _freed,
    _iso,
    _over_budget_note,
    _project_of,
    _rel,
    _worth_vacuum,
    human,
)

BUSY_TIMEOUT_S = 2.0  # gc waits this long for a lock held by a live process, then moves on


def _live_now(root: Path, project: Project) -> str | None:
    """Why a project planned for deletion must stay after all, checked right before."""
    served, _ = _servers(root)
    if project.hash in served:
        return "a running ctxmode server uses it"
    held = dbfiles.holders_of(db.path for db in project.databases)
    pids = sorted({pid for pids in held.values() for pid in pids})
    if pids:
        return "in use by process " + ", ".join(str(p) for p in pids)
    return None


def _delete_project(root: Path, d: Deletion, max_age: float, now: float) -> Action | Note:
    project = d.project
    why = _live_now(root, project)
    if why is None and d.reason == "age":
        used = max(dbfiles.last_written(db.path) for db in project.databases)
        if now - used <= max_age:
            why = "used again since the plan was made"
    if why is not None:
        return Note(project.label(), f"not deleted: {why}")
    freed = 0
    try:
        for db in project.databases:
            size = dbfiles.family_size(db.path)
            dbfiles.unlink_family(db.path)
            freed += size
        for extra in project.extras:
            size = _size(extra)
            extra.unlink(missing_ok=True)
            freed += size
    except OSError as exc:
        return Note(project.label(), f"only partly deleted ({human(freed)}): {exc}")
    return _deletion_action(d, freed, False)


def _expire(root: Path, e: Expiry, limits: Budget, now: float) -> Action | Note:
    try:
        if e.kind == "sources":
            count = _expire_sources(e, _iso(now - limits.max_age_days * DAY))
        else:
            from ctxmode.session.db import SessionDB

            with SessionDB(e.db) as sdb:
                if e.kind == "sessions":
                    count = len(sdb.cleanup_old_sessions(limits.max_age_days))
                else:
                    count = sdb.delete_orphans()
    except (CtxError, sqlite3.Error, OSError) as exc:
        return Note(_rel(root, e.db), f"could not expire {e.kind}: {exc}")
    detail = e.detail if count == e.count else f"{count} (planned: {e.detail})"
    return Action(f"expire-{e.kind}", _rel(root, e.db), detail, count, None, False)


def _expire_sources(e: Expiry, cutoff: str) -> int:
    """Delete the planned sources that still qualify, through the store (FTS rows too)."""
    from ctxmode.store import ContentStore

    count = 0
    with ContentStore(e.db) as store:
        for label in e.items:
            row = store.connection.execute(
                "SELECT file_path, indexed_at FROM sources WHERE label = ?", (label,)
            ).fetchone()
            if row is None:
                continue
            path, indexed = row["file_path"], row["indexed_at"]
            stale = _file_gone(path) if path is not None else indexed < cutoff
            if stale and store.delete_source(label):
                count += 1
        if count:
            # FTS5 deletes leave tombstones in the index segments, which VACUUM cannot
            # shrink; merging the segments drops them (a big expired dump: ~3 MB -> 64 KB).
            con = store.connection
            sqlitedb.retry_busy(lambda: _fts_optimize(con))
    return count


def _fts_optimize(con: sqlite3.Connection) -> None:
    with sqlitedb.write_transaction(con):
        con.execute("INSERT INTO chunks_fts(chunks_fts) VALUES('optimize')")


def _compact(root: Path, db: Path) -> Action | Note | None:
    """Checkpoint the WAL into the main file and truncate it; VACUUM when worth it."""
    if not db.is_file():
        return None
    from urllib.request import pathname2url

    before = dbfiles.family_size(db)
    vacuum = False
    try:
        con = sqlite3.connect(
            f"file:{pathname2url(str(db.absolute()))}?mode=rw",
            uri=True,
            timeout=BUSY_TIMEOUT_S,
            isolation_level=None,
        )
    except sqlite3.Error as exc:
        return Note(_rel(root, db), f"not compacted: {exc}")
    try:
        page_size = int(con.execute("PRAGMA page_size").fetchone()[0])
        pages = int(con.execute("PRAGMA page_count").fetchone()[0])
        free = int(con.execute("PRAGMA freelist_count").fetchone()[0])
        vacuum = _worth_vacuum(free * page_size, pages * page_size)
        if vacuum:
            con.execute("VACUUM")
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    except sqlite3.Error as exc:
        return Note(_rel(root, db), f"not compacted: {exc}")
    finally:
        con.close()
    freed = before - dbfiles.family_size(db)
    if freed <= 0 and not vacuum:
        return None
    detail = "checkpoint + vacuum" if vacuum else "checkpoint"
    return Action("compact", _rel(root, db), detail, 1, freed, False)


def _remove_file(item: StaleFile, now: float) -> bool:
    if item.kind == "server":
        return False  # readiness.live_servers removes those, see `apply`
    if item.kind == "guidance":
        if _tree_stats(item.path)[0] >= now - STALE_FILE_SECONDS:
            return False
        if item.path.is_dir() and not item.path.is_symlink():
            shutil.rmtree(item.path, ignore_errors=True)
            return not item.path.exists()
    elif _mtime(item.path) >= now - STALE_FILE_SECONDS:
        return False
    try:
        item.path.unlink()
    except OSError:
        return False
    return True


def apply(p: Plan) -> Report:
    """Carry out a plan; every step is checked again against the disk first.

    Databases of projects deleted for age go first, then expired rows, then surviving
    databases are compacted and measured; projects planned for the size budget are then
    deleted in least-recently-used order only while the measured total is still over it.
    Nothing fails the whole run: a step that cannot be done becomes a note.
    """
    actions: list[Action] = []
    notes = list(p.notes)
    max_age = p.budget.max_age_days * DAY
    now = time.time()

    def record(outcome: Action | Note | None) -> None:
        if isinstance(outcome, Action):
            actions.append(outcome)
        elif isinstance(outcome, Note):
            notes.append(outcome)

    for d in (d for d in p.deletions if d.reason == "age"):
        record(_delete_project(p.root, d, max_age, now))
    for e in p.expiries:
        with dbfiles.keep_mtime(e.db):
            record(_expire(p.root, e, p.budget, now))

    budgeted = [d for d in p.deletions if d.reason == "budget"]
    later = {d.project.hash for d in budgeted}
    survivors = p.survivors()
    for db in survivors:
        if _project_of(db.path) not in later:
            with dbfiles.keep_mtime(db.path):
                record(_compact(p.root, db.path))
    for d in budgeted:
        if _measure(p) <= p.budget.max_bytes:
            notes.append(Note(d.project.label(), "not deleted: the budget is met without it"))
            continue
        record(_delete_project(p.root, d, max_age, now))
    for db in survivors:  # the budget's candidates that were spared
        if _project_of(db.path) in later and db.path.exists():
            with dbfiles.keep_mtime(db.path):
                record(_compact(p.root, db.path))

    removed = [f for f in p.files if _remove_file(f, now)]
    if any(f.kind == "server" for f in p.files):
        from ctxmode.readiness import live_servers

        live_servers(p.root)
        removed += [f for f in p.files if f.kind == "server" and not f.path.exists()]
    actions += _file_actions(removed, False)

    report = Report(False, p.budget, actions, notes, p.total, _measure(p), _freed(actions))
    if report.over_budget:
        report.notes.append(_over_budget_note(report.total_after, p.budget))
    return report


def _measure(p: Plan) -> int:
    """Bytes all databases under the root take now (a fresh scan: others may write)."""
    return sum(project.size for project in _scan(p.root).values())
