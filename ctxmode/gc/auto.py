"""gc without anyone running it: a server applies the budget at most once a day.

A data root only stays within its budget if something enforces it, and nobody runs
maintenance commands by hand. So each ``ctxmode serve`` checks, a while after it starts,
whether a day has passed since the last collection (``<root>/gc.last``) and if so runs the
same plan and apply as ``ctxmode gc``, with the project it serves as the current one
(never deleted whole). Everything gc protects stays protected: live databases, the
current project, unreadable files. ``CTXMODE_GC=off`` turns it off.

Several servers start together (one per agent window): ``<root>/gc.lock``, created
exclusively with the owner's pid inside, lets only one of them collect. A lock whose
process is gone, or older than an hour (a collection takes seconds), is stale and
replaced.
"""

import logging
import os
import time
from pathlib import Path

from ctxmode import settings
from ctxmode.gc.limits import DAY

log = logging.getLogger("ctxmode.gc")

STAMP = "gc.last"
LOCK = "gc.lock"
LOCK_STALE_S = 3600.0


def enabled() -> bool:
    return settings.gc_enabled()


def due(root: Path, now: float | None = None) -> bool:
    """True when no collection ran in the last day."""
    now = time.time() if now is None else now
    try:
        return now - (root / STAMP).stat().st_mtime >= DAY
    except OSError:
        return True


def _lock_is_stale(lock: Path, now: float) -> bool:
    from ctxmode.readiness import pid_alive

    try:
        if now - lock.stat().st_mtime > LOCK_STALE_S:
            return True
        text = lock.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        return True
    except (OSError, ValueError):
        return False
    # An empty lock is being written right now; only its age can make it stale.
    return text.isdigit() and not pid_alive(int(text))


def claim(root: Path) -> bool:
    """Take ``<root>/gc.lock`` for this process; False when another process holds it.

    A stale lock is moved aside under a name of this process's own, so of two processes
    replacing it at once only one succeeds; if what was moved is no longer the stale lock
    (another process had replaced it in between), it is put back and the claim fails.
    """
    lock = root / LOCK
    for _ in range(2):
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            now = time.time()
            try:
                seen = lock.stat()
            except FileNotFoundError:
                continue
            if not _lock_is_stale(lock, now):
                return False
            aside = root / f"{LOCK}.stale-{os.getpid()}"
            try:
                os.replace(lock, aside)
            except FileNotFoundError:
                continue
            moved = aside.stat()
            if (moved.st_ino, moved.st_mtime_ns) != (seen.st_ino, seen.st_mtime_ns):
                if not lock.exists():
                    os.replace(aside, lock)
                return False
            aside.unlink(missing_ok=True)
            continue
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(f"{os.getpid()}\n")
        return True
    return False


def release(root: Path) -> None:
    """Remove the lock if this process holds it."""
    lock = root / LOCK
    try:
        if lock.read_text(encoding="ascii").strip() == str(os.getpid()):
            lock.unlink()
    except (OSError, ValueError):
        pass


def run_if_due(root: Path, project_dir: Path | None) -> bool:
    """Collect once if due and no other process is collecting; return whether it ran.
    Never raises."""
    if not enabled() or not due(root):
        return False
    try:
        root.mkdir(parents=True, exist_ok=True)
        if not claim(root):
            return False
    except OSError:
        log.exception("automatic gc: cannot take %s", root / LOCK)
        return False
    try:
        if not due(root):  # another process collected between the check and the claim
            return False
        (root / STAMP).write_text(time.strftime("%Y-%m-%dT%H:%M:%SZ\n", time.gmtime()))
        from ctxmode.gc import apply, plan

        report = apply(plan(root, current=project_dir))
    except Exception:  # housekeeping must never take a server down
        log.exception("automatic gc failed")
        return False
    finally:
        release(root)
    log.info(
        "automatic gc: %d actions, freed %d bytes, %d bytes stored (budget %d)",
        len(report.actions),
        report.freed,
        report.total_after,
        report.budget.max_bytes,
    )
    return True
