"""The session hooks start without heavy libraries (each run in a fresh interpreter)."""

import json
import subprocess
import sys

import pytest

HEAVY = (
    "typer", "rich", "mcp", "pydantic", "psutil", "ctxmode.cli", "ctxmode.server",
    "ctxmode.store", "ctxmode.session.snapshot", "ctxmode.session.knowledge",
)  # fmt: skip
PAYLOADS = {
    "posttooluse": {
        "session_id": "s1",
        "cwd": "/home/dev/projects/acme-api",
        "tool_name": "Bash",
        "tool_input": {"command": "git commit -m 'x'"},
        "tool_response": {"stdout": "ok"},
    },
    "userpromptsubmit": {"session_id": "s1", "cwd": "/home/dev/projects/acme-api", "prompt": "hi"},
}


def _loaded(event: str) -> set[str]:
    code = (
        "import sys, json\nfrom ctxmode.__main__ import main\n"
        f"rc = main(['hook', 'claude-code', {event!r}])\nassert rc == 0, rc\n"
        "sys.stderr.write('MODULES' + json.dumps(sorted(sys.modules)))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(PAYLOADS[event]),
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=True,
    )
    return set(json.loads(proc.stderr.split("MODULES", 1)[1]))


@pytest.mark.parametrize("event", sorted(PAYLOADS))
def test_capture_hooks_import_nothing_heavy(event):
    modules = _loaded(event)
    assert "ctxmode.hooks.capture" in modules  # the handler did run
    heavy = sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))
    assert heavy == []
