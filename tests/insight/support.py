"""Real session and content databases for the dashboard tests, written through ctxmode's
own APIs, and a small HTML reader to check what the page shows."""

import contextlib
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest

from ctxmode import paths
from ctxmode.session import db as session_db
from ctxmode.session.db import SessionDB
from ctxmode.session.events import Event
from ctxmode.session.where import session_db_path
from ctxmode.stats.model import Usage
from ctxmode.store import ContentStore

CHARTS = ("savings-over-time", "per-tool", "events-by-category", "top-files")
EVIL = "<script>alert(1)</script>.py"


@contextlib.contextmanager
def at_day(day: str) -> Iterator[None]:
    """Counters added inside land on `day` (UTC), as if recorded then."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(session_db, "now_iso", lambda offset=0.0: f"{day}T12:00:00.000Z")
        yield


def fill(project: Path, home: Path) -> None:
    """Two days of counters, file and git events, one indexed document."""
    with SessionDB(session_db_path(project, paths.data_root())) as sdb:
        sdb.ensure_session("s1", str(project), "claude-code")
        with at_day("2024-05-01"):
            sdb.add_usage("s1", "ctx_execute", Usage(calls=2, returned=1000, sandboxed=99_000))
        with at_day("2024-05-03"):
            sdb.add_usage("s1", "ctx_index", Usage(1, 200, 4800, indexed=4800))
            sdb.add_usage("s2", "ctx_search", Usage(calls=3, returned=1500))
        events = [
            Event("file_read", str(project / "src" / "app.py")),
            Event("file_edit", "src/app.py"),  # the same file, as recorded relative
            Event("file_write", str(project / EVIL)),
            Event("file_read", str(home / "notes.md")),
            Event("file_glob", "**/*.py"),  # a pattern, not a file
            Event("git", "commit -m wip"),
        ]
        sdb.add_events("s1", events, source_hook="PostToolUse", project_dir=str(project))
    with ContentStore(paths.ProjectPaths(paths.data_root(), project).content_db) as store:
        store.index_text("# Notes\n\nSome text to index.\n", "notes.md")


def chart(html: str, name: str) -> str:
    """The markup of one chart's ``<svg>``."""
    start = html.index(f'<svg data-chart="{name}"')
    return html[start : html.index("</svg>", start) + len("</svg>")]


class _Table(HTMLParser):
    def __init__(self, name: str) -> None:
        super().__init__()
        self.name, self.inside, self.rows = name, False, []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table" and ("data-table", self.name) in attrs:
            self.inside = True
        elif self.inside and tag == "tr":
            self.rows.append([])
        elif self.inside and tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self.inside = False
        elif self.inside and tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def table(html: str, name: str) -> list[list[str]]:
    """Cell texts of the ``<table data-table=NAME>``, header row first."""
    parser = _Table(name)
    parser.feed(html)
    return parser.rows
