"""`ctxmode execute` and `ctxmode execute-file` end to end: exit statuses, the JSON
envelope, stdin, and what is printed for large output."""

import io
import json
import shutil
import subprocess
import sys
import time

import pytest

from ctxmode.__main__ import main
from ctxmode.executor import runtimes

from .support import ENVELOPE_KEYS, run_json

DATA_KEYS = {
    "language",
    "runtime",
    "exit_code",
    "timed_out",
    "capped",
    "isolated",
    "duration_ms",
    "stdout",
    "stderr",
    "text",
    "is_error",
    "indexed",
}
BIG_PY = (
    "for s in range(40):\n"
    "    print(f'## Part {s}')\n"
    "    for i in range(30):\n"
    "        print(f'entry {s}-{i} ' + 'q' * 80)\n"
    "print('## End')\nprint('the narwhal total is 9191')\n"
)


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = tmp_path / "proj"
    root.mkdir()
    (root / ".git").mkdir()
    monkeypatch.chdir(root)
    return root.resolve()


@pytest.fixture
def stdin(monkeypatch):
    def feed(text: str) -> None:
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-8"))))

    return feed


def test_prints_the_output_and_exits_zero(project, capsys):
    assert main(["execute", "echo hello; echo oops >&2"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "hello\n"
    assert "oops" in captured.err


def test_exit_status_is_the_runs_own(project, capsys):
    assert main(["execute", "--lang", "shell", "echo before; exit 3"]) == 3
    assert capsys.readouterr().out == "before\n"


def test_timeout_exits_124_with_the_partial_output(project, capsys):
    code = "print('got this far', flush=True)\nimport time\ntime.sleep(300)"
    assert main(["execute", "-l", "python", "--timeout-ms", "1000", code]) == 124
    captured = capsys.readouterr()
    assert captured.out == "got this far\n"
    assert "timed out after 1000ms" in captured.err


def test_env_timeout_is_used_by_the_cli(project, capsys, monkeypatch):
    monkeypatch.setenv("CTXMODE_EXEC_TIMEOUT_MS", "800")
    assert main(["execute", "-l", "python", "import time; time.sleep(300)"]) == 124


def test_bad_env_timeout_exits_2(project, capsys, monkeypatch):
    monkeypatch.setenv("CTXMODE_EXEC_TIMEOUT_MS", "soon")
    assert main(["execute", "echo never"]) == 2
    assert "CTXMODE_EXEC_TIMEOUT_MS" in capsys.readouterr().err


def test_missing_runtime_exits_4(project, capsys, tmp_path, monkeypatch):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setenv("HOME", str(tmp_path))
    runtimes._detect.cache_clear()
    try:
        code, doc = run_json(capsys, "execute", "-l", "javascript", "console.log(1)")
    finally:
        runtimes._detect.cache_clear()
    assert code == 4
    assert doc["status"] == "error"
    assert doc["errors"][0]["code"] == "runtime_missing"
    assert "node" in doc["errors"][0]["message"]


def test_unknown_language_exits_2_and_lists_languages(project, capsys):
    assert main(["execute", "-l", "cobol", "DISPLAY 'X'."]) == 2
    err = capsys.readouterr().err
    assert "cobol" in err and "python" in err and "javascript" in err


def test_json_envelope_carries_the_result(project, capsys):
    code, doc = run_json(capsys, "execute", "-l", "py", "print('in json')")
    assert code == 0
    assert doc["command"] == ["execute"]
    assert doc["status"] == "ok" and doc["errors"] == []
    data = doc["data"]
    assert set(data) == DATA_KEYS
    assert data["language"] == "python"
    assert data["stdout"] == "in json\n"
    assert data["text"] == "in json\n"
    assert data["exit_code"] == 0 and data["is_error"] is False
    assert data["timed_out"] is False and data["indexed"] is None


def test_json_envelope_on_failure_and_timeout(project, capsys):
    code, doc = run_json(capsys, "execute", "exit 7")
    assert code == 7 and doc["status"] == "error"
    assert doc["data"]["exit_code"] == 7 and doc["data"]["is_error"] is True
    assert doc["data"]["text"].startswith("Exit code: 7")
    code, doc = run_json(capsys, "execute", "-t", "700", "echo early; sleep 300")
    assert code == 124
    assert doc["data"]["timed_out"] is True
    assert doc["data"]["stdout"] == "early\n"
    assert "partial output shown above" in doc["data"]["text"]


def test_json_envelope_for_an_error_before_running(project, capsys):
    code, doc = run_json(capsys, "execute", "-l", "cobol", "x")
    assert code == 2
    assert doc["data"] is None
    assert doc["errors"][0]["code"] == "usage"


def test_code_from_stdin_with_dash(project, capsys, stdin):
    stdin("import sys\nprint('from stdin', sys.version_info[0])\n")
    assert main(["execute", "-l", "python", "-"]) == 0
    assert capsys.readouterr().out == "from stdin 3\n"


def test_code_from_stdin_when_no_code_is_given(project, capsys, stdin):
    stdin("echo implicit stdin")
    assert main(["execute"]) == 0
    assert capsys.readouterr().out == "implicit stdin\n"


def test_code_from_a_script_file(project, capsys):
    (project / "job.py").write_text("print('from the file')\n", encoding="utf-8")
    assert main(["execute", "-l", "python", "--file", "job.py"]) == 0
    assert capsys.readouterr().out == "from the file\n"


def test_code_and_file_together_is_a_usage_error(project, capsys):
    (project / "job.sh").write_text("echo x\n", encoding="utf-8")
    assert main(["execute", "--file", "job.sh", "echo y"]) == 2


def test_execute_file_with_code_option(project, capsys):
    (project / "notes.txt").write_text("one\ntwo\nthree ✓\n", encoding="utf-8")
    code = "print(len(FILE_CONTENT.splitlines()), FILE_CONTENT.split()[-1])"
    assert main(["execute-file", "notes.txt", "--code", code]) == 0
    assert capsys.readouterr().out == "3 ✓\n"


def test_execute_file_with_code_on_stdin(project, capsys, stdin):
    (project / "notes.txt").write_text("alpha\nbeta\n", encoding="utf-8")
    stdin('wc -l < "$FILE_CONTENT_PATH" | tr -d " "')
    assert main(["execute-file", "notes.txt", "-l", "shell"]) == 0
    assert capsys.readouterr().out == "2\n"


def test_execute_file_missing_file_exits_3(project, capsys):
    assert main(["execute-file", "absent.txt", "--code", "print(1)"]) == 3
    assert "absent.txt" in capsys.readouterr().err


def test_execute_file_timeout_names_the_file(project, capsys):
    (project / "slow.txt").write_text("x\n", encoding="utf-8")
    code, doc = run_json(
        capsys, "execute-file", "slow.txt", "-t", "700", "--code", "import time; time.sleep(300)"
    )
    assert code == 124
    assert doc["command"] == ["execute-file"]
    assert doc["data"]["text"] == "Timed out processing slow.txt after 700ms"


def test_isolate_without_bubblewrap_exits_4(project, capsys, tmp_path, monkeypatch):
    from ctxmode.executor import isolate

    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    isolate.isolation_problem.cache_clear()
    try:
        code, doc = run_json(capsys, "execute", "-l", "python", "--isolate", "print(1)")
    finally:
        isolate.isolation_problem.cache_clear()
    assert code == 4
    assert "bubblewrap" in doc["errors"][0]["message"]


def test_large_output_prints_a_pointer_and_is_searchable(project, capsys):
    assert main(["execute", "-l", "python", BIG_PY]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Indexed ")
    assert "execute:python" in out
    assert "entry 20-1 " not in out and len(out) < 2000  # a glimpse, not the run
    code, doc = run_json(capsys, "search", "narwhal total", "--source", "execute:python")
    assert code == 0
    assert any("9191" in hit["snippet"] for hit in doc["data"]["hits"])


def test_raw_prints_all_of_a_large_output_and_indexes_nothing(project, capsys):
    assert main(["execute", "-l", "python", "--raw", BIG_PY]) == 0
    out = capsys.readouterr().out
    assert out.startswith("## Part 0\nentry 0-0 ")
    assert out.endswith("the narwhal total is 9191\n")
    assert len(out.encode()) > 102_400
    code, doc = run_json(capsys, "sources")
    assert doc["data"]["sources"] == []


def test_intent_shows_matching_sections_only(project, capsys):
    code = (
        "for i in range(400):\n"
        '    print(f\'step {i} ok for module {["auth", "cart", "search"][i % 3]}\')\n'
        "    print()\n"
        "print('step 400 FAILED: disk quota exceeded')\n"
    )
    assert main(["execute", "-l", "python", "--intent", "disk quota", code]) == 0
    out = capsys.readouterr().out
    assert "disk quota" in out
    assert "step 7 ok" not in out


def ctxmode_process(project, *args: str, stdin: str | None = None):
    """`ctxmode ARGS` as a real process in `project` (the 60 s bound catches a hang)."""
    return subprocess.run(
        [sys.executable, "-m", "ctxmode", *args],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=project,
        timeout=60,
        check=False,
    )


def test_real_subprocess_exit_status_and_output(project):
    proc = ctxmode_process(project, "execute", "--lang", "shell", "echo real; exit 3")
    assert proc.returncode == 3, proc.stderr
    assert proc.stdout == "real\n"


def test_real_subprocess_timeout_with_stdin_code(project):
    code = "print('partial', flush=True)\nimport time\ntime.sleep(300)\n"
    proc = ctxmode_process(
        project, "execute", "-l", "python", "-t", "1000", "--json", "-", stdin=code
    )
    assert proc.returncode == 124, proc.stderr
    doc = json.loads(proc.stdout)
    assert set(doc) == ENVELOPE_KEYS
    assert doc["data"]["stdout"] == "partial\n" and doc["data"]["timed_out"] is True


@pytest.mark.skipif(shutil.which("node") is None, reason="node not installed")
def test_javascript_through_the_cli(project, capsys):
    assert main(["execute", "-l", "js", "console.log([1, 2, 3].map((x) => x * 2).join(','))"]) == 0
    assert capsys.readouterr().out == "2,4,6\n"


def test_a_flood_shows_its_start_and_exits_124_not_137(project):
    """`yes` reaches the output cap: a limit stopped it, like a timeout (it used to take
    30 s and gigabytes, end with 137 and never show "start")."""
    started = time.monotonic()
    proc = ctxmode_process(project, "execute", "--timeout-ms", "3000", "echo start; yes x")
    assert time.monotonic() - started < 30  # generous: catches a hang, not speed
    assert proc.returncode == 124, proc.stderr
    # Usually the 100 MiB cap stops it; on a slow machine the deadline may come first.
    assert "start\nx\n[… repeated " in proc.stdout
    assert "[… repeated " in proc.stdout
    assert "output capped" in proc.stdout or "timed out after 3000ms" in proc.stdout
    assert len(proc.stdout.encode()) < 16 * 1024


# --- what the CLI says, and where it is counted ----------------------------------------------


def test_large_output_says_how_to_search_it_with_the_cli(project, capsys):
    assert main(["execute", "-l", "python", BIG_PY]) == 0
    out = capsys.readouterr().out
    assert "Search it: ctxmode search QUERY --source execute:python" in out
    assert "ctx_search" not in out
    code = "for i in range(600):\n    print(f'step {i} ok for module {i}')\n"
    code += "print('disk quota exceeded')\n"
    assert main(["execute", "-l", "python", "--intent", "disk quota", code]) == 0
    out = capsys.readouterr().out
    assert "Read any section: ctxmode search QUERY --source execute:python" in out
    assert "ctx_search" not in out


def test_cli_runs_are_counted_in_stats_as_cli_runs(project, capsys, monkeypatch):
    monkeypatch.setenv("CTXMODE_SESSION_ID", "cli-session")
    assert main(["execute", "-l", "python", BIG_PY]) == 0
    assert main(["execute", "echo small"]) == 0
    shown = capsys.readouterr().out
    code, doc = run_json(capsys, "stats")
    assert code == 0
    row = doc["data"]["session"]["by_tool"]["cli:execute"]
    assert row["calls"] == 2
    assert row["returned"] == len(shown.encode())
    assert row["sandboxed"] > 100_000 and row["indexed"] > 0
    assert main(["stats"]) == 0
    text = capsys.readouterr().out
    assert "cli:execute" in text and "No measurable activity yet" not in text
    assert "cli:* rows are runs of the ctxmode CLI" in text


def _on_a_terminal(project, argv: list[str], *, go_file=None) -> tuple[int, str]:
    """Run `ctxmode ARGV` with stdout and stderr on a pseudo-terminal; once `first` has
    appeared, create `go_file` (the run waits for it). Returns (status, what it showed)."""
    import os
    import pty
    import select

    main_fd, child_fd = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "ctxmode", *argv],
        cwd=project,
        env={**env, "NO_COLOR": "1", "COLUMNS": "200"},
        stdin=subprocess.DEVNULL,
        stdout=child_fd,
        stderr=child_fd,
    )
    os.close(child_fd)
    shown = b""
    try:
        while True:
            ready, _, _ = select.select([main_fd], [], [], 60)
            if not ready:
                break
            try:
                chunk = os.read(main_fd, 65536)
            except OSError:  # the pty closed: the process is gone
                break
            if not chunk:
                break
            shown += chunk
            if go_file is not None and b"first" in shown and not go_file.exists():
                go_file.touch()
    finally:
        os.close(main_fd)
        code = proc.wait(timeout=60)
    return code, shown.decode("utf-8", "replace").replace("\r\n", "\n")


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_on_a_terminal_output_streams_while_the_run_goes_on(project, tmp_path):
    go = tmp_path / "go"
    # The run cannot finish before the test has seen its first line: only streaming works.
    code = (
        "import os, sys, time\n"
        "print('first', flush=True)\n"
        f"for _ in range(600):\n    if os.path.exists({str(go)!r}): break\n    time.sleep(0.05)\n"
        "else:\n    sys.exit('never streamed')\n"
        "print('second')\n"
    )
    status, shown = _on_a_terminal(project, ["execute", "-l", "python", code], go_file=go)
    assert status == 0, shown
    assert shown.index("first") < shown.index("second")
    assert "never streamed" not in shown


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_on_a_terminal_a_large_output_is_shown_whole_and_still_indexed(project):
    status, shown = _on_a_terminal(project, ["execute", "-l", "python", BIG_PY])
    assert status == 0
    assert "entry 0-0 " in shown and "the narwhal total is 9191" in shown
    assert "Search it: ctxmode search QUERY --source execute:python" in shown
    proc = ctxmode_process(project, "search", "narwhal total", "--source", "execute:python")
    assert proc.returncode == 0 and "9191" in proc.stdout
