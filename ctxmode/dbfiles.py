"""SQLite files on disk: a database is a family of files (the main file, ``-wal``,
``-shm``, and ``-journal`` after a crash), and deleting one means deleting all of them.

Shared by purge, gc and every reader of another process's databases:

- `family`, `family_size`, `unlink_family`: the files of one database, as one;
- `holders`, `holders_of`: which other processes have a database open (purge and gc
  refuse to delete under a live process);
- `last_written`: when a database was last written (gc's measure of use);
- `open_readonly`: a connection for looking only (stats, insight, doctor, gc's plan):
  it creates no file and changes no modification time of a closed database;
- `keep_mtime`: maintenance writes that must not count as use;
- `wait_for_gc`: an opener waits while gc has the database renamed aside.
"""

import os
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ctxmode import paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3

SIDECARS = ("-wal", "-shm", "-journal")
TRASH_MARK = ".gc-"  # gc renames a database it deletes to ``<name>.gc-<its pid>`` first
GC_WAIT_S = 5.0  # the longest an opener waits for gc to put a database back or delete it
_GC_POLL_S = 0.005


def family(db: Path) -> list[Path]:
    """The main file and its possible sidecars (whether or not they exist)."""
    return [db, *(Path(f"{db}{suffix}") for suffix in SIDECARS)]


def family_size(db: Path) -> int:
    """Bytes used on disk by the database and its sidecars (0 for missing files)."""
    return int(sum(_stat(path, "st_size") for path in family(db)))


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


def gc_has_it_aside(db: Path) -> bool:
    """Whether a running gc has renamed this database's main file to its trash name: it is
    checking, that moment, whether anyone opened or wrote it, and will put it back or
    delete it. Lists the folder: call it only when the main file is missing."""
    from ctxmode.readiness import pid_alive

    prefix = _fold(db.name + TRASH_MARK)
    try:
        names = os.listdir(db.parent)
    except OSError:
        return False
    for name in map(_fold, names):
        pid = name[len(prefix) :]
        if name.startswith(prefix) and pid.isdigit() and pid_alive(int(pid)):
            return True
    return False


