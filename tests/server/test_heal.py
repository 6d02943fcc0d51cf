"""A real `ctxmode serve` keeps serving through storage trouble: a damaged knowledge base
heals at the first call that meets it (said once, in that call's answer), a full disk
leaves what needs no disk working and every write a clear "disk full", and a file name
that is not UTF-8 is skipped by name."""

import os

from healing.support import (
    fill,
    garbage_in_the_middle,
    set_aside_copies,
    small_disk,
    write_docs,
)

from ctxmode.paths import ProjectPaths
from ctxmode.store import ContentStore

from .support import EXIT_WITHIN_S, RawServer, spawn_server

NOTE = "Note: the knowledge base was damaged"
__all__ = ["small_disk"]  # a fixture, used by name


def _text(result: dict[str, object]) -> str:
    content = result["content"]
    assert isinstance(content, list)
    return str(content[0]["text"])


def _indexed_kb(data_root, project, count: int):
    kb = ProjectPaths(data_root, project).content_db
    with ContentStore(kb) as store:
        for doc in write_docs(project, count):
            store.index_file(doc, doc.name)
    return kb


def _stop(server: RawServer, tmp_path) -> str:
    server.close_stdin()
    assert server.proc.wait(EXIT_WITHIN_S) == 0
    return (tmp_path / "server.stderr").read_text(encoding="utf-8")


def test_a_running_server_heals_a_damaged_knowledge_base(tmp_path, project, data_root, started):
    kb = _indexed_kb(data_root, project, 60)
    garbage_in_the_middle(kb)
    server = spawn_server(tmp_path, project, data_root, started)
    server.initialize()

    first = server.call_tool(1, "ctx_search", {"queries": ["marker3x2"]})
    text = _text(first)
    assert first["isError"] is False, text
    assert text.startswith(NOTE)
    assert text.count(NOTE) == 1
    assert "60 of 60 file-backed source(s) indexed again" in text
    assert "doc03.md" in text
    [aside] = set_aside_copies(kb)
    assert str(aside) in text

    second = server.call_tool(2, "ctx_search", {"queries": ["marker59x7"]})
    assert second["isError"] is False
    assert NOTE not in _text(second)
    assert "doc59.md" in _text(second)

    indexed = server.call_tool(3, "ctx_index", {"content": "# Q\n\nthe quokka\n", "source": "q"})
    assert indexed["isError"] is False, _text(indexed)
    found = server.call_tool(4, "ctx_search", {"queries": ["quokka"]})
    assert "the quokka" in _text(found)
    assert NOTE not in _text(found)
    assert len(set_aside_copies(kb)) == 1
    assert "Traceback" not in _stop(server, tmp_path)


def test_ctx_index_skips_a_file_name_that_is_not_utf8_by_name(
    tmp_path, project, data_root, started
):
    write_docs(project, 3)
    bad = os.fsencode(project) + b"/bad\xffname.md"
    with open(bad, "w", encoding="utf-8") as handle:
        handle.write("# Bad\n\nthe zebra\n")
    server = spawn_server(tmp_path, project, data_root, started)
    server.initialize()
    result = server.call_tool(1, "ctx_index", {"path": str(project)})
    text = _text(result)
    assert result["isError"] is False, text
    assert "from: 3 files under" in text
    assert "Skipped, name not valid UTF-8: bad\\xffname.md" in text
    found = server.call_tool(2, "ctx_search", {"queries": ["marker2x5"]})
    assert "doc02.md" in _text(found)
    _stop(server, tmp_path)


def test_a_server_on_a_full_disk_serves_what_needs_no_disk(tmp_path, project, small_disk, started):
    data_root = small_disk / "data"
    _indexed_kb(data_root, project, 2)
    fill(small_disk)
    server = spawn_server(tmp_path, project, data_root, started)
    server.initialize()

    echo = server.call_tool(1, "ctx_execute", {"language": "shell", "code": "echo up"})
    assert (_text(echo), echo["isError"]) == ("up\n", False)

    search = server.call_tool(2, "ctx_search", {"queries": ["marker1x3"]})
    text = _text(search)
    assert search["isError"] is False, text
    assert "doc01.md" in text
    assert "disk full" in text and "open for reading only" in text

    big = "import sys\nsys.stdout.write('a line of output\\n' * 20000)"
    flood = server.call_tool(3, "ctx_execute", {"language": "python", "code": big})
    text = _text(flood)
    assert flood["isError"] is True
    assert text.startswith("disk full: cannot write the knowledge base"), text
    assert "no transaction is active" not in text

    assert list((data_root / "servers").glob("*.tmp")) == []
    stderr = _stop(server, tmp_path)
    assert "cannot publish the readiness marker" in stderr
    assert "Traceback" not in stderr
    assert "Logging error" not in stderr
