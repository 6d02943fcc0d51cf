"""Every doctor test runs against a fake home, config dirs, PATH and data dir under tmp_path,
in a project directory (a git work tree) that is the current directory."""

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxmode.executor import runtimes

HOST_VARS = (
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "GEMINI_CLI_HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "APPDATA",
    "LOCALAPPDATA",
)


@pytest.fixture(autouse=True)
def _fresh_runtime_detection() -> Iterator[None]:
    """Runtime detection is cached per process: a doctor test's fake PATH must neither see
    an earlier test's cache nor leave its own for the tests after it."""
    runtimes._detect.cache_clear()
    yield
    runtimes._detect.cache_clear()


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch) -> Path:
    """HOME, XDG_CONFIG_HOME and PATH (with a runnable `ctxmode`) inside tmp_path."""
    home = tmp_path / "home"
    home.mkdir()
    for var in HOST_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "ctxmode"
    exe.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin")
    # tmp_path is in the system temp dir, where setup refuses a ctxmode executable.
    scratch = tmp_path / "systmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    monkeypatch.setenv("TMPDIR", str(scratch))
    return home


@pytest.fixture
def data_root(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "data"
    monkeypatch.setenv("CTXMODE_DIR", str(root))
    return root


@pytest.fixture
def project(tmp_path, monkeypatch, data_root) -> Path:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    monkeypatch.chdir(root)
    return root.resolve()
