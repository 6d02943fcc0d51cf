"""ctx_stats and ctx_purge through a real MCP client session."""

import logging
from pathlib import Path

import pytest

from ctxmode.session.db import SessionDB
from ctxmode.session.events import Event

from .support import call

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def _session(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTXMODE_SESSION_ID", "sess-a")


async def test_stats_starts_in_an_honest_empty_state(client):
    text, is_error = await call(client, "ctx_stats")
    assert not is_error
    assert "No measurable activity yet" in text
    assert "%" not in text.split("Percentages")[0]  # no percentage without measurements


async def test_stats_reports_what_the_session_kept_out(client):
    await call(client, "ctx_execute", {"language": "shell", "code": "seq 1 40000"})
    text, _ = await call(client, "ctx_stats")
    assert "This session (sess-a" in text
    assert "kept out of the context" in text
    assert "ctx_execute" in text
    assert "tokens are estimates" in text


async def test_purge_refuses_the_ambiguous_combination_before_confirm(client, state):
    await call(client, "ctx_index", {"content": "# A\nalpha", "source": "a"})
    for confirm in (True, False):
        text, is_error = await call(
            client, "ctx_purge", {"confirm": confirm, "scope": "project", "sessionId": "x"}
        )
        assert is_error
        assert text.startswith("Ambiguous purge: sessionId implies scope:session")
    assert state.project.content_db.exists()


@pytest.mark.parametrize("confirm", [False, "false", "FALSE"])
async def test_purge_without_confirmation_is_cancelled_not_an_error(client, state, confirm):
    await call(client, "ctx_index", {"content": "# A\nalpha", "source": "a"})
    text, is_error = await call(client, "ctx_purge", {"confirm": confirm, "scope": "project"})
    assert (text, is_error) == ("Purge cancelled. Pass confirm: true to proceed.", False)
    assert state.project.content_db.exists()


async def test_purge_requires_confirm(client, state):
    text, is_error = await call(client, "ctx_purge", {"scope": "project"})
    assert is_error and "confirm" in text


async def test_scope_session_without_session_id_is_an_error(client):
    text, is_error = await call(client, "ctx_purge", {"confirm": True, "scope": "session"})
    assert is_error
    assert text.startswith("scope:session requires sessionId")


async def test_project_purge_closes_the_open_store_and_resets_stats(client, state):
    await call(client, "ctx_index", {"content": "# A\nalpha", "source": "a"})
    await call(client, "ctx_search", {"queries": ["alpha"]})  # the shared handle is open
    stats_file = state.recorder.stats_file
    state.recorder.flush()  # the file is written a moment after the calls
    assert stats_file.exists()
    text, is_error = await call(client, "ctx_purge", {"confirm": "true", "scope": "project"})
    assert not is_error
    assert text.startswith("Purged: knowledge base (FTS5), session events DB")
    assert "session stats" in text
    assert not state.project.content_db.exists()
    assert not stats_file.exists()  # the purge call itself is not counted
    stats, _ = await call(client, "ctx_stats")
    assert "No measurable activity yet" in stats
    # the store reopens on demand
    again, is_error = await call(client, "ctx_index", {"content": "# B\nbeta", "source": "b"})
    assert not is_error and state.project.content_db.exists()


async def test_bare_confirm_purges_the_project_with_a_deprecation_warning(client, state, caplog):
    await call(client, "ctx_index", {"content": "# A\nalpha", "source": "a"})
    with caplog.at_level(logging.WARNING, logger="ctxmode.server"):
        text, is_error = await call(client, "ctx_purge", {"confirm": True})
    assert not is_error and text.startswith("Purged: knowledge base (FTS5)")
    assert "bare {confirm: true} is deprecated" in text
    assert any("deprecated" in r.getMessage() for r in caplog.records)
    assert not state.project.content_db.exists()


async def test_session_purge_keeps_files_other_sessions_and_project_stats(
    client, state, monkeypatch
):
    await call(client, "ctx_index", {"content": "# A\nalpha words", "source": "a"})
    await call(client, "ctx_execute", {"language": "shell", "code": "seq 1 30000"})
    monkeypatch.setenv("CTXMODE_SESSION_ID", "sess-b")
    await call(client, "ctx_index", {"content": "# B\nbeta words", "source": "b"})
    db_path = state.recorder.session_db
    with SessionDB(db_path) as sdb:
        sdb.add_event("sess-a", Event("file_read", "x.py"), source_hook="PostToolUse")
        project_before = sdb.usage()
    text, is_error = await call(client, "ctx_purge", {"confirm": True, "sessionId": "sess-a"})
    assert not is_error
    assert text == (
        "Purged session sess-a: session rows for sess-a, FTS5 chunks for sess-a. "
        "Other sessions and project-wide stats preserved."
    )
    assert state.project.content_db.exists() and Path(db_path).exists()
    with state.store() as store:
        assert {s.label for s in store.sources()} == {"b"}
    with SessionDB(db_path) as sdb:
        assert sdb.usage("sess-a") == {}
        after = sdb.usage()
    # project totals still hold sess-a's counters (plus the purge call is not counted)
    for tool, usage in project_before.items():
        assert after[tool] == usage


async def test_doctor_returns_the_cli_report(client, project):
    from ctxmode.doctor import render_text, run_checks

    text, is_error = await call(client, "ctx_doctor")
    assert not is_error
    assert text.startswith("ctxmode doctor ")
    assert "[OK] storage" in text or "[OK] storage:" in text
    expected = render_text(run_checks(project)).splitlines()
    # same checks, in the same order (details such as timings may differ)
    assert [line.split(":")[0] for line in text.splitlines()] == [
        line.split(":")[0] for line in expected
    ]


async def test_upgrade_returns_the_command_to_run_and_changes_nothing(client):
    text, is_error = await call(client, "ctx_upgrade")
    assert not is_error
    assert "upgrade --yes" in text
    assert "restart" in text.lower()


async def test_unknown_confirm_values_are_refused(client, state):
    await call(client, "ctx_index", {"content": "# A\nalpha", "source": "a"})
    text, is_error = await call(client, "ctx_purge", {"confirm": "yes", "scope": "project"})
    assert is_error and "confirm must be true or false" in text
    assert state.project.content_db.exists()


async def test_insight_writes_the_dashboard_and_says_where(client, monkeypatch):
    monkeypatch.setenv("CTXMODE_NO_BROWSER", "1")
    await call(client, "ctx_execute", {"language": "shell", "code": "seq 1 30000"})
    text, is_error = await call(client, "ctx_insight", {"open": False})
    assert not is_error
    path = next(word for word in text.split() if word.endswith("index.html"))
    page = Path(path).read_text(encoding="utf-8")
    assert 'data-chart="per-tool"' in page and "ctx_execute" in page


async def test_insight_port_out_of_range_is_refused(client):
    text, is_error = await call(client, "ctx_insight", {"port": 70000})
    assert is_error and "port must be between 1 and 65535" in text


async def test_purging_an_empty_project_deletes_nothing_every_time(client, state):
    for _ in range(2):
        text, is_error = await call(client, "ctx_purge", {"confirm": True, "scope": "project"})
        assert (text, is_error) == ("Nothing to purge: no data is stored for this project.", False)
    assert not state.recorder.session_db.exists()
