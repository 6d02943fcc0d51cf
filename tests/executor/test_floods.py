"""Floods are bounded: a run that prints without end costs a few megabytes of memory, is
answered with its first and last lines and a note of what was left out, and what gets
indexed is a bounded digest (repeats collapsed, head and tail kept) made within the call's
time. Real processes, a real knowledge base."""

import time
from pathlib import Path

import pytest

from ctxmode.executor import Deadline, ExecResult
from ctxmode.executor.capture import HEAD_BYTES, TAIL_BYTES, Capture, Extent
from ctxmode.executor.digest import digest
from ctxmode.executor.shaping import ANSWER_MAX_BYTES, shape
from ctxmode.store import ContentStore

# Generous: catches a hang or a pathological slowdown, not a performance bound.
WITHIN_S = 30.0
CAP = 20 * 1024 * 1024  # a flood that reaches the cap fast (the default is 100 MiB)
# What one stream may hold in memory: the window plus the line saying what was not kept.
WINDOW = HEAD_BYTES + TAIL_BYTES + 200


@pytest.fixture
def kb(tmp_path) -> Path:
    return tmp_path / "kb.db"


def view(result, kb: Path, **kw):
    return shape(
        result, label=f"execute:{result.language}", open_store=lambda: ContentStore(kb), **kw
    )


def indexed_text(kb: Path, label: str) -> str:
    with ContentStore(kb) as store:
        rows = store.connection.execute(
            "SELECT c.content FROM chunks c JOIN sources s ON s.id = c.source_id"
            " WHERE s.label = ? ORDER BY c.ord",
            (label,),
        )
        return "\n".join(row["content"] for row in rows)


# ------------------------------------------------------------------ capture


def test_a_stdout_flood_keeps_only_a_window_in_memory_and_counts_all(run):
    started = time.monotonic()
    result = run("shell", "echo start; yes hello-fast-line", cap_bytes=CAP, timeout_ms=20_000)
    assert time.monotonic() - started < WITHIN_S
    assert result.capped is True
    assert result.stdout.startswith("start\nhello-fast-line\n")
    assert len(result.stdout.encode()) <= WINDOW
    out = result.stdout_extent
    assert out.bytes == CAP  # every byte up to the cap was read and counted
    assert out.cut and out.omitted_bytes > CAP - WINDOW
    assert out.gap() in result.stdout
    assert result.printed_bytes >= CAP


def test_a_stderr_flood_is_windowed_the_same_way(run):
    result = run("shell", "echo start; yes err >&2", cap_bytes=CAP, timeout_ms=20_000)
    assert result.capped is True
    assert result.stdout == "start\n"
    assert result.stderr.startswith("err\nerr\n")
    assert len(result.stderr.encode()) <= WINDOW + 100  # and the cap note
    assert "output capped at" in result.stderr
    assert result.stderr_extent.cut


def test_output_past_the_window_streams_to_a_file_in_the_runs_temp_dir(run):
    """A run that prints more than the head kept in memory has all of it on disk, from
    its first byte; one that prints a few lines never touches the disk."""
    size = HEAD_BYTES + 12
    # The reader thread writes the file as the pipe drains: wait for it (up to 10 s, a hang
    # check on a loaded machine), then count.
    code = (
        f'head -c {size} /dev/zero | tr "\\0" x; echo; f="$TMPDIR/.stdout"\n'
        f'for i in $(seq 200); do [ "$(wc -c < "$f")" -ge {size + 1} ] && break; sleep 0.05; done\n'
        'wc -c < "$f"'
    )
    result = run("shell", code)
    assert result.stdout.splitlines()[-1] == str(size + 1)  # and the newline echoed
    small = run("shell", 'printf "twelve bytes"; sleep 0.3; ls -A "$TMPDIR"')
    assert ".stdout" not in small.stdout


def test_output_that_fits_the_window_is_whole(run):
    code = "for i in range(20000):\n    print(f'line {i} of a modest output')\n"
    result = run("python", code)
    assert result.stdout_extent == Extent(len(result.stdout.encode()), 20000)
    assert not result.stdout_extent.cut
    assert result.stdout.endswith("line 19999 of a modest output\n")


def test_the_window_cuts_on_line_boundaries_and_counts_what_it_left_out():
    capture = Capture(None, head=100, tail=50)
    for i in range(1000):
        capture.feed(f"row {i:04d}\n".encode())
    text, extent = capture.finish()
    head, tail = text.split(f"{extent.gap()}\n")
    assert head.startswith("row 0000\n") and head.endswith("\n")
    assert tail.endswith("row 0999\n")
    assert all(line.startswith("row ") for line in (head + tail).splitlines())
    assert extent.bytes == 9000 and extent.lines == 1000
    kept = len(head.splitlines()) + len(tail.splitlines())
    assert extent.omitted_lines == 1000 - kept
    assert extent.omitted_bytes == 9000 - len(head) - len(tail)


# ------------------------------------------------------------------ what is indexed


def test_repeated_lines_are_collapsed_in_what_is_indexed(run, kb):
    code = (
        "print('quokka census begins')\n"
        "for _ in range(300_000):\n"
        "    print('heartbeat ok')\n"
        "print('quokka census total 4242')\n"
    )
    result = run("python", code)
    assert result.stdout_extent.bytes > 3_000_000
    shaped = view(result, kb)
    assert shaped.indexed_label == "execute:python"
    indexed = indexed_text(kb, "execute:python")
    assert "heartbeat ok\n[… repeated " in indexed
    assert indexed.count("heartbeat ok") < 10
    assert shaped.indexed_bytes < 10_000
    assert "heartbeat ok\n[… repeated 300,000 times]" in shaped.text
    with ContentStore(kb) as store:
        hits = store.search("quokka census total", source="execute:python", exact_source=True)
    assert any("4242" in hit.snippet for hit in hits.hits)


