"""gc's apply: carry a plan out, re-checking every step against the disk first.

Processes are looked up in batches (`dbfiles.holders_of` walks every process once per
call): once for all projects about to be deleted, once more on their renamed files, and
once before compacting. A database another process has open (or whose project a running
server names) gets only a passive checkpoint: VACUUM and a truncating checkpoint need
the database to themselves and would make that process's hooks and tools wait.
"""

import errno
import os
import shutil
import sqlite3
import time
from pathlib import Path
from typing import NamedTuple

from ctxmode import db as sqlitedb
from ctxmode import dbfiles, readiness
from ctxmode.errors import CtxError
from ctxmode.gc.inventory import (
    STALE_FILE_SECONDS,
    TRASH_MARK,
    file_gone,
    file_mtime,
    file_size,
    scan,
    servers,
    trash_pid,
    tree_stats,
)
from ctxmode.gc.limits import DAY, Budget
from ctxmode.gc.model import (
    Action,
    Deletion,
    Expiry,
    Note,
    Plan,
    Report,
    StaleFile,
    deletion_action,
    file_actions,
    human,
    iso,
    over_budget_note,
    project_of,
    relative,
    total_freed,
    worth_vacuum,
)

BUSY_TIMEOUT_S = 2.0  # gc waits this long for a lock held by a live process, then moves on

Outcome = Action | Note | None


def _pids(held: dict[Path, list[int]], dbs: list[Path]) -> list[int]:
    return sorted({pid for db in dbs for pid in held.get(db, [])})


class Checked(NamedTuple):
    """A deletion that passed the last checks, and the state its databases were in then."""

    deletion: Deletion
    written: dict[Path, dbfiles.Written]


def _still_deletable(
    root: Path, deletions: list[Deletion], max_age: float, now: float
) -> tuple[list[Checked], list[Note]]:
    """The planned deletions that may still go, checked right before: no running server
    names the project, no process has one of its databases open (one pass over the
    processes for all of them), and a project planned for its age was not used since.

    Each database's written state is taken first: a write after it, by a process too
    quick to be seen holding the file, is found by `_delete_projects` on the renamed
    files, and the project stays."""
    if not deletions:
        return [], []
    written = {
        db.path: dbfiles.written_state(db.path) for d in deletions for db in d.project.databases
    }
    served, _ = servers(root)
    held = dbfiles.holders_of(db.path for d in deletions for db in d.project.databases)
    chosen: list[Checked] = []
    notes: list[Note] = []
    for d in deletions:
        project = d.project
        why = None
        pids = _pids(held, [db.path for db in project.databases])
        if project.hash in served:
            why = "a running ctxmode server uses it"
        elif pids:
            why = "in use by process " + ", ".join(str(p) for p in pids)
        elif d.reason == "age":
            used = max(dbfiles.last_written(db.path) for db in project.databases)
            if now - used <= max_age:
                why = "used again since the plan was made"
        if why is None:
            chosen.append(Checked(d, {db.path: written[db.path] for db in project.databases}))
        else:
            notes.append(Note(project.label(), f"not deleted: {why}"))
    return chosen, notes


def trash_name(db: Path) -> Path:
    """Where `apply` moves a database right before unlinking it: the same folder (a
    rename, never a copy), a name no reader opens, its sidecars named after it."""
    return db.with_name(f"{db.name}{TRASH_MARK}{os.getpid()}")


Moves = list[tuple[Path, Path]]  # (original name, trash name) of every file moved


