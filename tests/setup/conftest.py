"""Every setup test runs against a fake home, config dirs and PATH under tmp_path."""

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def home(fake_host: Path) -> Path:
    """HOME, XDG_CONFIG_HOME and PATH (with a runnable `ctxmode`) inside tmp_path."""
    return fake_host


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
