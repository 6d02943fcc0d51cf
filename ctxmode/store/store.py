"""The per-project knowledge base: index text and files, search them, keep them fresh.

Design:
* One SQLite file per project (see `ctxmode.paths`), schema in `schema.py`.
* A label names a source; indexing a label again replaces it in one transaction, so a
  reader sees the old chunks or the new ones, never a mix or nothing.
* Search (`retrieval`) fuses ranked FTS5 lists by reciprocal rank and reranks them
  (`ranking`); a hit shows the lines that best cover the query (`excerpt`). The store
  decides which hits may be served at all (freshness, below).
* A file-backed source is checked (one stat) before any of its hits is shown: a changed
  file is re-indexed, a deleted one dropped, a file now denied by policy left alone and
  never read, and the search runs again without the stale hits. Besides, each search
  checks a rolling window of `SWEEP_BATCH` other file-backed sources, so a search costs
  the same with 1,000 sources or 100,000; checking every source is an explicit
  `refresh()` (``ctxmode index --refresh``). Size and mtime are compared first; a file is
  read and hashed only when they differ, and re-indexed only when its hash does.
* Damage heals itself: the first read or write that finds the file damaged (SQLite's
  "malformed", "not a database") moves it aside as ``<name>.corrupt-<ms>``, starts a new
  one, indexes again every file-backed source it can still list whose file exists, retries
  the call once and says so once (`take_notices`, or the `notify` callback). Other SQLite
  failures become a `StoreError` (`DiskFullError` for a full disk), never a raw error.
"""

import functools
import logging
import os
import random
import sqlite3
import stat
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from math import ceil, log
from pathlib import Path
from typing import Concatenate, ParamSpec, TypeVar

from ctxmode import db
from ctxmode.errors import CtxError, DiskFullError, InputError, StoreError
from ctxmode.store import query as q
from ctxmode.store.chunking import Chunk
from ctxmode.store.files import (
    MAX_FILE_BYTES,
    FileText,
    TextPieces,
    printable_path,
    read_text_file,
)
from ctxmode.store.kinds import chunk_text, kind_for_name
from ctxmode.store.retrieval import Retrieval, SearchHit
from ctxmode.store.salvage import Rebuild, salvage_sources
from ctxmode.store.schema import MIGRATIONS
from ctxmode.store.text import (
    fts_text,
    vocabulary,
)
from ctxmode.store.vocab import Vocabulary
from ctxmode.store.weights import TermWeights

DEFAULT_LIMIT = 5
WAL_CHECKPOINT_PAGES = 4000  # checkpoint (and fsync) every ~16 MB of writes, not ~4 MB
# Chunks are stored at once and made searchable in batches (`ContentStore.catch_up`):
# before a search, on close, when idle, and at the latest after this much was written.
PENDING_MAX_BYTES = 4 * 1024 * 1024
CATCH_UP_BATCH = 2000  # chunks per transaction
_ANY_PENDING = "SELECT 1 FROM chunks WHERE pending = 1 LIMIT 1"
PIECE_BYTES = 4 * 1024 * 1024  # a file larger than this is read and chunked a piece at a time
SEARCH_WAIT_MS = 200  # a search's catch-up waits this long for another writer, then skips
# File-backed sources a search checks besides its hits' own: a stat each (a read only for
# a changed file), about 2 ms for 1,000; a store with at most this many is swept whole.
SWEEP_BATCH = 1000
# Re-runs of a search whose hits came from changed files; past them stale hits are dropped.
STALE_ROUNDS = 4
# Sources a search may check in the folders of hits whose file was deleted.
FOLDER_BUDGET = 1000
# A file whose mtime is this close to the moment it was read may change again within the
# same timestamp tick (1-2 s on some file systems): its mtime is not trusted (not recorded).
RACY_NS = 2_000_000_000
# How long `merge_index` waits for another writer: it only saves time, it never waits long.
MERGE_WAIT_MS = 1000

DenyCheck = Callable[[str], bool]
# What `Retrieval.run` is given: query, limit, source, content type, exact source, snippet size.
_SearchArgs = tuple[str, int, str | None, str | None, bool, int]
Notify = Callable[[str], None]

_log = logging.getLogger("ctxmode.store")
_P = ParamSpec("_P")
_R = TypeVar("_R")


@dataclass(frozen=True, slots=True)  # one a file: 100,000 for a large tree
class IndexReport:
    label: str
    source_id: int
    chunks: int
    code_chunks: int
    bytes: int
    file_path: str | None = None
    unchanged: bool = False  # a file already indexed with this content: not indexed again


@dataclass(frozen=True)
class RefreshReport:
    refreshed: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    denied: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class SearchResult:
    query: str
    hits: list[SearchHit]
    corrections: dict[str, str]
    refresh: RefreshReport


@dataclass(frozen=True)
class SourceInfo:
    label: str
    kind: str
    chunks: int
    code_chunks: int
    bytes: int
    file_path: str | None
    indexed_at: str


_FRESHNESS = "label, kind, file_path, content_hash, file_mtime_ns, file_size, session_id"


def _same_stat(row: sqlite3.Row, info: os.stat_result) -> bool:
    """The file has the mtime and size recorded when it was read: taken as unchanged."""
    return bool(info.st_mtime_ns == row["file_mtime_ns"] and info.st_size == row["file_size"])


