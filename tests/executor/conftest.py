"""Fixtures for the executor tests: a real project dir, a background registry, process checks.

Everything here runs real subprocesses; the process boundary is the thing under test.
"""

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import psutil
import pytest

from ctxmode.executor import BackgroundRuns, ExecRequest, ExecResult, execute, isolate, runtimes


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    return root.resolve()


@pytest.fixture
def registry() -> Iterator[BackgroundRuns]:
    runs = BackgroundRuns()
    yield runs
    runs.cleanup()


@pytest.fixture
def reaper() -> Iterator[Callable[[Iterable[int]], None]]:
    """Register pids a test expects dead; whatever survives is killed at teardown anyway."""
    tracked: list[int] = []
    yield tracked.extend
    for pid in tracked:
        try:
            psutil.Process(pid).kill()
        except psutil.Error:  # noqa: PERF203 - each may already be gone
            pass


@pytest.fixture
def run(project: Path, registry: BackgroundRuns) -> Callable[..., ExecResult]:
    """``run(language, code, **request_fields)``: execute in `project` (30 s default deadline)."""

    def _run(language: str, code: str, **fields) -> ExecResult:
        fields.setdefault("timeout_ms", 30_000)
        cancel = fields.pop("cancel", None)
        request = ExecRequest(language, code, fields.pop("project_dir", project), **fields)
        return execute(request, registry=registry, cancel=cancel)

    return _run


@pytest.fixture
def fresh_runtimes() -> Iterator[None]:
    """Runtime detection and the isolation probe are memoised; start and end with them clear."""
    runtimes._detect.cache_clear()
    isolate.isolation_problem.cache_clear()
    yield
    runtimes._detect.cache_clear()
    isolate.isolation_problem.cache_clear()


@pytest.fixture
def empty_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_runtimes: None) -> Path:
    """PATH holding nothing, HOME without ~/.bun: no optional runtime, no bwrap."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    home = tmp_path / "empty-home"
    home.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setenv("HOME", str(home))
    return empty
