"""The index and search commands end to end, through ctxmode.__main__.main (real exit codes)."""

import json
import os
from pathlib import Path

import pytest

from ctxmode.__main__ import main

from .support import run_json


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = tmp_path / "proj"
    root.mkdir()
    (root / ".git").mkdir()
    monkeypatch.chdir(root)
    return root


def test_index_then_search_finds_the_section_by_heading_words(project, capsys):
    (project / "guide.md").write_text(
        "# Guide\n\n## Connection pool\n\nThe pool timeout is 30 seconds.\n\n"
        "## Logging\n\nLogs rotate daily.\n",
        encoding="utf-8",
    )
    code, doc = run_json(capsys, "index", "guide.md")
    assert code == 0
    assert doc["data"]["indexed"][0]["label"] == "guide.md"
    code, doc = run_json(capsys, "search", "pool", "timeout")
    assert code == 0 and doc["status"] == "ok"
    first = doc["data"]["hits"][0]
    assert first["source"] == "guide.md"
    assert first["title"] == "Guide > Connection pool"
    assert "30 seconds" in first["snippet"]
    assert first["start_line"] == 3


def test_directory_index_honours_gitignore_and_skips_binaries(project, capsys):
    (project / ".gitignore").write_text("build/\n*.log\n", encoding="utf-8")
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text("def handler():\n    return 1\n", encoding="utf-8")
    (project / "build").mkdir()
    (project / "build" / "out.py").write_text("def built():\n    pass\n", encoding="utf-8")
    (project / "run.log").write_text("log line\n", encoding="utf-8")
    (project / "img.png").write_bytes(b"\x89PNG\r\n\x00\x00binary")
    code, doc = run_json(capsys, "index", ".")
    assert code == 0
    labels = sorted(item["label"] for item in doc["data"]["indexed"])
    assert labels == ["src/app.py"]
    assert [s["path"] for s in doc["data"]["skipped"]] == ["img.png"]


def test_stdin_with_source_label_is_indexed_and_listed(project, capsys, monkeypatch):
    import io

    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"# Runbook\nrestart the queue")))
    code, doc = run_json(capsys, "index", "-", "--source", "runbook")
    assert code == 0 and doc["data"]["indexed"][0]["label"] == "runbook"
    code, doc = run_json(capsys, "sources")
    assert [s["label"] for s in doc["data"]["sources"]] == ["runbook"]
    code, doc = run_json(capsys, "index", "--list")
    assert [s["label"] for s in doc["data"]["sources"]] == ["runbook"]


def test_missing_path_exits_3_and_keeps_what_was_indexed(project, capsys):
    (project / "a.md").write_text("# A\nalpha content\n", encoding="utf-8")
    assert run_json(capsys, "index", "a.md")[0] == 0
    code, doc = run_json(capsys, "index", "nothere.md")
    assert code == 3 and doc["status"] == "error"
    assert doc["errors"][0]["code"] == "not_found"
    assert "nothere.md" in doc["errors"][0]["message"]
    code, doc = run_json(capsys, "search", "alpha")
    assert doc["data"]["hits"][0]["source"] == "a.md"


def test_explicit_binary_file_is_an_error_with_exit_1(project, capsys):
    (project / "blob.bin").write_bytes(b"\x00\x01\x02" * 100)
    code, doc = run_json(capsys, "index", "blob.bin")
    assert code == 1
    assert "binary" in doc["errors"][0]["message"]


@pytest.mark.skipif(
    os.geteuid() == 0 if hasattr(os, "geteuid") else True, reason="root reads unreadable files"
)
def test_unreadable_file_is_reported(project, capsys):
    secret = project / "secret.md"
    secret.write_text("# s\n", encoding="utf-8")
    secret.chmod(0)
    code, doc = run_json(capsys, "index", "secret.md")
    assert code == 1 and "permission denied" in doc["errors"][0]["message"]


def test_search_on_empty_index_says_how_to_index(project, capsys):
    code, doc = run_json(capsys, "search", "anything")
    assert code == 3
    assert "ctxmode index" in doc["errors"][0]["message"]


def test_human_error_goes_to_stderr_without_traceback(project, capsys):
    code = main(["search", "anything"])
    captured = capsys.readouterr()
    assert code == 3
    assert captured.out == ""
    assert "Error:" in captured.err and "Traceback" not in captured.err


