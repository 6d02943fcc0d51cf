"""Fixtures for the security-policy tests: a fake home and an empty project."""

import pytest

from ctxmode.security import clear_cache


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    """A fake home; no host config-dir variables; no settings parsed by an earlier test."""
    fake = tmp_path / "home"
    fake.mkdir()
    monkeypatch.setenv("HOME", str(fake))
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(var, raising=False)
    clear_cache()
    return fake


@pytest.fixture
def project(tmp_path):
    path = tmp_path / "project"
    path.mkdir()
    return path
