"""Real damage for the healing tests: garbage bytes written into real SQLite files, whole
pages of a named table overwritten, and a disk of the test's own that fills up (a 1 MiB
tmpfs mounted under tmp_path: needs root on Linux, skipped cleanly where mounting is not
permitted). tests/server imports this module as ``healing.support``."""

import errno
import os
import random
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

CLI_S = 120  # generous for a busy machine; not a performance bound

GARBAGE_BYTES = 64 * 1024
WORDS = "alpha beta gamma delta epsilon zeta theta kappa lambda sigma omega".split()


def write_docs(folder: Path, count: int = 60, sections: int = 8) -> list[Path]:
    """`count` markdown files of `sections` sections each (a few hundred chunks in all);
    section j of file i holds the word ``marker<i>x<j>`` and no other file does."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(7)
    written = []
    for i in range(count):
        body = [
            f"## Section {j}\n\n"
            + " ".join(f"{rng.choice(WORDS)}{rng.randrange(1000)}" for _ in range(80))
            + f" marker{i}x{j}"
            for j in range(sections)
        ]
        path = folder / f"doc{i:02d}.md"
        path.write_text("\n\n".join(body) + "\n", encoding="utf-8")
        written.append(path)
    return written


def run_ctxmode(
    cwd: Path, *argv: str, env: dict[str, str] | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """The real ``ctxmode ARGV`` as a subprocess in `cwd`; never a traceback on stderr."""
    proc = subprocess.run(
        [sys.executable, "-m", "ctxmode", *argv],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="backslashreplace",
        timeout=CLI_S,
        check=False,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def garbage_in_the_middle(db: Path, size: int = GARBAGE_BYTES, meets: str = "marker3x2") -> bytes:
    """Overwrite `size` bytes near the middle of the file with random bytes, where a search
    for `meets` reads them and the list of sources stays readable; return the file as it is
    now (what the set-aside copy must hold). Which pages one search reads depends on the
    layout (paths and timestamps shift it), so the spot is found by trying page-aligned
    offsets outward from the middle on a copy, not assumed."""
    _no_pending_wal(db)
    original = db.read_bytes()
    garbage = random.Random(0).randbytes(size)
    page = _page_size(db)
    middle = len(original) // 2 // page
    last = (len(original) - size) // page
    for step in range(2 * max(middle, last - middle) + 1):
        start = middle + (step + 1) // 2 * (1 if step % 2 else -1)
        if not 1 <= start <= last:
            continue
        offset = start * page
        damaged = original[:offset] + garbage + original[offset + size :]
        if _search_meets_damage(db, damaged, meets):
            db.write_bytes(damaged)
            return damaged
    raise AssertionError(f"no spot in {db} where a search for {meets!r} meets the damage")


def _page_size(db: Path) -> int:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return int(con.execute("PRAGMA page_size").fetchone()[0])
    finally:
        con.close()


def _search_meets_damage(db: Path, damaged: bytes, term: str) -> bool:
    """On a copy holding `damaged`: the sources read whole, and the search fails."""
    probe = db.with_name(db.name + ".probe")
    probe.write_bytes(damaged)
    con = sqlite3.connect(probe)
    try:
        try:
            con.execute("SELECT * FROM sources").fetchall()
        except sqlite3.DatabaseError:
            return False
        try:
            ids = [
                r[0]
                for r in con.execute(
                    "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?", (term,)
                )
            ]
            con.execute(
                f"SELECT content FROM chunks WHERE id IN ({','.join('?' * len(ids))})", ids
            ).fetchall()
        except sqlite3.DatabaseError:
            return True
        return False
    finally:
        con.close()
        probe.unlink()


def garbage_over(db: Path, table: str) -> bytes:
    """Overwrite the root page of `table` (a b-tree page: every access to the table
    starts there) with bytes no page can hold; return the file as it is now."""
    _no_pending_wal(db)
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        page_size = int(con.execute("PRAGMA page_size").fetchone()[0])
        (root,) = con.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)
        ).fetchone()
    finally:
        con.close()
    with db.open("r+b") as handle:
        handle.seek((int(root) - 1) * page_size)
        handle.write(b"\xa5" * page_size)  # 0xa5 is no b-tree page type
    return db.read_bytes()


def is_damaged(db: Path) -> bool:
    """SQLite's own check of the whole file finds damage (or cannot read it at all)."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = con.execute("PRAGMA quick_check").fetchall()
    except sqlite3.DatabaseError:
        return True
    finally:
        con.close()
    return rows != [("ok",)]


def set_aside_copies(db: Path) -> list[Path]:
    return sorted(db.parent.glob(f"{db.name}.corrupt-*[0-9]"))


def _no_pending_wal(db: Path) -> None:
    wal = Path(f"{db}-wal")
    assert not wal.exists() or wal.stat().st_size == 0, "close the database first"


def fill(disk: Path) -> Path:
    """Write zeros to a new file until the disk is full; returns the file (delete it to
    make room again)."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while True:
            os.write(fd, bytes(4096))
    except OSError as exc:
        if exc.errno != errno.ENOSPC:
            raise
    finally:
        os.close(fd)
    return filler


SMALL_DISK = "1m"


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs of the test's own; unmounted afterwards."""
    mount, umount = shutil.which("mount"), shutil.which("umount")
    if not sys.platform.startswith("linux") or mount is None or umount is None:
        pytest.skip("a tmpfs disk needs Linux mount/umount")
    disk = tmp_path / "disk"
    disk.mkdir()
    proc = subprocess.run(
        [mount, "-t", "tmpfs", "-o", f"size={SMALL_DISK}", "tmpfs", str(disk)],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip() or proc.returncode}")
    try:
        yield disk
    finally:
        if subprocess.run([umount, str(disk)], capture_output=True, check=False).returncode:
            subprocess.run([umount, "-l", str(disk)], capture_output=True, check=False)
