"""The data directory and the project's two databases, inspected without changing them.

Databases are opened read-only (`dbfiles.open_readonly`: no sidecar file appears), never
through the stores: opening a store migrates its schema or sets a damaged file aside, and a
diagnosis must not do either.
"""

import os
import sqlite3
import tempfile
from pathlib import Path

from ctxmode.dbfiles import open_readonly
from ctxmode.doctor.model import Check, fail, ok, warn
from ctxmode.stats.model import fmt_bytes

PURGE_FIX = "ctxmode purge --all"


def storage_check(root: Path) -> list[Check]:
    """The data directory exists (or can be created) and takes a new file."""
    try:
        root.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=".doctor-", dir=root)
        try:
            os.write(fd, b"ok")
        finally:
            os.close(fd)
            os.unlink(name)
    except OSError as exc:
        return [
            fail(
                "storage",
                f"{root} is not writable ({exc.strerror or exc})",
                "make it writable, or set CTXMODE_DIR to a writable directory",
            )
        ]
    return [ok("storage", f"{root} is writable")]


def _size(path: Path) -> str:
    """What the database occupies, its write-ahead log included."""
    return fmt_bytes(sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists()))


def _inspect(path: Path) -> tuple[list[str], int]:
    """``PRAGMA quick_check`` rows and ``user_version`` of a database, read-only."""
    con = open_readonly(path)
    try:
        rows = [str(r[0]) for r in con.execute("PRAGMA quick_check").fetchall()]
        version = int(con.execute("PRAGMA user_version").fetchone()[0])
    finally:
        con.close()
    return rows, version


def database_check(name: str, path: Path, latest: int, purge: str = PURGE_FIX) -> Check:
    """One database: intact, and at the schema version this ctxmode writes.

    `purge` is the command that starts the project over (the fix for a damaged file).
    """
    if not path.exists():
        return ok(name, f"{path} not created yet")
    try:
        rows, version = _inspect(path)
    except sqlite3.Error as exc:
        from ctxmode.db import is_busy, is_corrupt

        if is_busy(exc):
            return warn(name, f"{path} is locked by another process; not checked", None)
        if is_corrupt(exc):
            return fail(name, f"{path} is damaged: {exc}", purge)
        return fail(name, f"{path} cannot be read: {exc}", f"check its permissions, or {purge}")
    if rows != ["ok"]:
        problems = "; ".join(rows[:3]) + (f" (+{len(rows) - 3} more)" if len(rows) > 3 else "")
        return fail(name, f"{path} is damaged: {problems}", purge)
    where = f"{path} ({_size(path)})"
    if version > latest:
        return fail(
            name,
            f"{where}: schema {version} is newer than this ctxmode understands ({latest})",
            "upgrade ctxmode",
        )
    if version < latest:
        return warn(
            name, f"{where}: schema {version} of {latest}, will be migrated on next open", None
        )
    return ok(name, f"{where}: intact, schema {version} (current)")


def database_checks(root: Path, project_dir: Path | None) -> list[Check]:
    """The project's knowledge base and session database."""
    if project_dir is None:
        return [ok("databases", "no project here; run doctor inside a project or pass -p DIR")]
    from ctxmode.doctor.where import project_option
    from ctxmode.paths import ProjectPaths
    from ctxmode.session.schema import MIGRATIONS as SESSION_MIGRATIONS
    from ctxmode.session.where import session_db_path
    from ctxmode.store.schema import MIGRATIONS as STORE_MIGRATIONS

    content = ProjectPaths(root, project_dir).content_db
    session = session_db_path(project_dir, root, remember=False)
    purge = PURGE_FIX + project_option(project_dir, "--project")
    return [
        database_check("content db", content, len(STORE_MIGRATIONS), purge),
        database_check("session db", session, len(SESSION_MIGRATIONS), purge),
    ]
