"""Readiness markers and the one pid-alive check hooks, doctor and gc share."""

import errno
import json
import os
import subprocess
import sys

import pytest

from ctxmode import readiness
from ctxmode.paths import data_root


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.fixture
def sleeper():
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield proc.pid
    proc.kill()
    proc.wait()


def test_pid_alive_tells_running_from_gone_processes(sleeper):
    assert readiness.pid_alive(os.getpid())
    assert readiness.pid_alive(sleeper)
    assert not readiness.pid_alive(_dead_pid())


@pytest.mark.parametrize("pid", [0, -1])
def test_pid_alive_never_addresses_a_process_group(pid):
    assert not readiness.pid_alive(pid)


@pytest.mark.parametrize(
    ("error", "alive"),
    [
        (ProcessLookupError(errno.ESRCH, "No such process"), False),
        (PermissionError(errno.EPERM, "Operation not permitted"), True),
        # What os.kill raises on Windows: unknown is not dead (a live server's project
        # must stay protected), and it is no traceback either.
        (OSError(errno.EINVAL, "The parameter is incorrect"), True),
    ],
)
def test_pid_alive_on_posix_reads_kill_errors_safely(monkeypatch, error, alive):
    def kill(pid: int, sig: int) -> None:
        assert sig == 0, "pid_alive must never send a real signal"
        raise error

    monkeypatch.setattr(readiness, "_POSIX", True)
    monkeypatch.setattr(os, "kill", kill)
    assert readiness.pid_alive(12345) is alive


def test_pid_alive_without_posix_kill_asks_psutil_and_sends_nothing(sleeper, monkeypatch):
    import psutil

    asked: list[int] = []

    def pid_exists(pid: int) -> bool:
        asked.append(pid)
        return pid == sleeper

    def kill(pid: int, sig: int) -> None:  # on Windows, kill(pid, 0) is CTRL_C_EVENT
        raise AssertionError("os.kill called where it is not a probe")

    with monkeypatch.context() as patch:  # undone before `sleeper` kills its process
        patch.setattr(readiness, "_POSIX", False)
        patch.setattr(os, "kill", kill)
        patch.setattr(psutil, "pid_exists", pid_exists)
        assert readiness.pid_alive(sleeper)
        assert not readiness.pid_alive(sleeper + 1)
    assert asked == [sleeper, sleeper + 1]


def test_the_hook_path_check_does_not_load_psutil_on_posix():
    if os.name != "posix":
        pytest.skip("psutil is the check elsewhere")
    code = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from ctxmode import readiness\n"
        "assert readiness.pid_alive(os.getpid())\n"
        "readiness.live_servers(Path(sys.argv[1]))\n"
        "print('psutil' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(data_root())], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"


def _marker(pid: int, body: object) -> None:
    folder = readiness.markers_dir(data_root())
    folder.mkdir(parents=True, exist_ok=True)
    text = body if isinstance(body, str) else json.dumps(body)
    (folder / f"{pid}.json").write_text(text, encoding="utf-8")


def test_read_markers_reports_live_and_dead_markers_and_removes_nothing(tmp_path, sleeper):
    root = data_root()
    dead = _dead_pid()
    _marker(sleeper, {"pid": sleeper, "project_dir": str(tmp_path / "a")})
    _marker(dead, {"pid": dead, "project_dir": str(tmp_path / "b")})
    _marker(777777, "{not json")
    folder = readiness.markers_dir(root)
    (folder / "notes.json").write_text("{}", encoding="utf-8")  # not a marker

    found = {m.pid: m for m in readiness.read_markers(root)}

    assert set(found) == {sleeper, dead, 777777}
    assert found[sleeper].live and found[sleeper].project_dir == str(tmp_path / "a")
    assert not found[dead].live and found[dead].project_dir == str(tmp_path / "b")
    assert found[777777].project_dir is None
    assert found[dead].path == folder / f"{dead}.json"
    assert len(list(folder.iterdir())) == 4  # reading changes nothing

    assert readiness.live_servers(root) == [sleeper]
    assert not (folder / f"{dead}.json").exists()  # live_servers cleans up


def test_live_servers_survives_a_kill_that_fails_oddly(monkeypatch):
    _marker(424242, {"pid": 424242, "project_dir": "x"})

    def kill(pid: int, sig: int) -> None:
        raise OSError(errno.EINVAL, "The parameter is incorrect")

    monkeypatch.setattr(readiness, "_POSIX", True)
    monkeypatch.setattr(os, "kill", kill)
    assert readiness.live_servers(data_root()) == [424242]


def test_read_markers_of_a_missing_folder_is_empty(tmp_path):
    assert readiness.read_markers(tmp_path / "nowhere") == []


def test_a_starting_server_counts_as_live_and_a_dead_one_is_stale(tmp_path):
    root = data_root()
    readiness.write_marker(root, tmp_path, readiness.STARTING)
    dead = _dead_pid()
    _marker(dead, {"pid": dead, "project_dir": str(tmp_path), "state": "starting"})

    found = {m.pid: m for m in readiness.read_markers(root)}
    assert (found[os.getpid()].state, found[os.getpid()].live) == ("starting", True)
    assert (found[dead].state, found[dead].live) == ("starting", False)
    assert readiness.live_servers(root) == [os.getpid()]


def test_a_marker_without_state_reads_as_ready(tmp_path):
    _marker(os.getpid(), {"pid": os.getpid(), "project_dir": str(tmp_path)})
    [found] = readiness.read_markers(data_root())
    assert found.state == readiness.READY


def test_a_marker_that_cannot_be_renamed_into_place_leaves_no_temporary_file(tmp_path):
    root = data_root()
    target = readiness.markers_dir(root) / f"{os.getpid()}.json"
    (target / "occupied").mkdir(parents=True)  # a non-empty directory where the marker goes

    with pytest.raises(OSError):
        readiness.write_marker(root, tmp_path, readiness.STARTING)
    assert sorted(p.name for p in readiness.markers_dir(root).iterdir()) == [target.name]


def test_a_marker_write_that_fills_the_disk_leaves_no_temporary_file(tmp_path, monkeypatch):
    def full_disk(path, text, encoding=None, errors=None, newline=None):
        with open(path, "w", encoding=encoding) as handle:
            handle.write(text[:3])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(readiness.Path, "write_text", full_disk)
    with pytest.raises(OSError, match="No space left"):
        readiness.write_marker(data_root(), tmp_path, readiness.STARTING)
    assert list(readiness.markers_dir(data_root()).iterdir()) == []
