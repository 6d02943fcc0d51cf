"""The page as a real browser renders it: headless Chromium, skipped when none is installed
or the one found cannot run (a stub that only says "install the snap", a broken install).

No browser is a project or CI dependency; install one locally (``apt-get install
chromium``) to run these. Each run is its own process group, killed as a whole at the end;
on Linux the helpers that leave the group (Chromium's crashpad handler starts a session of
its own) are adopted, killed and reaped too, so none outlives the test or stays a zombie.
"""

import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import psutil
import pytest

from ctxmode.insight import data, page
from ctxmode.insight.publish import write_page

from .support import CHARTS, chart, fill

pytestmark = pytest.mark.skipif(
    sys.platform == "win32", reason="process groups (start_new_session, killpg) are POSIX"
)

BROWSERS = (
    "chromium",
    "chromium-browser",
    "google-chrome",
    "headless_shell",
    "chrome-headless-shell",
)
TIMEOUT_S = 120
VERSION_TIMEOUT_S = 30
REAP_S = 10
# No crash reporting, no first-run work: fewer helpers. Some builds (Debian's) start the
# crashpad handler all the same; `_kill_group` ends it.
QUIET_FLAGS = (
    "--disable-crash-reporter",
    "--disable-breakpad",
    "--no-first-run",
)


class Finished(NamedTuple):
    returncode: int | None  # None: killed at the deadline
    stdout: str
    stderr: str


PR_SET_CHILD_SUBREAPER, PR_GET_CHILD_SUBREAPER = 36, 37


@contextlib.contextmanager
def _adopting_orphans() -> Iterator[None]:
    """On Linux, make this process the reaper of its orphaned descendants for a while.

    Chromium's helpers detach from it (crashpad double-forks): killed, they would become
    zombies of PID 1, which in a container may never reap them. Adopted, they are our
    children and `_kill_group` reaps them. Elsewhere this does nothing.
    """
    if not sys.platform.startswith("linux"):
        yield
        return
    libc = ctypes.CDLL(None, use_errno=True)
    before = ctypes.c_int(0)
    libc.prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(before), 0, 0, 0)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    try:
        yield
    finally:
        libc.prctl(PR_SET_CHILD_SUBREAPER, before.value, 0, 0, 0)


def _pgid(proc: psutil.Process) -> int | None:
    try:
        return os.getpgid(proc.pid)
    except OSError:
        return None  # gone


def _group(pgid: int) -> list[psutil.Process]:
    """The processes of the process group, zombies included."""
    return [proc for proc in psutil.process_iter() if _pgid(proc) == pgid]


def _children() -> set[int]:
    return {child.pid for child in psutil.Process().children()}


def _still_there(proc: psutil.Process) -> bool:
    """Kill the process, reap it if it is our child; whether it is not gone yet."""
    try:
        if proc.status() != psutil.STATUS_ZOMBIE:
            proc.kill()
        if proc.ppid() == os.getpid():
            return os.waitpid(proc.pid, os.WNOHANG)[0] == 0
        # A zombie of another parent is dead; reaping it is not ours to do.
        return proc.status() != psutil.STATUS_ZOMBIE
    except (ChildProcessError, psutil.Error):
        return False  # gone already


def _settle(pgid: int, children_before: set[int]) -> list[int]:
    """Kill what is left of a run (its process group, and the orphans adopted during it:
    helpers that left the group with ``setsid``, as crashpad does) and reap those that are
    our children; the pids not gone yet."""
    strays = {proc.pid: proc for proc in _group(pgid)}
    strays.update(
        (proc.pid, proc)
        for proc in psutil.Process().children()
        if proc.pid not in children_before and proc.pid != pgid
    )
    return [pid for pid, proc in strays.items() if _still_there(proc)]


