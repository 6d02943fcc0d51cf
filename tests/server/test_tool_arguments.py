"""The arguments context-mode 1.0.169 offers beyond the older ones, through a real MCP
session: cwd on the code-running tools, query_scope on ctx_batch_execute, project on
ctx_search, ttl on ctx_fetch_and_index, and the search throttle's settings."""

import subprocess
from pathlib import Path

import pytest

from ctxmode import paths
from ctxmode.store import ContentStore

from .support import call

pytestmark = pytest.mark.anyio


def _git(project: Path, *argv: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@t", "-c", "user.name=t", *argv],
        cwd=project,
        check=True,
        capture_output=True,
    )


async def test_execute_runs_in_a_cwd_inside_the_project(client, project):
    (project / "pkg").mkdir()
    (project / "pkg" / "here.txt").write_text("inside pkg\n")
    text, is_error = await call(
        client, "ctx_execute", {"language": "shell", "code": "pwd; cat here.txt", "cwd": "pkg"}
    )
    assert not is_error, text
    assert text.splitlines() == [str(project / "pkg"), "inside pkg"]
    text, _ = await call(
        client,
        "ctx_execute",
        {
            "language": "python",
            "code": "import os; print(os.getcwd())",
            "cwd": str(project / "pkg"),
        },
    )
    assert text.strip() == str(project / "pkg")


@pytest.mark.parametrize("where", ["..", "/", "missing-folder", "../../etc"])
async def test_a_cwd_outside_the_project_or_missing_is_refused_clearly(client, where):
    text, is_error = await call(
        client, "ctx_execute", {"language": "shell", "code": "pwd", "cwd": where}
    )
    assert is_error
    assert "cwd" in text and where in text
    assert "Traceback" not in text


@pytest.mark.parametrize(
    ("where", "says"),
    [
        ("loop-a", "cwd is a symlink loop: loop-a"),
        ("loop-a/inner", "cwd is a symlink loop: loop-a/inner"),
        ("y" * 300, "cwd is too long for a file system"),
        ("/".join(["d" * 200] * 25), "cwd is too long for a file system"),
        ("pkg\0x", "cwd contains a NUL byte"),
    ],
)
@pytest.mark.parametrize("tool", ["ctx_execute", "ctx_batch_execute"])
async def test_a_cwd_no_folder_can_be_is_a_clear_error(client, project, tool, where, says):
    """Not an "Internal error" naming RuntimeError, ENAMETOOLONG or an embedded null byte."""
    (project / "loop-a").symlink_to("loop-b")
    (project / "loop-b").symlink_to("loop-a")
    arguments = (
        {"language": "shell", "code": "pwd", "cwd": where}
        if tool == "ctx_execute"
        else {"commands": ["pwd"], "queries": ["x"], "cwd": where}
    )
    text, is_error = await call(client, tool, arguments)
    assert is_error
    assert text.startswith(says), text
    assert "Internal error" not in text


async def test_a_cwd_in_a_git_worktree_of_the_project_is_allowed(client, project, tmp_path):
    (project / "a.txt").write_text("a\n")
    _git(project, "init", "-q")
    _git(project, "add", "-A")
    _git(project, "commit", "-qm", "base")
    tree = tmp_path / "linked-tree"
    _git(project, "worktree", "add", "-q", str(tree))
    text, is_error = await call(
        client,
        "ctx_batch_execute",
        {
            "commands": [{"label": "where", "command": "pwd"}],
            "queries": ["linked"],
            "cwd": str(tree),
        },
    )
    assert not is_error, text
    assert str(tree.resolve()) in text
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    text, is_error = await call(
        client,
        "ctx_batch_execute",
        {"commands": [{"label": "x", "command": "pwd"}], "queries": ["x"], "cwd": str(outside)},
    )
    assert is_error and "worktrees" in text


async def test_query_scope_global_answers_from_the_whole_knowledge_base(client):
    await call(
        client,
        "ctx_index",
        {"content": "# Notes\n\nThe zephyrine valve opens at dawn.", "source": "notes"},
    )
    batch = {
        "commands": [{"label": "hello", "command": "echo hello"}],
        "queries": ["zephyrine valve"],
    }
    text, _ = await call(client, "ctx_batch_execute", batch)
    assert "opens at dawn" not in text  # batch scope: this batch's output only
    text, is_error = await call(client, "ctx_batch_execute", {**batch, "query_scope": "global"})
    assert not is_error
    assert "The zephyrine valve opens at dawn." in text
    text, is_error = await call(client, "ctx_batch_execute", {**batch, "query_scope": "everywhere"})
    assert is_error and "query_scope" in text


def _other_project(tmp_path: Path, text: str) -> Path:
    """Another project with `text` indexed in its knowledge base under the same data root."""
    other = tmp_path / "other-project"
    other.mkdir()
    where = paths.project_paths(other)
    where.content_db.parent.mkdir(parents=True, exist_ok=True)
    with ContentStore(where.content_db) as store:
        store.index_text(text, "guide.md")
    return other


async def test_search_project_global_reads_every_project(client, tmp_path):
    await call(
        client, "ctx_index", {"content": "# Here\n\nLocal marmoset notes.", "source": "here"}
    )
    other = _other_project(tmp_path, "# Guide\n\nThe marmoset feeder refills hourly.")
    text, _ = await call(client, "ctx_search", {"queries": ["marmoset feeder"]})
    assert "refills hourly" not in text  # default: this project only
    text, is_error = await call(
        client, "ctx_search", {"queries": ["marmoset feeder"], "project": "global"}
    )
    assert not is_error
    assert "The marmoset feeder refills hourly." in text
    assert "guide.md" in text
    text, is_error = await call(
        client, "ctx_search", {"queries": ["marmoset feeder"], "project": str(other)}
    )
    assert not is_error and "refills hourly" in text and "Local marmoset" not in text


