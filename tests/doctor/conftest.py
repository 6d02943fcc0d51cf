"""Every doctor test runs against a fake home, config dirs, PATH and data dir under tmp_path,
in a project directory (a git work tree) that is the current directory."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxmode.executor import runtimes


@pytest.fixture(autouse=True)
def _fresh_runtime_detection() -> Iterator[None]:
    """Runtime detection is cached per process: a doctor test's fake PATH must neither see
    an earlier test's cache nor leave its own for the tests after it."""
    runtimes._detect.cache_clear()
    yield
    runtimes._detect.cache_clear()


@pytest.fixture(autouse=True)
def home(fake_host: Path) -> Path:
    """HOME, XDG_CONFIG_HOME and PATH (with a runnable `ctxmode`) inside tmp_path."""
    return fake_host


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
