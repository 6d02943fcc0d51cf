"""The fast paths (`ctxmode.cli.fast`) answer exactly as the Typer app would, or leave the
command line to it."""

import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxmode.cli import fast, registry
from ctxmode.cli.actions import execute as execute_action
from ctxmode.cli.actions import search as search_action
from ctxmode.cli.app import main as typer_main

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def dirs(tmp_path, monkeypatch):
    """A directory and a file to pass as paths; the current directory is tmp_path."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "adir").mkdir()
    (tmp_path / "afile.py").write_text("print(1)\n", encoding="utf-8")
    return tmp_path


def _record(monkeypatch, module, attr: str, action_module, action_attr: str) -> list[dict]:
    """Calls of the action through the Typer command and through the fast path, with
    every argument bound (defaults applied), in call order."""
    original = getattr(action_module, action_attr)
    calls: list[dict] = []

    def fake(*args, **kwargs):
        bound = inspect.signature(original).bind(*args, **kwargs)
        bound.apply_defaults()
        calls.append(dict(bound.arguments))
        return 0

    monkeypatch.setattr(module, attr, fake)
    monkeypatch.setattr(action_module, action_attr, fake)
    return calls


SEARCH_FAST = [
    ["pool"],
    ["pool", "timeout"],
    ["-n", "3", "pool"],
    ["pool", "-n3"],
    ["--limit=7", "x"],
    ["x", "--source", "a b", "--type", "code"],
    ["-tcode", "x"],
    ["x", "-t", "prose", "-s", "notes"],
    ["x", "-p", "adir"],
    ["--project=adir", "x"],
    ["x", "--json"],
    ["--", "-foo", "bar"],
    ["a", "--", "--limit", "3"],
    ["x", "--source", "--json"],
    ["x", "-s", "-n"],
    ["x", "-n", "5", "-n", "6"],
    ["-", "x"],
]
SEARCH_TO_TYPER = [
    [],
    ["-foo"],
    ["x", "--help"],
    ["x", "-h"],
    ["--limit", "0", "x"],
    ["--limit", "101", "x"],
    ["--limit", "abc", "x"],
    ["x", "-n", " 3"],
    ["x", "--type", "Code"],
    ["x", "--limit"],
    ["x", "--json=1"],
    ["x", "-p", "afile.py"],
    ["x", "--bogus"],
    ["x", "-n=3"],
]


@pytest.mark.parametrize("argv", SEARCH_FAST)
def test_search_arguments_parse_as_typer_parses_them(dirs, monkeypatch, argv):
    from ctxmode.cli.commands import search as command

    calls = _record(monkeypatch, command, "run_search", search_action, "search")
    assert typer_main(["search", *argv]) == 0
    assert fast.run(["search", *argv]) == 0
    assert len(calls) == 2 and calls[0] == calls[1]


@pytest.mark.parametrize("argv", SEARCH_TO_TYPER)
def test_search_arguments_the_fast_path_leaves_to_typer(dirs, monkeypatch, argv):
    from ctxmode.cli.commands import search as command

    calls = _record(monkeypatch, command, "run_search", search_action, "search")
    assert fast.run(["search", *argv]) is None
    assert calls == []


EXECUTE_FAST = [
    ["echo ok"],
    [],
    ["-"],
    ["--lang", "python", "print(1)"],
    ["-l", "py", "x"],
    ["-lpython", "x"],
    ["x", "--timeout-ms", "5000"],
    ["-t", "250.5", "x"],
    ["--isolate", "--no-isolate", "x"],
    ["--network", "x"],
    ["--no-network", "--isolate", "x"],
    ["--raw", "x"],
    ["--intent", "errors", "x"],
    ["--intent=slow queries", "x"],
    ["-f", "afile.py"],
    ["--json", "x"],
    ["-p", "adir", "x"],
    ["--", "-x"],
]
EXECUTE_TO_TYPER = [
    ["a", "b"],
    ["-t", "1e3", "x"],
    ["--timeout-ms=", "x"],
    ["-f", "adir"],
    ["--bogus"],
    ["-h"],
    ["x", "--isolate=1"],
    ["--lang"],
]


@pytest.mark.parametrize("argv", EXECUTE_FAST)
def test_execute_arguments_parse_as_typer_parses_them(dirs, monkeypatch, argv):
    from ctxmode.cli.commands import execute as command

    calls = _record(monkeypatch, command, "run_code", execute_action, "run_code")
    assert typer_main(["execute", *argv]) == 0
    assert fast.run(["execute", *argv]) == 0
    assert len(calls) == 2 and calls[0] == calls[1]


@pytest.mark.parametrize("argv", EXECUTE_TO_TYPER)
def test_execute_arguments_the_fast_path_leaves_to_typer(dirs, monkeypatch, argv):
    from ctxmode.cli.commands import execute as command

    calls = _record(monkeypatch, command, "run_code", execute_action, "run_code")
    assert fast.run(["execute", *argv]) is None
    assert calls == []


def test_other_commands_and_shell_completion_go_to_typer(monkeypatch):
    assert fast.run(["index", "x"]) is None
    assert fast.run(["--version", "search"]) is None
    monkeypatch.setenv(fast.COMPLETE_VAR, "complete_bash")
    assert fast.run(["search", "x"]) is None
    assert fast.run(["--version"]) is None


def test_version_is_typers(capsys):
    assert fast.run(["--version"]) == 0
    fast_out = capsys.readouterr().out
    assert typer_main(["--version"]) == 0
    assert capsys.readouterr().out == fast_out


# --- the top-level help ------------------------------------------------------------------


def _clean_env() -> dict[str, str]:
    drop = {*fast.HELP_VARIABLES, "NO_COLOR", "TERM", "COLORTERM"}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["PYTHONPATH"] = str(REPO)
    return env


def _stdout(code: str, env: dict[str, str]) -> tuple[int, bytes, str]:
    proc = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
    )
    return proc.returncode, proc.stdout, proc.stderr.decode("utf-8", "replace")


def test_fast_help_is_byte_for_byte_typers_help(tmp_path):
    env = _clean_env()
    typer_code = "import sys\nfrom ctxmode.cli.app import main\nsys.exit(main(['--help']))"
    rc, typers, err = _stdout(typer_code, env)
    assert rc == 0, err
    for argv in (["--help"], ["-h"], []):
        probe = (
            "import sys\nfrom ctxmode.__main__ import main\n"
            f"rc = main({argv!r})\nsys.stderr.write(str(sorted(m for m in sys.modules "
            "if m.split('.')[0] in ('typer', 'rich'))))\nsys.exit(rc)"
        )
        rc, out, err = _stdout(probe, env)
        assert rc == 0, err
        assert out == typers, argv
        assert err == "[]", argv  # printed from help.txt: neither Typer nor Rich loaded


def test_help_is_rendered_by_typer_when_a_variable_changes_its_look():
    env = {**_clean_env(), "COLUMNS": "60"}
    probe = (
        "import sys\nfrom ctxmode.__main__ import main\nrc = main(['--help'])\n"
        "sys.stderr.write(str('typer' in sys.modules))\nsys.exit(rc)"
    )
    rc, out, err = _stdout(probe, env)
    assert rc == 0 and err == "True"
    assert max(len(line) for line in out.decode("utf-8").splitlines()) <= 60


def test_bare_ctxmode_and_a_bare_group_print_help_on_stdout_and_exit_0(capsys):
    assert typer_main([]) == 0
    captured = capsys.readouterr()
    assert "Usage: ctxmode [OPTIONS] COMMAND [ARGS]..." in captured.out
    assert captured.err == ""
    assert typer_main(["policy"]) == 0
    assert "Usage: ctxmode policy [OPTIONS] COMMAND" in capsys.readouterr().out


# --- the lazy registry -------------------------------------------------------------------


def test_registry_summaries_are_the_first_paragraph_of_each_command_help():
    import typer.main

    from ctxmode.cli.app import app

    root = typer.main.get_command(app)
    ctx = root.make_context("ctxmode", [], resilient_parsing=True)
    for name, entry in registry.COMMANDS.items():
        command = root.get_command(ctx, name)
        assert command is not None and command.name == name
        first = (command.help or "").split("\n\n")[0]
        assert " ".join(first.split()) == entry.summary, name


def test_help_lists_commands_without_importing_them():
    env = _clean_env()
    env["COLUMNS"] = "100"  # Typer renders it
    probe = (
        "import sys\nfrom ctxmode.__main__ import main\nrc = main(['--help'])\n"
        "sys.stderr.write(str(sorted(m for m in sys.modules "
        "if m.startswith('ctxmode.cli.commands.'))))\nsys.exit(rc)"
    )
    rc, out, err = _stdout(probe, env)
    assert rc == 0 and err == "[]"
    for name in registry.COMMANDS:
        assert f" {name} " in out.decode("utf-8")
