"""Floods over MCP: a run that prints without end is answered in time, with its first lines
and a note of what was cut, in an answer of bounded size; a batch likewise. Real
subprocesses and a real knowledge base; one test runs a real `ctxmode serve` process and
watches the memory of its whole process tree."""

import re
import threading
import time

import psutil
import pytest

from ctxmode import batch
from ctxmode.executor.shaping import ANSWER_MAX_BYTES

from .support import call, spawn_server

# Generous: catches a hang (the floods took 30-60 s before they were bounded), not speed.
WITHIN_S = 30.0
SMALL_ANSWER = 16 * 1024


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


@pytest.mark.anyio
@pytest.mark.parametrize("redirect", ["", " >&2"], ids=["stdout", "stderr"])
async def test_a_yes_flood_is_answered_in_time_with_its_start_and_a_cut_note(client, redirect):
    started = time.monotonic()
    text, is_error = await call(
        client,
        "ctx_execute",
        {
            "language": "shell",
            "code": f"echo start; yes hello-fast-line{redirect}",
            "timeout": 5000,
        },
    )
    assert time.monotonic() - started < WITHIN_S
    # Usually the 100 MiB cap stops it (an error); on a slow machine the deadline may come
    # first (partial output, not an error).
    assert "output capped" in text if is_error else "timed out after 5000ms" in text
    assert "start\n" in text
    assert "hello-fast-line\n[… repeated " in text
    assert "[… repeated " in text
    assert _size(text) < SMALL_ANSWER


@pytest.mark.anyio
async def test_a_flood_that_times_out_returns_its_head_marked_partial(client):
    text, is_error = await call(
        client,
        "ctx_execute",
        {"language": "shell", "code": "echo start; while :; do seq 1 5000; done", "timeout": 2000},
    )
    assert not is_error
    assert "Its first and last lines:\nstart\n1\n" in text
    assert "_(timed out after 2000ms — partial output: stdout " in text
    assert _size(text) < SMALL_ANSWER
    found, _ = await call(client, "ctx_search", {"queries": ["start"], "source": "execute:shell"})
    assert "start" in found


@pytest.mark.anyio
async def test_a_batch_with_a_huge_output_answers_within_a_byte_bound(client):
    command = "echo start; head -c 60000000 /dev/zero | tr '\\0' 'a' | fold -w 80; echo finish"
    started = time.monotonic()
    text, is_error = await call(
        client,
        "ctx_batch_execute",
        {"commands": [{"label": "flood", "command": command}], "queries": ["start"]},
    )
    assert time.monotonic() - started < WITHIN_S
    assert not is_error
    assert text.startswith("Executed 1 commands (")
    assert re.search(r"\(750,00\d lines, 5\d\.\dMB\)", text)  # indexed whole, repeats folded
    assert "[… repeated 749,99" in text
    assert "start\naaaa" in text and "finish" in text
    assert _size(text) < SMALL_ANSWER


@pytest.mark.anyio
async def test_a_batch_lists_a_bounded_number_of_section_titles(client):
    sections = "for i in $(seq 1 150); do printf '# part %s\\n\\nbody of part %s\\n\\n' $i $i; done"
    text, is_error = await call(
        client,
        "ctx_batch_execute",
        {"commands": [{"label": "many", "command": sections}], "queries": ["part 149"]},
    )
    assert not is_error
    listed = [line for line in text.splitlines() if line.startswith("- ")]
    assert len(listed) == batch.MAX_TITLES + 1
    assert listed[-1].startswith("- … and ")
    assert "body of part 149" in text
    assert _size(text) <= batch.ANSWER_MAX_BYTES


def _tree_rss(proc: psutil.Process) -> int:
    total = 0
    try:
        members = [proc, *proc.children(recursive=True)]
    except psutil.Error:
        return 0
    for member in members:
        try:
            total += member.memory_info().rss
        except psutil.Error:  # noqa: PERF203 - a child may end meanwhile
            pass
    return total


def test_a_served_flood_keeps_the_server_tree_small(tmp_path, project, data_root, started):
    """Before, the server and its children peaked at 1.7 GB on this flood, 3.4 GB on stderr."""
    server = spawn_server(tmp_path, project, data_root, started)
    server.initialize()
    tree = psutil.Process(server.pid)
    peak = [0]
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _tree_rss(tree))
            time.sleep(0.02)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    began = time.monotonic()
    result = server.call_tool(
        3,
        "ctx_execute",
        {"language": "shell", "code": "echo start; yes hello-fast-line", "timeout": 5000},
    )
    elapsed = time.monotonic() - began
    done.set()
    watcher.join()
    text = result["content"][0]["text"]
    assert elapsed < WITHIN_S
    assert "start" in text and "[… repeated " in text
    assert _size(text) <= ANSWER_MAX_BYTES
    assert peak[0] < 800 * 1024 * 1024, f"peak RSS {peak[0] / 2**20:.0f} MB"
