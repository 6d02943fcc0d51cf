"""Processes found by the marks in their environment, killed until none is left (Linux).

Every process a run starts carries, in its environment:

* ``CTXMODE_RUN_ID``: the run;
* ``CTXMODE_RUN_OWNER``: ``<pid>:<start>:<pidns>:<data root>``, the process that started
  the run (a server, or the CLI) and its data root. The start time, in clock ticks since
  boot, tells a reused pid from the owner; the pid namespace, which owners this /proc can
  judge at all.

`sweep` SIGKILLs every process whose /proc environ matches, then scans again until a pass
finds nothing: a process forked by one being killed is caught by the next pass. While a
process is inside execve its /proc environ reads empty for a moment: one that reads empty
and started after `since` is looked at again for up to `SETTLE_S` instead of passed over.
Each kill goes through a pidfd taken before the last look at the environment, so a pid
reused in between is never hit.

Standard library only, and nothing of ctxmode: the watchdog runs this file as a script
(``python -I -S reap.py OWNER``). It waits for EOF on its stdin, a pipe whose other end
only the owner holds, which comes when the owner exits however it exits (``kill -9``
included), then kills every process the owner's runs left, and exits.
"""

import errno
import os
import signal
import sys
import time
from collections.abc import Callable, Iterable

RUN_ID_VAR = "CTXMODE_RUN_ID"
OWNER_VAR = "CTXMODE_RUN_OWNER"

SETTLE_S = 0.25  # how long a process whose environment reads empty is looked at again
SWEEP_MAX_S = 5.0  # a sweep gives up after this long (processes stuck in the kernel)
_PAUSE_S = 0.005
_PF_KTHREAD = 0x00200000

Match = Callable[[bytes], bool]


def supported() -> bool:
    """Can processes be found by their environment here (Linux with /proc)?"""
    return sys.platform.startswith("linux") and os.path.exists("/proc/self/environ")


def _stat(pid: int | str) -> tuple[str, int, int, int] | None:
    """(state, ppid, flags, start ticks) of `pid`; None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    fields = data[data.rfind(b")") + 2 :].split()
    try:
        return fields[0].decode("ascii"), int(fields[1]), int(fields[6]), int(fields[19])
    except (IndexError, ValueError, UnicodeDecodeError):
        return None


def _pidns() -> str:
    try:
        return os.readlink("/proc/self/ns/pid").partition("[")[2].rstrip("]")
    except OSError:
        return ""


_identity: tuple[int, str | None] | None = None  # (pid, identity): read once per process


def identity() -> str | None:
    """This process as an owner: ``<pid>:<start>:<pidns>``; None without /proc."""
    global _identity
    pid = os.getpid()
    if _identity is None or _identity[0] != pid:  # a forked child is another owner
        stat = _stat("self")
        _identity = (pid, None if stat is None else f"{pid}:{stat[3]}:{_pidns()}")
    return _identity[1]


def owner_mark(root: str) -> str | None:
    """The ``CTXMODE_RUN_OWNER`` of this process's runs, `root` its data root."""
    me = identity()
    return None if me is None else f"{me}:{root}"


def _parts(mark: str) -> tuple[str, str]:
    """(the owner's identity, its data root) in an owner mark."""
    pid, start, ns, root = (mark.split(":", 3) + ["", "", "", ""])[:4]
    return f"{pid}:{start}:{ns}", root


def started(owner: str) -> int:
    """The start ticks in an owner's identity (0 when it has none)."""
    start = _parts(owner)[0].split(":")[1]
    return int(start) if start.isdigit() else 0


def owner_gone(owner: str) -> bool | None:
    """Has the owner of identity `owner` exited (None: not one this /proc can judge)?"""
    pid, start, ns = owner.split(":")
    if not (pid.isdigit() and start.isdigit()) or ns != _pidns():
        return None
    stat = _stat(pid)
    return stat is None or stat[0] in "ZX" or str(stat[3]) != start


def _value(env: bytes, name: str) -> str | None:
    """The value of `name` in a NUL-separated environment block (the first one set)."""
    data = b"\0" + env
    key = b"\0" + name.encode("ascii") + b"="
    start = data.find(key)
    if start < 0:
        return None
    start += len(key)
    end = data.find(b"\0", start)
    return data[start : end if end >= 0 else None].decode("utf-8", "surrogateescape")


def carrying(name: str, value: str) -> Match:
    """Matches environments where `name` is `value`."""
    return lambda env: _value(env, name) == value


def owned_by(owner: str) -> Match:
    """Matches runs of the owner of identity `owner`, whatever their data root."""

    def match(env: bytes) -> bool:
        mark = _value(env, OWNER_VAR)
        return mark is not None and _parts(mark)[0] == owner

    return match


