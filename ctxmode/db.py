"""SQLite connections, retries and schema migrations shared by every ctxmode database.

Connections are WAL, ``synchronous=NORMAL``, a 30 s busy timeout and ``sqlite3.Row`` rows.
Several processes (servers in different windows, the CLI, hooks) may open one file at once;
writes take ``BEGIN IMMEDIATE`` so a writer waits for the lock up front instead of failing
half way, and `retry_busy` retries the rare ``database is locked`` that escapes the timeout.
"""

import errno
import os
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from pathlib import Path

from ctxmode.errors import EnvironmentProblem, StoreError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeVar

    T = TypeVar("T")

BUSY_TIMEOUT_MS = 30_000
RETRY_DELAYS = (0.1, 0.5, 2.0)
_OPEN_ATTEMPTS = 3
_SQLITE_IOERR = 10
_CORRUPT_MARKERS = (
    "file is not a database",
    "database disk image is malformed",
    "malformed database schema",
    "file is encrypted",
)
_SQLITE_CORRUPT = 11
_SQLITE_FULL = 13
_SQLITE_NOTADB = 26
# A write refused for want of room: a full disk or quota, or a file-size limit (EFBIG).
_FULL_ERRNOS = frozenset(
    code for code in (errno.ENOSPC, errno.EFBIG, getattr(errno, "EDQUOT", None)) if code
)

Migration = Callable[[sqlite3.Connection], None]


def is_busy(exc: BaseException) -> bool:
    text = str(exc).lower()
    return "database is locked" in text or "sqlite_busy" in text or "database is busy" in text


def _primary_code(exc: BaseException) -> int | None:
    code = getattr(exc, "sqlite_errorcode", None)  # Python 3.11+
    return code & 0xFF if isinstance(code, int) else None


def is_corrupt(exc: BaseException) -> bool:
    """The file is damaged or not a database at all (SQLITE_CORRUPT, SQLITE_NOTADB)."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    if _primary_code(exc) in (_SQLITE_CORRUPT, _SQLITE_NOTADB):
        return True
    text = str(exc).lower()
    return any(marker in text for marker in _CORRUPT_MARKERS)


# Below this much free space, an I/O error is taken for a full disk (see `is_full`).
NEARLY_FULL_BYTES = 1024 * 1024


def is_full(exc: BaseException, where: Path | str | None = None) -> bool:
    """A write failed for want of room: SQLITE_FULL, or ENOSPC/EDQUOT/EFBIG from the OS.

    With `where` (the database file): also an SQLite I/O error on a file system with
    (almost) no room left. Opening a WAL database grows its ``-shm`` file, and SQLite
    reports that failing as a bare "disk I/O error".
    """
    if isinstance(exc, OSError):
        return exc.errno in _FULL_ERRNOS
    if not isinstance(exc, sqlite3.Error):
        return False
    code = _primary_code(exc)
    if code == _SQLITE_FULL or "database or disk is full" in str(exc).lower():
        return True
    return code == _SQLITE_IOERR and where is not None and _nearly_full(Path(where))


def _nearly_full(path: Path) -> bool:
    import shutil

    folder = path if path.is_dir() else path.parent
    try:
        return shutil.disk_usage(folder).free < NEARLY_FULL_BYTES
    except OSError:
        return False


def full_message(what: str, exc: BaseException) -> str:
    """How a write refused by a full disk is reported, whatever layer it came from."""
    detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return f"disk full: cannot write {what} ({detail}); free some disk space and try again"


def retry_busy(fn: "Callable[[], T]", delays: Sequence[float] = RETRY_DELAYS) -> "T":
    """Run `fn`, retrying after each delay while SQLite reports the database locked.

    Raises:
        StoreError: still locked after the last retry.
    """
    for delay in (*delays, None):
        try:
            return fn()
        except sqlite3.OperationalError as exc:  # noqa: PERF203 - retry loop by design
            if not is_busy(exc):
                raise
            if delay is None:
                raise StoreError(f"database is locked after {len(delays)} retries: {exc}") from exc
            time.sleep(delay)
    raise AssertionError("unreachable")


@cache
def fts5_problem() -> str | None:
    """None when this SQLite has FTS5 with the trigram tokenizer, else what is missing."""
    con = sqlite3.connect(":memory:")
    try:
        con.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
    except sqlite3.OperationalError:
        return (
            f"this Python's SQLite ({sqlite3.sqlite_version}) was built without FTS5; "
            "install a Python whose sqlite3 module has FTS5 (python.org and most distributions do)"
        )
    try:
        con.execute("CREATE VIRTUAL TABLE t3 USING fts5(x, tokenize='trigram')")
    except sqlite3.OperationalError:
        return (
            f"SQLite {sqlite3.sqlite_version} lacks the FTS5 trigram tokenizer "
            "(needs SQLite 3.34 or newer)"
        )
    finally:
        con.close()
    return None


def _remove_orphan_sidecars(path: Path) -> None:
    if path.exists():
        return
    for suffix in ("-wal", "-shm"):
        side = Path(f"{path}{suffix}")
        if side.exists():
            side.unlink()


def identity(path: Path | str) -> tuple[int, int] | None:
    """(device, inode) of the file at `path`, or None when there is none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def set_aside_if_same(path: Path, expected: tuple[int, int] | None) -> Path | None:
    """`set_aside` the database at `path` only while it is still the file `expected`
    names; None when another process already moved or replaced it (its file is the new
    one, not damaged by what we saw). `expected` None: whatever is at `path`.

    A file system without inode numbers (0) cannot tell: the file is moved.
    """
    current = identity(path)
    if current is None:
        return None
    if expected is not None and expected[1] and current != expected:
        return None
    return set_aside(path)


