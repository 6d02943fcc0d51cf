"""Every setup test runs against a fake home, config dirs and PATH under tmp_path."""

import os
import tempfile
from pathlib import Path

import pytest

HOST_VARS = (
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "GEMINI_CLI_HOME",
    "XDG_CONFIG_HOME",
    "APPDATA",
    "LOCALAPPDATA",
)


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
    # pytest's tmp_path lives in the system temp dir, which setup rightly refuses as a
    # home for the ctxmode executable; point "temporary" somewhere else.
    scratch = tmp_path / "systmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    return home


@pytest.fixture
def project(tmp_path) -> Path:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    return root.resolve()


def snapshot(*roots: Path) -> dict[str, bytes]:
    """Every file under `roots` with its bytes (directories as b"<dir>")."""
    found: dict[str, bytes] = {}
    for root in roots:
        for path in sorted(root.rglob("*")):
            found[str(path)] = b"<dir>" if path.is_dir() else path.read_bytes()
    return found