def test_an_output_under_the_ceiling_is_indexed_whole(kb):
    stdout = "".join(f"processed record {i} status ok\n" for i in range(100_000))
    stdout += "final tally 100000 records\n"
    shaped = view(_made(stdout), kb)
    assert shaped.indexed_bytes == len(stdout)
    with ContentStore(kb) as store:
        hits = store.search("processed record 54321", source="execute:shell", exact_source=True)
    assert any("record 54321 status" in hit.snippet for hit in hits.hits)


def test_a_cut_capture_is_indexed_whole_from_the_run_s_file(run, kb):
    code = (
        "import random\n"
        "for i in range(120_000):\n"
        "    print(random.getrandbits(256))\n"
        "    if i == 60_000: print('zebra crossing failure in the middle')\n"
    )
    result = run("python", code)
    assert result.stdout_extent.cut and result.stdout_extent.bytes > 8_000_000
    shaped = view(result, kb)
    assert shaped.indexed_bytes >= result.stdout_extent.bytes
    assert "not indexed" not in shaped.text
    with ContentStore(kb) as store:
        hits = store.search("zebra crossing failure", source="execute:python", exact_source=True)
    assert any("zebra crossing failure in the middle" in hit.snippet for hit in hits.hits)
    assert result.spool is not None and result.spool.is_dir()
    spool = result.spool
    del result, shaped
    import gc

    gc.collect()
    assert not spool.exists()  # the run's files go with its result


def test_past_the_ceiling_the_answer_says_so_first(run, kb, monkeypatch):
    from ctxmode.executor import shaping

    monkeypatch.setattr(shaping, "INDEX_MAX_BYTES", 1024 * 1024)
    code = "import random\nfor i in range(120_000):\n    print(random.getrandbits(256))\n"
    shaped = view(run("python", code), kb)
    assert shaped.text.startswith("Note: the last ")
    assert "ctx_index(path: ...)" in shaped.text.split("\n")[0]
    assert shaped.indexed_bytes <= 1024 * 1024


def test_the_call_s_deadline_does_not_shrink_what_is_indexed(kb):
    lines = [_word(i) + " " + _word(i * 7919 % 104729) + " distinct" for i in range(150_000)]
    stdout = "\n".join(lines) + "\n"
    extent = Extent(len(stdout.encode()), len(lines))
    result = _made(stdout, out=extent, deadline=Deadline(time.monotonic() - 1))
    shaped = view(result, kb)
    assert shaped.indexed_bytes == len(stdout)


def _word(n: int) -> str:
    """A word of letters only (digits would make lines near-identical), one per `n`."""
    return "".join(chr(97 + (n // 26**k) % 26) for k in range(4))


def _made(stdout: str, *, stderr: str = "", exit_code: int = 0, **kw) -> ExecResult:
    return ExecResult("shell", "bash", stdout, stderr, exit_code, 5000.0, 1.0, **kw)


def test_digest_keeps_head_and_tail_and_counts_the_whole_stream():
    text = "".join(f"entry {i} {'x' * (i % 7)} {i * 31 % 97}\n" for i in range(5000))
    extent = Extent(len(text), 5000)
    found = digest(text, extent, 2000)
    assert found.text.startswith("entry 0 ")
    assert found.text.rstrip().endswith(text.splitlines()[-1])
    assert len(found.text) <= 2200
    assert f"{found.omitted_lines:,} lines omitted" in found.text
    assert digest("small\n", Extent(6, 1), 2000).text == "small\n"


# ------------------------------------------------------------------ the answer


@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_a_flood_answer_shows_the_head_and_says_what_was_cut(run, kb, stream):
    redirect = "" if stream == "stdout" else " >&2"
    started = time.monotonic()
    result = run("shell", f"echo start; yes hello-fast-line{redirect}", cap_bytes=CAP)
    shaped = view(result, kb)
    assert time.monotonic() - started < WITHIN_S
    assert shaped.is_error is True
    assert "stdout:\nstart\n" in shaped.text
    assert "hello-fast-line\n[… repeated " in shaped.text
    assert "output capped" in shaped.text
    assert len(shaped.text.encode()) < 8192


def test_a_timed_out_flood_answer_is_partial_and_bounded(run, kb):
    code = "echo start; while :; do seq 1 2000; done"
    result = run("shell", code, timeout_ms=2000)
    assert result.timed_out is True and not result.capped
    shaped = view(result, kb)
    assert shaped.is_error is False
    assert "Its first and last lines:\nstart\n1\n" in shaped.text
    assert "_(timed out after 2000ms — partial output: stdout " in shaped.text
    assert len(shaped.text.encode()) < 8192


@pytest.mark.parametrize(
    "how",
    [{}, {"timed_out": True}, {"exit_code": 2}, {"exit_code": 1, "timed_out": True}],
    ids=["success", "timeout", "failure", "timeout-no-stdout"],
)
def test_answers_never_exceed_the_answer_bound(kb, how):
    big = "".join(_word(i) + " " + "z" * 190 + "\n" for i in range(20_000))  # 4 MB
    stdout = "" if how == {"exit_code": 1, "timed_out": True} else big
    shaped = view(_made(stdout, stderr=big, **how), kb)
    assert len(shaped.text.encode()) <= ANSWER_MAX_BYTES


def test_a_capped_run_shows_no_exit_code_of_the_kill(run, kb):
    result = run("shell", "echo start; yes hello-fast-line", cap_bytes=CAP)
    assert result.capped is True
    text = view(result, kb).text
    assert "Exit code" not in text  # the CLI exits 124; 137 would contradict it
    assert "output capped — process killed" in text
