"""Ending a run's processes: the group, the descendants, and whatever escaped both; and
ending them with their owner, however the owner ends.

A run's processes carry ``CTXMODE_RUN_ID`` in their environment, and the mark of the
process that started them and its data root (`ctxmode.executor.reap`). Killing a run
means: snapshot its descendants, SIGKILL its process group, then kill the snapshot and
sweep every process still carrying the run id, scanning again until none is left. On
Linux this process becomes the subreaper of what its runs start, so a process that
escaped with ``setsid`` and outlived its parent is re-parented here and found among our
own children when the run ends, without scanning every process.

Runs die with their owner: before its first run, the owner starts a watchdog
(`reap.watch`, a small process of its own session) that sees the owner exit, even by
``kill -9``, and kills whatever still carries the owner's mark. Should the watchdog die
too, the next server of the same data root kills runs whose owner is gone
(`reap_dead_owners`).
"""

import functools
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from ctxmode import paths
from ctxmode.executor import reap

RUN_ID_VAR = reap.RUN_ID_VAR

log = logging.getLogger("ctxmode.executor")


def _owner_mark() -> str | None:
    return reap.owner_mark(_real_root(os.fspath(paths.data_root())))


@functools.lru_cache(maxsize=4)
def _real_root(root: str) -> str:
    return os.path.realpath(root)


def owner_env() -> dict[str, str]:
    """The owner's mark for a run's environment: this process and its data root."""
    mark = _owner_mark()
    return {} if mark is None else {reap.OWNER_VAR: mark}


def _escaped(run_id: str, known: set[int]) -> list[int]:
    """Processes still carrying `run_id` in their environment (they left the group);
    where `reap` cannot scan /proc."""
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
_watchdog: "subprocess.Popen[bytes] | None" = None
_watching = ""  # the owner identity the watchdog watches (ours, unless we forked)
_watchdog_pipe = -1  # our end of the watchdog's stdin, never written, closed by our exit
_watchdog_lock = threading.Lock()


WORKDIR_PREFIX = ".ctx-mode-"
_owner_tags: dict[int, str] = {}


def workdir_prefix() -> str:
    """The name a run's temp folder starts with (`env.make_workdir`): its owner (pid and
    start time, so a reused pid is another owner) in it, so the owner's watchdog removes
    what a killed owner left (`ctxmode.executor.reap.watch`)."""
    pid = os.getpid()
    tag = _owner_tags.get(pid)
    if tag is None:
        me = reap.identity()
        tag = _owner_tags[pid] = me.replace(":", ".") if me else str(pid)
    return f"{WORKDIR_PREFIX}{tag}-"


def _workdir_prefixes() -> list[str]:
    """Where this process's runs put their temp folders (`env.make_workdir`), as path
    prefixes the watchdog removes once we are gone."""
    import tempfile

    folders = dict.fromkeys(
        os.path.realpath(d) for d in (tempfile.gettempdir(), "/tmp") if os.path.isdir(d)
    )
    return [os.path.join(folder, workdir_prefix()) for folder in folders]


def _start_watchdog() -> None:
    """Start the watchdog of this process's runs, unless one is watching (Linux)."""
    global _watchdog, _watching, _watchdog_pipe
    owner = reap.identity() if reap.supported() else None
    if owner is None or not sys.executable:
        return
    with _watchdog_lock:
        if _watching == owner and _watchdog is not None and _watchdog.poll() is None:
            return
        if _watchdog_pipe >= 0:  # a dead watchdog's, or our parent's after a fork
            os.close(_watchdog_pipe)
            _watchdog_pipe = -1
        read_end, write_end = os.pipe()
        try:
            _watchdog = subprocess.Popen(
                [sys.executable, "-I", "-S", reap.__file__, owner, *_workdir_prefixes()],
                stdin=read_end,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd="/",
                # No marks: no sweep of ours, or of an owner above us, kills it.
                env={"PATH": os.defpath},
                start_new_session=True,  # a signal to our process group spares it
            )
        except OSError as exc:
            os.close(write_end)
            log.warning("cannot start the watchdog of runs: %s", exc)
            return
        finally:
            os.close(read_end)
        _watchdog_pipe, _watching = write_end, owner


def adopt_orphans() -> bool:
    """Take charge of what this process's runs start, before each one starts.

    On Linux, become their subreaper: a process that escapes its run's group and outlives
    its parent is then re-parented to us instead of init, so `orphans` finds it without
    scanning every process. And keep a watchdog that kills them when we exit.
    """
    global _subreaper
    _start_watchdog()
    if _subreaper:
        reap_adopted()  # what earlier runs left to die since
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


def _children() -> list[int]:
    """Our children, every thread's (Linux)."""
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
    return pids


def orphans(run_id: str) -> list[int]:
    """Our adopted children that belong to the run `run_id` (needs `adopt_orphans`)."""
    if not _subreaper:
        return []
    match = reap.carrying(RUN_ID_VAR, run_id)
    return [pid for pid in _children() if reap.matches(pid, match)]


def reap_adopted() -> int:
    """Collect the exit status of dead processes runs left to us (as their subreaper), so
    they do not pile up as zombies (300 ``(sleep 100 &)``, a fork bomb: then every later
    run failed with EAGAIN). Only a dead child in another process group than ours that does
    not lead it: a run's leader is its Popen's to wait for, and our own subprocesses (git)
    share our group. Returns how many were collected."""
    if not _subreaper:
        return 0
    own = os.getpgrp()
    collected = 0
    for pid in _children():
        state, group = _state(pid)
        if state != "Z" or group in (own, pid):
            continue
        try:
            os.waitpid(pid, os.WNOHANG)
            collected += 1
        except ChildProcessError:
            continue
    return collected


def _state(pid: int) -> tuple[str, int]:
    """A process's state letter (``Z``: a zombie) and process group; ("", 0) when gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return fields[0], int(fields[2])
    except (OSError, IndexError, ValueError):  # it may be gone already
        return "", 0


def _adopted_in_group(pgid: int) -> list[int]:
    """Our adopted children in the process group `pgid`: members of a run whose parent
    exited first (bubblewrap's inner process outlives the one we started by a moment)."""
    if not _subreaper:
        return []
    return [pid for pid in _children() if pid != pgid and _state(pid)[1] == pgid]


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
    escaped the group but still carries the run id (swept until none is left). Best
    effort on Windows."""
    import psutil

    try:
        descendants = [p.pid for p in psutil.Process(pid).children(recursive=True)]
    except psutil.Error:
        descendants = []
    # Killed below with the group; waited for, not only looked at once when still dying.
    descendants += [p for p in _adopted_in_group(pid) if p not in descendants]
    if os.name == "posix":
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    targets = [pid, *descendants]
    if run_id is not None and not reap.supported():
        targets += _escaped(run_id, set(targets))
    for target in targets:
        try:
            psutil.Process(target).kill()
        except psutil.Error:  # noqa: PERF203 - each target may already be gone
            pass
    if run_id is not None and reap.supported():
        since = reap.started(reap.identity() or "")
        targets += reap.sweep(reap.carrying(RUN_ID_VAR, run_id), since=since)
    _reap([t for t in targets if t != pid])
    reap_adopted()  # the group's members killed above that were ours by adoption


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


def reap_dead_owners(root: Path) -> list[int]:
    """Kill what runs of the data root `root` left behind when their owner died and its
    watchdog did not outlive it (Linux); return the pids killed. Runs of a live owner, and
    of other data roots, are left alone."""
    if not reap.supported():
        return []
    return reap.sweep(reap.orphaned(os.path.realpath(root)))
