"""The per-project knowledge base: index text and files, search them, keep them fresh.

Design:
* One SQLite file per project (see `ctxmode.paths`), schema in `schema.py`.
* A label names a source; indexing a label again replaces it in one transaction, so a
  reader sees the old chunks or the new ones, never a mix or nothing.
* Search fuses ranked lists (all terms, any term, substrings of known words) with
  reciprocal rank fusion, then reranks by title, proximity and phrase adjacency. A term
  that matches nothing is corrected against the vocabulary (typos).
* File-backed sources are checked before every search: a changed file is re-indexed, a
  deleted one dropped, a file now denied by policy left alone and never read.
* Damage heals itself: the first read or write that finds the file damaged (SQLite's
  "malformed", "not a database") moves it aside as ``<name>.corrupt-<ms>``, starts a new
  one, indexes again every file-backed source it can still list whose file exists, retries
  the call once and says so once (`take_notices`, or the `notify` callback). Other SQLite
  failures become a `StoreError` (`DiskFullError` for a full disk), never a raw error.
"""

import functools
import logging
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from math import ceil, log
from pathlib import Path
from typing import Concatenate, NamedTuple, ParamSpec, TypeVar

from ctxmode import db, dbfiles
from ctxmode.errors import CtxError, DiskFullError, InputError, StoreError
from ctxmode.store import query as q
from ctxmode.store.chunking import Chunk
from ctxmode.store.files import MAX_FILE_BYTES, FileText, printable_path, read_text_file
from ctxmode.store.kinds import chunk_text, kind_for_name
from ctxmode.store.ranking import Scorer
from ctxmode.store.schema import MIGRATIONS
from ctxmode.store.text import (
    STOPWORDS,
    WORD,
    fts_text,
    vocabulary,
)
from ctxmode.store.vocab import Vocabulary

RRF_K = 60
FETCH_MIN = 30
DEFAULT_LIMIT = 5
WAL_CHECKPOINT_PAGES = 4000  # checkpoint (and fsync) every ~16 MB of writes, not ~4 MB
PARTIAL_BELOW = 10

DenyCheck = Callable[[str], bool]
Notify = Callable[[str], None]

_log = logging.getLogger("ctxmode.store")
_P = ParamSpec("_P")
_R = TypeVar("_R")


@dataclass(frozen=True)
class IndexReport:
    label: str
    source_id: int
    chunks: int
    code_chunks: int
    bytes: int
    file_path: str | None = None


@dataclass(frozen=True)
class SearchHit:
    source: str
    title: str
    content_type: str
    layer: str  # "all-terms" | "any-term" | "substring" | "fuzzy"
    score: float
    snippet: str
    chunk_id: int
    file_path: str | None = None
    start_line: int | None = None
    end_line: int | None = None
    indexed_at: str | None = None


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


def _now_iso() -> str:
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1000):03d}Z"


class _Listed(NamedTuple):
    """A source as listed by a damaged knowledge base."""

    label: str
    kind: str
    file_path: str | None
    file_size: int | None
    session_id: str


_LIST_SOURCES = "SELECT id, label, kind, file_path, file_size, session_id FROM sources"
_MAX_PROBES = 1_000_000


def _listed(row: sqlite3.Row) -> _Listed | None:
    label, kind, path, size, session = row[1], row[2], row[3], row[4], row[5]
    if not isinstance(label, str) or not isinstance(kind, str):
        return None  # garbage that happened to parse as a row
    return _Listed(
        label,
        kind,
        path if isinstance(path, str) else None,
        size if isinstance(size, int) else None,
        session if isinstance(session, str) else "",
    )