def wait_for_gc(db: Path, timeout: float = GC_WAIT_S) -> bool:
    """Wait while a running gc has the database renamed aside (`gc_has_it_aside`), at most
    `timeout` seconds; return whether the main file exists now.

    A process that opened the path in that moment would start a new, empty database
    under the name: gc could then neither put the old one back nor tell whether it was
    written meanwhile, and its data, however recent, would be lost.
    """
    deadline = time.monotonic() + timeout
    while not os.path.lexists(db):
        if time.monotonic() >= deadline or not gc_has_it_aside(db):
            return os.path.lexists(db)
        time.sleep(_GC_POLL_S)
    return True


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

    Every database given is a key; its value is empty when nobody else has it open. An
    open file is matched by identity (device and inode), else by its normalized path
    (`same_file_key`: symlinks resolved, case folded where the file system ignores case),
    so a process that spells the path differently is still found.
    """
    wanted = list(dbs)
    by_key: dict[str, Path] = {}
    by_id: dict[tuple[int, int], Path] = {}
    names: set[str] = set()
    for db in wanted:
        for path in family(db):
            try:
                st = path.stat()
            except OSError:
                continue
            by_key[same_file_key(path)] = db
            if st.st_ino:  # 0 where the platform has no inode numbers
                by_id[(st.st_dev, st.st_ino)] = db
            names.add(_fold(path.name))
    result: dict[Path, list[int]] = {db: [] for db in wanted}
    if not by_key:
        return result

    def match(opened: str, stat_target: str) -> Path | None:
        # Cheap name filter first: only files named like ours are stat'ed or resolved.
        if _fold(os.path.basename(opened)) not in names:
            return None
        try:
            st = os.stat(stat_target)
            hit = by_id.get((st.st_dev, st.st_ino)) if st.st_ino else None
        except OSError:
            hit = None
        return hit if hit is not None else by_key.get(same_file_key(opened))

    me = os.getpid()
    proc = Path(PROC)
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
                    target = os.readlink(fd)
                except OSError:
                    continue
                hit = match(target, str(fd))
                if hit is not None and hit not in seen:
                    seen.add(hit)
                    result[hit].append(int(entry.name))
        return result
    import psutil

    for process in psutil.process_iter(["pid"]):
        if process.pid == me:
            continue
        try:
            opened = [f.path for f in process.open_files()]
        except (psutil.Error, OSError):
            continue
        hits = {hit for p in opened if (hit := match(p, p)) is not None}
        for db in hits:
            result[db].append(process.pid)
    return result


PROC = "/proc"  # Linux's process table; where it is missing, psutil lists open files


def _fold(text: str) -> str:
    return text.casefold() if paths._CASE_INSENSITIVE_FS else text


def same_file_key(path: Path | str) -> str:
    """A path normalized for comparison: absolute, symlinks resolved, and on file systems
    that ignore case (macOS, Windows) case-folded, so two spellings of one file are equal."""
    return _fold(os.path.normcase(os.path.realpath(path)))


def last_written(db: Path) -> float:
    """The latest modification time of the main file, ``-wal`` or ``-journal`` (0.0 if
    none exists): when the database was last written.

    Two sidecars do not count. The ``-shm`` file is shared memory every reader writes to
    (lock slots, WAL recovery), gc's own inspection included. An empty ``-wal`` holds no
    writes: a read-only connection creates one (with the current time) and cannot delete
    it, and a checkpoint that emptied it had already written the main file. Neither says
    anyone still uses the project.
    """
    latest = 0.0
    for path, st in _written_files(db):
        if st is None or (path.name.endswith("-wal") and st.st_size == 0):
            continue
        latest = max(latest, st.st_mtime)
    return latest


def _written_files(db: Path) -> Iterator[tuple[Path, os.stat_result | None]]:
    """The files a write changes (the main file, ``-wal``, ``-journal``; not the ``-shm``
    every reader writes to), in `family` order, each with its stat (None: missing)."""
    for path in family(db):
        if path.name.endswith("-shm"):
            continue
        try:
            yield path, path.stat()
        except OSError:
            yield path, None


Written = tuple[tuple[int, int] | None, ...]


def written_state(db: Path) -> Written:
    """What a write to the database changes: the size and modification time (ns) of the
    main file, ``-wal`` and ``-journal`` (None for a missing one), in `family` order, so
    the state of a database renamed whole (sidecars with it) compares with the original.
    The ``-shm`` is left out: every reader writes to it."""
    return tuple(
        None if st is None else (st.st_size, st.st_mtime_ns) for _, st in _written_files(db)
    )


def open_readonly(db: Path) -> "sqlite3.Connection":
    """A connection that reads the database without creating a file or writing its data.

    Use it for every look at a database that is not a write of its own (reports, status,
    a dry run): a plain ``sqlite3.connect``, even with ``mode=ro``, creates an empty
    ``-wal`` and a ``-shm`` next to a WAL database, with the current time, which makes an
    old project look used (`last_written`) and leaves files behind.

    - No ``-wal``/``-shm`` (the database is closed, its last connection checkpointed):
      everything is in the main file, which is opened ``immutable``. No file is created,
      nothing is written, no modification time changes.
    - Either sidecar exists (someone has it open, or a crash or an older read left them):
      ``mode=ro`` with both, so committed writes still in the WAL are seen; SQLite
      writes only the ``-shm`` shared memory, as it does for every reader. With a lone
      sidecar ``immutable`` again: creating the missing one is what this avoids.

    Always ``mode=ro``: a missing database is an error, not a new empty file. Rows come
    back as `sqlite3.Row`.

    Raises:
        sqlite3.Error: the file is missing or cannot be opened; the error tells whether
            it is damaged.
    """
    import sqlite3
    from urllib.request import pathname2url

    wal, shm = (Path(f"{db}{suffix}").exists() for suffix in ("-wal", "-shm"))
    flag = "mode=ro" if wal and shm else "mode=ro&immutable=1"
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
