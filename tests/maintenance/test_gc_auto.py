"""The daily automatic collection a server runs."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ctxmode import gc, paths
from ctxmode.gc import auto
from ctxmode.store import ContentStore


def _old_project(root: Path, tmp_path: Path) -> Path:
    project = tmp_path / "old"
    project.mkdir(exist_ok=True)
    db = paths.ProjectPaths(root, project).content_db
    with ContentStore(db) as store:
        store.index_text("# A\nalpha", "a")
    past = time.time() - 90 * 86_400
    for path in db.parent.glob(f"{db.name}*"):
        os.utime(path, (past, past))
    return db


def test_runs_once_a_day_and_applies_the_budget(tmp_path):
    root = paths.data_root()
    old = _old_project(root, tmp_path)
    assert auto.due(root)
    assert auto.run_if_due(root, tmp_path / "current") is True
    assert not old.exists()  # unused for 90 days: deleted whole
    assert not auto.due(root)
    again = _old_project(root, tmp_path)
    assert auto.run_if_due(root, tmp_path / "current") is False  # not due yet
    assert again.exists()


def test_never_deletes_the_project_it_serves(tmp_path):
    root = paths.data_root()
    old = _old_project(root, tmp_path)
    assert auto.run_if_due(root, tmp_path / "old") is True
    assert old.exists()


@pytest.mark.parametrize("value", ["off", "0", "false", "NO"])
def test_can_be_turned_off(tmp_path, monkeypatch, value):
    monkeypatch.setenv("CTXMODE_GC", value)
    root = paths.data_root()
    old = _old_project(root, tmp_path)
    assert auto.run_if_due(root, None) is False
    assert old.exists() and not (root / auto.STAMP).exists()


@pytest.fixture
def other_process():
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield proc.pid
    proc.kill()
    proc.wait()


def test_a_collection_another_process_holds_the_lock_for_is_not_run_twice(tmp_path, other_process):
    root = paths.data_root()
    old = _old_project(root, tmp_path)
    (root / auto.LOCK).write_text(f"{other_process}\n", encoding="ascii")

    assert auto.run_if_due(root, None) is False

    assert old.exists() and not (root / auto.STAMP).exists()
    assert (root / auto.LOCK).read_text(encoding="ascii") == f"{other_process}\n"


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.mark.parametrize("why", ["process gone", "older than an hour"])
def test_a_stale_lock_is_replaced(tmp_path, other_process, why):
    root = paths.data_root()
    old = _old_project(root, tmp_path)
    lock = root / auto.LOCK
    if why == "process gone":
        lock.write_text(f"{_dead_pid()}\n", encoding="ascii")
    else:
        lock.write_text(f"{other_process}\n", encoding="ascii")
        past = time.time() - 2 * 3600
        os.utime(lock, (past, past))

    assert auto.run_if_due(root, None) is True

    assert not old.exists() and not lock.exists()
    assert [p.name for p in root.iterdir() if p.name.startswith(auto.LOCK)] == []


def test_the_lock_is_released_even_when_the_collection_fails(tmp_path, monkeypatch):
    root = paths.data_root()
    _old_project(root, tmp_path)
    seen = []

    def broken_plan(*args, **kwargs):
        seen.append((root / auto.LOCK).read_text(encoding="ascii"))
        raise RuntimeError("boom")

    monkeypatch.setattr(gc, "plan", broken_plan)
    assert auto.run_if_due(root, None) is False
    assert seen == [f"{os.getpid()}\n"]  # held, with this pid, while collecting
    assert not (root / auto.LOCK).exists()


def test_only_one_of_two_claims_wins(tmp_path):
    root = paths.data_root()
    root.mkdir(parents=True, exist_ok=True)
    assert auto.claim(root) is True
    assert auto.claim(root) is False  # the holder (this very process) is alive
    auto.release(root)
    assert auto.claim(root) is True
    auto.release(root)
    assert not (root / auto.LOCK).exists()
