"""How telling each query term is: inverse document frequency over the indexed chunks.

A term's document frequency is the number of chunks its FTS5 expression matches (its
stems, synonyms and, for a term that was expanded, the words it was expanded to), counted
by FTS5 itself; the chunk count is read once per state of the database. Both are cached
until the database changes (`PRAGMA data_version` for other connections' commits, the
connection's own change count for this one's), so repeated searches pay nothing.

Counting reads a term's whole list of chunks, which for a word in half of 500,000 chunks
takes ~12 ms; counting stops at `common_at` chunks (5% of them, at least `COMMON_MIN`), so
every very common word gets the same low weight and a count costs ~1 ms at most.
"""

import sqlite3
from math import log

from ctxmode import db

_CACHE_MAX = 4096
COMMON_MIN = 5000  # chunks: counting stops at the larger of this and 5% of all chunks
COMMON_SHARE = 20


class TermWeights:
    """IDF weights on one connection."""

    def __init__(self, con: sqlite3.Connection) -> None:
        self._con = con
        self._state: tuple[int, int] | None = None
        self._chunks = 0
        self._df: dict[str, int] = {}

    def _fresh(self) -> None:
        version = self._con.execute("PRAGMA data_version").fetchone()[0]
        state = (int(version), self._con.total_changes)
        if state != self._state:
            self._state = state
            self._df.clear()
            self._chunks = int(self._con.execute("SELECT count(*) FROM chunks").fetchone()[0])

    @property
    def chunks(self) -> int:
        """The number of chunks indexed."""
        self._fresh()
        return self._chunks

    @property
    def common_at(self) -> int:
        return max(COMMON_MIN, self._chunks // COMMON_SHARE)

    def frequency(self, expr: str) -> int:
        """Chunks matching the FTS5 expression `expr`, up to `common_at` (0 when FTS5
        cannot parse it)."""
        found = self._df.get(expr)
        if found is None:
            try:
                row = self._con.execute(
                    "SELECT count(*) FROM (SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ?"
                    " LIMIT ?)",
                    (expr, self.common_at),
                ).fetchone()
                found = int(row[0])
            except sqlite3.OperationalError as exc:
                if db.is_busy(exc) or db.is_corrupt(exc) or db.is_full(exc):
                    raise
                found = 0  # an expression FTS5 cannot parse matches nothing
            if len(self._df) >= _CACHE_MAX:
                self._df.clear()
            self._df[expr] = found
        return found

    def idf(self, exprs: list[str]) -> list[float]:
        """The IDF of each expression, BM25's form: rare terms weigh most, a term in every
        chunk still a little."""
        self._fresh()
        n = self._chunks
        out = []
        for expr in exprs:
            df = min(self.frequency(expr), n)
            out.append(log(1.0 + (n - df + 0.5) / (df + 0.5)))
        return out
