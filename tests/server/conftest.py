"""Fixtures for the MCP server tests: a real project, a real store, a real in-memory session.

Every test gets its own HOME (so the user's ~/.claude deny rules are never read) and its
own project directory; the data root is isolated by the autouse fixture in tests/conftest.py.
"""

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from ctxmode.executor import runtimes
from ctxmode.security import settings as security_settings
from ctxmode.server.app import build_server, new_state
from ctxmode.server.state import ServerState

from .support import RawServer, kill_all


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME of our own: no global Claude settings, no ~/.bun, no user config."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    security_settings.clear_cache()
    return home


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root.resolve()


@pytest.fixture
def state(project: Path) -> Iterator[ServerState]:
    server_state = new_state(project)
    yield server_state
    server_state.shutdown()


@pytest.fixture
def server(state: ServerState) -> Any:
    return build_server(state)


@pytest.fixture
async def client(server: Any) -> AsyncIterator[Any]:
    from mcp import Client

    async with Client(server) as connected:
        yield connected


@pytest.fixture
def fresh_runtimes() -> Iterator[None]:
    """Runtime detection is memoised: start and end the test with it cleared."""
    runtimes._detect.cache_clear()
    yield
    runtimes._detect.cache_clear()


@pytest.fixture
def data_root(_isolated_env: Path) -> Path:
    return _isolated_env


@pytest.fixture
def started() -> Iterator[list[Any]]:
    """Servers and pids a test starts; whatever is still alive at teardown is killed."""
    things: list[Any] = []
    yield things
    for thing in things:
        if isinstance(thing, RawServer):
            thing.shutdown()
        else:
            kill_all([thing])