async def test_search_project_that_is_neither_global_nor_known_is_an_error(client, tmp_path):
    await call(client, "ctx_index", {"content": "# x\n\ny", "source": "x"})
    text, is_error = await call(client, "ctx_search", {"queries": ["y"], "project": "relative/dir"})
    assert is_error and "global" in text
    (tmp_path / "never-indexed").mkdir()
    text, is_error = await call(
        client, "ctx_search", {"queries": ["y"], "project": str(tmp_path / "never-indexed")}
    )
    assert is_error and "no knowledge base" in text


async def test_search_throttle_follows_its_settings(client, monkeypatch):
    monkeypatch.setenv("CONTEXT_MODE_SEARCH_MAX_RESULTS_AFTER", "1")
    monkeypatch.setenv("CONTEXT_MODE_SEARCH_BLOCK_AFTER", "2")
    await call(client, "ctx_index", {"content": "# a\n\nalpha beta", "source": "a"})
    text, _ = await call(client, "ctx_search", {"queries": ["alpha"]})
    assert "search call #1/2" in text
    text, is_error = await call(client, "ctx_search", {"queries": ["alpha"]})
    assert not is_error
    text, is_error = await call(client, "ctx_search", {"queries": ["alpha"]})
    assert is_error and text.startswith("BLOCKED: 3 search calls")


async def test_search_window_setting_resets_the_count(client, monkeypatch):
    monkeypatch.setenv("CONTEXT_MODE_SEARCH_BLOCK_AFTER", "1")
    monkeypatch.setenv("CONTEXT_MODE_SEARCH_WINDOW_MS", "0.001")
    await call(client, "ctx_index", {"content": "# a\n\nalpha beta", "source": "a"})
    for _ in range(3):  # each call opens a new window: never blocked
        text, is_error = await call(client, "ctx_search", {"queries": ["alpha"]})
        assert not is_error, text


async def test_fetch_ttl_is_in_milliseconds_and_zero_fetches_again(client, tmp_path):
    import functools
    import http.server
    import threading

    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "page.md").write_text("# Page\n\nThe okapi sleeps standing.\n")
    hits: list[str] = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            hits.append(self.path)

    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Handler, directory=str(tmp_path / "site"))
    )
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}/page.md"
    try:
        await call(client, "ctx_fetch_and_index", {"url": url})
        text, _ = await call(client, "ctx_fetch_and_index", {"url": url, "ttl": 3_600_000})
        assert text.startswith("Cached:") and "TTL: 1h" in text and len(hits) == 1
        text, is_error = await call(client, "ctx_fetch_and_index", {"url": url, "ttl": 0})
        assert not is_error and text.startswith("Fetched and indexed") and len(hits) == 2
    finally:
        httpd.shutdown()
        httpd.server_close()


def _tree(project: Path) -> Path:
    docs = project / "docs"
    for rel, text in {
        "top.md": "# Top\n\nquasar top\n",
        "notes.txt": "quasar notes\n",
        "guide/deep.md": "# Deep\n\nquasar deep\n",
        "guide/deeper/deepest.md": "# Deepest\n\nquasar deepest\n",
        "drafts/draft.md": "# Draft\n\nquasar draft\n",
        "ignored.md": "# Ignored\n\nquasar ignored\n",
    }.items():
        (docs / rel).parent.mkdir(parents=True, exist_ok=True)
        (docs / rel).write_text(text)
    (docs / ".gitignore").write_text("ignored.md\n")
    return docs


def _indexed_names(state) -> set[str]:
    with state.store() as store:
        return {info.label.rsplit("/", 1)[-1] for info in store.sources()}


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({}, {"top.md", "notes.txt", "deep.md", "deepest.md", "draft.md"}),
        ({"include": ["*.md"], "exclude": ["drafts"]}, {"top.md", "deep.md", "deepest.md"}),
        ({"maxDepth": 1}, {"top.md", "notes.txt", "deep.md", "draft.md"}),
        ({"extensions": ["txt"]}, {"notes.txt"}),
        ({"respectGitignore": False, "include": ["ignored.md"]}, {"ignored.md"}),
    ],
)
async def test_index_directory_walk_options(client, project, state, options, expected):
    docs = _tree(project)
    text, is_error = await call(client, "ctx_index", {"path": str(docs), **options})
    assert not is_error, text
    assert _indexed_names(state) == expected


async def test_index_max_files_stops_the_walk_and_says_so(client, project):
    docs = _tree(project)
    text, is_error = await call(client, "ctx_index", {"path": str(docs), "maxFiles": 2})
    assert not is_error
    assert "2 files under docs" in text and "Stopped at maxFiles 2" in text
    text, is_error = await call(client, "ctx_index", {"path": str(docs), "maxDepth": -1})
    assert is_error and "maxDepth" in text


@pytest.mark.parametrize("bad", ["inf", "nan", "-inf", "1e400"])
async def test_non_finite_numbers_are_clear_errors(client, bad):
    text, is_error = await call(client, "ctx_search", {"queries": ["x"], "limit": bad})
    assert is_error and "limit must be a finite number" in text


@pytest.mark.parametrize("bad", [True, 5, 2.5, {"url": "http://127.0.0.1:9/x"}])
async def test_fetch_requests_that_are_not_an_array_are_clear_errors(client, bad):
    text, is_error = await call(client, "ctx_fetch_and_index", {"requests": bad})
    assert is_error and "requests must be an array" in text
    assert "Internal error" not in text
