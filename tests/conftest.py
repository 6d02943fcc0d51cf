import os
import sqlite3
import tempfile
from pathlib import Path

import pytest

from ctxmode.db import fts5_problem
from ctxmode.paths import project_env_vars

_ISOLATED_PREFIXES = ("CTXMODE_", "CONTEXT_MODE_", "CTX_")  # CTX_FETCH_STRICT: upstream's


def pytest_report_header() -> str:
    return f"sqlite {sqlite3.sqlite_version}; fts5+trigram: {fts5_problem() or 'yes'}"


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path_factory, monkeypatch):
    """No test reads or writes the real data dir, or sees the host agent's project vars."""
    for name in list(os.environ):
        if name.startswith(_ISOLATED_PREFIXES) or name in project_env_vars():
            monkeypatch.delenv(name, raising=False)
    home = tmp_path_factory.mktemp("ctxhome")
    monkeypatch.setenv("CTXMODE_DIR", str(home))
    return home


HOST_VARS = (
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "GEMINI_CLI_HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "APPDATA",
    "LOCALAPPDATA",
    "PIPX_HOME",
    "UV_TOOL_DIR",
)


@pytest.fixture
def fake_host(tmp_path, monkeypatch) -> Path:
    """A machine of the test's own, for code that reads hosts' settings or writes them:
    HOME and XDG_CONFIG_HOME under tmp_path, no host directory variables, a runnable
    `ctxmode` first on a minimal PATH, and a temp dir outside the system one (setup warns
    about a ctxmode executable under the system temp dir, where tmp_path is).
    Returns the home directory."""
    home = tmp_path / "home"
    home.mkdir()
    for var in HOST_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    exe = tmp_path / "bin" / "ctxmode"
    exe.parent.mkdir()
    exe.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", f"{exe.parent}{os.pathsep}/usr/bin{os.pathsep}/bin")
    scratch = tmp_path / "systmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    monkeypatch.setenv("TMPDIR", str(scratch))  # child processes too
    return home
