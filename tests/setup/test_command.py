"""Hosts get a version-independent command: `ctxmode` on PATH, or an explicit stable path."""

import json
import tempfile
from pathlib import Path

import pytest

from ctxmode.errors import EnvironmentProblem, UsageError
from ctxmode.setup import setup, uninstall
from ctxmode.setup.command import Command, is_our_hook, resolve


def _exe(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def test_missing_from_path_is_an_error_with_install_advice(monkeypatch, project):
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(EnvironmentProblem, match="pipx install ctxmode") as info:
        setup("claude-code", project=project)
    assert info.value.exit_code == 4
    assert not (project / ".claude").exists()


def test_a_dry_run_fails_exactly_as_the_real_run_when_ctxmode_is_missing(monkeypatch, project):
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(EnvironmentProblem, match="not on PATH") as info:
        setup("claude-code", project=project, dry_run=True)
    assert info.value.exit_code == 4


def _volatile_base(where: str, tmp_path: Path) -> Path:
    if where == "systmp":
        return Path(tempfile.gettempdir()) / "checkout"
    return tmp_path / ".cache" / "pypoetry" / "virtualenvs" / "proj-py3.12"


@pytest.mark.parametrize("where", ["systmp", "cache"])
def test_ctxmode_on_path_under_the_temp_dir_or_a_cache_is_used_with_a_warning(
    monkeypatch, tmp_path, project, where
):
    venv = _exe(_volatile_base(where, tmp_path) / "bin" / "ctxmode")
    monkeypatch.setenv("PATH", str(venv.parent))
    for dry_run in (True, False):
        result = setup("claude-code", project=project, dry_run=dry_run)
        warning = next(w for w in result.warnings if str(venv) in w)
        assert "--command" in warning and ("temporary directory" in warning or "cache" in warning)
    assert (project / ".mcp.json").exists()


@pytest.mark.parametrize("where", ["systmp", "cache"])
def test_a_temporary_or_cache_command_path_works_with_a_warning(tmp_path, project, where):
    exe = _exe(_volatile_base(where, tmp_path) / "bin" / "ctxmode")
    result = setup("claude-code", project=project, command=str(exe))
    assert any(str(exe) in w and "disappears" in w for w in result.warnings)
    server = json.loads((project / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]
    assert server["ctxmode"]["command"] == str(exe)


def test_a_command_in_a_pip_build_directory_is_refused_even_in_a_dry_run(tmp_path, project):
    exe = _exe(tmp_path / "pip-build-env-abc123" / "overlay" / "bin" / "ctxmode")
    for dry_run in (True, False):
        with pytest.raises(UsageError, match="pip deletes"):
            setup("claude-code", project=project, command=str(exe), dry_run=dry_run)
    assert not (project / ".mcp.json").exists()


def test_a_command_line_is_not_a_command(project):
    with pytest.raises(UsageError, match="one executable"):
        setup("claude-code", project=project, command="uvx ctxmode")


def test_a_missing_command_path_is_an_environment_problem(tmp_path):
    with pytest.raises(EnvironmentProblem, match="not an executable"):
        resolve(str(tmp_path / "nope" / "ctxmode"), shared=False)


def test_an_absolute_command_is_written_quoted_and_warned_about(tmp_path, project):
    exe = _exe(tmp_path / "my tools" / "ctxmode")
    result = setup("claude-code", project=project, command=str(exe))
    assert any("only on this machine" in w for w in result.warnings)
    hooks = json.loads((project / ".claude" / "settings.json").read_text(encoding="utf-8"))
    command = hooks["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    assert command == f"'{exe}' hook claude-code sessionstart"
    server = json.loads((project / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]
    assert server["ctxmode"] == {"command": str(exe), "args": ["serve"]}


def test_a_versioned_command_path_gets_a_warning(tmp_path):
    exe = _exe(tmp_path / "Cellar" / "ctxmode" / "1.2.3" / "bin" / "ctxmode")
    _, warnings = resolve(str(exe), shared=False)
    assert any("version" in w for w in warnings)


def test_switching_commands_replaces_the_entries_and_uninstall_finds_both(tmp_path, project):
    exe = _exe(tmp_path / "opt" / "bin" / "ctxmode")
    setup("claude-code", project=project, command=str(exe))
    setup("claude-code", project=project)
    text = (project / ".claude" / "settings.json").read_text(encoding="utf-8")
    assert str(exe) not in text and text.count("hook claude-code pretooluse") == 2
    uninstall("claude-code", project=project)
    assert not (project / ".claude").exists()


@pytest.mark.parametrize(
    ("command", "ours"),
    [
        ("ctxmode hook claude-code pretooluse", True),
        ("/opt/x/bin/ctxmode hook claude-code stop", True),
        ("'/my tools/ctxmode' hook claude-code stop", True),
        ("ctxmode hook cursor pretooluse", False),
        ("ctxmodex hook claude-code pretooluse", False),
        ("echo ctxmode hook claude-code", False),
        ("ctxmode hook claude-code pretooluse && rm -rf /", False),
        (None, False),
    ],
)
def test_our_hooks_are_recognised_by_their_command(command, ours):
    assert is_our_hook(command, "claude-code") is ours


def test_command_renders_hook_and_serve():
    assert Command().hook("kiro", "agentspawn") == "ctxmode hook kiro agentspawn"
    assert Command("/usr/local/bin/ctxmode").serve() == ["/usr/local/bin/ctxmode", "serve"]
