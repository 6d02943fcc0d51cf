"""The session database (hooks' events, the server's counters) damaged or on a full disk:
a hook never breaks the host, a damaged file found by a write is moved aside so the next
write works, and a full disk is a clear "disk full"."""

import json
import subprocess
from pathlib import Path

import pytest

from ctxmode.errors import DiskFullError, StoreError
from ctxmode.hooks.entry import HANDLERS
from ctxmode.session import where
from ctxmode.session.db import SessionDB
from ctxmode.session.events import Event

from .support import fill, garbage_over, run_ctxmode, set_aside_copies

assert "post_tool" in HANDLERS  # the hook the tests below run


def _edit_payload(project: Path, n: int) -> dict[str, object]:
    path = f"{project}/src/file{n}.py"
    return {
        "session_id": "s1",
        "cwd": str(project),
        "hook_event_name": "PostToolUse",
        "tool_name": "Edit",
        "tool_input": {"file_path": path, "old_string": "a", "new_string": "b"},
        "tool_response": {"filePath": path},
    }


def _run_hook(project: Path, n: int) -> subprocess.CompletedProcess[str]:
    payload = json.dumps(_edit_payload(project, n))
    return run_ctxmode(project, "hook", "claude-code", "posttooluse", stdin=payload)


def _events(count: int, prefix: str = "note") -> list[Event]:
    return [Event("file_edit", f"/src/{prefix}{i}.py " + "x" * 200) for i in range(count)]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return root


@pytest.fixture
def session_db(project: Path) -> Path:
    """The project's session database with a few hundred events (closed)."""
    path = where.session_db_path(project)
    with SessionDB(path) as sdb:
        for n in range(4):
            sdb.add_events("s0", _events(100, f"b{n}-"), source_hook="post_tool")
    return path


def test_a_hook_never_breaks_on_a_damaged_session_database(project, session_db):
    garbage_over(session_db, "session_events")
    first = _run_hook(project, 1)
    assert (first.returncode, first.stdout.strip(), first.stderr) == (0, "", "")
    [aside] = set_aside_copies(session_db)
    log = (where.session_db_path(project).parent.parent / "logs" / "hooks.log").read_text(
        encoding="utf-8"
    )
    assert "the session database was damaged" in log
    assert str(aside) in log
    second = _run_hook(project, 2)
    assert (second.returncode, second.stdout.strip(), second.stderr) == (0, "", "")
    with SessionDB(session_db) as sdb:
        assert [e.data for e in sdb.events("s1")] == [f"{project}/src/file2.py"]
    assert len(set_aside_copies(session_db)) == 1


@pytest.mark.parametrize("busy_timeout_ms", [None, 50], ids=["default", "hook"])
def test_a_write_that_meets_damage_moves_the_file_aside_for_the_next(session_db, busy_timeout_ms):
    garbage_over(session_db, "session_events")
    with SessionDB(session_db, busy_timeout_ms=busy_timeout_ms) as sdb:
        with pytest.raises(StoreError, match=r"damaged .*moved to .*\.corrupt-\d+ .*lost"):
            sdb.add_events("s1", _events(1), source_hook="post_tool")
        assert sdb.add_events("s1", _events(1), source_hook="post_tool") == 1
        assert len(sdb.events("s1")) == 1
    assert len(set_aside_copies(session_db)) == 1


@pytest.mark.parametrize("busy_timeout_ms", [None, 50], ids=["default", "hook"])
def test_a_full_disk_is_a_disk_full_error_not_a_failed_rollback(small_disk, busy_timeout_ms):
    path = small_disk / "sessions" / "s.db"
    with SessionDB(path, busy_timeout_ms=busy_timeout_ms) as sdb:
        sdb.add_events("s1", _events(3), source_hook="post_tool")
        filler = fill(small_disk)
        with pytest.raises(DiskFullError) as caught:
            for n in range(200):  # until a write needs a page the disk cannot give
                sdb.add_events("s1", _events(50, f"{n}-"), source_hook="post_tool")
        assert str(caught.value).startswith("disk full: cannot write the session database")
        assert "no transaction is active" not in str(caught.value)
        assert not sdb.connection.in_transaction
        filler.unlink()
        assert sdb.add_events("s1", _events(1, "after"), source_hook="post_tool") == 1
        assert [e.data for e in sdb.events("s1")][:3] == [e.data for e in _events(3)]