def _kill_group(proc: subprocess.Popen[str], children_before: set[int]) -> None:
    """SIGKILL the run's process group, reap the browser, then kill and wait for every
    helper it left behind (not our children unless adopted: waited for by polling)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # the group is already empty
    proc.wait(timeout=REAP_S)
    deadline = time.monotonic() + REAP_S
    while (left := _settle(proc.pid, children_before)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not left, f"browser processes survived SIGKILL: {left}"


def _run_group(command: list[str], timeout: float) -> Finished:
    """Run `command` in a new session (its own process group), then kill the group and
    whatever it left behind."""
    with _adopting_orphans():
        before = _children()
        proc = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
            start_new_session=True,
        )
        try:
            out, err = proc.communicate(timeout=timeout)
            returncode: int | None = proc.returncode
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            returncode = None
        finally:
            _kill_group(proc, before)
    return Finished(returncode, out, err)


def _browser() -> str:
    """The first browser found that answers ``--version``; skip when there is none."""
    tried = []
    for name in BROWSERS:
        found = shutil.which(name)
        if not found:
            continue
        try:
            version = _run_group([found, "--version", *QUIET_FLAGS], VERSION_TIMEOUT_S)
        except OSError as exc:
            tried.append(f"{found}: {exc}")
            continue
        if version.returncode == 0:
            return found
        why = "timed out" if version.returncode is None else f"exit {version.returncode}"
        tried.append(f"{found} --version: {why}")
    if tried:
        pytest.skip(f"no working headless browser ({'; '.join(tried)})")
    pytest.skip(f"no headless browser found (looked for {', '.join(BROWSERS)})")


def _run(browser: str, tmp_path: Path, *args: str) -> str:
    profile = tmp_path / "browser-profile"
    finished = _run_group(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-extensions",
            *QUIET_FLAGS,
            f"--user-data-dir={profile}",
            *args,
        ],
        TIMEOUT_S,
    )
    if finished.returncode is None:
        pytest.fail(f"{browser} did not finish in {TIMEOUT_S} s")
    assert finished.returncode == 0, finished.stderr[-2000:]
    return finished.stdout


@pytest.fixture
def page_file(project, home, tmp_path) -> Path:
    fill(project, home)
    return write_page(tmp_path / "site" / "index.html", page.render(data.gather(project)))


def test_chromium_renders_the_four_charts(page_file, tmp_path):
    dom = _run(_browser(), tmp_path, "--dump-dom", page_file.as_uri())
    for name in CHARTS:
        svg = chart(dom, name)
        assert "<title" in svg, name
        assert svg.count("<rect") > 0, name
    assert "&lt;script&gt;alert(1)&lt;/script&gt;.py" in chart(dom, "top-files")
    assert "<script" not in dom


def test_chromium_screenshot_is_a_real_picture(page_file, tmp_path):
    shot = tmp_path / "insight.png"
    _run(
        _browser(),
        tmp_path,
        "--hide-scrollbars",
        "--window-size=1000,1600",
        f"--screenshot={shot}",
        page_file.as_uri(),
    )
    png = shot.read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert len(png) > 20_000  # text and bars, not a blank page


def _stub(folder: Path, name: str, script: str) -> None:
    stub = folder / name
    stub.write_text(f"#!/bin/sh\n{script}\n", encoding="utf-8")
    stub.chmod(0o755)


def test_a_browser_that_cannot_run_is_a_skip_not_a_failure(tmp_path, monkeypatch):
    """Ubuntu's ``chromium-browser`` without the snap only prints advice and fails."""
    _stub(tmp_path, "chromium-browser", 'echo "install the chromium snap" >&2; exit 1')
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(pytest.skip.Exception, match=r"chromium-browser --version: exit 1"):
        _browser()


def test_a_working_stub_is_chosen_after_a_broken_one(tmp_path, monkeypatch):
    _stub(tmp_path, "chromium", "exit 3")
    _stub(tmp_path, "google-chrome", 'echo "Google Chrome 1.0"')
    monkeypatch.setenv("PATH", str(tmp_path))
    assert _browser() == str(tmp_path / "google-chrome")


def _gone(pid: int) -> bool:
    """Killed and reaped (on Linux, where orphans are adopted) or at least killed."""
    if not psutil.pid_exists(pid):
        return True
    status = psutil.Process(pid).status()
    return status == psutil.STATUS_ZOMBIE and not sys.platform.startswith("linux")


def test_helpers_left_behind_are_killed_with_the_group(tmp_path):
    """A browser that exits while a helper it started keeps running (as crashpad does)."""
    pid_file = tmp_path / "helper.pid"
    script = f"sleep 300 >/dev/null 2>&1 & echo $! > {pid_file}; echo done"
    finished = _run_group(["/bin/sh", "-c", script], 30)
    assert finished == Finished(0, "done\n", "")
    assert _gone(int(pid_file.read_text(encoding="utf-8")))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="orphans are adopted on Linux")
def test_a_helper_that_leaves_the_group_is_killed_and_reaped_too(tmp_path):
    """Crashpad starts its handler in a session of its own: out of reach of killpg."""
    pid_file = tmp_path / "helper.pid"
    code = (
        "import subprocess, sys\n"
        "p = subprocess.Popen(['sleep', '300'], start_new_session=True,"
        " stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        f"open({str(pid_file)!r}, 'w').write(str(p.pid))\n"
    )
    assert _run_group([sys.executable, "-c", code], 30).returncode == 0
    assert _gone(int(pid_file.read_text(encoding="utf-8")))


def test_a_run_past_its_deadline_is_killed_with_its_helpers(tmp_path):
    pid_file = tmp_path / "helper.pid"
    started = time.monotonic()
    finished = _run_group(["/bin/sh", "-c", f"sleep 300 & echo $! > {pid_file}; wait"], 1)
    assert finished.returncode is None and time.monotonic() - started < 30
    assert _gone(int(pid_file.read_text(encoding="utf-8")))
