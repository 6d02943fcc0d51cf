"""gc deleting a project while other processes write to it: not one write fails or is lost.

A worker process does what `ctxmode index` and a hook do (open the knowledge base, index,
close; open the session database with a hook's timeout, add an event, close) once per
command, while this process runs gc on the same project, aged before each round so gc
means to delete it, with the two started at varying offsets. Every write that succeeded
must be found under the database's own name afterwards: in the old file when gc kept
the project (it was written while gc was deleting it), else in the new file the write
created after gc deleted the old one.
"""

import os
import random
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ctxmode import db as sqlitedb
from ctxmode import dbfiles, gc, paths
from ctxmode.session.db import SessionDB
from ctxmode.store import ContentStore

from .gcsupport import age, content_db, labels, session_db

ROUNDS = 80
SPREAD_S = 0.025  # gc and each writer start at random offsets within this
MB = 1 << 20
BUDGET = gc.Budget(30, 500 * MB)

# One command per line: the label to write. `ctxmode index` opens the knowledge base,
# indexes and closes it; a hook opens the session database with its short timeout, adds
# an event and closes it.
WORKER = """
import sys
from ctxmode.session.db import HOOK_BUSY_TIMEOUT_MS, SessionDB
from ctxmode.session.events import Event
from ctxmode.store import ContentStore

kind, path = sys.argv[1], sys.argv[2]
for line in sys.stdin:
    label = line.strip()
    try:
        if kind == "content":
            with ContentStore(path) as store:
                store.index_text(f"# {label}\\n\\nbody of {label}", label)
        else:
            with SessionDB(path, busy_timeout_ms=HOOK_BUSY_TIMEOUT_MS) as sdb:
                sdb.add_events("s1", [Event("file_read", label)], source_hook="PostToolUse")
        print("ok", flush=True)
    except Exception as exc:
        print("failed", type(exc).__name__, str(exc).replace(chr(10), " "), flush=True)
"""


@pytest.fixture(autouse=True)
def _elsewhere(tmp_path, monkeypatch):
    """gc's current project is the working directory's: keep it out of the data root."""
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)


def _labels(db: Path) -> set[str]:
    return labels(db) if db.exists() else set()


def _events(db: Path) -> set[str]:
    if not db.exists():
        return set()
    with SessionDB(db) as sdb:
        return {e.data for e in sdb.events("s1")}


