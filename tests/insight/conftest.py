from pathlib import Path

import pytest


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    return folder


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: Path) -> Path:
    """A project outside the home directory; no browser is ever opened by a test."""
    folder = (tmp_path / "proj").resolve()
    folder.mkdir()
    monkeypatch.setenv("CTXMODE_PROJECT_DIR", str(folder))
    monkeypatch.setenv("CTXMODE_SESSION_SUFFIX", "")
    monkeypatch.setenv("CTXMODE_NO_BROWSER", "1")
    return folder
