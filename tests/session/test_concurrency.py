"""Many processes writing one session database at once lose nothing (real subprocesses:
the process boundary and SQLite's file locking are what is under test)."""

import json
import subprocess
import sys
from pathlib import Path

from ctxmode.session import where

from .support import PROJECT, open_db

WRITER = """
import sys
from ctxmode.session.db import SessionDB
from ctxmode.session.events import Event

path, name, count, hook = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "hook"
with SessionDB(path, busy_timeout_ms=5000 if hook else None) as sdb:
    for n in range(count):
        sdb.add_events("shared", [Event("file_edit", f"{name}-{n}.py")], source_hook=name)
"""


def _hook_payload(n: int) -> str:
    return json.dumps(
        {
            "session_id": "shared",
            "cwd": str(PROJECT),
            "hook_event_name": "PostToolUse",
            "tool_name": "Edit",
            "tool_input": {"file_path": f"/p/hook-{n}.py", "old_string": "a", "new_string": "b"},
            "tool_response": {"filePath": f"/p/hook-{n}.py"},
        }
    )


def test_hook_processes_and_long_lived_writers_lose_nothing(tmp_path: Path):
    path = where.session_db_path(PROJECT)
    with open_db():  # create the schema once, as the first hook of a session would
        pass
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), f"w{i}", "25", mode],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for i, mode in enumerate(["server", "server", "hook", "hook", "hook", "hook"])
    ]
    hooks = [
        subprocess.Popen(
            [sys.executable, "-m", "ctxmode", "hook", "claude-code", "posttooluse"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for _ in range(8)
    ]
    for n, proc in enumerate(hooks):
        assert proc.stdin is not None
        proc.stdin.write(_hook_payload(n).encode("utf-8"))
        proc.stdin.close()
    for proc in writers + hooks:
        assert proc.wait(timeout=120) == 0
        assert proc.stderr is not None and proc.stdout is not None
        err = proc.stderr.read().decode("utf-8", "replace")
        proc.stdout.read()
        proc.stderr.close()
        proc.stdout.close()
        assert err == "", err

    with open_db() as sdb:
        data = {e.data for e in sdb.events("shared")}
        meta = sdb.meta("shared")
    expected = {f"w{i}-{n}.py" for i in range(6) for n in range(25)}
    expected |= {f"/p/hook-{n}.py" for n in range(8)}
    assert data == expected
    assert meta is not None and meta.event_count == len(expected)
