"""Runs die with their owner, and a sweep by environment leaves nothing behind (Linux).

Real processes throughout: each carries marks in its environment as a run's would, and
the test checks which of them `reap` kills and which it leaves alone.
"""

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

from ctxmode.executor import procs, reap

from .procs import alive, survivors

pytestmark = pytest.mark.skipif(not reap.supported(), reason="needs Linux /proc")

Spawn = Callable[..., int]


@pytest.fixture
def spawn() -> Iterator[Spawn]:
    """``spawn(argv, **env)``: start `argv` with extra environment; killed at teardown."""
    children: list[subprocess.Popen[bytes]] = []

    def _spawn(argv: list[str], **env: str) -> int:
        child = subprocess.Popen(
            argv, env={**os.environ, **env}, stdin=subprocess.DEVNULL, start_new_session=True
        )
        children.append(child)
        return child.pid

    yield _spawn
    for child in children:
        child.kill()
        child.wait()


def identity_of(pid: int) -> str:
    """`pid` as an owner: pid, start ticks, pid namespace (read here, not by `reap`)."""
    start = Path(f"/proc/{pid}/stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()[19]
    ns = os.readlink(f"/proc/{pid}/ns/pid").partition("[")[2].rstrip("]")
    return f"{pid}:{start}:{ns}"


def dead_owner() -> str:
    """The identity of a process that ran and is gone (as a killed server's would be)."""
    with subprocess.Popen(["sleep", "300"]) as gone:
        owner = identity_of(gone.pid)
        gone.kill()
    return owner


def marked(name: str, value: str) -> list[int]:
    """The pids, other than ours, whose environment has `name` set to `value` (psutil)."""
    found = []
    for proc in psutil.process_iter():
        try:
            if proc.pid != os.getpid() and proc.environ().get(name) == value:
                found.append(proc.pid)
        except psutil.Error:  # noqa: PERF203 - each may end or be another user's
            continue
    return found


def wait_for(predicate: Callable[[], bool], within: float = 20.0) -> None:
    deadline = time.monotonic() + within
    while not predicate():
        assert time.monotonic() < deadline, "never happened"
        time.sleep(0.01)


def test_a_sweep_kills_what_matches_and_nothing_else(spawn):
    run_id = uuid.uuid4().hex
    ours = [spawn(["sleep", "300"], CTXMODE_RUN_ID=run_id) for _ in range(3)]
    others = [
        spawn(["sleep", "300"], CTXMODE_RUN_ID=run_id + "0"),  # a longer id starting alike
        spawn(["sleep", "300"], CTXMODE_RUN_ID="x" + run_id),
        spawn(["sleep", "300"], NOT_CTXMODE_RUN_ID=run_id),
    ]
    killed = reap.sweep(reap.carrying(reap.RUN_ID_VAR, run_id))
    assert sorted(killed) == sorted(ours)
    assert survivors(ours) == []
    assert all(alive(pid) for pid in others)


def test_a_sweep_catches_what_is_forked_while_it_scans(spawn, tmp_path):
    # A chain of 200 shells, each forking the next and then becoming `sleep`: the sweep
    # starts while the chain still grows, so kills land while children are being forked
    # and exec'd.
    run_id = uuid.uuid4().hex
    script = tmp_path / "chain.sh"
    script.write_text(
        f'[ "$1" -gt 0 ] && sh {script} $(($1 - 1)) &\nexec sleep 300\n', encoding="utf-8"
    )
    spawn(["sh", str(script), "200"], CTXMODE_RUN_ID=run_id)
    try:
        wait_for(lambda: len(marked(reap.RUN_ID_VAR, run_id)) >= 10)
        assert reap.sweep(reap.carrying(reap.RUN_ID_VAR, run_id))
        assert survivors(marked(reap.RUN_ID_VAR, run_id), within=2.0) == []
    finally:
        for pid in marked(reap.RUN_ID_VAR, run_id):
            os.kill(pid, 9)


def test_a_new_server_reaps_only_runs_of_dead_owners_of_its_data_root(spawn, tmp_path):
    root = os.path.realpath(tmp_path / "data")
    other_root = os.path.realpath(tmp_path / "other")
    live_owner = identity_of(spawn(["sleep", "300"]))  # a server still running
    dead = dead_owner()
    mark = reap.OWNER_VAR
    left = [spawn(["sleep", "300"], **{mark: f"{dead}:{root}"}) for _ in range(2)]
    kept = [
        spawn(["sleep", "300"], **{mark: f"{live_owner}:{root}"}),  # a live owner's
        spawn(["sleep", "300"], **{mark: f"{reap.identity()}:{root}"}),  # our own
        spawn(["sleep", "300"], **{mark: f"{dead}:{other_root}"}),  # another data root's
        spawn(["sleep", "300"], **{mark: f"{dead}:{root}/sub"}),
        spawn(["sleep", "300"], **{mark: f"{dead.rsplit(':', 1)[0]}:1:{root}"}),  # other pidns
    ]
    killed = procs.reap_dead_owners(Path(root))
    assert sorted(killed) == sorted(left)
    assert survivors(left) == []
    assert all(alive(pid) for pid in kept)


def test_an_owner_whose_pid_was_reused_is_dead():
    me = reap.identity()
    assert me is not None
    pid, start, ns = me.split(":")
    assert reap.owner_gone(me) is False
    assert reap.owner_gone(f"{pid}:{int(start) + 1}:{ns}") is True
    assert reap.owner_gone(dead_owner()) is True
    assert reap.owner_gone(f"{pid}:{start}:1") is None  # another pid namespace: unknown


def test_the_watchdog_kills_the_runs_of_its_owner_when_the_owner_dies(tmp_path):
    # An owner that takes charge of its runs (which starts its watchdog), starts two with
    # its mark, one escaping into a session of its own, and is then SIGKILLed.
    owner_code = (
        "import os, subprocess, sys\n"
        "from ctxmode.executor import procs\n"
        "procs.adopt_orphans()\n"
        "env = {**os.environ, **procs.owner_env()}\n"
        "a = subprocess.Popen(['sleep', '300'], env=env)\n"
        "b = subprocess.Popen(['sleep', '300'], env=env, start_new_session=True)\n"
        "print(a.pid, b.pid, flush=True)\n"
        "sys.stdin.read()\n"
    )
    owner = subprocess.Popen(
        [sys.executable, "-c", owner_code],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**os.environ, "CTXMODE_DIR": str(tmp_path / "data")},
    )
    assert owner.stdout is not None and owner.stdin is not None
    runs = [int(pid) for pid in owner.stdout.readline().split()]
    try:
        [watchdog] = [
            child.pid
            for child in psutil.Process(owner.pid).children()
            if reap.__file__ in child.cmdline()
        ]
        assert all(alive(pid) for pid in [*runs, watchdog])
        assert os.getsid(watchdog) == watchdog  # out of the owner's session and group
    finally:
        owner.kill()
        owner.wait()
        owner.stdin.close()
        owner.stdout.close()
    try:
        assert survivors(runs) == []
        assert survivors([watchdog]) == [], "the watchdog outlived its work"
    finally:
        for pid in runs:
            if alive(pid):
                os.kill(pid, 9)


def test_a_setsid_escapee_caught_mid_exec_at_the_end_of_its_run_dies(run, monkeypatch):
    # The script returns at once; the escapee is still between setsid and the exec of
    # sleep, when its /proc environ reads empty for a moment.
    tag = uuid.uuid4().hex
    monkeypatch.setenv("REAP_TEST_TAG", tag)
    code = "setsid -f sh -c 'trap \"\" TERM HUP; exec sleep 300' >/dev/null 2>&1"
    left = []
    for _ in range(30):
        result = run("shell", code, timeout_ms=20_000)
        assert result.exit_code == 0 and not result.timed_out
        left += survivors(marked("REAP_TEST_TAG", tag), within=1.0)
    for pid in left:
        os.kill(pid, 9)
    assert left == []
