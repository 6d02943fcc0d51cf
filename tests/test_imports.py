"""The hook path and the core modules start without the heavy libraries (a subprocess each)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

HEAVY = ("typer", "rich", "mcp", "pydantic", "psutil", "ctxmode.cli", "ctxmode.server")


def _loaded(code: str, stdin: str = "") -> set[str]:
    dump = "import sys, json\nsys.stderr.write('MODULES' + json.dumps(sorted(sys.modules)))"
    probe = f"{code}\n{dump}"
    proc = subprocess.run(
        [sys.executable, "-c", probe],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=True,
    )
    return set(json.loads(proc.stderr.split("MODULES", 1)[1]))


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


def test_hook_dispatch_imports_nothing_heavy():
    code = (
        "import sys\nfrom ctxmode.__main__ import main\n"
        "rc = main(['hook', 'claude-code', 'pretooluse'])\nassert rc == 0, rc"
    )
    assert _heavy(_loaded(code, stdin=json.dumps({"tool_name": "Bash"}))) == []


@pytest.mark.parametrize(
    ("platform", "event", "payload"),
    [
        (
            "claude-code",
            "pretooluse",
            {"tool_name": "Bash", "tool_input": {"command": "curl https://x.y"}},
        ),
        ("claude-code", "pretooluse", {"tool_name": "Read", "tool_input": {"file_path": "a.py"}}),
        ("claude-code", "posttooluse", {"tool_name": "Edit", "tool_input": {"file_path": "a.py"}}),
        (
            "gemini-cli",
            "beforetool",
            {"tool_name": "run_shell_command", "tool_input": {"command": "ls"}},
        ),
        ("codex", "pretooluse", {"tool_name": "shell", "tool_input": {"command": ["ls", "-la"]}}),
    ],
)
def test_the_hooks_run_on_every_tool_call_do_not_load_typing(tmp_path, platform, event, payload):
    """`typing` costs each hook process ~3 ms: the hook path annotates with
    `ctxmode.typenames`. Without site, whose editable-install finder loads `typing` itself."""
    project = tmp_path / "proj"
    project.mkdir()
    code = (
        "import sys, json\nfrom ctxmode.__main__ import main\n"
        f"rc = main(['hook', {platform!r}, {event!r}])\n"
        "sys.stderr.write('MODULES' + json.dumps(sorted(sys.modules)))"
    )
    body = {"session_id": "s1", "cwd": str(project), "hook_event_name": event, **payload}
    proc = subprocess.run(
        [sys.executable, "-S", "-c", code],
        input=json.dumps(body),
        cwd=project,
        env={
            **os.environ,
            "PYTHONPATH": str(REPO),
            "HOME": str(tmp_path),
            "CLAUDE_PROJECT_DIR": str(project),
        },
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=True,
    )
    loaded = set(json.loads(proc.stderr.split("MODULES", 1)[1]))
    assert "ctxmode.hookevent" in loaded  # the hook did run
    assert "typing" not in loaded
    assert "dataclasses" not in loaded


def test_statusline_imports_nothing_heavy_nor_sqlite():
    code = "from ctxmode.__main__ import main\nassert main(['statusline']) == 0"
    loaded = _loaded(code, stdin="{}")
    assert _heavy(loaded) == []
    assert "sqlite3" not in loaded


@pytest.mark.parametrize(
    "module", ["ctxmode.store", "ctxmode.paths", "ctxmode.store.indexer", "ctxmode.settings"]
)
def test_core_modules_import_nothing_heavy(module):
    assert _heavy(_loaded(f"import {module}")) == []


def test_settings_loads_nothing_beyond_os_even_when_every_value_is_read():
    """Without site (whose editable-install finder loads pathlib), importing the settings
    module and reading every variable adds no module but itself to what ``os`` needs."""
    code = (
        "import os, sys, json\n"
        "before = set(sys.modules)\n"
        "from ctxmode import settings\n"
        "values = [v.get() for v in settings.REGISTRY]\n"
        "sys.stderr.write('NEW' + json.dumps(sorted(set(sys.modules) - before)))"
    )
    proc = subprocess.run(
        [sys.executable, "-S", "-c", code],
        env={**os.environ, "PYTHONPATH": str(REPO), "CTXMODE_INJECT": "off"},
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=True,
    )
    assert json.loads(proc.stderr.split("NEW", 1)[1]) == ["ctxmode", "ctxmode.settings"]


def test_hook_subprocess_with_garbage_stdin_exits_0_silently():
    proc = subprocess.run(
        [sys.executable, "-m", "ctxmode", "hook", "claude-code", "pretooluse"],
        input="\x00not json{{",
        capture_output=True,
        text=True,
        encoding="utf-8",
    )
    assert proc.returncode == 0
    assert proc.stdout == ""


def test_hook_with_an_unknown_platform_fails_open_under_a_host():
    proc = subprocess.run(
        [sys.executable, "-m", "ctxmode", "hook", "no-such-host", "pretooluse"],
        input="{}",
        capture_output=True,
        text=True,
        encoding="utf-8",
    )
    assert proc.returncode == 0
    assert proc.stdout == ""
    assert "unknown platform 'no-such-host'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_bare_serve_starts_without_typer_rich_or_gc():
    code = (
        "import sys, io\nsys.stdin = io.TextIOWrapper(io.BytesIO(b''))\n"
        "from ctxmode.__main__ import main\nassert main(['serve']) == 0"
    )
    loaded = _loaded(code)
    assert not [m for m in loaded if m.split(".")[0] in ("typer", "rich")]
    assert "ctxmode.gc" not in loaded and "ctxmode.cli.app" not in loaded


# --- the commands scripts and agents run most start without the CLI framework -------------

FRAMEWORK = ("typer", "rich", "pydantic", "mcp", "ctxmode.cli.app", "ctxmode.server")


def _framework(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in FRAMEWORK))


def _command_modules(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[set[str], str]:
    """The modules `ctxmode ARGV` loaded (a subprocess, no terminal anywhere) and its stdout."""
    code = (
        "import sys, json\nfrom ctxmode.__main__ import main\n"
        f"rc = main({argv!r})\nsys.stdout.flush()\n"
        "sys.stderr.write('MODULES' + json.dumps(sorted(sys.modules)))\n"
        "sys.exit(rc)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=True,
    )
    return set(json.loads(proc.stderr.split("MODULES", 1)[1])), proc.stdout


@pytest.fixture
def indexed_project(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "pool.md").write_text("# Pool\n\nThe pool timeout is 30 s.\n", encoding="utf-8")
    env = {
        k: v for k, v in os.environ.items() if k not in ("COLUMNS", "FORCE_COLOR", "TTY_COMPATIBLE")
    }
    env.update(CTXMODE_DIR=os.environ["CTXMODE_DIR"], CTXMODE_PROJECT_DIR=str(project))
    subprocess.run(
        [sys.executable, "-m", "ctxmode", "index", "pool.md"],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=True,
    )
    return project, env


@pytest.mark.parametrize(
    ("argv", "printed"),
    [
        (["--version"], "ctxmode "),
        (["--help"], " Usage: ctxmode [OPTIONS] COMMAND [ARGS]..."),
        ([], " Usage: ctxmode [OPTIONS] COMMAND [ARGS]..."),
        (["search", "pool", "timeout"], "1. pool.md:1-3  Pool"),
        (["search", "pool", "--limit", "2", "--json"], '"ctxmode_result_version": "1"'),
        (["execute", "--lang", "shell", "echo ok"], "ok"),
        (["execute", "--lang", "python", "print(1)"], "1"),
    ],
)
def test_fast_commands_start_without_typer_rich_pydantic_or_mcp(indexed_project, argv, printed):
    project, env = indexed_project
    loaded, out = _command_modules(argv, project, env)
    assert printed in out
    assert _framework(loaded) == []


def test_a_command_loads_only_its_own_module(indexed_project):
    project, env = indexed_project
    loaded, _ = _command_modules(["sources"], project, env)
    commands = {m for m in loaded if m.startswith("ctxmode.cli.commands.")}
    assert commands == {"ctxmode.cli.commands.sources"}
    assert "ctxmode.executor" not in loaded and "ctxmode.server" not in loaded
