"""Ending a run's processes: the group, the descendants, and whatever escaped both.

A run's processes carry ``CTXMODE_RUN_ID`` in their environment. Killing a run means:
snapshot its descendants, SIGKILL its process group, then kill the snapshot and every
process still carrying the run id. On Linux this process becomes the subreaper of what its
runs start, so a process that escaped with ``setsid`` and outlived its parent is
re-parented here and found among our own children, without scanning every process.
"""

import os
import signal
import sys
import time

RUN_ID_VAR = "CTXMODE_RUN_ID"


def _carries(pid: int, marker: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            return marker in handle.read()
    except OSError:
        return False


def _escaped(run_id: str, known: set[int]) -> list[int]:
    """Processes still carrying `run_id` in their environment (they left the group)."""
    import psutil

    found = []
    me = os.getpid()
    for proc in psutil.process_iter(["pid"]):
        pid = proc.info["pid"]
        if pid in known or pid == me:
            continue
        try:
            if proc.environ().get(RUN_ID_VAR) == run_id:
                found.append(pid)
        except (psutil.Error, OSError):
            continue
    return found


_subreaper = False


def adopt_orphans() -> bool:
    """Make this process the subreaper of what its runs start (Linux).

    A process that escapes its run's group and outlives its parent is then re-parented to
    us instead of init, so `orphans` finds it without scanning every process.
    """
    global _subreaper
    if _subreaper or not sys.platform.startswith("linux"):
        return _subreaper
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_child_subreaper = 36
        _subreaper = libc.prctl(pr_set_child_subreaper, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        _subreaper = False
    return _subreaper


def orphans(run_id: str) -> list[int]:
    """Our adopted children that belong to the run `run_id` (needs `adopt_orphans`)."""
    if not _subreaper:
        return []
    marker = f"{RUN_ID_VAR}={run_id}\0".encode()
    pids: list[int] = []
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return []
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/children", encoding="ascii") as handle:
                pids.extend(int(p) for p in handle.read().split())
        except (OSError, ValueError):  # noqa: PERF203 - a thread may end meanwhile
            continue
    return [pid for pid in pids if _carries(pid, marker)]


def _reap(pids: list[int]) -> None:
    """Collect the exit status of killed processes that are our children (adopted ones)."""
    for pid in pids:
        for _ in range(100):
            try:
                done, _status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                break
            if done:
                break
            time.sleep(0.005)


def kill_tree(pid: int, run_id: str | None) -> None:
    """SIGKILL a run: its descendants (snapshot first), its process group, and anything that
    escaped the group but still carries the run id. Best effort on Windows."""
    import psutil

    try:
        descendants = [p.pid for p in psutil.Process(pid).children(recursive=True)]
    except psutil.Error:
        descendants = []
    if os.name == "posix":
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    targets = [pid, *descendants]
    if run_id is not None:
        targets += _escaped(run_id, set(targets))
    for target in targets:
        try:
            psutil.Process(target).kill()
        except psutil.Error:  # noqa: PERF203 - each target may already be gone
            pass
    _reap([t for t in targets if t != pid])


def _group_has_members(pgid: int) -> bool:
    if os.name != "posix":
        return False
    try:
        os.killpg(pgid, 0)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def leftovers(pid: int, run_id: str) -> bool:
    """Did the finished run leave processes behind (in its group, or adopted by us)?"""
    return _group_has_members(pid) or bool(run_id and orphans(run_id))
