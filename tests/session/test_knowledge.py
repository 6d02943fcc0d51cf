"""Session events in the knowledge base (ctxmode.session.knowledge)."""

from ctxmode.session.events import StoredEvent
from ctxmode.session.knowledge import index_session, label, render_markdown
from ctxmode.store import ContentStore


def ev(n: int, event_type: str, category: str, data: str) -> StoredEvent:
    return StoredEvent(
        n, "s1", event_type, category, 2, data, "t", "", 0, 0, "2026-05-14T10:00:00Z"
    )


def test_each_event_is_its_own_heading_and_event_text_opens_none():
    text = render_markdown(
        "s1",
        [
            ev(1, "user_prompt", "prompt", "# not a heading\n```\nunclosed fence"),
            ev(2, "file_edit", "file", "/p/a.py"),
            ev(3, "mcp_tool_call", "mcp_tool_call", '{"params": 1}'),
        ],
    )
    headings = [line for line in text.splitlines() if line.startswith("#")]
    assert headings == [
        "# Session s1",
        "## User prompts",
        "### user_prompt 2026-05-14T10:00:00",
        "## Files",
        "### file_edit 2026-05-14T10:00:00",
    ]
    assert "\\# not a heading" in text and "\\```" in text
    assert "params" not in text


def test_indexing_makes_the_events_searchable_under_the_session_label(tmp_path):
    content = tmp_path / "kb.db"
    problem = index_session(content, "s1", [ev(1, "git", "git", "commit: validate email")])
    assert problem is None
    with ContentStore(content) as store:
        assert [s.label for s in store.sources()] == [label("s1")]
        assert store.search("validate", source="session-events").hits


def test_an_unusable_knowledge_base_is_reported_not_raised(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    problem = index_session(blocker / "kb.db", "s1", [ev(1, "git", "git", "commit: x")])
    assert problem is not None