def _shifted(chunk: Chunk, lines: int) -> Chunk:
    """`chunk` of a piece that starts after `lines` lines of its file, numbered in the file."""
    if not lines or chunk.start_line is None:
        return chunk
    end = chunk.end_line + lines if chunk.end_line is not None else None
    return replace(chunk, start_line=chunk.start_line + lines, end_line=end)


def _trusted_mtime(read: FileText | TextPieces) -> int | None:
    """The mtime to record for what was read: none when it is so recent that the file may
    change again without its mtime moving (the next check then hashes it)."""
    return None if time.time_ns() - read.mtime_ns < RACY_NS else read.mtime_ns


@dataclass
class _Checked:
    """What one search has checked of its hits' sources, and how many more sources it may
    check besides them."""

    labels: set[str] = field(default_factory=set)
    budget: int = field(default_factory=lambda: FOLDER_BUDGET)


def _now_iso() -> str:
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1000):03d}Z"


def _healing(
    method: Callable[Concatenate["ContentStore", _P], _R],
) -> Callable[Concatenate["ContentStore", _P], _R]:
    """Run a public store call; on a damaged file heal (`ContentStore._heal`) and run it
    once more; map what SQLite raises to a `StoreError`. Calls made from inside such a
    call (a search's refresh, a refresh's re-index) pass through: the outermost heals."""

    @functools.wraps(method)
    def guarded(store: "ContentStore", /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        if store._depth:
            return method(store, *args, **kwargs)
        store._depth += 1
        try:
            try:
                if store._con is None and not store._closed:
                    store._resume()  # a heal was cut short (by a full disk): finish it
                elif store._reading_only is not None and not store._closed:
                    store._retry_writable()
                return method(store, *args, **kwargs)
            except sqlite3.DatabaseError as exc:
                if not store._may_heal(exc):
                    raise
                store._heal(exc)
            return method(store, *args, **kwargs)
        except sqlite3.Error as exc:
            raise store._failure(exc) from exc
        except OSError as exc:
            if not db.is_full(exc):
                raise
            raise store._failure(exc) from exc
        finally:
            store._depth -= 1

    return guarded


class ContentStore:
    """A knowledge base on one SQLite file. Use as a context manager or call `close`."""

    def __init__(
        self,
        path: Path | str,
        *,
        deny: DenyCheck | None = None,
        sweep_interval: float = 0.0,
        notify: Notify | None = None,
    ) -> None:
        """Open (creating or migrating) the knowledge base at `path`.

        `deny` tells whether a file path may be read; a denied file is never re-read.
        `sweep_interval` (seconds) lets a long-lived process check its rolling window of
        `SWEEP_BATCH` file-backed sources at most that often; the sources of the hits about
        to be returned are checked on every search, so a stale or deleted file is never
        served.
        `notify` receives the one-time notice of a heal (see the module docstring); without
        it the notice is logged and kept for `take_notices`.

        Raises:
            EnvironmentProblem: SQLite lacks FTS5 or its trigram tokenizer.
            StoreError: the file cannot be opened, or was written by a newer ctxmode.
            DiskFullError: the file cannot be created or migrated for want of room.
        """
        db.require_fts5()
        self.path = path
        self.deny = deny
        self.sweep_interval = sweep_interval
        self.notify = notify
        self._last_sweep = float("-inf")
        # Where the rolling window of checked sources goes on from (a source id); a new
        # store starts at random, so short-lived processes do not all check the same ones.
        self._sweep_after: int | None = None
        self.recovered_from: Path | None = None
        # The session new sources belong to unless a call names one (a server sets it), so
        # a one-session purge can remove exactly what that session indexed.
        self.session_id = ""
        self._notices: list[str] = []
        self._closed = False
        self._depth = 0
        self._identity: tuple[int, int] | None = None
        self._unhealed: tuple[BaseException, Path] | None = None  # a heal to finish
        # Open for reading only because the disk is full: what a write is answered.
        self._reading_only: DiskFullError | None = None
        self._told_reading_only = False
        self._con: sqlite3.Connection = None  # type: ignore[assignment]  # set by _connect
        self._pending_bytes = 0  # bytes this store wrote since it last caught up
        self._told_unsearchable = False  # a full disk kept chunks from the index: told
        self._start()

    # ------------------------------------------------------------------ lifecycle

    @_healing
    def _start(self) -> None:
        self._resume()

    def _open(self) -> sqlite3.Connection:
        """A migrated connection. A damaged file raises its `sqlite3.DatabaseError` (the
        caller heals it); any other failure is a `StoreError`."""
        try:
            con = db.connect(self.path)
            try:
                db.migrate(con, MIGRATIONS)
                con.execute("SELECT count(*) FROM sources").fetchone()
                con.execute(f"PRAGMA wal_autocheckpoint={WAL_CHECKPOINT_PAGES}")
            except BaseException:
                con.close()
                raise
        except sqlite3.DatabaseError as exc:
            if self._may_heal(exc):
                raise
            failure = self._failure(exc, opening=True)
            if isinstance(failure, DiskFullError):
                readable = self._open_to_read(failure)
                if readable is not None:
                    return readable
            raise failure from exc
        except OSError as exc:
            raise self._failure(exc, opening=True) from exc
        return con

    def _open_to_read(self, failure: DiskFullError) -> sqlite3.Connection | None:
        """The file as it is, for reading only, when the disk is too full to open it
        for writing (its ``-shm`` cannot grow): searches go on, writes are answered
        `failure`. Only with nothing pending in its ``-wal`` (the main file is then the
        whole database); None when it cannot be read that way either."""
        path = Path(self.path)
        wal = Path(f"{path}-wal")
        try:
            if not path.is_file() or (wal.exists() and wal.stat().st_size > 0):
                return None
            from urllib.request import pathname2url

            uri = f"file:{pathname2url(str(path.absolute()))}?mode=ro&immutable=1"
            con = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
        except (OSError, sqlite3.Error):
            return None
        con.row_factory = sqlite3.Row
        try:
            con.execute("SELECT count(*) FROM sources").fetchone()
        except sqlite3.Error:
            con.close()
            return None
        self._reading_only = failure
        if not self._told_reading_only:
            self._told_reading_only = True
            self._notice(f"{failure}; until then the knowledge base is open for reading only")
        return con

    def _retry_writable(self) -> None:
        """Open for reading only: try the normal open again (there may be room now)."""
        con, reading_only = self._con, self._reading_only
        self._reading_only = None
        try:
            self._connect()  # reading only again while the disk is still full
        except BaseException:
            self._reading_only = reading_only
            raise
        con.close()
        if self._reading_only is None:
            self._told_reading_only = False  # room again: a new shortage is told anew

    def _connect(self) -> None:
        self._con = self._open()
        self._identity = None if self._in_memory else db.identity(self.path)
        self._vocabulary = Vocabulary(self._con)
        self._weights = TermWeights(self._con)

    @property
    def _in_memory(self) -> bool:
        return str(self.path) == ":memory:"

    def _may_heal(self, exc: BaseException) -> bool:
        return db.is_corrupt(exc) and not self._in_memory

    def _failure(self, exc: BaseException, *, opening: bool = False) -> StoreError:
        """The `StoreError` to raise for what SQLite (or the OS) said."""
        if self._reading_only is not None and "readonly" in str(exc):
            return DiskFullError(str(self._reading_only))
        if db.is_full(exc, None if self._in_memory else self.path):
            return DiskFullError(db.full_message(f"the knowledge base {self.path}", exc))
        if isinstance(exc, OSError):
            return StoreError(f"cannot open knowledge base {self.path}: {exc.strerror or exc}")
        if opening:
            return StoreError(f"cannot open knowledge base {self.path}: {exc}")
        if db.is_corrupt(exc):
            return StoreError(f"the knowledge base {self.path} is damaged: {exc}")
        return StoreError(f"knowledge base {self.path}: {exc}")

    def _heal(self, cause: sqlite3.DatabaseError) -> None:
        """Move the damaged file aside (kept: it may still be recoverable), start a new
        one and index again the file-backed sources it listed; one notice says so.

        When the file is no longer the one this store opened (another process healed or
        replaced it), that new file is used as it is: nothing is moved, nothing said.
        """
        con, self._con = self._con, None  # type: ignore[assignment]  # reconnected below
        if con is not None:
            try:
                con.close()
            except sqlite3.Error:
                pass
        try:
            aside = db.set_aside_if_same(Path(self.path), self._identity)
        except OSError as exc:
            raise StoreError(
                f"the knowledge base {self.path} is damaged ({cause}) and cannot be moved "
                f"aside: {exc.strerror or exc}"
            ) from exc
        if aside is None:
            self._connect()
            return
        self.recovered_from = aside
        self._unhealed = (cause, aside)
        self._resume()

    def _resume(self) -> None:
        """Connect unless connected, and finish a heal: rebuild, then say so. A new file
        that cannot be started (a full disk) leaves the heal to the next call."""
        if self._con is None:
            self._connect()
        if self._unhealed is None:
            return
        cause, aside = self._unhealed
        self._unhealed = None
        report = Rebuild()
        try:
            self._rebuild(aside, report)
        finally:
            self._notice(report.describe(cause, aside))

    def _rebuild(self, damaged: Path, report: Rebuild) -> None:
        """Index again, in the new file, the file-backed sources `damaged` still lists
        whose files exist (denied files are not read)."""
        listed = salvage_sources(damaged)
        if listed is None:
            report.listed = False
            return
        report.others = sum(1 for s in listed if s.file_path is None)
        for source in listed:
            if source.file_path is None:
                continue
            report.files += 1
            if self.deny is not None and self.deny(source.file_path):
                report.denied.append(source.label)
                continue
            limit = max(MAX_FILE_BYTES, source.file_size or 0)
            try:
                read = read_text_file(Path(source.file_path), limit, denied=self.deny)
            except (CtxError, OSError):
                report.missing.append(source.label)
                continue
            self._index_read(read, source.label, source.kind, source.session_id)
            report.rebuilt.append(source.label)

    def _notice(self, text: str) -> None:
        if self.notify is not None:
            self.notify(text)
            return
        _log.warning("%s", text)
        self._notices.append(text)

    def take_notices(self) -> list[str]:
        """The notices of heals not yet shown (each is returned once)."""
        notices, self._notices = self._notices, []
        return notices

    def close(self) -> None:
        """Catch up (`catch_up`; a failure leaves it to the next search), then close."""
        con = self._con
        if con is None:
            self._closed = True
            return
        if self._pending_bytes:
            try:
                self.catch_up()
            except CtxError as exc:
                _log.warning("chunks left to make searchable later: %s", exc)
            con = self._con
        self._closed = True
        if con is None:
            return
        try:
            con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error:
            pass  # another process holds the WAL; SQLite checkpoints it later
        con.close()
        self._con = None  # type: ignore[assignment]  # closed stores fail loudly on use

    def __enter__(self) -> "ContentStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def connection(self) -> sqlite3.Connection:
        return self._con

    # ------------------------------------------------------------------ writing

    def _delete_source_rows(self, source_id: int) -> None:
        con = self._con
        rows = con.execute(  # a pending chunk is not in the full-text index yet
            "SELECT id, title, content FROM chunks WHERE source_id = ? AND pending = 0",
            (source_id,),
        ).fetchall()
        con.executemany(
            "INSERT INTO chunks_fts(chunks_fts, rowid, title, body) VALUES('delete', ?, ?, ?)",
            [(r["id"], fts_text(r["title"]), fts_text(r["content"])) for r in rows],
        )
        con.execute("DELETE FROM chunks WHERE source_id = ?", (source_id,))
        con.execute("DELETE FROM sources WHERE id = ?", (source_id,))

    def _write(
        self,
        label: str,
        kind: str,
        batches: Iterable[Sequence[Chunk]],
        nbytes: int,
        *,
        file_path: str | None = None,
        content_hash: str | Callable[[], str] | None = None,
        mtime_ns: int | None = None,
        size: int | None = None,
        session_id: str = "",
    ) -> IndexReport:
        """Replace `label` with the chunks of `batches` in one transaction. A list of
        batches may be written again when the database is busy; any other iterable is
        read once (a large file, a piece at a time), as is `content_hash` when it is
        a callable (the file's hash, known once it is read)."""
        con = self._con
        counts = [0, 0]  # chunks, code chunks

        def run() -> int:
            with db.write_transaction(con):
                old = con.execute("SELECT id FROM sources WHERE label = ?", (label,)).fetchone()
                if old is not None:
                    self._delete_source_rows(old["id"])
                cur = con.execute(
                    "INSERT INTO sources(label, kind, file_path, content_hash, file_mtime_ns,"
                    " file_size, bytes, chunk_count, code_chunk_count, session_id, indexed_at)"
                    " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                    (
                        label,
                        kind,
                        file_path,
                        None,  # set once the chunks are in
                        mtime_ns,
                        size,
                        nbytes,
                        0,
                        0,
                        session_id or self.session_id,
                        _now_iso(),
                    ),
                )
                source_id = int(cur.lastrowid or 0)
                first = con.execute("SELECT coalesce(max(id), 0) + 1 FROM chunks").fetchone()[0]
                counts[:] = [0, 0]
                for chunks in batches:
                    start = first + counts[0]
                    con.executemany(
                        "INSERT INTO chunks(id, source_id, ord, title, content, content_type,"
                        " start_line, end_line, pending) VALUES (?,?,?,?,?,?,?,?,1)",
                        [
                            (
                                start + n,
                                source_id,
                                counts[0] + n,
                                c.title,
                                c.content,
                                c.content_type,
                                c.start_line,
                                c.end_line,
                            )
                            for n, c in enumerate(chunks)
                        ],
                    )
                    counts[0] += len(chunks)
                    counts[1] += sum(1 for c in chunks if c.content_type == "code")
                digest = content_hash() if callable(content_hash) else content_hash
                con.execute(
                    "UPDATE sources SET chunk_count = ?, code_chunk_count = ?, content_hash = ?"
                    " WHERE id = ?",
                    (*counts, digest, source_id),
                )
                return source_id

        source_id = db.retry_busy(run) if isinstance(batches, list) else run()
        code = counts[1]
        chunk_count = counts[0]
        self._pending_bytes += nbytes
        if self._pending_bytes >= PENDING_MAX_BYTES:
            self._catch_up()
        return IndexReport(label, source_id, chunk_count, code, nbytes, file_path)

    @property
    def pending(self) -> bool:
        """Whether this store wrote chunks not yet searchable (`catch_up` makes them so)."""
        return self._pending_bytes > 0

    @_healing
    def catch_up(self) -> int:
        """Make every stored chunk searchable (full-text index and vocabulary), in
        batches; returns how many were. Every search does it first; a long-lived process
        may do it when idle. A store open for reading only (a full disk) leaves them."""
        return self._catch_up()

    def _catch_up(self, *, wait: bool = True) -> int:
        """`catch_up`; without `wait`, a database another writer holds is not waited for
        (SQLite's busy error is raised at once)."""
        if self._reading_only is not None:
            return 0
        done = 0
        while True:
            count, learned = (
                db.retry_busy(self._catch_up_batch) if wait else self._catch_up_batch(wait=False)
            )
            self._vocabulary.learned(learned)
            done += count
            if count < CATCH_UP_BATCH:
                self._pending_bytes = 0
                return done

    def _catch_up_batch(self, *, wait: bool = True) -> tuple[int, set[str]]:
        """One transaction of `_catch_up`: the chunks made searchable, the words learned."""
        con = self._con
        with db.write_transaction(con, wait=wait):
            rows = con.execute(
                "SELECT id, title, content FROM chunks WHERE pending = 1 ORDER BY id LIMIT ?",
                (CATCH_UP_BATCH,),
            ).fetchall()
            if not rows:
                return 0, set()
            con.executemany(
                "INSERT INTO chunks_fts(rowid, title, body) VALUES (?, ?, ?)",
                [(r["id"], fts_text(r["title"]), fts_text(r["content"])) for r in rows],
            )
            text = "\n".join(f"{r['title']}\n{r['content']}" for r in rows)
            learned = self._vocabulary.unknown(vocabulary(text))
            if learned:
                last = con.execute("SELECT coalesce(max(id), 0) FROM vocab").fetchone()[0]
                con.executemany(
                    "INSERT OR IGNORE INTO vocab(word) VALUES (?)", [(w,) for w in learned]
                )
                con.execute(
                    "INSERT INTO vocab_tri(rowid, word) SELECT id, word FROM vocab WHERE id > ?",
                    (last,),
                )
            con.executemany(
                "UPDATE chunks SET pending = 0 WHERE id = ?", [(r["id"],) for r in rows]
            )
            return len(rows), learned

    def _searchable(self) -> None:
        """Catch up with chunks stored but not yet searchable, by this process or another
        (one that died before it caught up): a search never misses what was indexed. On
        a full disk or a read-only file the search goes on without them, and says so
        once; while another process writes, it does not wait for it."""
        if not self._pending_bytes and self._con.execute(_ANY_PENDING).fetchone() is None:
            return
        con = self._con
        con.execute(f"PRAGMA busy_timeout={SEARCH_WAIT_MS}")  # not the 30 s a write waits
        try:
            self._catch_up(wait=False)
        except sqlite3.OperationalError as exc:
            if db.is_busy(exc):  # another writer at work: what it committed waits for it
                return
            full = db.is_full(exc, None if self._in_memory else self.path)
            if not full and "readonly" not in str(exc):
                raise
            if not self._told_unsearchable:
                self._told_unsearchable = True
                why = (
                    f"{db.full_message('the knowledge base', exc)}; what was indexed since"
                    " the disk filled up is stored but not searchable until there is room"
                    if full
                    else f"the knowledge base {self.path} is read-only ({exc}): what was"
                    " indexed last is stored but not searchable until it can be written"
                )
                self._notice(why)
            return
        finally:
            con.execute(f"PRAGMA busy_timeout={db.BUSY_TIMEOUT_MS}")
        self._told_unsearchable = False

    @_healing
    def index_text(
        self, text: str, label: str, *, kind: str | None = None, session_id: str = ""
    ) -> IndexReport:
        """Index `text` under `label`, replacing what the label held before.

        `kind` is markdown, plain, json or a code language; by default it is judged from
        the label's file extension, markdown when there is none.
        """
        kind = kind or kind_for_name(label)
        try:
            nbytes = len(text.encode("utf-8"))
        except UnicodeEncodeError:  # lone surrogates (cut emoji, "\udc80" in JSON)
            text = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
            nbytes = len(text.encode("utf-8"))
        chunks = chunk_text(text, kind)
        return self._write(label, kind, [chunks], nbytes, session_id=session_id)

    @_healing
    def index_file(
        self,
        path: Path | str,
        label: str | None = None,
        *,
        kind: str | None = None,
        max_bytes: int | None = None,
        session_id: str = "",
        over: str = "raise it with --max-file-size",
        denied: DenyCheck | None = None,
    ) -> IndexReport:
        """Index one regular text file; the label defaults to its absolute path. `over`:
        what the message about a file over `max_bytes` tells the caller to do. `denied`
        judges the file the read opens (`files.read_text_file`): the caller's check of
        the name cannot be raced by a symlink swapped in between.

        Raises:
            NotFoundError, InputError: see `files.read_text_file`; InputError also for a
                file whose name is not valid UTF-8 (SQLite cannot store it).
        """
        resolved = Path(os.path.abspath(path))
        try:
            str(resolved).encode("utf-8")
        except UnicodeEncodeError:
            raise InputError(
                f"skipping {printable_path(resolved)}: its name is not valid UTF-8"
            ) from None
        label = label or str(resolved)
        limit = max_bytes or MAX_FILE_BYTES
        known = self._con.execute(
            f"SELECT id, {_FRESHNESS}, bytes, chunk_count, code_chunk_count FROM sources"
            " WHERE label = ?",
            (label,),
        ).fetchone()
        if known is not None and (
            known["file_path"] != str(resolved)
            or known["kind"] != (kind or kind_for_name(str(resolved)))
        ):
            known = None  # another file or another kind under this label: index anew
        try:
            info: os.stat_result | None = os.stat(resolved)
        except OSError:
            info = None  # read_text_file says what is wrong
        regular = info is not None and stat.S_ISREG(info.st_mode) and info.st_size <= limit
        if known is not None and regular and info is not None and _same_stat(known, info):
            return self._unchanged(known, label, session_id)
        if info is not None and info.st_size > PIECE_BYTES:
            return self._index_pieces(resolved, label, kind, known, session_id, limit, over, denied)
        read = read_text_file(resolved, limit, over=over, denied=denied)
        if known is not None and read.sha256 == known["content_hash"]:
            self._touch(label, read)
            return self._unchanged(known, label, session_id)
        return self._index_read(read, label, kind, session_id)

    def _index_pieces(
        self,
        path: Path,
        label: str,
        kind: str | None,
        known: sqlite3.Row | None,
        session_id: str,
        limit: int,
        over: str,
        denied: DenyCheck | None,
    ) -> IndexReport:
        """`index_file` of a file over `PIECE_BYTES`, read and chunked a piece at a time:
        memory stays bounded by the piece, not the file (a 200 MB log took 1 GB whole)."""
        if known is not None:  # the same text again: one pass that only hashes
            hashed = TextPieces(path, limit, over=over, denied=denied)
            for _ in hashed.pieces(PIECE_BYTES):
                pass
            if hashed.sha256 == known["content_hash"]:
                self._touch(label, hashed)
                return self._unchanged(known, label, session_id)
        read = TextPieces(path, limit, over=over, denied=denied)
        kind = kind or kind_for_name(str(path))

        def batches() -> Iterator[list[Chunk]]:
            line = 0
            for piece in read.pieces(PIECE_BYTES):
                yield [_shifted(c, line) for c in chunk_text(piece, kind)]
                line += piece.count("\n")

        return self._write(
            label,
            kind,
            batches(),
            read.size,
            file_path=str(path),
            content_hash=lambda: read.sha256,
            mtime_ns=_trusted_mtime(read),
            size=read.size,
            session_id=session_id,
        )

    def _unchanged(self, row: sqlite3.Row, label: str, session_id: str) -> IndexReport:
        """The report of a file indexed again with the content it had; it now belongs to
        the session that indexed it last, as if it had been written again."""
        session = session_id or self.session_id
        if session != row["session_id"]:
            db.retry_busy(
                lambda: self._con.execute(
                    "UPDATE sources SET session_id = ? WHERE id = ?", (session, row["id"])
                )
            )
        return IndexReport(
            label,
            row["id"],
            row["chunk_count"],
            row["code_chunk_count"],
            row["bytes"],
            row["file_path"],
            unchanged=True,
        )

    def _index_read(
        self, read: FileText, label: str, kind: str | None, session_id: str = ""
    ) -> IndexReport:
        kind = kind or kind_for_name(str(read.path))
        chunks = chunk_text(read.text, kind)
        return self._write(
            label,
            kind,
            [chunks],
            read.size,
            file_path=str(read.path),
            content_hash=read.sha256,
            mtime_ns=_trusted_mtime(read),
            size=read.size,
            session_id=session_id,
        )

    @_healing
    def delete_session_sources(self, session_id: str) -> int:
        """Remove every source (and its chunks) indexed for `session_id`; returns how many
        chunks went."""
        con = self._con

        def run() -> int:
            with db.write_transaction(con):
                rows = con.execute(
                    "SELECT id, chunk_count FROM sources WHERE session_id = ?", (session_id,)
                ).fetchall()
                for row in rows:
                    self._delete_source_rows(row["id"])
                return sum(int(r["chunk_count"]) for r in rows)

        return db.retry_busy(run) if session_id else 0

    @_healing
    def delete_source(self, label: str) -> bool:
        """Remove one source and its chunks; False when there was no such label."""
        con = self._con

        def run() -> bool:
            with db.write_transaction(con):
                row = con.execute("SELECT id FROM sources WHERE label = ?", (label,)).fetchone()
                if row is None:
                    return False
                self._delete_source_rows(row["id"])
                return True

        return db.retry_busy(run)

    @_healing
    def merge_index(self) -> bool:
        """Merge the full-text indexes' segments into one each (FTS5 ``optimize``).

        Every write adds a segment and FTS5 merges them only now and then, so after a
        bulk index a term lookup reads dozens of segments: merged, searches over 100,000
        files take about half the time. It rewrites the indexes (about a second at that
        size) and only saves time, so a full disk, or another writer holding the database
        for more than `MERGE_WAIT_MS`, skips it: False.
        """
        if self._reading_only is not None:
            return False
        con = self._con
        con.execute(f"PRAGMA busy_timeout={MERGE_WAIT_MS}")  # not the 30 s a write waits
        try:
            self._catch_up(wait=False)
            con.execute("BEGIN IMMEDIATE")
            try:
                con.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('optimize')")
                con.execute("INSERT INTO vocab_tri(vocab_tri) VALUES ('optimize')")
                con.execute("INSERT INTO labels_tri(labels_tri) VALUES ('optimize')")
                con.execute("COMMIT")
            except BaseException:
                db.rollback_quietly(con)
                raise
        except sqlite3.OperationalError as exc:
            if not (db.is_busy(exc) or db.is_full(exc)):
                raise
            _log.info("index segments not merged: %s", exc)
            return False
        finally:
            con.execute(f"PRAGMA busy_timeout={db.BUSY_TIMEOUT_MS}")
        return True

    # ------------------------------------------------------------------ freshness

    @_healing
    def refresh(
        self, *, rehash: bool = False, labels: Iterable[str] | None = None
    ) -> RefreshReport:
        """Bring file-backed sources up to date with their files: all of them, or those
        of `labels`. Checking them all costs a stat per source: an explicit step
        (``ctxmode index --refresh``), never one a search takes.

        Fast path: same mtime_ns and size means unchanged. Otherwise (or with `rehash`)
        the file is hashed; a new hash re-indexes it, the same hash only records the new
        mtime. Missing files are dropped. Files the deny check refuses are never read.
        """
        report = RefreshReport()
        if labels is None:
            rows = self._con.execute(
                f"SELECT {_FRESHNESS} FROM sources WHERE file_path IS NOT NULL"
            ).fetchall()
        else:
            rows = self._rows_of(set(labels))
        self._check(rows, report, rehash=rehash)
        return report

    def _rows_of(self, labels: set[str]) -> list[sqlite3.Row]:
        """The file-backed sources among `labels`."""
        rows: list[sqlite3.Row] = []
        wanted = sorted(labels)
        for at in range(0, len(wanted), 500):  # under SQLite's limit of bound parameters
            part = wanted[at : at + 500]
            rows += self._con.execute(
                f"SELECT {_FRESHNESS} FROM sources WHERE file_path IS NOT NULL"
                f" AND label IN ({','.join('?' * len(part))})",
                part,
            ).fetchall()
        return rows

    def _check_folders(self, folders: list[str], report: RefreshReport, seen: _Checked) -> None:
        """Check the sources whose files are under `folders`, up to `seen.budget`; not
        the deny check of unchanged ones (a hit among them is checked on its own)."""
        for folder in folders:
            if seen.budget <= 0:
                return
            # Paths under folder/ sort from "folder/" up to "folder0" ("0" follows "/").
            low = folder.rstrip("/\\") + os.sep
            rows = self._con.execute(
                f"SELECT {_FRESHNESS} FROM sources WHERE file_path IS NOT NULL"
                " AND file_path >= ? AND file_path < ? ORDER BY file_path LIMIT ?",
                (low, low[:-1] + chr(ord(os.sep) + 1), seen.budget),
            ).fetchall()
            rows = [r for r in rows if r["label"] not in seen.labels]
            seen.budget -= len(rows)
            self._check(rows, report, deny_first=False)

    def _sweep(self, report: RefreshReport) -> None:
        """Check the next `SWEEP_BATCH` file-backed sources, in id order, wrapping round:
        every source of a store that holds no more is checked on each call."""
        con = self._con
        if self._sweep_after is None:
            top = con.execute("SELECT coalesce(max(id), 0) FROM sources").fetchone()[0]
            self._sweep_after = random.randrange(int(top) + 1)  # noqa: S311 - not a secret
        after = self._sweep_after
        query = (
            f"SELECT id, {_FRESHNESS} FROM sources WHERE file_path IS NOT NULL"
            " AND id > ? AND id <= ? ORDER BY id LIMIT ?"
        )
        rows = con.execute(query, (after, 2**63 - 1, SWEEP_BATCH)).fetchall()
        if len(rows) < SWEEP_BATCH:
            rows += con.execute(query, (-1, after, SWEEP_BATCH - len(rows))).fetchall()
        if rows:
            self._sweep_after = int(rows[-1]["id"])
        self._check(rows, report, deny_first=False)

    def _check(
        self,
        rows: Iterable[sqlite3.Row],
        report: RefreshReport,
        *,
        rehash: bool = False,
        deny_first: bool = True,
    ) -> None:
        """Check each source's file, re-index or drop it, and say so in `report`.

        `deny_first` asks the deny check about every source (the report then names every
        denied one, and a search hides them); without it only a file that changed is
        asked about, before it is read or dropped: a stat alone reads nothing.
        """
        for row in rows:
            label = row["label"]
            path = row["file_path"]
            if deny_first and self._denied(path):
                report.denied.append(label)
                continue
            try:
                info: os.stat_result | None = os.stat(path)
            except FileNotFoundError:
                info = None
            except OSError:
                denied = not deny_first and self._denied(path)
                (report.denied if denied else report.failed).append(label)
                continue
            if info is not None and not rehash and _same_stat(row, info):
                continue
            if not deny_first and self._denied(path):
                report.denied.append(label)
                continue
            if info is None:
                self.delete_source(label)
                report.dropped.append(label)
                continue
            try:
                read = read_text_file(
                    Path(path), max(MAX_FILE_BYTES, row["file_size"] or 0), denied=self.deny
                )
            except (CtxError, OSError):  # binary or unreadable now: keep the cached copy
                report.failed.append(label)
                continue
            if read.sha256 == row["content_hash"]:
                self._touch(label, read)
                continue
            self._index_read(read, label, row["kind"], row["session_id"])
            report.refreshed.append(label)

    def _denied(self, path: str) -> bool:
        return self.deny is not None and self.deny(path)

    def _touch(self, label: str, read: FileText | TextPieces) -> None:
        """Record a new mtime/size for unchanged content, so it is not hashed again (not
        while the disk is too full to write: it only saves work)."""
        if self._reading_only is not None:
            return
        db.retry_busy(
            lambda: self._con.execute(
                "UPDATE sources SET file_mtime_ns = ?, file_size = ? WHERE label = ?",
                (_trusted_mtime(read), read.size, label),
            )
        )

    # ------------------------------------------------------------------ reading

    @_healing
    def chunk_count(self) -> int:
        return int(self._con.execute("SELECT count(*) FROM chunks").fetchone()[0])

    @_healing
    def sources(self) -> list[SourceInfo]:
        rows = self._con.execute(
            "SELECT label, kind, chunk_count, code_chunk_count, bytes, file_path, indexed_at"
            " FROM sources ORDER BY label"
        ).fetchall()
        return [
            SourceInfo(
                r["label"],
                r["kind"],
                r["chunk_count"],
                r["code_chunk_count"],
                r["bytes"],
                r["file_path"],
                r["indexed_at"],
            )
            for r in rows
        ]

    @_healing
    def fuzzy_correct(self, word: str) -> str | None:
        """The closest vocabulary word within the length-based edit budget, or None."""
        self._searchable()
        return self._vocabulary.correct(word)

    @_healing
    def search(
        self,
        query: str,
        *,
        limit: int = DEFAULT_LIMIT,
        source: str | None = None,
        content_type: str | None = None,
        exact_source: bool = False,
        refresh: bool = True,
        snippet_chars: int = q.SNIPPET_MAX,
    ) -> SearchResult:
        """Ranked chunks for `query`. Never raises on odd query syntax.

        With `refresh`, the file of every hit is checked before it is returned: a hit
        from a changed, deleted or now denied file is never served, the search runs again
        (up to `STALE_ROUNDS` times, then such hits are left out). A rolling window of
        other sources is checked first (see `_sweep`, `sweep_interval`).
        """
        run: _SearchArgs = (query, limit, source, content_type, exact_source, snippet_chars)
        report = RefreshReport()
        if not refresh:
            return self._search(run, report)
        if time.monotonic() - self._last_sweep >= self.sweep_interval:
            self._sweep(report)
            self._last_sweep = time.monotonic()
        seen = _Checked()
        for _ in range(STALE_ROUNDS):
            result = self._search(run, report)
            if not self._check_hits(result.hits, report, seen):
                return result
        result = self._search(run, report)
        stale = self._check_hits(result.hits, report, seen)
        if not stale:
            return result
        hits = [h for h in result.hits if h.source not in stale]
        return SearchResult(result.query, hits, result.corrections, report)

    def _check_hits(
        self, hits: Sequence[SearchHit], report: RefreshReport, seen: _Checked
    ) -> set[str]:
        """Check the files of `hits` not checked yet in this search; the labels of those
        that changed (re-indexed, dropped or denied): their hits are stale.

        A file found deleted has its folder's other sources checked too (within the
        search's budget): a folder removed, or a branch checked out, is dropped at once
        rather than a few hits per round.
        """
        labels = {h.source for h in hits if h.file_path} - seen.labels
        if not labels:
            return set()
        seen.labels |= labels
        found = RefreshReport()
        rows = self._rows_of(labels)
        self._check(rows, found)
        if found.dropped and seen.budget > 0:
            gone = set(found.dropped)
            folders = {os.path.dirname(r["file_path"]) for r in rows if r["label"] in gone}
            self._check_folders(sorted(folders), found, seen)
        for mine, theirs in (
            (report.refreshed, found.refreshed),
            (report.dropped, found.dropped),
            (report.denied, found.denied),
            (report.failed, found.failed),
        ):
            mine.extend(label for label in theirs if label not in mine)  # the sweep's too
        return {*found.refreshed, *found.dropped, *found.denied}

    def _search(self, run: _SearchArgs, report: RefreshReport) -> SearchResult:
        self._searchable()  # what this search's own checks re-indexed too
        # Sources whose file a Read rule now denies are neither re-read nor served.
        retrieval = Retrieval(self._con, self._vocabulary, self._weights)
        hits, corrections = retrieval.run(*run, hidden=frozenset(report.denied))
        return SearchResult(run[0], hits, corrections, report)

    # ------------------------------------------------------------------ terms

    @_healing
    def source_labels(self, containing: str | None = None, limit: int = 10) -> list[str]:
        """Labels of sources, the latest indexed first; only those holding `containing`
        (case-insensitively) when it is given."""
        if containing is None:
            rows = self._con.execute(
                "SELECT label FROM sources ORDER BY indexed_at DESC, id DESC LIMIT ?", (limit,)
            )
        else:
            rows = self._con.execute(
                "SELECT label FROM sources WHERE instr(lower(label), lower(?)) > 0"
                " ORDER BY indexed_at DESC, id DESC LIMIT ?",
                (containing, limit),
            )
        return [row[0] for row in rows]

    def distinctive_terms(self, label: str, top: int = 40) -> list[str]:
        """Words that characterise one source: frequent in some chunks, not in all.

        Sources with fewer than 3 chunks have none.
        """
        rows = self._con.execute(
            "SELECT c.content FROM chunks c JOIN sources s ON s.id = c.source_id WHERE s.label = ?",
            (label,),
        ).fetchall()
        n = len(rows)
        if n < 3:
            return []
        df: dict[str, int] = {}
        for row in rows:
            for word in vocabulary(row[0]):
                df[word] = df.get(word, 0) + 1
        ceiling = max(3, ceil(0.4 * n))
        scored = []
        for word, count in df.items():
            if 2 <= count <= ceiling:
                bonus = 1.5 if "_" in word else 0.8 if len(word) >= 12 else 0.0
                scored.append((log(n / count) + min(len(word) / 20, 0.5) + bonus, word))
        scored.sort(key=lambda s: (-s[0], s[1]))
        return [w for _, w in scored[:top]]
