"""Which session, project and database file a hook call belongs to (ctxmode.session.where)."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ctxmode import paths
from ctxmode.session import where

from .support import hook_event


def test_the_session_id_is_the_hosts_else_the_agent_process():
    assert where.session_id_of(hook_event(session_id=" abc ")) == "abc"
    assert where.session_id_of(hook_event(session_id="")) == f"pid-{os.getppid()}"


def test_the_project_is_the_adapters_else_the_payload_cwd(tmp_path, monkeypatch):
    assert where.project_of(hook_event(project_dir=Path("/a"), cwd="/b")) == Path("/a")
    assert where.project_of(hook_event(project_dir=None, cwd="/b")) == Path("/b")
    monkeypatch.chdir(tmp_path)
    assert where.project_of(hook_event(project_dir=None, cwd=None)) == tmp_path.resolve()


def test_a_missing_project_directory_is_fine_and_created_nowhere():
    path = where.session_db_path(Path("/nonexistent/project"))
    assert (
        path == paths.data_root() / "sessions" / f"{paths.project_hash('/nonexistent/project')}.db"
    )
    assert not Path("/nonexistent/project").exists()


def test_the_suffix_override_wins(monkeypatch, tmp_path):
    monkeypatch.setenv("CTXMODE_SESSION_SUFFIX", "feature")
    assert where.session_db_path(tmp_path).name.endswith("__feature.db")


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_linked_worktree_gets_its_own_database_and_the_suffix_is_cached(tmp_path):
    main = tmp_path / "main"
    main.mkdir()
    _git("init", "-q", cwd=main)
    _git(
        "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--allow-empty", "-qm", "x", cwd=main
    )
    _git("worktree", "add", "-q", str(tmp_path / "linked"), cwd=main)
    linked = tmp_path / "linked"

    assert where.session_db_path(main).name == f"{paths.project_hash(main)}.db"
    linked_db = where.session_db_path(linked)
    assert linked_db.name == f"{paths.project_hash(linked)}{paths.worktree_suffix(linked)}.db"
    assert "__" in linked_db.name

    cache = paths.data_root() / "sessions" / f".{paths.project_hash(linked)}.suffix"
    assert cache.read_text(encoding="utf-8") == paths.worktree_suffix(linked)
    cache.write_text("__cached", encoding="utf-8")  # later calls read the cache, not git
    assert where.session_db_path(linked).name.endswith("__cached.db")
