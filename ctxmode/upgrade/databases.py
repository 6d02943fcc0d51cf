"""The schema version of every database under the data root, and migrating one."""

import sqlite3
from pathlib import Path
from typing import NamedTuple

from ctxmode import dbfiles, paths
from ctxmode.errors import CtxError


class DbStatus(NamedTuple):
    path: Path
    kind: str  # content | session
    version: int | None  # None: unreadable
    current: int  # the schema version this ctxmode writes
    problem: str | None = None

    @property
    def state(self) -> str:
        if self.version is None:
            return "unreadable"
        if self.version < self.current:
            return "behind"
        return "newer" if self.version > self.current else "current"


def _schemas() -> dict[str, int]:
    from ctxmode.session.schema import MIGRATIONS as SESSION
    from ctxmode.store.schema import MIGRATIONS as CONTENT

    return {"content": len(CONTENT), "session": len(SESSION)}


def _database_files(root: Path) -> list[tuple[str, Path]]:
    found = []
    for kind, folder in (("content", "content"), ("session", "sessions")):
        directory = root / folder
        if directory.is_dir():
            found += [(kind, p) for p in sorted(directory.glob("*.db")) if p.is_file()]
    return found


def database_status(root: Path | None = None) -> list[DbStatus]:
    """The schema version of every database under the root, read without writing."""
    root = paths.data_root() if root is None else root
    current = _schemas()
    result = []
    for kind, path in _database_files(root):
        try:
            con = dbfiles.open_readonly(path)
            try:
                version = int(con.execute("PRAGMA user_version").fetchone()[0])
                con.execute("SELECT count(*) FROM sqlite_master").fetchone()
            finally:
                con.close()
        except sqlite3.Error as exc:
            result.append(DbStatus(path, kind, None, current[kind], str(exc)))
            continue
        result.append(DbStatus(path, kind, version, current[kind]))
    return result


class Migrated(NamedTuple):
    path: Path
    kind: str
    before: int | None
    after: int | None
    problem: str | None = None


def migrate(status: DbStatus) -> Migrated:
    """Open a database the way ctxmode does, which migrates it; report, never delete."""
    path, kind = status.path, status.kind
    if status.version is None:
        return Migrated(path, kind, None, None, f"cannot be opened: {status.problem}; left alone")
    if status.version >= status.current:
        problem = "written by a newer ctxmode; left alone" if status.state == "newer" else None
        return Migrated(path, kind, status.version, status.version, problem)
    try:
        with dbfiles.keep_mtime(path):  # a migration is not use (see gc)
            if kind == "content":
                from ctxmode.store import ContentStore

                with ContentStore(path) as store:
                    moved = store.recovered_from
                    after = int(store.connection.execute("PRAGMA user_version").fetchone()[0])
            else:
                from ctxmode.session.db import SessionDB

                with SessionDB(path) as sdb:
                    moved = sdb.recovered_from
                    after = int(sdb.connection.execute("PRAGMA user_version").fetchone()[0])
    except (CtxError, sqlite3.Error, OSError) as exc:
        return Migrated(path, kind, status.version, None, str(exc))
    problem = None if moved is None else f"was damaged: moved to {moved}, a new one started"
    return Migrated(path, kind, status.version, after, problem)
