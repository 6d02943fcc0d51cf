"""The daily automatic collection a server runs."""

import os
import time
from pathlib import Path

import pytest

from ctxmode import paths
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
