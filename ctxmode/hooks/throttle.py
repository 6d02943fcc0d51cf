"""How often a nudge is shown: once per session per kind, or every N calls.

Each hook call is its own process, so the state is a few tiny files under
``<data root>/guidance/<key>/``, where the key is the session id (``s-…``), else the
project (``p-<project hash>``) for hosts that send no session id (Kiro), else the parent
process (``ppid-…``):

* ``<kind>``: created with ``O_CREAT | O_EXCL``; whoever creates it shows the nudge, so
  two concurrent hook processes never both show it;
* ``<kind>.count``: one byte appended per call (``O_APPEND`` is atomic), so the offset
  after the append is the call's number, without a read-modify-write race.

All of it is safe to lose: a deleted directory means the nudges are shown once more.
Directories untouched for `STALE_SECONDS` are removed when a new session's directory is
created, so the folder does not grow without bound.
"""

import os
import re
import time
from pathlib import Path

STALE_SECONDS = 7 * 24 * 3600
_SAFE_ID = re.compile(r"[A-Za-z0-9._-]{1,80}")


def session_key(session_id: str, project_dir: Path | str | None) -> str:
    """The directory name for one session's markers."""
    if session_id:
        if _SAFE_ID.fullmatch(session_id) and session_id not in (".", ".."):
            return f"s-{session_id}"
        from ctxmode.digest import sha256_hex

        return "s-" + sha256_hex(session_id.encode("utf-8"))[:32]
    if project_dir:
        from ctxmode.paths import project_hash

        return f"p-{project_hash(project_dir)}"
    return f"ppid-{os.getppid()}"


class Throttle:
    """The nudge markers of one session under ``root`` (the data root)."""

    def __init__(self, root: Path, key: str) -> None:
        self.base = root / "guidance"
        self.dir = self.base / key

    def _ensure_dir(self) -> None:
        try:
            os.mkdir(self.dir)
        except FileExistsError:
            return
        except FileNotFoundError:
            self.base.mkdir(parents=True, exist_ok=True)
            try:
                os.mkdir(self.dir)
            except FileExistsError:
                return
        self._prune()

    def _prune(self) -> None:
        """Drop other sessions' directories that nobody touched for a week."""
        cutoff = time.time() - STALE_SECONDS
        try:
            with os.scandir(self.base) as entries:
                stale = [
                    e.path
                    for e in entries
                    if e.is_dir(follow_symlinks=False) and e.stat().st_mtime < cutoff
                ]
        except OSError:
            return
        if stale:
            import shutil

            for path in stale:
                shutil.rmtree(path, ignore_errors=True)

    def _open(self, path: Path, flags: int) -> int:
        """``os.open`` that creates this session's directory on first use.

        Raises:
            OSError: the file cannot be opened (``FileExistsError`` with ``O_EXCL``).
        """
        try:
            return os.open(path, flags, 0o644)
        except FileNotFoundError:
            self._ensure_dir()
            return os.open(path, flags, 0o644)

    def once(self, kind: str) -> bool:
        """True the first time ``kind`` is asked for in this session, else False.

        False as well when the marker cannot be written: a nudge shown on every call
        because of a read-only disk would be worse than none.
        """
        try:
            os.close(self._open(self.dir / kind, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except OSError:  # FileExistsError: shown before
            return False
        return True

    def every(self, kind: str, period: int) -> bool:
        """True on calls 1, period + 1, 2·period + 1, … of ``kind`` in this session.

        True when the counter cannot be kept: a lost counter must not silence the nudge.
        """
        try:
            fd = self._open(self.dir / f"{kind}.count", os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        except OSError:
            return True
        try:
            os.write(fd, b".")
            # With O_APPEND the offset after the write is where *this* byte ended, even
            # when other processes append at the same time.
            count = os.lseek(fd, 0, os.SEEK_CUR)
        except OSError:
            return True
        finally:
            os.close(fd)
        return (count - 1) % max(1, period) == 0
