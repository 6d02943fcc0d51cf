import os
import sqlite3

import pytest

from ctxmode.db import fts5_problem

_ISOLATED_PREFIXES = ("CTXMODE_", "CONTEXT_MODE_")
_HOST_PROJECT_VARS = (
    "CLAUDE_PROJECT_DIR",
    "GEMINI_PROJECT_DIR",
    "VSCODE_CWD",
    "OPENCODE_PROJECT_DIR",
    "PI_PROJECT_DIR",
    "IDEA_INITIAL_DIRECTORY",
    "CURSOR_CWD",
    "QWEN_PROJECT_DIR",
)


def pytest_report_header() -> str:
    return f"sqlite {sqlite3.sqlite_version}; fts5+trigram: {fts5_problem() or 'yes'}"


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path_factory, monkeypatch):
    """No test reads or writes the real data dir, or sees the host agent's project vars."""
    for name in list(os.environ):
        if name.startswith(_ISOLATED_PREFIXES) or name in _HOST_PROJECT_VARS:
            monkeypatch.delenv(name, raising=False)
    home = tmp_path_factory.mktemp("ctxhome")
    monkeypatch.setenv("CTXMODE_DIR", str(home))
    return home