def _to_trash(dbs: list[Path]) -> Moves:
    """Rename every file of these databases to its trash name; on failure put back what
    moved and raise.

    The main file goes first, its sidecars after it. From then on no process makes fresh
    sidecars for the old main file: ctxmode's openers wait while gc has it aside
    (`dbfiles.wait_for_gc`), and SQLite cannot open a ``-wal`` or ``-journal`` without
    the main file under its name (a "disk I/O error" `db.connect` retries after the wait).
    A process that already had the files open is caught holding the renamed ones.
    (Sidecars first, as before, let a process open the old main file in between, write
    to fresh sidecars and close them again unseen: its write was deleted with the rest,
    and a hook's ``-wal`` not yet checkpointed was left behind.)
    """
    moved: Moves = []
    try:
        for db in dbs:
            trash = trash_name(db)
            for suffix in ("", *dbfiles.SIDECARS):
                src, dst = Path(f"{db}{suffix}"), Path(f"{trash}{suffix}")
                if not os.path.lexists(src):
                    continue
                if os.path.lexists(dst):
                    raise FileExistsError(errno.EEXIST, "a leftover of an earlier gc", str(dst))
                os.rename(src, dst)
                moved.append((src, dst))
    except OSError:
        _restore(moved)
        raise
    return moved


def _restore(moved: Moves) -> list[Path]:
    """Put renamed files back, never over a file that appeared under the old name
    meanwhile; return the files left under their trash names (collected later, once this
    process is gone and nobody holds them).

    Sidecars go back before their main file, whose name is what lets openers in again.
    A database whose main file's name was taken meanwhile stays whole under its trash
    name: its ``-wal`` or ``-shm`` next to another database's main file would be read as
    that database's.
    """
    left: list[Path] = []
    databases: dict[Path, Moves] = {}
    for src, dst in moved:
        main = Path(str(src).removesuffix(_sidecar_suffix(src.name)))
        databases.setdefault(main, []).append((src, dst))
    for main, files in databases.items():
        if os.path.lexists(main):
            left.extend(dst for _, dst in files)
            continue
        for src, dst in sorted(files, key=lambda m: m[0] == main):
            try:
                if os.path.lexists(src):
                    raise FileExistsError(errno.EEXIST, "taken", str(src))
                os.rename(dst, src)
            except OSError:  # noqa: PERF203 - each file on its own
                left.append(dst)
    return left


def _sidecar_suffix(name: str) -> str:
    return next((suffix for suffix in dbfiles.SIDECARS if name.endswith(suffix)), "")


def _delete_projects(root: Path, chosen: list[Checked]) -> list[Outcome]:
    """Delete the chosen projects, closing the gap between the last check and the unlink.

    Every database family is renamed to its trash name first (ctxmode's own openers
    wait while it is, `dbfiles.wait_for_gc`), then the processes are checked once more,
    on the renamed files: one that opened a database after the check holds a renamed
    file, and that project is renamed back and kept. So is one written since the check
    (its written state changed) by a process that closed it again before that look: its
    write must not go with the old data. Only then are the files unlinked, so no process
    is left writing to a deleted file and no write made after the check is lost.
    """
    if not chosen:
        return []
    outcomes: list[Outcome] = []
    moved: list[tuple[Checked, Moves]] = []
    for c in chosen:
        try:
            moved.append((c, _to_trash([db.path for db in c.deletion.project.databases])))
        except OSError as exc:  # noqa: PERF203 - Windows: a file another process has open
            outcomes.append(Note(c.deletion.project.label(), f"not deleted: {exc}"))
    held = dbfiles.holders_of(
        trash_name(db.path) for c, _ in moved for db in c.deletion.project.databases
    )
    for c, files in moved:
        d = c.deletion
        project = d.project
        pids = _pids(held, [trash_name(db.path) for db in project.databases])
        written = any(
            dbfiles.written_state(trash_name(db.path)) != c.written.get(db.path)
            for db in project.databases
        )
        if pids or written:
            left = _restore(files)
            if pids:
                why = f"process {', '.join(map(str, pids))} opened it while it was being deleted"
            else:
                why = "it was written while it was being deleted"
            if left:
                why += f"; a new database took its name, the old files stay as {left[0].name}"
            outcomes.append(Note(project.label(), f"not deleted: {why}"))
            continue
        freed = 0
        try:
            for _, trash in files:
                size = file_size(trash)
                trash.unlink(missing_ok=True)
                freed += size
            for extra in project.extras:
                size = file_size(extra)
                extra.unlink(missing_ok=True)
                freed += size
        except OSError as exc:
            outcomes.append(Note(project.label(), f"only partly deleted ({human(freed)}): {exc}"))
            continue
        outcomes.append(deletion_action(d, freed, False))
    return outcomes