def orphaned(root: str) -> Match:
    """Matches runs of data root `root` whose owner is gone (never this process's)."""
    me = identity()
    verdicts: dict[str, bool] = {}

    def match(env: bytes) -> bool:
        mark = _value(env, OWNER_VAR)
        if not mark:
            return False
        owner, owner_root = _parts(mark)
        if owner_root != root or owner == me:
            return False
        if owner not in verdicts:
            verdicts[owner] = owner_gone(owner) is True
        return verdicts[owner]

    return match


def _environ(pid: int) -> bytes | None:
    """The environment block of `pid`; None when it is gone, a kernel thread, or not
    ours to read."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            return handle.read()
    except OSError:
        return None


def _unsettled(pid: int, since: int) -> bool:
    """A live process that started at `since` or later: an empty environment may be an
    execve in progress."""
    stat = _stat(pid)
    return (
        stat is not None and stat[0] not in "ZX" and not stat[2] & _PF_KTHREAD and stat[3] >= since
    )


def matches(pid: int, match: Match, since: int = 0) -> bool:
    """Does `pid`'s environment match (looked at again for a while if it reads empty)?"""
    deadline = time.monotonic() + SETTLE_S
    while True:
        env = _environ(pid)
        if env:
            return match(env)
        if env is None or not _unsettled(pid, since) or time.monotonic() >= deadline:
            return False
        time.sleep(_PAUSE_S)


def _kill(pid: int, match: Match) -> bool:
    """SIGKILL `pid` if its environment still matches."""
    try:
        pidfd = os.pidfd_open(pid)
    except OSError as exc:
        if exc.errno not in (errno.ENOSYS, errno.EPERM):
            return False  # gone
        pidfd = -1  # no pidfds here: a plain kill
    try:
        env = _environ(pid)
        if not env or not match(env):
            return False
        if pidfd >= 0:
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGKILL)
        return True
    except OSError:
        return False
    finally:
        if pidfd >= 0:
            os.close(pidfd)


def _lineage() -> set[int]:
    """This process and its ancestors: never swept, whatever they carry."""
    pids = {os.getpid()}
    pid = os.getppid()
    while pid > 1 and pid not in pids:
        pids.add(pid)
        stat = _stat(pid)
        pid = stat[1] if stat is not None else 0
    return pids


def _scan(match: Match, spared: set[int], since: int) -> tuple[list[int], list[int]]:
    """(the pids that match, the pids whose environment reads empty for now)."""
    found: list[int] = []
    unsure: list[int] = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in spared:
            continue
        pid = int(name)
        env = _environ(pid)
        if env:
            if match(env):
                found.append(pid)
        elif env is not None and _unsettled(pid, since):
            unsure.append(pid)
    return found, unsure


def sweep(match: Match, *, since: int = 0, spare: Iterable[int] = ()) -> list[int]:
    """SIGKILL every process whose environment matches, scanning again until a pass finds
    none; return the pids killed. Never this process or its ancestors."""
    if not supported():
        return []
    spared = _lineage() | set(spare)
    killed: list[int] = []
    first_seen: dict[int, float] = {}
    deadline = time.monotonic() + SWEEP_MAX_S
    while True:
        found, unsure = _scan(match, spared, since)
        hit = [pid for pid in found if _kill(pid, match)]
        killed += hit
        spared.update(hit)
        now = time.monotonic()
        waiting = [pid for pid in unsure if now - first_seen.setdefault(pid, now) < SETTLE_S]
        if (not found and not waiting) or now >= deadline:
            return killed
        if not hit:
            time.sleep(_PAUSE_S)


def watch(owner: str, leftovers: Iterable[str] = ()) -> int:
    """The watchdog: wait for EOF on stdin (the owner is gone), then kill the runs of the
    owner of identity `owner` and remove the temp folders its runs left: each of
    `leftovers` is a path prefix (``/tmp/.ctx-mode-<pid>-``) of such folders."""
    try:
        while os.read(0, 4096):
            pass
    except OSError:
        pass
    sweep(owned_by(owner), since=started(owner))
    for prefix in leftovers:
        remove_prefixed(prefix)
    return 0


def remove_prefixed(prefix: str) -> int:
    """Remove the folders whose path starts with `prefix` (not following links); return
    how many."""
    import shutil

    folder, start = os.path.split(prefix)
    if not start:
        return 0
    try:
        names = [n for n in os.listdir(folder or ".") if n.startswith(start)]
    except OSError:
        return 0
    for name in names:
        path = os.path.join(folder, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
    return len(names)


if __name__ == "__main__":
    sys.exit(watch(sys.argv[1], sys.argv[2:]) if len(sys.argv) >= 2 else 2)