def set_aside(path: Path) -> Path:
    """Rename a damaged database (and its sidecars) to ``<name>.corrupt-<ms>``; return it."""
    stamp = int(time.time() * 1000)
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    os.replace(path, target)
    for suffix in ("-wal", "-shm"):
        side = Path(f"{path}{suffix}")
        if side.exists():
            os.replace(side, Path(f"{target}{suffix}"))
    return target


def _sqlite_open(target: str, *, uri: bool = False) -> sqlite3.Connection:
    return sqlite3.connect(
        target,
        timeout=BUSY_TIMEOUT_MS / 1000,
        isolation_level=None,
        check_same_thread=False,
        uri=uri,
    )


def _open_file(path: Path) -> sqlite3.Connection:
    """Open the database at `path`; create it only when there is none.

    An existing file is opened without the right to create one (``mode=rw``): gc renames
    a database aside before it deletes it, and an open that created a new, empty file
    under the name meanwhile would strand the old one (gc could not put it back, and its
    latest writes would be lost). While gc has it aside, the open waits for gc to put it
    back or delete it (`dbfiles.wait_for_gc`); a file gone between that look and the open
    is looked for again.
    """
    from ctxmode import dbfiles

    path.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(_OPEN_ATTEMPTS):
        if not dbfiles.wait_for_gc(path):
            break
        try:
            return _sqlite_open(f"file:{_uri_path(path.absolute())}?mode=rw", uri=True)
        except sqlite3.OperationalError:
            if os.path.lexists(path):
                raise
    _remove_orphan_sidecars(path)
    return _sqlite_open(str(path))


def _uri_path(path: Path) -> str:
    """`path` as the path part of a ``file:`` URI. On POSIX that is what
    ``urllib.request.pathname2url`` gives, without importing urllib.request (http.client
    and email with it: ~10 ms of every command's start)."""
    if os.name == "nt" or str(path).startswith("//"):
        from urllib.request import pathname2url

        return pathname2url(str(path))
    from urllib.parse import quote

    return quote(str(path))


def connect(path: Path | str) -> sqlite3.Connection:
    """Open a database with ctxmode's pragmas (an existing one as `_open_file` says).
    ``":memory:"`` works for tests.

    An I/O error while the connection is set up is retried on a new open: SQLite looks
    the main file up by name when it opens the WAL, and fails so when gc renamed the
    database aside just after the main file was opened (gc then puts it back, seeing it
    held, and the new open waits for that).
    """
    for attempt in range(_OPEN_ATTEMPTS):
        con = _sqlite_open(":memory:") if str(path) == ":memory:" else _open_file(Path(path))
        try:
            _configure(con)
        except sqlite3.DatabaseError as exc:
            con.close()
            if attempt + 1 == _OPEN_ATTEMPTS or not _is_io_error(exc):
                raise
            continue
        return con
    raise AssertionError("unreachable")


def _configure(con: sqlite3.Connection) -> None:
    con.row_factory = sqlite3.Row
    con.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    retry_busy(lambda: con.execute("PRAGMA journal_mode=WAL"))
    con.execute("PRAGMA synchronous=NORMAL")
    con.execute("PRAGMA foreign_keys=ON")
    con.execute("PRAGMA temp_store=MEMORY")


def _is_io_error(exc: BaseException) -> bool:
    """SQLITE_IOERR, whatever its extended code."""
    code = _primary_code(exc)
    return code == _SQLITE_IOERR if code is not None else "disk i/o error" in str(exc).lower()


@contextmanager
def write_transaction(
    con: sqlite3.Connection, *, wait: bool = True
) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` … ``COMMIT``, rolled back on any exception. Without `wait`, a
    database another connection is writing raises SQLite's busy error at once (after the
    connection's busy timeout), not after `retry_busy`'s retries.

    The error that ended the transaction is the one raised: SQLite rolls back by itself
    after some failures (a full disk, an I/O error), and our ``ROLLBACK`` then fails with
    "no transaction is active", which must not hide the real cause.
    """
    if wait:
        retry_busy(lambda: con.execute("BEGIN IMMEDIATE"))
    else:
        con.execute("BEGIN IMMEDIATE")
    try:
        yield con
        retry_busy(lambda: con.execute("COMMIT"))
    except BaseException:
        rollback_quietly(con)
        raise


def rollback_quietly(con: sqlite3.Connection) -> None:
    """Roll back the open transaction, if any; a failed rollback raises nothing (the
    caller is already reporting the error that made it roll back)."""
    if not con.in_transaction:
        return
    try:
        con.execute("ROLLBACK")
    except sqlite3.Error:
        pass


def migrate(con: sqlite3.Connection, migrations: Sequence[Migration]) -> int:
    """Apply the migrations not yet recorded in ``PRAGMA user_version``; return the version.

    Each migration runs in its own transaction, so a crash leaves a consistent version.

    Raises:
        StoreError: the database was written by a newer ctxmode.
    """
    version = int(con.execute("PRAGMA user_version").fetchone()[0])
    if version > len(migrations):
        raise StoreError(
            f"database schema version {version} is newer than this ctxmode understands "
            f"({len(migrations)}); upgrade ctxmode"
        )
    for index in range(version, len(migrations)):
        with write_transaction(con):
            current = int(con.execute("PRAGMA user_version").fetchone()[0])
            if current > index:  # another process migrated meanwhile
                continue
            migrations[index](con)
            con.execute(f"PRAGMA user_version={index + 1}")
    return len(migrations)


def require_fts5() -> None:
    """Raises EnvironmentProblem when FTS5 (with trigram) is unavailable."""
    problem = fts5_problem()
    if problem:
        raise EnvironmentProblem(problem)
