"""Nothing a run starts outlives it: timeout, output cap, cancellation, a normal exit, and
background mode until the registry cleans up (spec §12 items 3-5; §2.7).

Each script records the pids of what it started in the project dir, then loops; after the
run the test asserts none of them is still alive (polling briefly while the kernel reaps).
"""

import os
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from ctxmode.executor.shaping import shape
from ctxmode.store import ContentStore

from .procs import alive, needs, read_pids, survivors, wait_for_file, zombies

# A shell tree: a subshell child with its own grandchild, a process that escaped the group
# with setsid, and the script itself. `pids` is written complete (renamed into place).
SHELL_TREE = """
( sleep 300 & echo $! > grandchild.pid; wait ) &
echo $! > child.pid
setsid sh -c 'echo $$ > escaped.pid; exec sleep 300' &
while [ ! -s grandchild.pid ] || [ ! -s escaped.pid ]; do :; done
cat child.pid grandchild.pid escaped.pid > pids.tmp
echo $$ >> pids.tmp
mv pids.tmp pids
echo "tree started"
"""

PYTHON_TREE = """
import os, subprocess, sys
child = subprocess.Popen(
    [sys.executable, "-c", "import subprocess, time; "
     "print(subprocess.Popen(['sleep', '300']).pid, flush=True); time.sleep(300)"],
    stdout=subprocess.PIPE,
)
grandchild = int(child.stdout.readline())
escaped = subprocess.Popen(["sleep", "300"], start_new_session=True)
pids = [os.getpid(), child.pid, grandchild, escaped.pid]
with open({pidfile!r} + ".tmp", "w") as f:
    f.write("\\n".join(map(str, pids)) + "\\n")
os.replace({pidfile!r} + ".tmp", {pidfile!r})
print("tree started", flush=True)
"""


def tree_pids(project, reaper) -> list[int]:
    pids = read_pids(project / "pids")
    reaper(pids)
    assert len(pids) == 4
    return pids


def test_timeout_kills_the_whole_tree_including_a_setsid_escapee(run, project, reaper):
    result = run("shell", SHELL_TREE + "while :; do sleep 1; done", timeout_ms=1500)
    assert result.timed_out is True
    assert result.exit_code == 1
    assert result.stdout == "tree started\n"
    pids = tree_pids(project, reaper)
    assert survivors(pids) == []


def test_python_timeout_kills_child_grandchild_and_escapee(run, project, reaper):
    pidfile = str(project / "pids")
    code = PYTHON_TREE.format(pidfile=pidfile) + "while True:\n    pass\n"
    result = run("python", code, timeout_ms=3000)
    assert result.timed_out is True
    assert "tree started" in result.stdout
    assert survivors(tree_pids(project, reaper)) == []


def test_output_cap_kills_the_whole_tree(run, project, reaper):
    result = run("shell", SHELL_TREE + "yes ctxmode-spam", cap_bytes=64 * 1024)
    assert result.capped is True
    assert result.timed_out is False
    assert result.exit_code != 0
    assert "output capped at" in result.stderr
    assert survivors(tree_pids(project, reaper)) == []


def test_stderr_output_counts_toward_the_cap(run, project, reaper):
    result = run("shell", SHELL_TREE + "yes ctxmode-spam >&2", cap_bytes=64 * 1024)
    assert result.capped is True
    assert result.exit_code != 0
    assert "output capped at" in result.stderr
    assert survivors(tree_pids(project, reaper)) == []


def test_cap_counts_stdout_and_stderr_together(run):
    # 700 + 700 bytes: neither stream alone passes 1024, together they do; the program then
    # waits far past the deadline, so only the combined count can end it.
    code = (
        "import sys, time\n"
        "sys.stdout.write('o' * 700); sys.stdout.flush()\n"
        "sys.stderr.write('e' * 700); sys.stderr.flush()\n"
        "time.sleep(300)\n"
    )
    result = run("python", code, cap_bytes=1024, timeout_ms=20_000)
    assert result.capped is True
    assert result.timed_out is False
    assert "output capped at 1024 bytes" in result.stderr


def test_a_megabyte_of_output_under_a_1kb_cap_is_cut_and_killed(run):
    result = run("python", "print('x' * 1_000_000)\nimport time\ntime.sleep(300)", cap_bytes=1024)
    assert result.capped is True
    assert result.exit_code != 0
    assert "output capped at" in result.stderr
    assert len(result.stdout.encode()) <= 1024


