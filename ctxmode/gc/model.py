"""gc's data: what the inventory finds, what a plan lists, what a report tells; and the
small helpers that turn them into report lines (shared by `plan` previews and `apply`,
so public to the package; not part of `ctxmode.gc`'s API)."""

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ctxmode.gc.limits import MB, Budget

VACUUM_MIN_FRACTION = 0.10
VACUUM_MIN_BYTES = MB


@dataclass(frozen=True)
class Database:
    path: Path
    kind: str  # "content" | "session"
    size: int
    last_used: float
    problem: str | None = None  # why it is left alone (damaged, written by a newer ctxmode)
    wal_bytes: int = 0
    free_bytes: int = 0
    page_bytes: int = 0


@dataclass
class Project:
    hash: str
    databases: list[Database] = field(default_factory=list)
    extras: list[Path] = field(default_factory=list)  # the worktree-suffix cache
    project_dir: str | None = None
    holders: list[int] = field(default_factory=list)
    server: bool = False

    @property
    def size(self) -> int:
        return sum(d.size for d in self.databases)

    @property
    def last_used(self) -> float:
        return max((d.last_used for d in self.databases), default=0.0)

    @property
    def live(self) -> bool:
        return bool(self.holders) or self.server

    @property
    def readable(self) -> bool:
        return all(d.problem is None for d in self.databases)

    def why_live(self) -> str:
        if self.server:
            return "a running ctxmode server uses it"
        return "in use by process " + ", ".join(str(p) for p in self.holders)

    def label(self) -> str:
        return f"{self.hash} ({self.project_dir})" if self.project_dir else self.hash


@dataclass(frozen=True)
class Expiry:
    db: Path
    kind: str  # "sessions" | "orphans" | "sources"
    items: tuple[str, ...]  # session ids, or source labels
    count: int  # sessions, orphaned events, or sources
    detail: str
    estimate: int  # bytes the rows take, roughly


@dataclass(frozen=True)
class Deletion:
    project: Project
    reason: str  # "age" | "budget"
    detail: str


@dataclass(frozen=True)
class StaleFile:
    path: Path
    size: int
    kind: str  # "marker" | "guidance" | "server" | "tmp" | "trash"


@dataclass(frozen=True)
class Note:
    target: str
    message: str


@dataclass(frozen=True)
class Action:
    """One line of the report: what was (or would be) done, and the bytes it frees."""

    action: str  # delete-project | expire-sessions | expire-orphans | expire-sources |
    #              compact | remove-files
    target: str
    detail: str
    count: int
    bytes: int | None  # None: freed by the compaction that follows, counted there
    estimated: bool


@dataclass
class Plan:
    root: Path
    budget: Budget
    now: float
    projects: list[Project]
    deletions: list[Deletion]
    expiries: list[Expiry]
    files: list[StaleFile]
    notes: list[Note]
    total: int
    estimated_after: int

    @property
    def over_budget(self) -> bool:
        return self.estimated_after > self.budget.max_bytes

    def survivors(self) -> list[Database]:
        gone = {d.project.hash for d in self.deletions if d.reason == "age"}
        return [
            db
            for p in self.projects
            if p.hash not in gone
            for db in p.databases
            if db.problem is None
        ]

    def preview(self) -> "Report":
        """The report of a dry run: what `apply` would do, with estimated bytes."""
        actions = [deletion_action(d, d.project.size, True) for d in self.deletions]
        actions += [_expiry_action(self.root, e) for e in self.expiries]
        budgeted = {d.project.hash for d in self.deletions}
        expired: dict[Path, int] = {}
        for e in self.expiries:
            expired[e.db] = expired.get(e.db, 0) + e.estimate
        for db in self.survivors():
            if project_of(db.path) in budgeted:
                continue
            freed, vacuum = reclaim(db, expired.get(db.path, 0))
            if freed:
                detail = "checkpoint + vacuum" if vacuum else "checkpoint"
                actions.append(
                    Action("compact", relative(self.root, db.path), detail, 1, freed, True)
                )
        actions += file_actions(self.files, True)
        notes = list(self.notes)
        if self.over_budget:
            notes.append(over_budget_note(self.estimated_after, self.budget))
        return Report(
            True,
            self.budget,
            actions,
            notes,
            self.total,
            self.estimated_after,
            total_freed(actions),
        )


@dataclass
class Report:
    dry_run: bool
    budget: Budget
    actions: list[Action]
    notes: list[Note]
    total_before: int
    total_after: int
    freed: int

    @property
    def over_budget(self) -> bool:
        return self.total_after > self.budget.max_bytes


def total_freed(actions: Iterable[Action]) -> int:
    return sum(a.bytes or 0 for a in actions)


def relative(root: Path, path: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def project_of(db: Path) -> str:
    return db.stem[:16]


def worth_vacuum(free_bytes: int, page_bytes: int) -> bool:
    return free_bytes > VACUUM_MIN_BYTES or (
        page_bytes > 0 and free_bytes > VACUUM_MIN_FRACTION * page_bytes
    )


def reclaim(db: Database, expired: int) -> tuple[int, bool]:
    """Bytes compacting the database would free once `expired` bytes of rows are gone
    (estimate), and whether that takes a VACUUM."""
    free = db.free_bytes + expired
    vacuum = worth_vacuum(free, db.page_bytes)
    return min(db.size, db.wal_bytes + (free if vacuum else 0)), vacuum


def over_budget_note(total: int, limit: Budget) -> Note:
    return Note(
        "budget",
        f"still over budget ({human(total)} of {human(limit.max_bytes)}): what remains is "
        "in use, the current project's, or unreadable",
    )


def human(n: int) -> str:
    """Bytes for people: KB below a megabyte, else MB with one decimal (1 MB = 2**20)."""
    if abs(n) < 1024:
        return f"{n} B"
    if abs(n) < MB:
        return f"{n / 1024:.0f} KB"
    return f"{n / MB:.1f} MB"


def iso(epoch: float) -> str:
    """The databases' timestamp format (ISO-8601 UTC, milliseconds, Z): sorts as text."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(epoch)) + f".{int(epoch % 1 * 1000):03d}Z"


def deletion_action(d: Deletion, freed: int, estimated: bool) -> Action:
    files = len(d.project.databases)
    return Action(
        "delete-project",
        d.project.label(),
        f"{d.detail} ({files} database{'s' if files != 1 else ''})",
        files,
        freed,
        estimated,
    )


def _expiry_action(root: Path, e: Expiry) -> Action:
    # Rows free no bytes by themselves: the compaction that follows does (counted there).
    return Action(f"expire-{e.kind}", relative(root, e.db), e.detail, e.count, None, True)


_FILE_KINDS = {
    "marker": "stale hook markers",
    "guidance": "stale guidance directories",
    "server": "readiness markers of dead servers",
    "tmp": "leftover temporary files",
    "trash": "files of databases an interrupted gc was deleting",
}


def file_actions(files: list[StaleFile], estimated: bool) -> list[Action]:
    actions = []
    for kind, text in _FILE_KINDS.items():
        chosen = [f for f in files if f.kind == kind]
        if chosen:
            actions.append(
                Action(
                    "remove-files",
                    kind,
                    f"{text}: {len(chosen)}",
                    len(chosen),
                    sum(f.size for f in chosen),
                    estimated,
                )
            )
    return actions
