"""The real `ctxmode` CLI, as a subprocess, against a damaged knowledge base, a full disk
and a file name that is not UTF-8: a clear message and a documented exit code, never a
traceback, and nothing already stored lost."""

import json
import os
from pathlib import Path
from typing import Any

import pytest

from .support import (
    fill,
    garbage_in_the_middle,
    garbage_over,
    run_ctxmode,
    set_aside_copies,
    write_docs,
)

DOCS = 60
BAD_NAME = os.fsencode("bad") + b"\xff" + os.fsencode("name.md")
SHOWN_BAD_NAME = "bad\\xffname.md"  # the bytes escaped, as output and JSON name it
DAMAGED = "Warning: the knowledge base was damaged"


def ctxmode(project: Path, *argv: str, data_root: Path | None = None) -> tuple[int, str, str]:
    """Run ``ctxmode ARGV`` in `project` with a HOME of its own; (status, stdout, stderr)."""
    env = {**os.environ, "HOME": str(project.parent / "home"), "COLUMNS": "200"}
    if data_root is not None:
        env["CTXMODE_DIR"] = str(data_root)
    proc = run_ctxmode(project, *argv, env=env)
    return proc.returncode, proc.stdout, proc.stderr


def envelope(stdout: str) -> dict[str, Any]:
    doc = json.loads(stdout)
    assert doc["ctxmode_result_version"] == "1"
    return doc


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    write_docs(root, DOCS)
    (tmp_path / "home").mkdir()
    return root


@pytest.fixture
def indexed(project: Path, data_root: Path) -> Path:
    """The project indexed by the CLI; returns its knowledge-base file (closed)."""
    code, out, _ = ctxmode(project, "index", ".", "--project", str(project))
    assert code == 0, out
    [kb] = (data_root / "content").glob("*.db")
    return kb


@pytest.fixture
def data_root(_isolated_env: Path) -> Path:
    return _isolated_env


def test_search_heals_a_damaged_knowledge_base_and_says_so_once(project, indexed):
    damaged = garbage_in_the_middle(indexed)
    code, out, err = ctxmode(project, "search", "marker3x2", "--project", str(project))
    assert code == 0
    assert out.startswith("1. doc03.md:")
    assert err.count(DAMAGED) == 1
    assert f"{DOCS} of {DOCS} file-backed source(s) indexed again" in err
    [aside] = set_aside_copies(indexed)
    assert aside.read_bytes() == damaged
    code, out, err = ctxmode(project, "search", "marker59x7", "--project", str(project))
    assert (code, err) == (0, "")
    assert out.startswith("1. doc59.md:")


def test_index_heals_a_damaged_knowledge_base_and_keeps_what_it_can(project, indexed):
    garbage_over(indexed, "chunks")
    (project / "new.md").write_text("# New\n\nthe quokka arrived\n", encoding="utf-8")
    code, out, err = ctxmode(project, "index", "new.md", "--project", str(project), "--json")
    assert code == 0
    doc = envelope(out)
    assert [r["label"] for r in doc["data"]["indexed"]] == ["new.md"]
    assert err.count(DAMAGED) == 1
    code, out, _ = ctxmode(project, "index", "--list", "--project", str(project), "--json")
    labels = {s["label"] for s in envelope(out)["data"]["sources"]}
    assert labels == {f"doc{i:02d}.md" for i in range(DOCS)} | {"new.md"}
    assert len(set_aside_copies(indexed)) == 1


def test_a_file_name_that_is_not_utf8_is_skipped_and_named(project, data_root):
    (project / os.fsdecode(BAD_NAME)).write_text("# Bad\n\nthe zebra\n", encoding="utf-8")
    code, out, err = ctxmode(project, "index", ".", "--project", str(project), "--json")
    assert code == 0
    doc = envelope(out)
    assert len(doc["data"]["indexed"]) == DOCS
    assert doc["data"]["skipped"] == [
        {
            "path": SHOWN_BAD_NAME,
            "reason": f"skipping {SHOWN_BAD_NAME}: its name is not valid UTF-8",
            "code": "bad_name",
        }
    ]
    code, out, err = ctxmode(project, "index", ".", "--project", str(project))
    assert code == 0
    assert f"{DOCS} unchanged" in out and "1 skipped" in out
    assert f"skipping {SHOWN_BAD_NAME}: its name is not valid UTF-8" in err
    code, out, _ = ctxmode(project, "search", "marker7x1", "--project", str(project))
    assert (code, out.startswith("1. doc07.md:")) == (0, True)


def test_naming_a_file_that_is_not_utf8_is_an_error_with_exit_1(project, data_root):
    (project / os.fsdecode(BAD_NAME)).write_text("# Bad\n\nthe zebra\n", encoding="utf-8")
    code, out, _ = ctxmode(project, "index", os.fsdecode(BAD_NAME), "--json")
    assert code == 1
    assert envelope(out)["errors"] == [
        {"code": "bad_name", "message": f"skipping {SHOWN_BAD_NAME}: its name is not valid UTF-8"}
    ]


def test_a_full_disk_is_a_disk_full_error_and_search_still_answers(project, small_disk):
    data_root = small_disk / "data"
    code, _, _ = ctxmode(project, "index", "doc01.md", data_root=data_root)
    assert code == 0
    (project / "big.md").write_text("a line of output\n" * 12_000, encoding="utf-8")
    filler = fill(small_disk)
    code, out, err = ctxmode(project, "index", "big.md", "--json", data_root=data_root)
    assert code == 1
    [error] = envelope(out)["errors"]
    assert error["code"] == "disk_full"
    assert error["message"].startswith("disk full: cannot write the knowledge base")
    code, out, err = ctxmode(project, "search", "marker1x3", data_root=data_root)
    assert code == 0
    assert out.startswith("1. doc01.md:")
    assert "open for reading only" in err
    filler.unlink()
    code, out, _ = ctxmode(project, "index", "big.md", data_root=data_root)
    assert code == 0
    assert out.startswith("indexed 1 source (")
    code, out, _ = ctxmode(project, "search", "marker1x3", data_root=data_root)
    assert out.startswith("1. doc01.md:")
