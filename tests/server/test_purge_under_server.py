"""`ctxmode purge --all` from the command line while a server for the project runs:
the server notices at its next call that its databases were deleted and opens the new
ones, so what it indexes and counts afterwards survives it."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxmode.dbfiles import open_readonly

from .support import call

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def _session(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTXMODE_SESSION_ID", "sess-a")


def _labels(db: Path) -> set[str]:
    con = open_readonly(db)
    try:
        return {r[0] for r in con.execute("SELECT label FROM sources")}
    finally:
        con.close()


def _purge_from_the_cli(project: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ctxmode", "purge", "--all", "--yes", "--project", str(project)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )


async def test_what_a_server_indexes_after_a_cli_purge_survives_it(client, state, project):
    await call(client, "ctx_index", {"content": "# Old\nwalrus notes", "source": "old"})
    text, _ = await call(client, "ctx_search", {"queries": ["walrus"]})
    assert "walrus" in text
    content_db = state.project.content_db

    purged = _purge_from_the_cli(project)
    assert purged.returncode == 0, purged.stderr
    assert "Purged: knowledge base (FTS5)" in purged.stdout
    assert f"{os.getpid()}" in purged.stderr  # it saw this server holding the files
    assert not content_db.exists()

    text, is_error = await call(
        client, "ctx_index", {"content": "# New\nnarwhal notes", "source": "new"}
    )
    assert not is_error
    text, _ = await call(client, "ctx_search", {"queries": ["walrus narwhal"]})
    assert "[new:" in text and "[old:" not in text  # the purged source is gone
    stats, _ = await call(client, "ctx_stats")
    state.shutdown()

    assert _labels(content_db) == {"new"}  # in the file under the name, after the exit
    assert "ctx_search" in stats and "ctx_index" in stats
