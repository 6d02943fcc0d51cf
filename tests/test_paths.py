"""Storage root, project resolution, hashing and worktree suffixes (ctxmode.paths)."""

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ctxmode import paths
from ctxmode.errors import NotFoundError, UsageError


def _sha16(text: str) -> str:
    if paths._CASE_INSENSITIVE_FS:
        text = text.lower()
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A fake home directory, and no host project variables."""
    fake = tmp_path / "home"
    fake.mkdir()
    monkeypatch.setenv("HOME", str(fake))
    for var in paths.project_env_vars():
        monkeypatch.delenv(var, raising=False)
    return fake.resolve()


# --------------------------------------------------------------------------- hashing


def test_project_hash_is_16_hex_of_sha256_of_the_path():
    value = paths.project_hash("/home/dev/project")
    assert len(value) == 16
    assert int(value, 16) >= 0
    assert value == _sha16("/home/dev/project")


def test_project_hash_is_stable_and_distinguishes_projects():
    assert paths.project_hash("/a/b") == paths.project_hash("/a/b")
    assert paths.project_hash("/a/b") != paths.project_hash("/a/c")
    assert paths.project_hash(Path("/a/b")) == paths.project_hash("/a/b")


@pytest.mark.parametrize(
    ("variant", "canonical"),
    [
        ("/a/b/", "/a/b"),
        ("/a/b///", "/a/b"),
        ("\\a\\b\\", "/a/b"),
        ("C:\\Users\\me\\proj", "C:/Users/me/proj"),
        ("C:\\Users\\me\\proj\\", "C:/Users/me/proj"),
    ],
)
def test_project_hash_normalises_trailing_slashes_and_backslashes(variant, canonical):
    assert paths.project_hash(variant) == paths.project_hash(canonical)
    assert paths.project_hash(variant) == _sha16(canonical)


@pytest.mark.parametrize(
    ("raw", "normal"),
    [("/", "/"), ("//", "/"), ("C:/", "C:/"), ("C:\\", "C:/"), ("C:\\x\\", "C:/x")],
)
def test_normalize_path_keeps_roots(raw, normal):
    assert paths.normalize_path(raw) == normal


@pytest.mark.skipif(paths._CASE_INSENSITIVE_FS, reason="case folding applies on macOS/Windows")
def test_legacy_hash_equals_the_canonical_hash_on_case_sensitive_systems():
    assert paths.legacy_project_hash("/Home/Dev/Proj") == paths.project_hash("/Home/Dev/Proj")
    assert paths.project_hash("/Home/Dev/Proj") != paths.project_hash("/home/dev/proj")


# --------------------------------------------------------------------------- data root


def test_data_root_honours_ctxmode_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("CTXMODE_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("CONTEXT_MODE_DIR", str(tmp_path / "other"))
    assert paths.data_root() == tmp_path / "data"


def test_data_root_falls_back_to_upstreams_context_mode_dir(tmp_path, monkeypatch):
    monkeypatch.delenv("CTXMODE_DIR", raising=False)
    monkeypatch.setenv("CONTEXT_MODE_DIR", str(tmp_path / "upstream"))
    assert paths.data_root() == tmp_path / "upstream"


def test_data_root_expands_tilde(home, monkeypatch):
    monkeypatch.setenv("CTXMODE_DIR", "~/ctx")
    assert paths.data_root() == home / "ctx"


def test_data_root_ignores_blank_values(tmp_path, monkeypatch):
    monkeypatch.setenv("CTXMODE_DIR", "  ")
    monkeypatch.setenv("CONTEXT_MODE_DIR", str(tmp_path / "upstream"))
    assert paths.data_root() == tmp_path / "upstream"


def test_data_root_defaults_to_a_user_data_dir_named_ctxmode(home, monkeypatch):
    monkeypatch.delenv("CTXMODE_DIR", raising=False)
    monkeypatch.delenv("CONTEXT_MODE_DIR", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    root = paths.data_root()
    assert root.name == "ctxmode"
    assert root.is_absolute()


def test_data_root_does_not_create_anything(tmp_path, monkeypatch):
    monkeypatch.setenv("CTXMODE_DIR", str(tmp_path / "later"))
    paths.data_root()
    assert not (tmp_path / "later").exists()


# --------------------------------------------------------------------------- project resolution


def test_explicit_project_dir_wins_over_environment(home, tmp_path, monkeypatch):
    explicit = tmp_path / "explicit"
    other = tmp_path / "other"
    explicit.mkdir()
    other.mkdir()
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(other))
    assert paths.resolve_project(explicit) == explicit.resolve()
    assert paths.resolve_project(str(explicit) + "/") == explicit.resolve()


def test_explicit_project_dir_that_does_not_exist_is_not_found(home, tmp_path):
    with pytest.raises(NotFoundError):
        paths.resolve_project(tmp_path / "missing")


def test_explicit_home_directory_is_refused(home):
    with pytest.raises(UsageError, match="home directory"):
        paths.resolve_project(home)


def test_explicit_filesystem_root_is_refused(home):
    with pytest.raises(UsageError):
        paths.resolve_project("/")


def test_running_in_the_home_directory_without_hints_is_refused(home, monkeypatch):
    monkeypatch.chdir(home)
    with pytest.raises(UsageError):
        paths.resolve_project()


def test_home_directory_from_an_environment_variable_is_refused(home, monkeypatch):
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(home))
    with pytest.raises(UsageError):
        paths.resolve_project()


@pytest.mark.parametrize("var", ["CLAUDE_PROJECT_DIR", "CONTEXT_MODE_PROJECT_DIR"])
def test_host_and_upstream_project_dir_variables_are_honoured(var, home, tmp_path, monkeypatch):
    project = tmp_path / "proj"
    project.mkdir()
    monkeypatch.setenv(var, str(project))
    monkeypatch.chdir(home)
    assert paths.resolve_project() == project.resolve()


def test_ctxmode_project_dir_beats_host_variables(home, tmp_path, monkeypatch):
    ours, host = tmp_path / "ours", tmp_path / "host"
    ours.mkdir()
    host.mkdir()
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(host))
    monkeypatch.setenv("CTXMODE_PROJECT_DIR", str(ours))
    assert paths.resolve_project() == ours.resolve()


def test_env_values_inside_a_claude_plugin_install_or_missing_are_skipped(
    home, tmp_path, monkeypatch
):
    plugin = tmp_path / ".claude" / "plugins" / "cache" / "ctx" / "1.0"
    plugin.mkdir(parents=True)
    project = tmp_path / "proj"
    project.mkdir()
    monkeypatch.setenv("CTXMODE_PROJECT_DIR", str(tmp_path / "does-not-exist"))
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(plugin))
    monkeypatch.setenv("CURSOR_CWD", str(project))
    assert paths.resolve_project() == project.resolve()


def test_without_hints_the_enclosing_git_work_tree_is_the_project(home, tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    deep = repo / "src" / "pkg"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    assert paths.resolve_project() == repo.resolve()


def test_without_hints_or_git_the_current_directory_is_the_project(home, tmp_path, monkeypatch):
    plain = tmp_path / "plain" / "dir"
    plain.mkdir(parents=True)
    monkeypatch.chdir(plain)
    assert paths.resolve_project() == plain.resolve()


def test_a_git_directory_in_home_does_not_make_home_the_project(home, monkeypatch):
    (home / ".git").mkdir()  # dotfiles repo
    sub = home / "scratch"
    sub.mkdir()
    monkeypatch.chdir(sub)
    assert paths.resolve_project() == sub.resolve()


def test_project_paths_place_files_under_the_data_root(home, tmp_path, monkeypatch):
    project = tmp_path / "proj"
    project.mkdir()
    monkeypatch.setenv("CTXMODE_DIR", str(tmp_path / "data"))
    found = paths.project_paths(project)
    digest = paths.project_hash(project.resolve())
    assert found.content_db == tmp_path / "data" / "content" / f"{digest}.db"
    assert found.session_db("") == tmp_path / "data" / "sessions" / f"{digest}.db"
    assert found.session_db("__abc") == tmp_path / "data" / "sessions" / f"{digest}__abc.db"
    assert found.logs_dir == tmp_path / "data" / "logs"


# --------------------------------------------------------------------------- worktrees

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        [
            "git",
            "-c",
            "user.name=Test",
            "-c",
            "user.email=test@example.com",
            "-c",
            "init.defaultBranch=main",
            *args,
        ],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def repo(tmp_path, home):
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q")
    _git(root, "commit", "-q", "--allow-empty", "-m", "initial")
    return root


@needs_git
def test_worktree_suffix_is_empty_in_a_plain_repository(repo):
    assert paths.worktree_suffix(repo) == ""
    sub = repo / "sub"
    sub.mkdir()
    assert paths.worktree_suffix(sub) == ""


@needs_git
def test_worktree_suffix_identifies_a_linked_worktree(repo, tmp_path):
    linked = tmp_path / "linked"
    _git(repo, "worktree", "add", "-q", str(linked))
    expected = hashlib.sha256(paths.normalize_path(os.path.realpath(linked)).encode()).hexdigest()[
        :8
    ]
    suffix = paths.worktree_suffix(linked)
    assert suffix == f"__{expected}"
    inner = linked / "inner"
    inner.mkdir()
    assert paths.worktree_suffix(inner) == suffix
    assert paths.worktree_suffix(repo) == ""


@needs_git
def test_two_linked_worktrees_get_different_suffixes(repo, tmp_path):
    first, second = tmp_path / "wt1", tmp_path / "wt2"
    _git(repo, "worktree", "add", "-q", str(first))
    _git(repo, "worktree", "add", "-q", str(second))
    assert paths.worktree_suffix(first) != paths.worktree_suffix(second)


def test_worktree_suffix_is_empty_outside_a_repository(home, tmp_path):
    outside = tmp_path / "not-a-repo"
    outside.mkdir()
    assert paths.worktree_suffix(outside) == ""


@pytest.mark.parametrize("var", ["CTXMODE_SESSION_SUFFIX", "CONTEXT_MODE_SESSION_SUFFIX"])
def test_worktree_suffix_can_be_overridden_or_disabled(var, tmp_path, monkeypatch):
    monkeypatch.setenv(var, "feature")
    assert paths.worktree_suffix(tmp_path) == "__feature"
    monkeypatch.setenv(var, "")
    assert paths.worktree_suffix(tmp_path) == ""


def test_legacy_hash_database_is_adopted_once_with_its_sidecars(tmp_path, monkeypatch):
    project = tmp_path / "Proj"
    project.mkdir()
    monkeypatch.setattr(paths, "_CASE_INSENSITIVE_FS", True)  # the macOS/Windows rule
    where = paths.ProjectPaths(root=tmp_path / "root", project_dir=project)
    legacy = where.content_db.with_name(f"{paths.legacy_project_hash(project)}.db")
    assert legacy != where.content_db
    legacy.parent.mkdir(parents=True)
    legacy.write_bytes(b"db")
    Path(f"{legacy}-wal").write_bytes(b"wal")
    assert where.adopt_legacy_content_db() == where.content_db
    assert where.content_db.read_bytes() == b"db"
    assert Path(f"{where.content_db}-wal").read_bytes() == b"wal"
    assert not legacy.exists()


def test_legacy_database_is_left_alone_when_the_canonical_one_exists(tmp_path, monkeypatch):
    project = tmp_path / "Proj"
    project.mkdir()
    monkeypatch.setattr(paths, "_CASE_INSENSITIVE_FS", True)
    where = paths.ProjectPaths(root=tmp_path / "root", project_dir=project)
    legacy = where.content_db.with_name(f"{paths.legacy_project_hash(project)}.db")
    legacy.parent.mkdir(parents=True)
    legacy.write_bytes(b"old")
    where.content_db.write_bytes(b"new")
    where.adopt_legacy_content_db()
    assert legacy.read_bytes() == b"old" and where.content_db.read_bytes() == b"new"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the fast path is Linux's")
@pytest.mark.parametrize("xdg", [None, "/srv/data", "relative/dir", ""])
def test_default_data_root_matches_platformdirs(xdg, tmp_path, monkeypatch):
    from platformdirs import user_data_dir

    monkeypatch.delenv("CTXMODE_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    if xdg is None:
        monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    else:
        monkeypatch.setenv("XDG_DATA_HOME", xdg)
    assert paths.data_root() == Path(user_data_dir("ctxmode", appauthor=False))