def salvage_sources(damaged: Path) -> list[_Listed] | None:
    """Every source a damaged knowledge base still lists, read without writing it; None
    when not even a part of its list can be read.

    The whole table is read first; when that fails part way, each row id up to the
    highest known is looked up on its own, so one damaged page loses only its rows.
    """
    try:
        con = dbfiles.open_readonly(damaged)
    except sqlite3.Error:
        return None
    rows: dict[int, sqlite3.Row] = {}
    try:
        try:
            for row in con.execute(_LIST_SOURCES):
                rows[int(row[0])] = row
            complete = True
        except sqlite3.Error:
            complete = False
        if not complete:
            top = 0
            for query in ("SELECT max(id) FROM sources", "SELECT max(source_id) FROM chunks"):
                try:
                    top = max(top, int(con.execute(query).fetchone()[0] or 0))
                except (sqlite3.Error, TypeError, ValueError):  # noqa: PERF203 - either may fail
                    continue
            for rowid in range(1, min(top, _MAX_PROBES) + 1):
                if rowid in rows:
                    continue
                try:
                    row = con.execute(f"{_LIST_SOURCES} WHERE id = ?", (rowid,)).fetchone()
                except sqlite3.Error:
                    continue
                if row is not None:
                    rows[rowid] = row
    finally:
        con.close()
    if not rows and not complete:
        return None
    return [listed for row in rows.values() if (listed := _listed(row)) is not None]


