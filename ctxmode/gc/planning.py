"""gc's plan: what would be deleted, expired and removed to keep within the budget."""

import time
from pathlib import Path

from ctxmode import dbfiles, paths
from ctxmode.gc.inventory import inspect_database, scan, servers, stale_files
from ctxmode.gc.limits import DAY, Budget, budget
from ctxmode.gc.model import (
    Deletion,
    Expiry,
    Note,
    Plan,
    Project,
    iso,
    project_of,
    reclaim,
    relative,
)


def plan(
    root: Path | None = None,
    limits: Budget | None = None,
    *,
    current: Path | None = None,
    now: float | None = None,
) -> Plan:
    """What gc would do under `root` (default: the data root), reading only.

    `current` is the project gc runs for; it is never deleted whole.
    """
    root = paths.data_root() if root is None else root
    limits = budget() if limits is None else limits
    now = time.time() if now is None else now
    max_age = limits.max_age_days * DAY
    cutoff = iso(now - max_age)
    protected = (
        set()
        if current is None
        else {paths.project_hash(current), paths.legacy_project_hash(current)}
    )

    notes: list[Note] = []
    projects = scan(root, notes)
    served, dead_servers = servers(root)
    held = dbfiles.holders_of(db.path for p in projects.values() for db in p.databases)
    expiries: list[Expiry] = []
    for project in projects.values():
        project.server = project.hash in served
        project.holders = sorted({pid for db in project.databases for pid in held[db.path]})
        inspected = []
        for db in project.databases:
            checked, found, project_dir = inspect_database(db, cutoff)
            inspected.append(checked)
            project.project_dir = project.project_dir or project_dir
            if checked.problem:
                notes.append(
                    Note(relative(root, db.path), f"{checked.problem}; left alone, not deleted")
                )
            expiries += found
        project.databases = inspected

    deletions: list[Deletion] = []
    keep: list[Project] = []
    for project in sorted(projects.values(), key=lambda p: p.last_used):
        idle = now - project.last_used
        if idle <= max_age:
            keep.append(project)
            continue
        days = f"unused for {int(idle // DAY)} days"
        if project.hash in protected:
            notes.append(Note(project.label(), f"{days}, kept: it is the current project"))
        elif project.live:
            notes.append(Note(project.label(), f"{days}, kept: {project.why_live()}"))
        elif not project.readable:
            notes.append(Note(project.label(), f"{days}, kept: a database of it is unreadable"))
        else:
            deletions.append(Deletion(project, "age", days))
            continue
        keep.append(project)
    gone = {d.project.hash for d in deletions}
    expiries = [e for e in expiries if project_of(e.db) not in gone]

    # Estimated size of each kept project once its rows are expired and it is compacted.
    expired: dict[Path, int] = {}
    for e in expiries:
        expired[e.db] = expired.get(e.db, 0) + e.estimate
    remaining: dict[str, int] = {}
    for project in keep:
        left = 0
        for db in project.databases:
            if db.problem is not None:
                left += db.size
                continue
            left += db.size - reclaim(db, expired.get(db.path, 0))[0]
        remaining[project.hash] = left
    after = sum(remaining.values())
    for project in keep:  # least recently used first
        if after <= limits.max_bytes:
            break
        if project.hash in protected or project.live or not project.readable:
            continue
        deletions.append(Deletion(project, "budget", "least recently used, over the size budget"))
        after -= remaining[project.hash]

    return Plan(
        root=root,
        budget=limits,
        now=now,
        projects=list(projects.values()),
        deletions=deletions,
        expiries=expiries,
        files=stale_files(root, now) + dead_servers,
        notes=notes,
        total=sum(p.size for p in projects.values()),
        estimated_after=after,
    )