def _worker(kind: str, db: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.Popen(
        [sys.executable, "-c", WORKER, kind, str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )


def _send(worker: subprocess.Popen, label: str) -> None:
    assert worker.stdin is not None
    worker.stdin.write(label + "\n")
    worker.stdin.flush()


def _reply(worker: subprocess.Popen, within: float = 60.0) -> list[str]:
    """The worker's answer to its last command (a generous bound: never a hang)."""
    assert worker.stdout is not None
    stdout = worker.stdout
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(stdout.readline()), daemon=True)
    reader.start()
    reader.join(within)
    assert got, f"the worker gave no answer within {within:g} s"
    return got[0].split(maxsplit=2)


def _collect(plan: gc.Plan, delay: float, reports: list[gc.Report]) -> None:
    """gc, started `delay` seconds late."""
    time.sleep(delay)
    reports.append(gc.apply(plan))


def test_no_write_racing_gc_is_lost_or_fails(tmp_path):
    root = paths.data_root()
    content, session = content_db(root, tmp_path / "p"), session_db(root, tmp_path / "p")
    for db in (content, session):
        age(db, 60)
    plan = gc.plan(root, BUDGET)
    assert [d.project.hash for d in plan.deletions] == [paths.project_hash(tmp_path / "p")]
    writers = {"content": _worker("content", content), "session": _worker("session", session)}
    rng = random.Random(7)
    failed: list[object] = []
    lost: list[object] = []
    outcomes = {"deleted": 0, "kept": 0}
    expected: dict[str, set[str]] = {"content": set(), "session": set()}
    found = {"content": lambda: _labels(content), "session": lambda: _events(session)}
    try:
        for n in range(ROUNDS):
            for db in (content, session):
                age(db, 60)  # gc means to delete the project again
            reports: list[gc.Report] = []
            collector = threading.Thread(
                target=_collect, args=(plan, rng.uniform(0, SPREAD_S), reports)
            )
            start = time.monotonic()
            collector.start()
            for kind, at in sorted(
                ((k, rng.uniform(0, SPREAD_S)) for k in writers), key=lambda item: item[1]
            ):
                time.sleep(max(0.0, start + at - time.monotonic()))
                _send(writers[kind], f"w{n}")
            replies = {kind: _reply(worker) for kind, worker in writers.items()}
            collector.join()
            [report] = reports
            if any(a.action == "delete-project" for a in report.actions):
                # gc deleted only what nobody wrote since it looked: the round's writes
                # went to new files
                outcomes["deleted"] += 1
                expected = {"content": set(), "session": set()}
            else:
                outcomes["kept"] += 1
            for kind, reply in replies.items():
                if reply[0] != "ok":
                    failed.append((n, kind, reply))
                else:
                    expected[kind].add(f"w{n}")
                now = found[kind]()
                if expected[kind] - now:
                    lost.append((n, kind, sorted(expected[kind] - now)))
                    expected[kind] &= now
    finally:
        for worker in writers.values():
            assert worker.stdin is not None and worker.stdout is not None
            worker.stdin.close()
            worker.wait(timeout=30)
            worker.stdout.close()
    leftovers = [p.name for p in root.rglob("*") if ".gc-" in p.name or ".corrupt-" in p.name]
    print(f"{ROUNDS} rounds: {outcomes}, failed {len(failed)}, lost {len(lost)}")
    assert not failed, failed
    assert not lost, lost
    assert not leftovers
    assert outcomes["deleted"] and outcomes["kept"]  # both ways were raced


# --------------------------------------------------------------------------- each gap


def _index_elsewhere(db: Path, label: str) -> None:
    """`ctxmode index` in another process: open, index, close, exit."""
    code = (
        "import sys\n"
        "from ctxmode.store import ContentStore\n"
        "with ContentStore(sys.argv[1]) as store:\n"
        "    store.index_text('# note', sys.argv[2])\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    subprocess.run([sys.executable, "-c", code, str(db), label], env=env, check=True)


def _notes(report: gc.Report, project: Path) -> list[str]:
    return [n.message for n in report.notes if n.target == paths.project_hash(project)]


def test_a_project_written_after_the_last_check_is_put_back(tmp_path, monkeypatch):
    """Written and closed again between gc's age check and its rename: no process holds
    it when gc looks, but its files changed, and the write stays."""
    root = paths.data_root()
    db = content_db(root, tmp_path / "p")
    age(db, 60)
    plan = gc.plan(root, BUDGET)
    real = dbfiles.last_written
    wrote: list[str] = []

    def then_written(path: Path) -> float:
        used = real(path)  # gc's last look at the project's age
        if not wrote:
            _index_elsewhere(db, "written-meanwhile")
            wrote.append("written-meanwhile")
        return used

    monkeypatch.setattr(dbfiles, "last_written", then_written)
    report = gc.apply(plan)

    assert wrote and labels(db) == {"written-meanwhile"}
    assert _notes(report, tmp_path / "p") == [
        "not deleted: it was written while it was being deleted"
    ]
    assert not [f for f in root.rglob("*") if ".gc-" in f.name]


def test_an_opener_waits_while_gc_has_the_database_aside(tmp_path, monkeypatch):
    """A process that opens the database while gc has it renamed aside waits for gc's
    verdict: a new, empty file under the name would strand the old one, which gc must
    put back here (another process opened it after the last check)."""
    root = paths.data_root()
    db = content_db(root, tmp_path / "p")
    _index_elsewhere(db, "old")
    age(db, 60)
    plan = gc.plan(root, BUDGET)
    writer = _worker("content", db)
    real = dbfiles.holders_of
    late: list[subprocess.Popen] = []
    try:

        def meanwhile(found):
            found = list(found)
            if len(late) == 1:  # gc has it aside: `ctxmode index` starts
                late.append(writer)
                _send(writer, "new")
                time.sleep(0.3)
            held = real(found)
            if not late:  # right after the last check: a process opens it, keeps it open
                late.append(_hold(db))
            return held

        monkeypatch.setattr(dbfiles, "holders_of", meanwhile)
        report = gc.apply(plan)
        assert _reply(writer) == ["ok"]
    finally:
        for proc in late[:1]:
            proc.kill()
            proc.wait()
        assert writer.stdin is not None and writer.stdout is not None
        writer.stdin.close()
        writer.wait(timeout=30)
        writer.stdout.close()

    assert len(late) == 2
    assert _notes(report, tmp_path / "p")[0].startswith("not deleted: process")
    assert labels(db) == {"old", "new"}
    assert not [f for f in root.rglob("*") if ".gc-" in f.name]


def _hold(db: Path) -> subprocess.Popen:
    """A process that keeps the database open."""
    code = (
        "import sqlite3, sys, time\n"
        "con = sqlite3.connect(sys.argv[1])\n"
        "con.execute('SELECT count(*) FROM sqlite_master').fetchall()\n"
        "print('ready', flush=True)\n"
        "time.sleep(120)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(db)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    proc.stdout.close()
    return proc


def test_an_open_that_loses_its_main_file_to_gc_is_retried(tmp_path, monkeypatch):
    """gc renames the database aside right after an opener opened the main file: SQLite
    then cannot open the WAL ("disk I/O error": it looks the main file up by name). The
    open is retried once gc has put the file back."""
    path = tmp_path / "k.db"
    with ContentStore(path) as store:
        store.index_text("# kept", "kept")
    trash = path.with_name(f"{path.name}{dbfiles.TRASH_MARK}{os.getpid()}")
    real = sqlitedb._sqlite_open
    opened: list[str] = []

    def open_then_renamed(target: str, *, uri: bool = False) -> sqlite3.Connection:
        con = real(target, uri=uri)
        if not opened:
            os.rename(path, trash)  # gc: aside, then back once it saw who holds it
            threading.Timer(0.2, os.rename, (trash, path)).start()
        opened.append(target)
        return con

    monkeypatch.setattr(sqlitedb, "_sqlite_open", open_then_renamed)
    with ContentStore(path) as store:
        assert [s.label for s in store.sources()] == ["kept"]
    assert len(opened) == 2 and not trash.exists()
