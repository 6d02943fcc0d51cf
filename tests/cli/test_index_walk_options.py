"""`ctxmode index` directory-walk flags end to end, through ctxmode.__main__.main."""

import os

import pytest

from ctxmode.__main__ import main
from ctxmode.cli import output

from .support import run_json


@pytest.fixture(autouse=True)
def _output_mode(monkeypatch):
    """The CLI keeps its output mode (--json) in a module: leave it as found."""
    monkeypatch.setattr(output.mode, "json", output.mode.json)
    monkeypatch.setattr(output.mode, "command", output.mode.command)


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = tmp_path / "proj"
    root.mkdir()
    (root / ".git").mkdir()
    monkeypatch.chdir(root)
    for rel, text in {
        "README.md": "# Readme\n",
        "docs/guide.md": "# Guide\n\nwords\n",
        "docs/notes.TXT": "notes\n",
        "docs/drafts/wip.md": "# Wip\n",
        "src/app.py": "def app():\n    pass\n",
        "src/pkg/util.py": "def util():\n    pass\n",
        "src/pkg/bundle.min.js": "var a=1;\n",
    }.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _indexed(capsys, *argv: str) -> list[str]:
    code, doc = run_json(capsys, "index", *argv)
    assert code == 0, doc
    return sorted(item["label"] for item in doc["data"]["indexed"])


def test_include_is_repeatable(project, capsys):
    assert _indexed(capsys, ".", "--include", "*.md", "--include", "src/**/*.py") == [
        "README.md",
        "docs/drafts/wip.md",
        "docs/guide.md",
        "src/app.py",
        "src/pkg/util.py",
    ]


def test_exclude_a_directory_and_a_file_pattern(project, capsys):
    assert _indexed(capsys, ".", "--exclude", "drafts", "--exclude", "*.min.js") == [
        "README.md",
        "docs/guide.md",
        "docs/notes.TXT",
        "src/app.py",
        "src/pkg/util.py",
    ]


def test_max_depth(project, capsys):
    assert _indexed(capsys, ".", "--max-depth", "0") == ["README.md"]
    assert _indexed(capsys, "docs", "--max-depth", "0") == ["docs/guide.md", "docs/notes.TXT"]
    assert _indexed(capsys, ".", "--max-depth", "1") == [
        "README.md",
        "docs/guide.md",
        "docs/notes.TXT",
        "src/app.py",
    ]


def test_ext_with_and_without_dot(project, capsys):
    assert _indexed(capsys, ".", "--ext", "py", "--ext", ".txt") == [
        "docs/notes.TXT",
        "src/app.py",
        "src/pkg/util.py",
    ]


def test_flags_leave_files_named_alone(project, capsys):
    assert _indexed(capsys, "src/app.py", "docs", "--ext", "md", "--exclude", "*.py") == [
        "docs/drafts/wip.md",
        "docs/guide.md",
        "src/app.py",
    ]


def test_no_gitignore_indexes_an_ignored_file(project, capsys):
    (project / ".gitignore").write_text("*.log\n", encoding="utf-8")
    (project / "run.log").write_text("log line\n", encoding="utf-8")
    assert "run.log" not in _indexed(capsys, ".")
    assert "run.log" in _indexed(capsys, ".", "--no-gitignore")


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks here")
def test_follow_symlinks(project, capsys, tmp_path):
    # "archive" sorts before "docs": the drafts are met through the link first
    (project / "archive").symlink_to(project / "docs" / "drafts", target_is_directory=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("# Secret\n", encoding="utf-8")
    (project / "out").symlink_to(outside, target_is_directory=True)
    (project / "docs" / "drafts" / "loop").symlink_to(project, target_is_directory=True)
    assert "archive/wip.md" not in _indexed(capsys, ".")
    labels = _indexed(capsys, ".", "--follow-symlinks")
    assert "archive/wip.md" in labels and "docs/drafts/wip.md" not in labels  # once
    assert not any(label.startswith("out/") for label in labels)
    assert len(labels) == len(set(labels)) == 7


def test_max_files_says_in_the_summary_that_it_stopped_the_walk(project, capsys):
    assert main(["index", ".", "--max-files", "2"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("indexed 2 sources")
    assert "stopped at --max-files 2: more files were left out, not indexed" in out
    assert main(["index", ".", "--max-files", "7"]) == 0
    assert "max-files" not in capsys.readouterr().out


def test_max_files_in_the_json_report(project, capsys):
    code, doc = run_json(capsys, "index", "src", "--max-files", "1")
    assert code == 0
    assert [i["label"] for i in doc["data"]["indexed"]] == ["src/app.py"]
    assert doc["data"]["capped"] == {"max_files": 1}
    code, doc = run_json(capsys, "index", "src")
    assert "capped" not in doc["data"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--max-depth", "-1"], "--max-depth must be 0 or more, not -1"),
        (["--max-files", "-3"], "--max-files must be 1 or more, not -3"),
        (["--max-files", "0"], "--max-files must be 1 or more, not 0"),
        (["--ext", "."], "--ext needs an extension"),
        (["--include", ""], "--include needs a pattern"),
    ],
)
def test_bad_values_are_usage_errors(project, capsys, argv, message):
    assert main(["index", ".", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert message in captured.err and "Traceback" not in captured.err
    code, doc = run_json(capsys, "index", ".", *argv)
    assert code == 2 and doc["errors"][0]["code"] == "usage"
    assert message in doc["errors"][0]["message"]
    assert run_json(capsys, "sources")[1]["data"]["sources"] == []  # nothing was indexed


def test_a_non_number_is_a_usage_error(project, capsys):
    assert main(["index", ".", "--max-depth", "deep"]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_help_names_the_flags(project, capsys):
    assert main(["index", "--help"]) == 0
    out = capsys.readouterr().out
    for flag in (
        "--include",
        "--exclude",
        "--max-depth",
        "--max-files",
        "--ext",
        "--no-gitignore",
        "--follow-symlinks",
    ):
        assert flag in out, flag