def _expire(root: Path, e: Expiry, limits: Budget, now: float) -> Outcome:
    cutoff = iso(now - limits.max_age_days * DAY)
    try:
        if e.kind == "sources":
            count = _expire_sources(e, cutoff)
        elif e.kind == "sessions":
            count = _expire_sessions(e, cutoff)
        else:
            from ctxmode.session.db import SessionDB

            with SessionDB(e.db) as sdb:
                count = sdb.delete_orphans()
    except (CtxError, sqlite3.Error, OSError) as exc:
        return Note(relative(root, e.db), f"could not expire {e.kind}: {exc}")
    detail = e.detail if count == e.count else f"{count} (planned: {e.detail})"
    return Action(f"expire-{e.kind}", relative(root, e.db), detail, count, None, False)


def _expire_sessions(e: Expiry, cutoff: str) -> int:
    """Delete the planned sessions that are still idle since before the cutoff, and no
    other: one that became active again stays, one that went idle after the plan waits
    for the next run. `SessionDB.delete_session` folds its counters into the project's
    totals. One short transaction per session, so hooks writing this database wait
    for one session at most."""
    from ctxmode.session.db import SessionDB

    count = 0
    with SessionDB(e.db) as sdb:
        for session_id in e.items:
            with sdb.transaction():
                meta = sdb.meta(session_id)
                if meta is None or (meta.last_event_at or meta.started_at) >= cutoff:
                    continue
                sdb.delete_session(session_id)
                count += 1
    return count


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
            stale = file_gone(path) if path is not None else indexed < cutoff
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


def _compact_all(root: Path, dbs: list[Path]) -> list[Outcome]:
    """Compact these databases, gently those in use (one pass over the processes)."""
    if not dbs:
        return []
    served, _ = servers(root)
    held = dbfiles.holders_of(dbs)
    outcomes = []
    for db in dbs:
        pids = held[db]
        user = None
        if pids:
            user = "process " + ", ".join(str(p) for p in pids)
        elif project_of(db) in served:
            user = "a running ctxmode server"
        with dbfiles.keep_mtime(db):
            outcomes.append(_compact(root, db, user))
    return outcomes


def _compact(root: Path, db: Path, user: str | None = None) -> Outcome:
    """Checkpoint the WAL into the main file and truncate it; VACUUM when worth it.

    A database in use (`user` says by whom) gets a PASSIVE checkpoint only: it copies
    what no reader still needs and waits for nobody; VACUUM is skipped (with a note
    when it would have paid).
    """
    if not db.is_file():
        return None
    from urllib.request import pathname2url

    before = dbfiles.family_size(db)
    vacuum = skipped = False
    try:
        con = sqlite3.connect(
            f"file:{pathname2url(str(db.absolute()))}?mode=rw",
            uri=True,
            timeout=BUSY_TIMEOUT_S,
            isolation_level=None,
        )
    except sqlite3.Error as exc:
        return Note(relative(root, db), f"not compacted: {exc}")
    try:
        page_size = int(con.execute("PRAGMA page_size").fetchone()[0])
        pages = int(con.execute("PRAGMA page_count").fetchone()[0])
        free = int(con.execute("PRAGMA freelist_count").fetchone()[0])
        worth = worth_vacuum(free * page_size, pages * page_size)
        vacuum, skipped = worth and user is None, worth and user is not None
        if vacuum:
            con.execute("VACUUM")
        mode = "TRUNCATE" if user is None else "PASSIVE"
        con.execute(f"PRAGMA wal_checkpoint({mode})").fetchall()
    except sqlite3.Error as exc:
        return Note(relative(root, db), f"not compacted: {exc}")
    finally:
        con.close()
    if skipped:
        return Note(relative(root, db), f"not vacuumed: in use by {user}; checkpointed only")
    freed = before - dbfiles.family_size(db)
    if freed <= 0 and not vacuum:
        return None
    detail = "checkpoint + vacuum" if vacuum else "checkpoint"
    return Action("compact", relative(root, db), detail, 1, freed, False)


