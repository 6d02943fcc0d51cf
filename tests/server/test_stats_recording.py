"""Every MCP call is counted in the project's session database: the answer's bytes, and
what the call kept out of the context (measured, never estimated)."""

import json
import time
from pathlib import Path

import pytest

from ctxmode.session.db import SessionDB
from ctxmode.stats.model import Usage

from .support import call

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def _session(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTXMODE_SESSION_ID", "sess-1")


def _usage(state) -> dict[str, Usage]:
    state.recorder.flush()  # calls are written a moment after they are counted
    with SessionDB(state.recorder.session_db) as sdb:
        return sdb.usage("sess-1")


async def test_execute_counts_output_kept_in_the_sandbox(client, state):
    text, is_error = await call(
        client,
        "ctx_execute",
        {"language": "python", "code": "print('x' * 300_000)", "intent": "nothing"},
    )
    assert not is_error
    usage = _usage(state)["ctx_execute"]
    assert usage.calls == 1
    assert usage.returned == len(text.encode())
    assert usage.sandboxed == 300_001 - usage.returned
    assert usage.indexed == 300_001


async def test_small_output_returned_whole_keeps_nothing_out(client, state):
    text, _ = await call(client, "ctx_execute", {"language": "shell", "code": "echo hi"})
    usage = _usage(state)["ctx_execute"]
    assert (usage.calls, usage.returned, usage.sandboxed) == (1, len(text.encode()), 0)


async def test_inline_index_is_not_counted_as_kept_out(client, state):
    await call(client, "ctx_index", {"content": "# A\n" + "words " * 500, "source": "notes"})
    usage = _usage(state)["ctx_index"]
    assert usage.sandboxed == 0 and usage.indexed > 2500


async def test_index_by_path_counts_the_file(client, state, project: Path):
    (project / "doc.md").write_text("# Title\n" + "body text\n" * 2000, encoding="utf-8")
    text, _ = await call(client, "ctx_index", {"path": "doc.md"})
    usage = _usage(state)["ctx_index"]
    assert usage.indexed == (project / "doc.md").stat().st_size
    assert usage.sandboxed == usage.indexed - len(text.encode())


async def test_errors_and_searches_are_calls_that_returned_bytes(client, state):
    text, is_error = await call(client, "ctx_search", {"queries": ["nothing"]})
    assert is_error  # empty knowledge base
    usage = _usage(state)["ctx_search"]
    assert (usage.calls, usage.returned, usage.sandboxed) == (1, len(text.encode()), 0)


async def test_stats_file_mirrors_the_database(client, state):
    await call(client, "ctx_execute", {"language": "shell", "code": "seq 1 50000"})
    deadline = time.monotonic() + 5  # written a moment after the call, not in it
    while not state.recorder.stats_file.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    data = json.loads(state.recorder.stats_file.read_text(encoding="utf-8"))
    usage = _usage(state)["ctx_execute"]
    assert data["session_id"] == "sess-1"
    assert data["session"] == usage._asdict() == data["project"]
    assert data["by_tool"]["ctx_execute"] == usage._asdict()


async def test_indexed_sources_are_tagged_with_the_session(client, state):
    await call(client, "ctx_index", {"content": "# A\nalpha", "source": "mine"})
    with state.store() as store:
        row = store.connection.execute(
            "SELECT session_id FROM sources WHERE label = 'mine'"
        ).fetchone()
    assert row[0] == "sess-1"


async def test_a_burst_of_calls_rewrites_the_stats_file_once_with_all_of_them(client, state):
    for n in range(5):
        await call(client, "ctx_index", {"content": f"# T{n}\nbody {n}", "source": f"s{n}"})
    state.recorder.flush()
    data = json.loads(state.recorder.stats_file.read_text(encoding="utf-8"))
    assert data["by_tool"]["ctx_index"]["calls"] == 5
