"""No process outlives its server: runs in flight when the server is SIGKILLed die with
it (its watchdog), an escapee that ignores TERM and HUP dies with a normal shutdown, and
a new server kills what a dead server of its data root left when the watchdog died too.

Real `ctxmode serve` processes over stdio; a run is found by the run id in its
environment, read from /proc here."""

import os
import signal
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from ctxmode.executor import reap

from .support import EXIT_WITHIN_S, RawServer, alive, kill_all, spawn_server, wait_until

pytestmark = pytest.mark.skipif(not reap.supported(), reason="needs Linux /proc")

IN_FLIGHT = {
    "sleep": "sleep 300",
    "two sleeps": "sh -c 'sleep 300 & sleep 300'",
}
ESCAPE = "setsid -f sh -c 'trap \"\" TERM HUP; exec sleep 300'"


def carrying(run_ids: set[str]) -> list[int]:
    """Live processes whose environment holds one of `run_ids` as CTXMODE_RUN_ID."""
    wanted = {f"CTXMODE_RUN_ID={run_id}".encode() for run_id in run_ids}
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            env = Path(f"/proc/{name}/environ").read_bytes()
            state = Path(f"/proc/{name}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if state not in (b"Z", b"X") and wanted & set(env.split(b"\0")):
            found.append(int(name))
    return found


def none_left(run_ids: set[str], started: list[Any]) -> bool:
    """Whether the runs `run_ids` have no process left (within the generous bound);
    whatever is left is handed to teardown."""
    if wait_until(lambda: not carrying(run_ids)):
        return True
    started.extend(carrying(run_ids))
    return False


def start_runs(server: RawServer, where: Path) -> set[str]:
    """Send the IN_FLIGHT runs without waiting for answers; their run ids once started
    (written under `where`)."""
    where.mkdir()
    files = []
    for number, code in enumerate(IN_FLIGHT.values(), start=1):
        out = where / f"run{number}.id"
        files.append(out)
        server.request(
            number,
            "tools/call",
            {
                "name": "ctx_execute",
                "arguments": {
                    "language": "shell",
                    "code": f'echo "$CTXMODE_RUN_ID" > {out}.tmp; mv {out}.tmp {out}\n{code}',
                    "timeout": 600_000,
                },
            },
        )
    assert wait_until(lambda: all(f.is_file() for f in files))
    run_ids = {f.read_text(encoding="utf-8").strip() for f in files}
    # sleep, sh, and sh's two sleeps (the shell script itself may exec its last command)
    assert wait_until(lambda: len(carrying(run_ids)) >= 4)
    return run_ids


def watchdog_of(server: RawServer) -> int:
    [pid] = [
        child.pid
        for child in psutil.Process(server.pid).children()
        if reap.__file__ in child.cmdline()
    ]
    return pid


def orphan_runs(
    tmp_path: Path, project: Path, root: Path, started: list[Any], name: str
) -> set[str]:
    """Start runs in a server of data root `root`, then SIGKILL its watchdog and it: the
    runs are left running. Their run ids (written under tmp_path / `name`)."""
    server = spawn_server(tmp_path, project, root, started)
    server.initialize()
    run_ids = start_runs(server, tmp_path / name)
    watchdog = watchdog_of(server)
    kill_all([watchdog, server.pid])
    server.proc.wait(EXIT_WITHIN_S)
    assert wait_until(lambda: not alive(watchdog))
    started.extend(carrying(run_ids))
    return run_ids


def _workdirs(pid: int) -> list[Path]:
    """The temp folders of the runs of the server `pid` (named after their owner)."""
    import tempfile

    return [
        p
        for p in Path(tempfile.gettempdir()).glob(".ctx-mode-*")
        if p.name.startswith(f".ctx-mode-{pid}.")
    ]


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
def test_runs_in_flight_die_when_the_server_is_killed(tmp_path, project, data_root, started, how):
    """And their temp folders go with them: the server, killed, could not remove them."""
    server = spawn_server(tmp_path, project, data_root, started)
    server.initialize()
    run_ids = start_runs(server, tmp_path / "in-flight")
    assert _workdirs(server.pid)
    server.proc.send_signal(how)
    server.proc.wait(EXIT_WITHIN_S)
    assert none_left(run_ids, started)
    assert wait_until(lambda: not _workdirs(server.pid)), _workdirs(server.pid)


def test_an_escapee_ignoring_term_and_hup_dies_with_a_normal_shutdown(
    tmp_path, project, data_root, started
):
    left = []
    for attempt in range(10):
        server = spawn_server(tmp_path, project, data_root, started)
        server.initialize()
        # Half of them with the output redirected: the run then ends at once, while the
        # escapee may still be on its way to `sleep`.
        code = ESCAPE + (" >/dev/null 2>&1" if attempt % 2 else "")
        result = server.call_tool(
            1, "ctx_execute", {"language": "shell", "code": f'{code}\necho "$CTXMODE_RUN_ID"'}
        )
        run_id = result["content"][0]["text"].strip()
        server.close_stdin()
        assert server.proc.wait(EXIT_WITHIN_S) == 0
        if not none_left({run_id}, started):
            left.append(attempt)
    assert left == []


def test_a_new_server_reaps_what_a_dead_server_of_its_data_root_left(
    tmp_path, project, data_root, started
):
    # The first server and its watchdog both die by SIGKILL: its runs are left running.
    run_ids = orphan_runs(tmp_path, project, data_root, started, "first")
    time.sleep(0.5)  # not a bound: a moment in which nothing should happen
    assert len(carrying(run_ids)) >= 4, "the runs died without anyone killing them"

    # Runs of a live server of the same data root, and of a dead server of another one.
    live = spawn_server(tmp_path, project, data_root, started)
    live.initialize()
    live_runs = start_runs(live, tmp_path / "live")
    started.extend(carrying(live_runs))
    other_runs = orphan_runs(tmp_path, project, tmp_path / "other-data", started, "other")

    second = spawn_server(tmp_path, project, data_root, started)
    second.initialize()
    assert none_left(run_ids, started)
    second.close_stdin()
    assert second.proc.wait(EXIT_WITHIN_S) == 0
    assert len(carrying(live_runs)) >= 4, "a live server's runs were killed"
    assert len(carrying(other_runs)) >= 4, "another data root's runs were killed"