def _remove_file(item: StaleFile, now: float, held: dict[Path, list[int]]) -> bool:
    if item.kind == "server":
        return False  # readiness.live_servers removes those, see `apply`
    if item.kind == "trash":
        pid = trash_pid(item.path.name)
        if held.get(item.path) or pid is None or readiness.pid_alive(pid):
            return False
    elif item.kind == "guidance":
        if tree_stats(item.path)[0] >= now - STALE_FILE_SECONDS:
            return False
        if item.path.is_dir() and not item.path.is_symlink():
            shutil.rmtree(item.path, ignore_errors=True)
            return not item.path.exists()
    elif file_mtime(item.path) >= now - STALE_FILE_SECONDS:
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

    def record(outcomes: list[Outcome]) -> None:
        for outcome in outcomes:
            if isinstance(outcome, Action):
                actions.append(outcome)
            elif isinstance(outcome, Note):
                notes.append(outcome)

    aged, kept = _still_deletable(
        p.root, [d for d in p.deletions if d.reason == "age"], max_age, now
    )
    notes += kept
    record(_delete_projects(p.root, aged))
    for e in p.expiries:
        with dbfiles.keep_mtime(e.db):
            record([_expire(p.root, e, p.budget, now)])

    budgeted = [d for d in p.deletions if d.reason == "budget"]
    later = {d.project.hash for d in budgeted}
    survivors = [db.path for db in p.survivors()]
    record(_compact_all(p.root, [db for db in survivors if project_of(db) not in later]))
    record(_delete_projects(p.root, _over_budget(p, budgeted, notes, max_age, now)))
    spared = [db for db in survivors if project_of(db) in later and db.exists()]
    record(_compact_all(p.root, spared))

    trash = [f.path for f in p.files if f.kind == "trash"]
    held = dbfiles.holders_of(trash) if trash else {}
    removed = [f for f in p.files if _remove_file(f, now, held)]
    if any(f.kind == "server" for f in p.files):
        readiness.live_servers(p.root)
        removed += [f for f in p.files if f.kind == "server" and not f.path.exists()]
    actions += file_actions(removed, False)

    report = Report(False, p.budget, actions, notes, p.total, _measure(p), total_freed(actions))
    if report.over_budget:
        report.notes.append(over_budget_note(report.total_after, p.budget))
    return report


def _over_budget(
    p: Plan, budgeted: list[Deletion], notes: list[Note], max_age: float, now: float
) -> list[Checked]:
    """The size budget's candidates (least recently used first) that must go for the
    measured total to meet the budget, among those still deletable; notes for the rest."""
    total = _measure(p) if budgeted else 0
    if total <= p.budget.max_bytes:
        notes.extend(
            Note(d.project.label(), "not deleted: the budget is met without it") for d in budgeted
        )
        return []
    deletable, kept = _still_deletable(p.root, budgeted, max_age, now)
    notes.extend(kept)
    chosen = []
    for c in deletable:
        project = c.deletion.project
        if total <= p.budget.max_bytes:
            notes.append(Note(project.label(), "not deleted: the budget is met without it"))
            continue
        chosen.append(c)
        total -= sum(dbfiles.family_size(db.path) for db in project.databases)
    return chosen


def _measure(p: Plan) -> int:
    """Bytes all databases under the root take now (a fresh scan: others may write)."""
    return sum(project.size for project in scan(p.root).values())