def test_cancel_event_kills_the_tree(run, project, reaper):
    cancel = threading.Event()
    outcome = {}

    def go():
        outcome["result"] = run(
            "shell", SHELL_TREE + "while :; do sleep 1; done", cancel=cancel, timeout_ms=60_000
        )

    worker = threading.Thread(target=go)
    worker.start()
    try:
        wait_for_file(project / "pids")
        pids = tree_pids(project, reaper)
        assert all(alive(pid) for pid in pids)
        child, grandchild, escaped, script = pids
        # the tree really has all three shapes: same group, deeper, and out of the group
        assert os.getpgid(child) == os.getpgid(grandchild) == os.getpgid(script)
        assert os.getpgid(escaped) != os.getpgid(script)
        assert psutil.Process(grandchild).ppid() == child
    finally:
        cancel.set()
        worker.join(30)
    assert not worker.is_alive()
    result = outcome["result"]
    assert result.cancelled is True
    assert result.timed_out is False
    assert result.exit_code != 0
    assert survivors(pids) == []


def test_a_background_job_left_by_a_finished_script_dies_and_does_not_hold_the_run(
    run, project, reaper
):
    # `sleep 300 &` keeps the stdout pipe open; the run must end with the script anyway.
    # The script's last step prints nothing (as a final `cp` or `git add` would), so no
    # output arrives to wake the reader when the script exits.
    code = "sleep 300 &\necho $! > pids\necho finished\nsleep 0.2"
    result = run("shell", code, timeout_ms=10_000)
    assert result.timed_out is False
    assert result.exit_code == 0
    assert result.stdout == "finished\n"
    pids = read_pids(project / "pids")
    reaper(pids)
    assert survivors(pids) == []


def test_a_background_job_with_its_output_redirected_dies_too(run, project, reaper):
    code = "sleep 300 >/dev/null 2>&1 &\necho $! > pids\necho finished"
    result = run("shell", code, timeout_ms=10_000)
    assert result.stdout == "finished\n" and not result.timed_out
    pids = read_pids(project / "pids")
    reaper(pids)
    assert survivors(pids) == []


def test_a_setsid_escapee_left_by_a_finished_script_dies(run, project, reaper):
    code = "setsid sh -c 'echo $$ > pids; exec sleep 300' >/dev/null 2>&1 &\n"
    code += "while [ ! -s pids ]; do :; done\necho finished"
    result = run("shell", code, timeout_ms=10_000)
    assert result.stdout == "finished\n" and not result.timed_out
    pids = read_pids(project / "pids")
    reaper(pids)
    assert survivors(pids) == []


def test_partial_output_on_timeout_is_returned_and_marked_partial(run, tmp_path):
    code = "print('first part', flush=True)\nimport time\ntime.sleep(300)"
    result = run("python", code, timeout_ms=1000)
    assert result.timed_out is True
    assert result.stdout == "first part\n"
    shaped = shape(result, label="execute:python", open_store=lambda: ContentStore(tmp_path / "kb"))
    assert shaped.is_error is False
    assert shaped.text.startswith("first part\n")
    assert "timed out after 1000ms" in shaped.text
    assert "partial output shown above" in shaped.text


def test_timeout_without_output_is_an_error_text(run, tmp_path):
    result = run(
        "python",
        "import sys, time\nsys.stderr.write('warming up')\ntime.sleep(300)",
        timeout_ms=800,
    )
    assert result.timed_out is True and result.stdout == ""
    shaped = shape(result, label="execute:python", open_store=lambda: ContentStore(tmp_path / "kb"))
    assert shaped.is_error is True
    assert shaped.text.startswith("Execution timed out after 800ms")
    assert "warming up" in shaped.text


# ------------------------------------------------------------------ background mode


def test_background_run_keeps_going_past_its_timeout_until_cleanup(run, project, registry, reaper):
    result = run(
        "shell",
        SHELL_TREE + 'echo "$TMPDIR"\nwhile :; do sleep 1; done',
        timeout_ms=1500,
        background=True,
    )
    assert result.backgrounded is True
    assert result.timed_out is True
    assert result.exit_code == 0
    started, tmpdir = result.stdout.splitlines()
    assert started == "tree started"
    assert Path(tmpdir).is_dir()  # kept while the run goes on
    pids = tree_pids(project, reaper)
    child, grandchild, _escaped, script = pids
    assert alive(script) and alive(child) and alive(grandchild)
    shaped = shape(result, label="execute:shell", open_store=lambda: ContentStore(project / "kb"))
    assert "process backgrounded after 1500ms" in shaped.text and not shaped.is_error
    assert registry.cleanup() == 1
    assert survivors(pids) == []
    assert not Path(tmpdir).exists()


