import os
import sqlite3

import pytest

from ctxmode.db import fts5_problem
from ctxmode.paths import PROJECT_ENV_VARS

_ISOLATED_PREFIXES = ("CTXMODE_", "CONTEXT_MODE_")


def pytest_report_header() -> str:
    return f"sqlite {sqlite3.sqlite_version}; fts5+trigram: {fts5_problem() or 'yes'}"


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path_factory, monkeypatch):
    """No test reads or writes the real data dir, or sees the host agent's project vars."""
    for name in list(os.environ):
        if name.startswith(_ISOLATED_PREFIXES) or name in PROJECT_ENV_VARS:
            monkeypatch.delenv(name, raising=False)
    home = tmp_path_factory.mktemp("ctxhome")
    monkeypatch.setenv("CTXMODE_DIR", str(home))
    return home
