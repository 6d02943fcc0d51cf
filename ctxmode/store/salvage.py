"""What a damaged knowledge base still lists, and what a heal did with it.

`salvage_sources` reads the list of sources of a file SQLite calls damaged, without
writing it; `Rebuild` counts what was indexed again from those sources' files and words
the one notice a heal gives.
"""

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from ctxmode import dbfiles


class Listed(NamedTuple):
    """A source as listed by a damaged knowledge base."""

    label: str
    kind: str
    file_path: str | None
    file_size: int | None
    session_id: str


_LIST_SOURCES = "SELECT id, label, kind, file_path, file_size, session_id FROM sources"
_MAX_PROBES = 1_000_000


def _listed(row: sqlite3.Row) -> Listed | None:
    label, kind, path, size, session = row[1], row[2], row[3], row[4], row[5]
    if not isinstance(label, str) or not isinstance(kind, str):
        return None  # garbage that happened to parse as a row
    return Listed(
        label,
        kind,
        path if isinstance(path, str) else None,
        size if isinstance(size, int) else None,
        session if isinstance(session, str) else "",
    )


def salvage_sources(damaged: Path) -> list[Listed] | None:
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
class Rebuild:
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
