"""Running `ctxmode doctor` in process or as a real process, and reading its report."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from ctxmode.__main__ import main

ENVELOPE_KEYS = {"ctxmode_result_version", "command", "status", "exit_code", "data", "errors"}
LINE = re.compile(r"^\[(OK|INFO|WARN|FAIL)\] ([^:]+): (.*)$")


def doctor_json(capsys, *argv: str) -> tuple[int, dict]:
    """Exit status and envelope data of ``ctxmode doctor ARGV --json``."""
    code = main(["doctor", *argv, "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert set(doc) == ENVELOPE_KEYS
    assert doc["command"] == ["doctor"] and doc["exit_code"] == code
    return code, doc["data"]


def doctor_text(capsys, *argv: str) -> tuple[int, str]:
    code = main(["doctor", *argv])
    return code, capsys.readouterr().out


def by_name(data: dict) -> dict[str, dict]:
    return {c["name"]: c for c in data["checks"]}


def run_process(cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """`python -m ctxmode doctor ARGV` as its own process, with this test's environment."""
    return subprocess.run(
        [sys.executable, "-m", "ctxmode", "doctor", *argv],
        cwd=cwd,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
    )
