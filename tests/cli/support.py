"""Running the CLI in process and reading its --json envelope."""

import json

from ctxmode.__main__ import main

ENVELOPE_KEYS = {"ctxmode_result_version", "command", "status", "exit_code", "data", "errors"}


def run_json(capsys, *argv: str) -> tuple[int, dict]:
    """Exit status and envelope of ``ctxmode ARGV --json``; checks the envelope contract."""
    code = main([*argv, "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert set(doc) == ENVELOPE_KEYS
    assert doc["ctxmode_result_version"] == "1"
    assert doc["exit_code"] == code
    return code, doc