def test_home_directory_is_refused_as_a_project(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    code, doc = run_json(capsys, "search", "x")
    assert code == 2
    assert "--project" in doc["errors"][0]["message"]


def test_project_option_selects_another_projects_index(project, tmp_path, capsys):
    other = tmp_path / "other"
    other.mkdir()
    (other / "x.md").write_text("# X\nzebra facts\n", encoding="utf-8")
    assert run_json(capsys, "index", str(other / "x.md"), "--project", str(other))[0] == 0
    assert run_json(capsys, "search", "zebra")[0] == 3  # this project is still empty
    code, doc = run_json(capsys, "search", "zebra", "--project", str(other))
    assert code == 0 and doc["data"]["hits"][0]["source"] == "x.md"


def test_refresh_rehashes_and_reports_dropped_files(project, capsys):
    doc_path = project / "gone.md"
    doc_path.write_text("# Gone\nephemeral words\n", encoding="utf-8")
    run_json(capsys, "index", "gone.md")
    doc_path.unlink()
    code, doc = run_json(capsys, "index", "--refresh")
    assert code == 0
    assert doc["data"]["refresh"]["dropped"] == ["gone.md"]
    assert run_json(capsys, "sources")[1]["data"]["sources"] == []


def test_type_and_source_filters(project, capsys):
    (project / "a.py").write_text("def shared_name():\n    return 'x'\n", encoding="utf-8")
    (project / "b.md").write_text("# Notes\nshared_name is documented here\n", encoding="utf-8")
    run_json(capsys, "index", "a.py", "b.md")
    _, doc = run_json(capsys, "search", "shared_name", "--type", "prose")
    assert {h["source"] for h in doc["data"]["hits"]} == {"b.md"}
    _, doc = run_json(capsys, "search", "shared_name", "--source", "a.py")
    assert {h["source"] for h in doc["data"]["hits"]} == {"a.py"}


def test_bad_option_value_is_a_usage_error(project, capsys):
    assert main(["search", "x", "--limit", "zero"]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_glob_argument_is_expanded(project, capsys):
    (project / "docs").mkdir()
    for name in ("one", "two"):
        (project / "docs" / f"{name}.md").write_text(f"# {name}\ncontent\n", encoding="utf-8")
    code, doc = run_json(capsys, "index", "docs/*.md")
    assert code == 0
    assert sorted(i["label"] for i in doc["data"]["indexed"]) == ["docs/one.md", "docs/two.md"]


def test_human_output_names_source_lines_and_title(project, capsys):
    Path("svc.py").write_text(
        "class Service:\n    def start(self):\n        return 1\n", encoding="utf-8"
    )
    main(["index", "svc.py"])
    capsys.readouterr()
    assert main(["search", "Service"]) == 0
    out = capsys.readouterr().out
    assert "svc.py:1-3" in out and "class Service" in out


def test_sqlite_without_fts5_is_an_environment_error(project, capsys, monkeypatch):
    # This interpreter's SQLite has FTS5, so the probe's answer is what we replace here.
    monkeypatch.setattr("ctxmode.db.fts5_problem", lambda: "SQLite was built without FTS5")
    code, doc = run_json(capsys, "search", "x")
    assert code == 4
    assert doc["errors"] == [{"code": "environment", "message": "SQLite was built without FTS5"}]


def _old_tree(project, n):
    (project / "docs").mkdir()
    past = 1_700_000_000 * 1_000_000_000  # older than a timestamp tick: mtimes are trusted
    for i in range(n):
        path = project / "docs" / f"n{i:02d}.md"
        path.write_text(f"# Note {i}\n\nshared words and marker{i}q\n", encoding="utf-8")
        os.utime(path, ns=(past, past))


def test_reindexing_an_unchanged_tree_reports_every_file_unchanged(project, capsys):
    _old_tree(project, 12)
    code, doc = run_json(capsys, "index", "docs")
    assert code == 0 and doc["data"]["totals"]["unchanged"] == 0
    (project / "docs" / "n03.md").write_text("# Note 3\n\nrewritten, longer\n", encoding="utf-8")
    code, doc = run_json(capsys, "index", "docs")
    assert code == 0
    assert doc["data"]["totals"]["sources"] == 12 and doc["data"]["totals"]["unchanged"] == 11
    assert [i["label"] for i in doc["data"]["indexed"] if not i["unchanged"]] == ["docs/n03.md"]
    assert main(["index", "docs"]) == 0
    assert capsys.readouterr().out == "indexed 0 sources, 12 unchanged (428 bytes)\n"


def test_search_never_shows_a_deleted_file_among_many(project, capsys, monkeypatch):
    monkeypatch.setattr("ctxmode.store.store.SWEEP_BATCH", 2)  # the window misses most
    _old_tree(project, 12)
    assert run_json(capsys, "index", "docs")[0] == 0
    (project / "docs" / "n07.md").unlink()
    code, doc = run_json(capsys, "search", "marker7q")
    assert code == 1 and doc["data"]["hits"] == []  # nothing matched: 1, like grep
    assert doc["data"]["refresh"]["dropped"] == ["docs/n07.md"]
    code, doc = run_json(capsys, "search", "shared", "words", "--limit", "20")
    assert sorted(h["source"] for h in doc["data"]["hits"]) == sorted(
        f"docs/n{i:02d}.md" for i in range(12) if i != 7
    )


# --- exit status, hints ---------------------------------------------------------------------


def _guide(project) -> None:
    (project / "guide.md").write_text("# Guide\n\nThe pool timeout is 30 s.\n", encoding="utf-8")
    assert main(["index", "guide.md", "-q"]) == 0


def test_search_exits_1_when_nothing_matched_and_0_when_something_did(project, capsys):
    _guide(project)
    capsys.readouterr()
    assert main(["search", "zzzqqqxxx"]) == 1
    assert capsys.readouterr().out == "No results.\n"
    code, doc = run_json(capsys, "search", "zzzqqqxxx")
    assert code == 1 and doc["data"]["hits"] == []
    assert doc["errors"] == [{"code": "no_match", "message": "nothing matched zzzqqqxxx"}]
    assert main(["search", "pool"]) == 0


def test_search_output_is_the_same_through_typer_and_the_fast_path(project, capsys):
    from ctxmode.cli.app import main as typer_main

    _guide(project)
    capsys.readouterr()
    assert main(["search", "pool", "timeout"]) == 0
    fast = capsys.readouterr()
    assert typer_main(["search", "pool", "timeout"]) == 0
    assert capsys.readouterr() == fast
    assert fast.out.startswith("1. guide.md:1-3  Guide  [")


@pytest.mark.parametrize("query", [["-foo"], ["--foo", "bar"], ["x", "-1"]])
def test_a_query_that_starts_with_a_dash_gets_a_hint_to_put_double_dash_first(
    project, capsys, query
):
    assert main(["search", *query]) == 2
    err = " ".join(capsys.readouterr().err.replace("│", " ").split())
    assert "No such option" in err
    assert "put -- before the query: ctxmode search --" in err


def test_double_dash_searches_for_a_word_that_starts_with_a_dash(project, capsys):
    (project / "flags.md").write_text("# Flags\n\nPass --verbose for more.\n", encoding="utf-8")
    assert main(["index", "flags.md", "-q"]) == 0
    capsys.readouterr()
    assert main(["search", "--json", "--", "--verbose"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["data"]["query"] == "--verbose"
    assert "flags.md" in {hit["source"] for hit in doc["data"]["hits"]}


# --- what index prints -----------------------------------------------------------------------


def _tree(project, n: int) -> None:
    (project / "docs").mkdir()
    for i in range(n):
        (project / "docs" / f"d{i}.md").write_text(f"# D{i}\n\nwords {i}\n", encoding="utf-8")
    (project / "docs" / "blob.bin").write_bytes(b"\x00\x01binary")


def test_index_prints_one_summary_line_with_counts_and_bytes(project, capsys):
    _tree(project, 3)
    assert main(["index", "docs"]) == 0
    captured = capsys.readouterr()
    assert captured.out == ("indexed 3 sources (3 chunks, 42 bytes), 1 skipped (-v names them)\n")
    assert captured.err == ""
    (project / "docs" / "d1.md").write_text("# D1\n\nnew words 1\n", encoding="utf-8")
    assert main(["index", "docs"]) == 0
    assert capsys.readouterr().out.startswith("indexed 1 source (1 chunk, 18 bytes), 2 unchanged")


def test_index_verbose_names_every_file(project, capsys):
    _tree(project, 2)
    assert main(["index", "docs", "-v"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "indexed docs/d0.md: 1 chunk (0 code), 14 bytes" in lines
    assert any(line.startswith("skipping ") and "blob.bin: binary" in line for line in lines)
    assert lines[-1].startswith("indexed 2 sources")


def test_index_quiet_prints_only_errors(project, capsys):
    _tree(project, 2)
    assert main(["index", "docs", "--quiet"]) == 0
    assert capsys.readouterr() == ("", "")
    assert main(["index", "-q", "docs", "missing.md"]) == 3
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("Error: ")


def test_index_refresh_reports_dropped_files_in_the_summary(project, capsys):
    _tree(project, 2)
    assert main(["index", "docs", "-q"]) == 0
    (project / "docs" / "d0.md").unlink()
    assert main(["index", "--refresh"]) == 0
    assert "1 dropped (file deleted)" in capsys.readouterr().out
