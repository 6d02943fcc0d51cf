"""execute(): languages, deadlines and what comes back (spec §12 items 1, 2, 6; §2.5, §2.7)."""

import shutil
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from ctxmode.errors import EnvironmentProblem, RuntimeMissingError, UsageError
from ctxmode.executor import LANGUAGES, BackgroundRuns, ExecRequest, execute

from .procs import needs

HELLO = {
    "python": 'print("hello from python")',
    "shell": 'echo "hello from shell"',
    "javascript": 'console.log("hello from javascript")',
    "perl": 'print "hello from perl\\n";',
    "ruby": 'puts "hello from ruby"',
    "php": 'echo "hello from php\\n";',
    "r": 'cat("hello from r\\n")',
    "elixir": 'IO.puts("hello from elixir")',
    "go": 'fmt.Println("hello from go")',
}
COMMAND = {
    "python": None,
    "shell": "bash",
    "javascript": "node",
    "perl": "perl",
    "ruby": "ruby",
    "php": "php",
    "r": "Rscript",
    "elixir": "elixir",
    "go": "go",
}


@pytest.mark.parametrize(
    "language",
    [pytest.param(lang, marks=needs(COMMAND[lang]) if COMMAND[lang] else ()) for lang in HELLO],
)
def test_hello_world_returns_the_printed_text_with_exit_zero(run, language):
    result = run(language, HELLO[language])
    assert result.stdout == f"hello from {language}\n"
    assert result.exit_code == 0
    assert result.timed_out is False
    assert result.capped is False
    assert result.language == language


def test_five_concurrent_runs_each_get_their_own_output(project):
    def one(i: int):
        request = ExecRequest("python", f"print('run number {i}')", project, timeout_ms=30_000)
        return execute(request, registry=BackgroundRuns())

    with ThreadPoolExecutor(max_workers=5) as pool:
        results = list(pool.map(one, range(5)))
    assert [r.stdout for r in results] == [f"run number {i}\n" for i in range(5)]
    assert all(r.exit_code == 0 and not r.timed_out for r in results)


def test_without_a_timeout_a_short_sleep_completes(run):
    result = run("shell", "sleep 1 && echo done", timeout_ms=None)
    assert result.stdout == "done\n"
    assert result.timed_out is False
    assert result.timeout_ms == 120_000


def test_default_deadline_is_120_seconds(run):
    assert run("python", "pass", timeout_ms=None).timeout_ms == 120_000


def test_env_timeout_applies_when_the_call_gives_none(run, monkeypatch):
    monkeypatch.setenv("CTXMODE_EXEC_TIMEOUT_MS", "700")
    result = run("python", "import time\ntime.sleep(120)", timeout_ms=None)
    assert result.timed_out is True
    assert result.exit_code == 1
    assert result.timeout_ms == 700


def test_per_call_timeout_wins_over_the_env_timeout(run, monkeypatch):
    monkeypatch.setenv("CTXMODE_EXEC_TIMEOUT_MS", "1")  # would kill anything
    result = run("python", "print('finished')", timeout_ms=30_000)
    assert result.stdout == "finished\n" and not result.timed_out
    monkeypatch.setenv("CTXMODE_EXEC_TIMEOUT_MS", "600000")
    result = run("python", "import time\ntime.sleep(120)", timeout_ms=600)
    assert result.timed_out and result.timeout_ms == 600


@pytest.mark.parametrize("value", ["abc", "0", "-5", "nan", "12ms"])
def test_invalid_env_timeout_is_a_usage_error(run, monkeypatch, value):
    monkeypatch.setenv("CTXMODE_EXEC_TIMEOUT_MS", value)
    with pytest.raises(UsageError, match="CTXMODE_EXEC_TIMEOUT_MS|timeout"):
        run("python", "print('never runs')", timeout_ms=None)


@pytest.mark.parametrize("value", [0, -1])
def test_non_positive_per_call_timeout_is_a_usage_error(run, value):
    with pytest.raises(UsageError):
        run("python", "print('never runs')", timeout_ms=value)


def test_hundred_stdout_and_fifty_stderr_lines_come_back_in_full(run):
    code = (
        "import sys\n"
        "for i in range(1, 101):\n    print(f'out line {i}')\n"
        "for i in range(1, 51):\n    print(f'err line {i}', file=sys.stderr)\n"
    )
    result = run("python", code)
    out, err = result.stdout.splitlines(), result.stderr.splitlines()
    assert out == [f"out line {i}" for i in range(1, 101)]
    assert err == [f"err line {i}" for i in range(1, 51)]
    assert "out line 1" in out and "out line 50" in out and "out line 100" in out
    assert "err line 25" in err and "truncated" not in result.stdout + result.stderr


def test_unknown_language_is_a_usage_error_listing_the_languages(run):
    with pytest.raises(UsageError) as caught:
        run("cobol", "DISPLAY 'HI'.")
    message = str(caught.value)
    assert "cobol" in message
    for language in LANGUAGES:
        assert language in message


@pytest.mark.parametrize(
    ("alias", "canonical", "code"),
    [
        ("py", "python", "print('via alias')"),
        ("PY", "python", "print('via alias')"),
        ("python3", "python", "print('via alias')"),
        ("sh", "shell", "echo via alias"),
        ("bash", "shell", "echo via alias"),
        pytest.param("js", "javascript", "console.log('via alias')", marks=needs("node")),
        pytest.param("node", "javascript", "console.log('via alias')", marks=needs("node")),
    ],
)
def test_language_aliases_run_the_canonical_language(run, alias, canonical, code):
    result = run(alias, code)
    assert result.language == canonical
    assert result.stdout == "via alias\n"


@pytest.mark.parametrize(
    ("language", "looked_for", "how"),
    [
        ("javascript", "node", "nodejs.org"),
        ("typescript", "tsx", "bun"),
        ("perl", "perl", "install Perl"),
        ("ruby", "ruby", "install Ruby"),
        ("rust", "rustc", "rustup.rs"),
        ("r", "Rscript", "install R"),
        ("csharp", "dotnet-script", "dotnet tool install"),
        ("shell", "bash", "install bash"),
    ],
)
def test_missing_runtime_names_what_was_looked_for_and_how_to_install(
    run, empty_path, language, looked_for, how
):
    with pytest.raises(RuntimeMissingError) as caught:
        run(language, "whatever")
    message = str(caught.value)
    assert language in message
    assert looked_for in message
    assert how in message
    assert isinstance(caught.value, EnvironmentProblem)


def test_python_never_needs_path(run, empty_path):
    result = run("python", "import sys\nprint(sys.executable)")
    assert result.exit_code == 0
    assert result.stdout.strip() == sys.executable


@pytest.mark.skipif(shutil.which("rustc") is None, reason="rustc not installed")
def test_rust_compile_error_reports_compilation_failed(run):
    result = run("rust", 'let x: i32 = "not a number";\nprintln!("{}", x);')
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith("Compilation failed:\n")
    assert "mismatched types" in result.stderr or "error" in result.stderr


@pytest.mark.skipif(shutil.which("rustc") is None, reason="rustc not installed")
def test_rust_without_main_is_wrapped_and_runs(run):
    result = run("rust", 'println!("hello from rust");')
    assert result.stdout == "hello from rust\n"
    assert result.exit_code == 0
