"""Several writers on one knowledge-base file: separate processes and separate connections."""

import os
import subprocess
import sys
from pathlib import Path

import ctxmode
from ctxmode.store import ContentStore

REPO = Path(ctxmode.__file__).resolve().parent.parent
LABELS_PER_WRITER = 40

WRITER = """
import sys
from ctxmode.store import ContentStore

path, tag, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
print("ready", flush=True)
sys.stdin.readline()  # start together: the parent releases every writer at once
with ContentStore(path) as store:
    for i in range(count):
        store.index_text(
            f"# {tag} {i}\\n\\nshared corpus line {tag}marker{i}\\n", f"{tag}-{i}"
        )
        if i % 10 == 0:
            store.search("shared corpus")
print("done", flush=True)
"""


def _spawn(db_path: Path, tag: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db_path), tag, str(LABELS_PER_WRITER)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
    )


def test_two_processes_writing_one_new_database_at_once_lose_nothing(tmp_path):
    db_path = tmp_path / "shared.db"
    writers = [_spawn(db_path, tag) for tag in ("alpha", "beta")]
    try:
        for proc in writers:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "ready"
        for proc in writers:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        outcomes = [proc.communicate(timeout=120) for proc in writers]
    finally:
        for proc in writers:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    for proc, (out, err) in zip(writers, outcomes, strict=True):
        assert proc.returncode == 0, err
        assert err == ""
        assert out.strip() == "done"
    with ContentStore(db_path) as store:
        labels = {s.label for s in store.sources()}
        expected = {f"{tag}-{i}" for tag in ("alpha", "beta") for i in range(LABELS_PER_WRITER)}
        assert labels == expected
        assert store.chunk_count() == 2 * LABELS_PER_WRITER
        for tag in ("alpha", "beta"):
            for i in (0, LABELS_PER_WRITER // 2, LABELS_PER_WRITER - 1):
                hits = store.search(f"{tag}marker{i}").hits
                assert [h.source for h in hits] == [f"{tag}-{i}"]


def test_two_connections_in_one_process_see_each_others_writes(tmp_path):
    db_path = tmp_path / "kb.db"
    with ContentStore(db_path) as first, ContentStore(db_path) as second:
        for i in range(10):
            first.index_text(f"# F{i}\n\nfirst writer heron{i}\n", f"first-{i}")
            second.index_text(f"# S{i}\n\nsecond writer egret{i}\n", f"second-{i}")
        assert [h.source for h in second.search("heron7").hits] == ["first-7"]
        assert [h.source for h in first.search("egret3").hits] == ["second-3"]
        second.index_text("# F0\n\nreplaced by the second writer\n", "first-0")
        assert first.search("heron0").hits == []
        assert len(first.sources()) == 20
