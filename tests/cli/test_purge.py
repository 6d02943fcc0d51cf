"""`ctxmode purge` from a shell: scope flags, confirmation, dry runs, JSON."""

import io
import sys
from pathlib import Path

import pytest

from ctxmode import paths
from ctxmode.__main__ import main
from ctxmode.session.db import SessionDB
from ctxmode.session.events import Event
from ctxmode.session.where import session_db_path
from ctxmode.store import ContentStore

from .support import run_json


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = (tmp_path / "proj").resolve()
    folder.mkdir()
    monkeypatch.setenv("CTXMODE_PROJECT_DIR", str(folder))
    monkeypatch.setenv("CTXMODE_SESSION_SUFFIX", "")
    with ContentStore(paths.ProjectPaths(paths.data_root(), folder).content_db) as store:
        store.index_text("# A\nalpha", "a")
        store.index_text("# S\nbeta", "s-notes", session_id="s1")
    with SessionDB(session_db_path(folder, paths.data_root())) as sdb:
        sdb.add_event("s1", Event("file_read", "a.py"), source_hook="PostToolUse")
    return folder


def content_db(project: Path) -> Path:
    return paths.ProjectPaths(paths.data_root(), project).content_db


@pytest.mark.parametrize("argv", [["purge"], ["purge", "--all", "--session", "s1"]])
def test_exactly_one_scope_is_required(project, capsys, argv):
    code, doc = run_json(capsys, *argv)
    assert code == 2 and "choose one scope" in doc["errors"][0]["message"]


def test_without_a_terminal_yes_is_required_and_nothing_is_deleted(project, capsys):
    code, doc = run_json(capsys, "purge", "--all")
    assert code == 2 and "--yes" in doc["errors"][0]["message"]
    assert content_db(project).exists()


def test_dry_run_lists_the_files_and_deletes_nothing(project, capsys):
    code, doc = run_json(capsys, "purge", "--all", "--dry-run")
    assert code == 0 and doc["data"]["dry_run"] is True
    assert str(content_db(project)) in doc["data"]["would_delete"]
    assert content_db(project).exists()


def test_project_purge_with_yes(project, capsys):
    code, doc = run_json(capsys, "purge", "--all", "--yes")
    assert code == 0
    assert doc["data"]["deleted"] == ["knowledge base (FTS5)", "session events DB"]
    assert not content_db(project).exists()


def test_session_purge_with_yes(project, capsys):
    code, doc = run_json(capsys, "purge", "--session", "s1", "--yes")
    assert code == 0
    assert doc["data"]["deleted"] == ["session rows for s1", "FTS5 chunks for s1"]
    with ContentStore(content_db(project)) as store:
        assert {s.label for s in store.sources()} == {"a"}


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("answer", "kept"), [("n\n", True), ("y\n", False)])
def test_at_a_terminal_it_asks_first(project, capsys, monkeypatch, answer, kept):
    monkeypatch.setattr(sys, "stdin", _Terminal(answer))
    assert main(["purge", "--all"]) == 0
    assert content_db(project).exists() is kept
    err = capsys.readouterr().err
    assert "Permanently delete all ctxmode data of" in err
    assert ("Nothing was deleted." in err) is kept


# --- option names: -p/--project DIR as everywhere, the old spellings with a notice ----------


def test_project_dir_option_picks_another_project(project, tmp_path, capsys, monkeypatch):
    other = (tmp_path / "other").resolve()
    other.mkdir()
    monkeypatch.chdir(tmp_path)
    for argv in (["--project", str(other)], [f"--project={other}"], ["-p", str(other)]):
        code, doc = run_json(capsys, "purge", *argv, "--all", "--dry-run")
        assert code == 0 and doc["data"]["project_dir"] == str(other), argv


@pytest.mark.parametrize(
    "argv",
    [["--project"], ["--project", "--dry-run"], ["-n", "--project"], ["--project", "-n"]],
)
def test_the_old_project_flag_still_means_the_whole_project_with_a_notice(project, capsys, argv):
    assert main(["purge", *argv, "--dry-run"]) == 0
    captured = capsys.readouterr()
    assert str(content_db(project)) in captured.out
    assert "--project without a directory is deprecated: use --all" in captured.err


def test_the_old_dir_option_still_picks_the_project_with_a_notice(project, tmp_path, capsys):
    other = (tmp_path / "other").resolve()
    other.mkdir()
    assert main(["purge", "-C", str(other), "--all", "--dry-run"]) == 0
    captured = capsys.readouterr()
    assert "Nothing to purge" in captured.out  # the other project stores nothing
    assert "--dir/-C is deprecated: use -p/--project DIR" in captured.err


def test_a_project_dir_alone_is_not_a_scope(project, capsys):
    code, doc = run_json(capsys, "purge", "--project", str(project))
    assert code == 2 and "choose one scope: --all" in doc["errors"][0]["message"]
    assert content_db(project).exists()
