"""SQLite files on disk: a database is a family of files (the main file, ``-wal``,
``-shm``, and ``-journal`` after a crash), and deleting one means deleting all of them.

Shared by purge and gc, so both delete the same way and both refuse to delete under a
live process.
"""

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite3

SIDECARS = ("-wal", "-shm", "-journal")


def family(db: Path) -> list[Path]:
    """The main file and its possible sidecars (whether or not they exist)."""
    return [db, *(Path(f"{db}{suffix}") for suffix in SIDECARS)]


def family_size(db: Path) -> int:
    """Bytes used on disk by the database and its sidecars (0 for missing files)."""
    return int(sum(_stat(path, "st_size") for path in family(db)))


def last_used(db: Path) -> float:
    """The latest modification time of any file of the family (0.0 if none exists)."""
    return max(_stat(path, "st_mtime") for path in family(db))


def _stat(path: Path, field: str) -> float:
    try:
        return float(getattr(path.stat(), field))
    except OSError:
        return 0.0


def unlink_family(db: Path) -> list[Path]:
    """Delete the database and its sidecars; return the files actually removed.

    Missing files are not errors, so deleting twice is the same as deleting once.
    """
    removed: list[Path] = []
    for path in family(db):
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        removed.append(path)
    return removed


def holders(db: Path) -> list[int]:
    """PIDs of other processes that have a file of this database open.

    Linux reads ``/proc/<pid>/fd`` (no dependency, processes of other users are skipped
    silently); elsewhere psutil's ``open_files``. Best effort: a process whose files
    cannot be listed is not reported. One database's case of `holders_of`.
    """
    return holders_of([db])[db]


def holders_of(dbs: Iterable[Path]) -> dict[Path, list[int]]:
    """`holders` for many databases in one pass over the processes (gc looks at every
    database at once; one /proc walk per database would cost seconds on a busy machine).

    Every database given is a key; its value is empty when nobody else has it open.
    """
    wanted = list(dbs)
    owner: dict[str, Path] = {}
    for db in wanted:
        for path in family(db):
            if path.exists():
                owner[str(path.resolve())] = db
    result: dict[Path, list[int]] = {db: [] for db in wanted}
    if not owner:
        return result
    me = os.getpid()
    proc = Path("/proc")
    if proc.is_dir() and (proc / "self" / "fd").is_dir():
        for entry in proc.iterdir():
            if not entry.name.isdigit() or int(entry.name) == me:
                continue
            try:
                fds = list((entry / "fd").iterdir())
            except OSError:
                continue
            seen: set[Path] = set()
            for fd in fds:
                try:
                    hit = owner.get(os.readlink(fd))
                except OSError:
                    continue
                if hit is not None and hit not in seen:
                    seen.add(hit)
                    result[hit].append(int(entry.name))
        return result
    import psutil

    for process in psutil.process_iter(["pid"]):
        if process.pid == me:
            continue
        try:
            open_paths = {f.path for f in process.open_files()}
        except (psutil.Error, OSError):
            continue
        for db in {owner[p] for p in open_paths if p in owner}:
            result[db].append(process.pid)
    return result


def last_written(db: Path) -> float:
    """The latest modification time of the main file, ``-wal`` or ``-journal`` (0.0 if
    none exists): when the database was last written.

    Unlike `last_used`, the ``-shm`` file does not count: it is shared memory every
    reader writes to (lock slots, WAL recovery), gc's own inspection included, so its
    mtime says nothing about whether anyone still uses the project.
    """
    latest = 0.0
    for path in family(db):
        if path.name.endswith("-shm"):
            continue
        try:
            latest = max(latest, path.stat().st_mtime)
        except OSError:
            continue
    return latest


def open_readonly(db: Path) -> "sqlite3.Connection":
    """A connection that reads the database without creating a file or writing its data.

    SQLite creates ``-wal``/``-shm`` files even for a read-only connection to a WAL
    database. When they exist (someone has it open, or a crash left them) they are used
    as they are (``mode=ro``; only the ``-shm`` shared memory may change, as it does for
    every reader); when they do not, the main file holds everything and is opened
    ``immutable``, so no sidecar appears. A dry run and a status report can look at every
    closed database and leave the tree byte for byte as it was.

    Raises:
        sqlite3.Error: the file cannot be opened; the error tells whether it is damaged.
    """
    import sqlite3
    from urllib.request import pathname2url

    wal, shm = (Path(f"{db}{suffix}").exists() for suffix in ("-wal", "-shm"))
    flag = "mode=ro" if wal and shm else "immutable=1"
    con = sqlite3.connect(f"file:{pathname2url(str(db.absolute()))}?{flag}", uri=True, timeout=1.0)
    con.row_factory = sqlite3.Row
    return con


@contextmanager
def keep_mtime(db: Path) -> Iterator[None]:
    """Put the database's modification time back after a maintenance write.

    Age is judged by the last write (`last_written`); expiring rows, compacting or
    migrating a database is not use and must not restart its age. The time is left as
    it is when the ``-wal`` is still there afterwards: another process has the database
    open, and its writes are use.
    """
    try:
        before = db.stat()
    except OSError:
        yield
        return
    try:
        yield
    finally:
        if db.exists() and not Path(f"{db}-wal").exists():
            try:
                os.utime(db, ns=(before.st_atime_ns, before.st_mtime_ns))
            except OSError:
                pass
