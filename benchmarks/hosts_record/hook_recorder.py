"""The ``ctxmode`` a recording host runs: logs every hook call, runs the real ctxmode.

``record.py`` puts a shell shim named ``ctxmode`` first on the host's PATH that execs this
file. ``ctxmode hook <platform> <event>`` calls are run through the real executable
(``$REC_REAL_CTXMODE``) with the same stdin; one JSON line per call is appended to
``$REC_HOOK_LOG`` (under an exclusive lock): the event, the stdin payload, the hook's stdout
and exit code, the cwd, the host's ``CLAUDE_*``/``GEMINI_*`` variables, and how many lines each
host transcript had when the hook started (so a replay can rebuild the transcript as the hook
saw it). Every other command (``setup``, ``serve``, ...) is exec'd unchanged.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HOST_PREFIXES = ("CLAUDE", "GEMINI")


def transcript_state(home: Path) -> dict[str, Any]:
    """Append-only transcripts (Claude's ``.jsonl``, Gemini 0.61's ``chats/*.jsonl``): their
    line counts; Gemini chat files that are one JSON document (older releases, rewritten):
    their sha256, with the content saved beside the log."""
    state: dict[str, Any] = {}
    logs = [*(home / ".claude" / "projects").glob("*/*.jsonl")]
    logs += (home / ".gemini" / "tmp").glob("*/chats/*.jsonl")
    for path in sorted(logs):
        with path.open("rb") as handle:
            state[str(path)] = handle.read().count(b"\n")
    for path in sorted((home / ".gemini" / "tmp").glob("*/chats/*.json")):
        data = path.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        store = Path(os.environ["REC_HOOK_LOG"]).with_name("chats") / digest
        if not store.exists():
            store.parent.mkdir(parents=True, exist_ok=True)
            store.write_bytes(data)
        state[str(path)] = digest
    return state


def append(entry: dict[str, Any]) -> None:
    """One JSON line, appended under an exclusive lock (hooks of a turn may overlap)."""
    line = json.dumps(entry, ensure_ascii=False) + "\n"
    with open(os.environ["REC_HOOK_LOG"], "a", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.write(line)
        fcntl.flock(handle, fcntl.LOCK_UN)


def run_hook(real: str, argv: list[str]) -> int:
    """Run the real hook with our stdin, log the call, pass its stdout on."""
    stdin = sys.stdin.buffer.read()
    state = transcript_state(Path(os.environ["HOME"]))
    began = time.time()
    proc = subprocess.run([real, *argv], input=stdin, stdout=subprocess.PIPE, check=False)
    append(
        {
            "t0": began,
            "t1": time.time(),
            "argv": argv,
            "cwd": os.getcwd(),
            "env": {k: v for k, v in os.environ.items() if k.startswith(HOST_PREFIXES)},
            "stdin": stdin.decode("utf-8", "replace"),
            "stdout": proc.stdout.decode("utf-8", "replace"),
            "rc": proc.returncode,
            "transcripts": state,
        }
    )
    sys.stdout.buffer.write(proc.stdout)
    sys.stdout.flush()
    return proc.returncode


def main(argv: list[str]) -> int:
    real = os.environ["REC_REAL_CTXMODE"]
    if len(argv) >= 3 and argv[0] == "hook":
        return run_hook(real, argv)
    os.execv(real, [real, *argv])
    return 127  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