def test_background_run_that_finishes_in_time_is_an_ordinary_run(run, registry):
    result = run("python", "print('quick')", background=True)
    assert result.backgrounded is False and result.timed_out is False
    assert result.stdout == "quick\n" and result.exit_code == 0
    assert registry.entries == {}


def test_background_run_still_honours_the_cap(run, registry):
    result = run("shell", "yes spam", background=True, cap_bytes=4096)
    assert result.capped is True and result.backgrounded is False
    assert "output capped at" in result.stderr
    assert registry.entries == {}


def test_a_backgrounded_run_is_killed_past_its_output_cap(run, project, registry):
    """Quiet until it is backgrounded, then a flood: it writes straight to its files, and
    only the watcher stands between it and a full disk."""
    code = "echo $$ > pid; sleep 1.5; exec yes flooding-the-disk"
    cap = 256 * 1024
    result = run("shell", code, timeout_ms=1000, background=True, cap_bytes=cap)
    assert result.backgrounded is True
    pid = int((project / "pid").read_text())
    [(_, _, workdir)] = registry.entries.values()

    def over() -> bool:
        return not alive(pid)

    def written() -> int:
        return sum((workdir / n).stat().st_size for n in (".stdout", ".stderr"))

    deadline = time.monotonic() + 30  # generous: a hang check, not a speed bound
    while (not over() or written() > 2 * cap) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid), "the flood was not stopped"
    assert written() <= 2 * cap  # what it wrote past the cap was given back


@needs("node")
def test_javascript_timeout_kills_a_spawned_child(run, project, reaper):
    code = (
        "const { spawn } = require('node:child_process');\n"
        "const fs = require('node:fs');\n"
        "const c = spawn('sleep', ['300'], { stdio: 'ignore' });\n"
        f"fs.writeFileSync({str(project / 'pids')!r}, `${{process.pid}}\\n${{c.pid}}\\n`);\n"
        "setInterval(() => {}, 1000);\n"
    )
    result = run("javascript", code, timeout_ms=2000)
    assert result.timed_out is True
    pids = read_pids(project / "pids")
    reaper(pids)
    assert len(pids) == 2
    assert survivors(pids) == []


@pytest.mark.parametrize("cap", [1, 100])
def test_tiny_caps_still_report_the_cap(run, cap):
    result = run("shell", "yes", cap_bytes=cap)
    assert result.capped is True
    assert f"output capped at {cap} bytes" in result.stderr


@pytest.mark.parametrize("limit", ["timeout", "cap"])
def test_temp_dir_is_removed_after_a_killed_run(run, limit):
    code = "import os, time\nprint(os.environ['TMPDIR'], flush=True)\n"
    if limit == "timeout":
        result = run("python", code + "time.sleep(300)", timeout_ms=1000)
    else:
        result = run("python", code + "print('x' * 100_000)", cap_bytes=8192)
    assert result.timed_out or result.capped
    tmpdir = Path(result.stdout.splitlines()[0])
    assert tmpdir.name.startswith(".ctx-mode-")
    assert not tmpdir.exists()


CLOSED_OUTPUT = "echo $$ > pid; exec >&- 2>&-; sleep 300"


def test_a_run_that_closes_its_output_still_meets_its_deadline(run, project):
    """With stdout and stderr closed nothing is left to read: the wait for its exit held
    the deadline back until the sleep ended."""
    result = run("shell", CLOSED_OUTPUT, timeout_ms=1000)
    assert result.timed_out is True
    pid = int((project / "pid").read_text())
    assert survivors([pid]) == []


def test_a_run_that_closes_its_output_can_still_be_cancelled(run, project):
    cancel = threading.Event()
    outcome = {}
    worker = threading.Thread(
        target=lambda: outcome.update(
            result=run("shell", CLOSED_OUTPUT, cancel=cancel, timeout_ms=60_000)
        )
    )
    worker.start()
    try:
        wait_for_file(project / "pid")
    finally:
        cancel.set()
        worker.join(30)
    assert not worker.is_alive()
    assert outcome["result"].cancelled is True
    assert survivors([int((project / "pid").read_text())]) == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="subreaper: Linux")
def test_processes_a_run_leaves_behind_are_collected_not_left_as_zombies(run):
    """`(sleep 100 &)` re-parents each sleep to us: killed with the run, each stayed a
    zombie until the server exited (300 of them, or a fork bomb's, made later runs fail)."""
    before = set(zombies())  # other tests' children are not this one's business
    result = run("shell", "for i in $(seq 40); do (sleep 100 &); done; echo started")
    assert result.stdout == "started\n"
    run("shell", "true")  # the next run collects what the kill left dying
    assert set(zombies()) - before == set()
