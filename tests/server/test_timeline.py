"""ctx_search(sort: "timeline"): knowledge base, session events and memory files, merged
in time order, through a real MCP client."""

import os
import time
from pathlib import Path

import pytest

from ctxmode import timeline
from ctxmode.session.db import SessionDB
from ctxmode.session.events import Event
from ctxmode.session.where import session_db_path

from .support import call

pytestmark = pytest.mark.anyio


def _events(state, *items: tuple[str, str, str]) -> Path:
    db = session_db_path(state.project_dir, state.project.root)
    with SessionDB(db) as sdb:
        for session, kind, data in items:
            sdb.add_event(session, Event(kind, data), source_hook="PostToolUse")
    return db


async def test_timeline_works_on_an_empty_knowledge_base(client, state):
    _events(state, ("s-old", "decision", "use argon2 for password hashing"))
    text, is_error = await call(
        client, "ctx_search", {"queries": ["password hashing"], "sort": "timeline"}
    )
    assert not is_error
    assert "session · session s-old" in text
    assert "use argon2 for password hashing" in text
    relevance, is_error = await call(client, "ctx_search", {"queries": ["password hashing"]})
    assert is_error and "Knowledge base is empty" in relevance


async def test_the_three_sources_merge_oldest_first(client, state, project):
    (project / "CLAUDE.md").write_text(
        "# Rules\n\nFor password hashing always use argon2id.\n", encoding="utf-8"
    )
    old = time.time() - 86_400 * 3
    os.utime(project / "CLAUDE.md", (old, old))
    _events(state, ("s1", "error", "password hashing test failed: bcrypt missing"))
    await call(
        client, "ctx_index", {"content": "# Hashing\n\npassword hashing notes", "source": "n"}
    )
    text, _ = await call(
        client, "ctx_search", {"queries": ["password hashing"], "sort": "timeline", "limit": 5}
    )
    memory = text.index("memory · project/CLAUDE.md")
    event = text.index("session · session s1")
    knowledge = text.index("knowledge base · n")
    assert memory < event < knowledge  # the memory file is oldest, the index newest


async def test_a_source_filter_keeps_to_the_knowledge_base(client, state, project):
    (project / "CLAUDE.md").write_text("hash passwords\n", encoding="utf-8")
    _events(state, ("s1", "decision", "hash passwords"))
    await call(client, "ctx_index", {"content": "# A\n\nhash passwords here", "source": "kb"})
    text, _ = await call(
        client,
        "ctx_search",
        {"queries": ["hash passwords"], "sort": "timeline", "source": "kb"},
    )
    assert "knowledge base · kb" in text
    assert "memory ·" not in text and "session ·" not in text


def test_event_ranking_prefers_more_matching_words_and_keeps_the_newest(tmp_path):
    db = tmp_path / "s.db"
    with SessionDB(db) as sdb:
        sdb.add_event("s", Event("decision", "cache the token"), source_hook="x")
        sdb.add_event("s", Event("decision", "refresh the auth token every hour"), source_hook="x")
        sdb.add_event("s", Event("decision", "unrelated"), source_hook="x")
    items = timeline.event_items(db, "auth token refresh", 1)
    assert [i.text for i in items] == ["refresh the auth token every hour"]
    assert timeline.event_items(db, "to", 5) == []  # words under three letters are ignored


def test_merge_keeps_the_most_recent_and_reads_forwards():
    def item(when: str) -> timeline.Item:
        return timeline.Item(when, "session", "w", "t", when)

    merged = timeline.merge([[item("2026-01-03"), item("2026-01-01")], [item("2026-01-02")]], 2)
    assert [i.when for i in merged] == ["2026-01-02", "2026-01-03"]


def test_memory_passage_is_widened_to_paragraphs(tmp_path):
    home = tmp_path / "home"
    project = tmp_path / "p"
    project.mkdir()
    far = "x" * 400
    (project / "AGENTS.md").write_text(
        f"{far}\n\nfirst line\nuse uv for installs\nlast line\n\n{far}\n\n{'y' * 600}\n\nend\n",
        encoding="utf-8",
    )
    (item,) = timeline.memory_items(project, "installs", 3, home=home)
    assert item.text.startswith("first line\nuse uv for installs")  # from a paragraph start
    assert "end" not in item.text and far not in item.text.split("last line")[0]
    assert timeline.memory_items(project, "install", 3, home=home) == []  # whole words only


async def test_a_huge_limit_is_held_to_max_hits(client, state):
    from ctxmode.store.query import MAX_HITS

    _events(state, *((f"s{n}", "decision", f"password hashing choice {n}") for n in range(130)))
    text, is_error = await call(
        client,
        "ctx_search",
        {"queries": ["password hashing"], "sort": "timeline", "limit": 10**12},
    )
    assert not is_error
    assert text.count("password hashing choice") == MAX_HITS