@dataclass
class _Rebuild:
    """What a heal did, for its one notice."""

    listed: bool = True  # the damaged file's list of sources could be read
    files: int = 0
    rebuilt: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # file gone, unreadable or binary now
    denied: list[str] = field(default_factory=list)
    others: int = 0  # sources without a file: indexed text, command output, fetched pages

    def describe(self, cause: BaseException, aside: Path) -> str:
        parts = [
            f"the knowledge base was damaged ({cause}); it was moved to {aside} "
            "and a new one started"
        ]
        if not self.listed:
            parts.append("its list of sources could not be read: index again what you need")
            return "; ".join(parts)
        parts.append(
            f"{len(self.rebuilt)} of {self.files} file-backed source(s) indexed again "
            "from their files"
        )
        if self.missing:
            parts.append(f"{len(self.missing)} left out (file gone or unreadable)")
        if self.denied:
            parts.append(f"{len(self.denied)} left out (denied by a Read rule)")
        if self.others:
            parts.append(
                f"{self.others} source(s) of indexed text, command output or fetched pages "
                "could not be rebuilt: index them again"
            )
        return "; ".join(parts)


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
        `sweep_interval` (seconds) lets a long-lived process check every file-backed
        source at most that often; between sweeps only the sources of the hits about to
        be returned are checked, so a stale or deleted file is still never served.
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
        report = _Rebuild()
        try:
            self._rebuild(aside, report)
        finally:
            self._notice(report.describe(cause, aside))

    def _rebuild(self, damaged: Path, report: _Rebuild) -> None:
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
                read = read_text_file(Path(source.file_path), limit)
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
        self._closed = True
        con = self._con
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
        rows = con.execute(
            "SELECT id, title, content FROM chunks WHERE source_id = ?", (source_id,)
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
        chunks: Sequence[Chunk],
        nbytes: int,
        words: set[str],
        *,
        file_path: str | None = None,
        content_hash: str | None = None,
        mtime_ns: int | None = None,
        size: int | None = None,
        session_id: str = "",
    ) -> IndexReport:
        con = self._con
        code = sum(1 for c in chunks if c.content_type == "code")

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
                        content_hash,
                        mtime_ns,
                        size,
                        nbytes,
                        len(chunks),
                        code,
                        session_id or self.session_id,
                        _now_iso(),
                    ),
                )
                source_id = int(cur.lastrowid or 0)
                first = con.execute("SELECT coalesce(max(id), 0) + 1 FROM chunks").fetchone()[0]
                ids = range(first, first + len(chunks))
                con.executemany(
                    "INSERT INTO chunks(id, source_id, ord, title, content, content_type,"
                    " start_line, end_line) VALUES (?,?,?,?,?,?,?,?)",
                    [
                        (
                            cid,
                            source_id,
                            n,
                            c.title,
                            c.content,
                            c.content_type,
                            c.start_line,
                            c.end_line,
                        )
                        for n, (cid, c) in enumerate(zip(ids, chunks, strict=True))
                    ],
                )
                con.executemany(
                    "INSERT INTO chunks_fts(rowid, title, body) VALUES (?, ?, ?)",
                    [
                        (cid, fts_text(c.title), fts_text(c.content))
                        for cid, c in zip(ids, chunks, strict=True)
                    ],
                )
                if new_words:
                    last = con.execute("SELECT coalesce(max(id), 0) FROM vocab").fetchone()[0]
                    con.executemany(
                        "INSERT OR IGNORE INTO vocab(word) VALUES (?)", [(w,) for w in new_words]
                    )
                    con.execute(
                        "INSERT INTO vocab_tri(rowid, word)"
                        " SELECT id, word FROM vocab WHERE id > ?",
                        (last,),
                    )
                return source_id

        new_words = self._vocabulary.unknown(words)
        source_id = db.retry_busy(run)
        self._vocabulary.learned(new_words)
        return IndexReport(label, source_id, len(chunks), code, nbytes, file_path)

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
        return self._write(
            label,
            kind,
            chunks,
            nbytes,
            vocabulary(text),
            session_id=session_id,
        )

    @_healing
    def index_file(
        self,
        path: Path | str,
        label: str | None = None,
        *,
        kind: str | None = None,
        max_bytes: int | None = None,
        session_id: str = "",
    ) -> IndexReport:
        """Index one regular text file; the label defaults to its absolute path.

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
        read = read_text_file(resolved, max_bytes) if max_bytes else read_text_file(resolved)
        return self._index_read(read, label or str(resolved), kind, session_id)

    def _index_read(
        self, read: FileText, label: str, kind: str | None, session_id: str = ""
    ) -> IndexReport:
        kind = kind or kind_for_name(str(read.path))
        chunks = chunk_text(read.text, kind)
        return self._write(
            label,
            kind,
            chunks,
            read.size,
            vocabulary(read.text),
            file_path=str(read.path),
            content_hash=read.sha256,
            mtime_ns=read.mtime_ns,
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

    # ------------------------------------------------------------------ freshness

    @_healing
    def refresh(
        self, *, rehash: bool = False, labels: Iterable[str] | None = None
    ) -> RefreshReport:
        """Bring file-backed sources up to date with their files.

        Fast path: same mtime_ns and size means unchanged. Otherwise (or with `rehash`)
        the file is hashed; a new hash re-indexes it, the same hash only records the new
        mtime. Missing files are dropped. Files the deny check refuses are never read.
        """
        report = RefreshReport()
        rows = self._con.execute(
            "SELECT label, kind, file_path, content_hash, file_mtime_ns, file_size, session_id"
            " FROM sources WHERE file_path IS NOT NULL"
        ).fetchall()
        wanted = set(labels) if labels is not None else None
        for row in rows:
            label = row["label"]
            if wanted is not None and label not in wanted:
                continue
            path = row["file_path"]
            if self.deny is not None and self.deny(path):
                report.denied.append(label)
                continue
            try:
                info = os.stat(path)
            except FileNotFoundError:
                self.delete_source(label)
                report.dropped.append(label)
                continue
            except OSError:
                report.failed.append(label)
                continue
            if (
                not rehash
                and info.st_mtime_ns == row["file_mtime_ns"]
                and info.st_size == row["file_size"]
            ):
                continue
            try:
                read = read_text_file(Path(path), max(MAX_FILE_BYTES, row["file_size"] or 0))
            except (CtxError, OSError):  # binary or unreadable now: keep the cached copy
                report.failed.append(label)
                continue
            if read.sha256 == row["content_hash"]:
                self._touch(label, read)
                continue
            self._index_read(read, label, row["kind"], row["session_id"])
            report.refreshed.append(label)
        return report

    def _touch(self, label: str, read: FileText) -> None:
        """Record a new mtime/size for unchanged content, so it is not hashed again."""
        db.retry_busy(
            lambda: self._con.execute(
                "UPDATE sources SET file_mtime_ns = ?, file_size = ? WHERE label = ?",
                (read.mtime_ns, read.size, label),
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

    def _ranked(
        self,
        expr: str,
        limit: int,
        source: str | None,
        content_type: str | None,
        exact: bool,
        literals: Sequence[str] = (),
    ) -> list[int]:
        sql = [
            "SELECT f.rowid AS id FROM chunks_fts f",
        ]
        params: list[object] = [expr]
        where = ["chunks_fts MATCH ?"]
        if source is not None or content_type is not None or literals:
            sql.append("JOIN chunks c ON c.id = f.rowid")
            for literal in literals:
                where.append("instr(lower(c.content), ?) > 0")
                params.append(literal)
            if source is not None:
                sql.append("JOIN sources s ON s.id = c.source_id")
                if exact:
                    where.append("s.label = ?")
                    params.append(source)
                else:
                    where.append("s.label LIKE ? ESCAPE '\\'")
                    escaped = source.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
                    params.append(f"%{escaped}%")
            if content_type is not None:
                where.append("c.content_type = ?")
                params.append(content_type)
        sql.append("WHERE " + " AND ".join(where))
        sql.append("ORDER BY bm25(chunks_fts, 5.0, 1.0) LIMIT ?")
        params.append(limit)
        try:
            return [r[0] for r in self._con.execute(" ".join(sql), params)]
        except sqlite3.OperationalError as exc:
            if db.is_busy(exc) or db.is_corrupt(exc) or db.is_full(exc):
                raise
            return []  # an expression FTS5 cannot parse matches nothing

    @_healing
    def fuzzy_correct(self, word: str) -> str | None:
        """The closest vocabulary word within the length-based edit budget, or None."""
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
        """Ranked chunks for `query`. Never raises on odd query syntax."""
        run = (query, limit, source, content_type, exact_source, snippet_chars)
        if not refresh:
            return self._search(*run, RefreshReport())
        if time.monotonic() - self._last_sweep >= self.sweep_interval:
            report = self.refresh()
            self._last_sweep = time.monotonic()
            return self._search(*run, report)
        result = self._search(*run, RefreshReport())
        report = self.refresh(labels={h.source for h in result.hits if h.file_path})
        if report.refreshed or report.dropped or report.denied:
            return self._search(*run, report)
        return result

    def _search(
        self,
        query: str,
        limit: int,
        source: str | None,
        content_type: str | None,
        exact_source: bool,
        snippet_chars: int,
        report: RefreshReport,
    ) -> SearchResult:
        parsed = q.parse_query(query)
        limit = max(1, int(limit))
        if not parsed.terms:
            return SearchResult(query, [], {}, report)
        fetch = max(FETCH_MIN, 3 * limit)
        args = (fetch, source, content_type, exact_source)

        exact = [t.fts for t in parsed.terms]
        literals = [t.literal for t in parsed.terms if t.literal]
        lists: list[tuple[str, list[int]]] = []
        if parsed.phrases:  # a pasted message matches its source text word for word
            phrases = q.or_expr([q.quote_phrase(p) for p in parsed.phrases])
            lists.append(("phrase", self._ranked(phrases, *args)))
        if literals:  # identifiers as written outrank the same words as prose
            lists.append(("all-terms", self._ranked(q.and_expr(exact), *args, literals)))
        everything = self._ranked(q.and_expr(exact), *args)
        lists.append(("all-terms", everything))
        # Partial matches and substring expansions are only worth their cost (OR queries
        # over common words score thousands of rows) when all-terms matching is thin.
        thin = len(everything) < max(PARTIAL_BELOW, limit)
        if len(exact) > 1 and thin:
            lists.append(("any-term", self._ranked(q.or_expr(exact), *args)))

        extra: dict[str, tuple[str, ...]] = {}
        corrections: dict[str, str] = {}
        groups: list[str] = []
        expanded = False
        for term in parsed.terms:
            alternatives = [term.fts]
            if term.expandable and (thin or not self._vocabulary.known(term.text)):
                words = self._vocabulary.expansions(term.text)
                if (
                    not words
                    and not self._vocabulary.known(term.text)
                    and term.text not in STOPWORDS
                ):
                    fixed = self._vocabulary.correct(term.text)
                    # tokens → token is stemming's job, not a typo
                    if fixed and not (fixed.startswith(term.text) or term.text.startswith(fixed)):
                        corrections[term.text] = fixed
                        words = [fixed]
                if words:
                    expanded = True
                    extra[term.text] = tuple(words)
                    alternatives += [q.quote_phrase(" ".join(WORD.findall(w))) for w in words]
            groups.append(q.group_expr(alternatives))
        if expanded:
            layer = "fuzzy" if corrections else "substring"
            found = self._ranked(q.and_expr(groups), *args)
            if not found and len(groups) > 1:
                found = self._ranked(q.or_expr(groups), *args)
            lists.append((layer, found))

        fused: dict[int, float] = {}
        first_layer: dict[int, str] = {}
        for layer, ids in lists:
            for rank, cid in enumerate(ids):
                fused[cid] = fused.get(cid, 0.0) + 1.0 / (RRF_K + rank + 1)
                first_layer.setdefault(cid, layer)
        if not fused:
            return SearchResult(query, [], corrections, report)
        # Sources whose file a Read rule now denies are neither re-read nor served.
        hidden = frozenset(report.denied)
        hits = self._rerank(
            parsed, fused, first_layer, extra, corrections, hidden, limit, snippet_chars
        )
        return SearchResult(query, hits, corrections, report)

    def _rerank(
        self,
        parsed: q.ParsedQuery,
        fused: dict[int, float],
        first_layer: dict[int, str],
        extra: dict[str, tuple[str, ...]],
        corrections: dict[str, str],
        hidden: frozenset[str],
        limit: int,
        snippet_chars: int,
    ) -> list[SearchHit]:
        """Order candidates by how well each chunk answers the query (see `ranking`)."""
        ids = list(fused)
        placeholders = ",".join("?" * len(ids))
        rows = {
            r["id"]: r
            for r in self._con.execute(
                "SELECT c.id, c.title, c.content, c.content_type, c.start_line, c.end_line,"
                " s.label, s.file_path, s.indexed_at FROM chunks c"
                f" JOIN sources s ON s.id = c.source_id WHERE c.id IN ({placeholders})",
                ids,
            )
        }
        scorer = Scorer(parsed, extra, corrections)
        top = max(fused.values())
        scored: list[tuple[float, int]] = []
        for cid, rrf in fused.items():
            row = rows.get(cid)
            if row is None or row["label"] in hidden:
                continue
            score = scorer.score(
                rrf / top, row["label"], row["title"], row["content"], row["content_type"]
            )
            scored.append((score, cid))
        scored.sort(key=lambda s: (-s[0], s[1]))
        hits = []
        for score, cid in scored[:limit]:
            row = rows[cid]
            hits.append(
                SearchHit(
                    source=row["label"],
                    title=row["title"],
                    content_type=row["content_type"],
                    layer=first_layer[cid],
                    score=round(score, 4),
                    snippet=q.snippet(row["content"], scorer.flat, snippet_chars),
                    chunk_id=cid,
                    file_path=row["file_path"],
                    start_line=row["start_line"],
                    end_line=row["end_line"],
                    indexed_at=row["indexed_at"],
                )
            )
        return hits

    # ------------------------------------------------------------------ terms

    @_healing
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
