"""`ctxmode setup` / `ctxmode uninstall` at the CLI: the envelope, exit codes, dry-run
output, and help text."""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from ctxmode.__main__ import main

from .support import run_json

DATA_KEYS = {
    "platform",
    "scope",
    "project",
    "command",
    "dry_run",
    "changed",
    "files",
    "record",
    "warnings",
    "notes",
}


@pytest.fixture(autouse=True)
def env(fake_host):
    return fake_host


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    monkeypatch.chdir(root)
    return root.resolve()


def test_setup_json_envelope_lists_every_file_with_its_entries_and_diff(project, capsys):
    code, doc = run_json(capsys, "setup", "claude-code")
    assert code == 0 and doc["status"] == "ok" and doc["command"] == ["setup"]
    data = doc["data"]
    assert set(data) == DATA_KEYS
    assert (data["platform"], data["scope"], data["project"]) == (
        "claude-code",
        "project",
        str(project),
    )
    assert data["command"] == "ctxmode" and data["changed"] is True
    files = {f["path"]: f for f in data["files"]}
    assert set(files) == {str(project / ".claude" / "settings.json"), str(project / ".mcp.json")}
    assert all(
        f["action"] == "create" and f["diff"].startswith("--- /dev/null") for f in files.values()
    )
    kinds = {e["kind"] for f in files.values() for e in f["entries"]}
    assert kinds == {"hook", "server"}

    code, doc = run_json(capsys, "setup", "claude-code")
    assert doc["data"]["changed"] is False
    assert {f["action"] for f in doc["data"]["files"]} == {"unchanged"}
    assert all(f["diff"] is None for f in doc["data"]["files"])


def test_dry_run_prints_diffs_and_writes_nothing(project, capsys):
    assert main(["setup", "cursor", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"+++ b{project / '.cursor' / 'hooks.json'}" in out
    assert '+    "preToolUse": [' in out
    assert "would create" in out and "Dry run: nothing was written." in out
    assert not (project / ".cursor").exists()


def test_human_output_names_files_record_and_next_steps(project, capsys):
    assert main(["setup", "gemini-cli"]) == 0
    out = capsys.readouterr().out
    assert "created" in out and ".gemini/settings.json" in out
    assert "hooks BeforeTool, AfterTool" in out and "hooksConfig.enabled" in out
    assert "Ownership record:" in out and "Next: Restart Gemini CLI" in out
    assert main(["setup", "gemini-cli"]) == 0
    assert "Already set up; nothing changed." in capsys.readouterr().out


def test_uninstall_reports_what_it_removed_then_that_nothing_is_left(project, capsys):
    main(["setup", "kiro"])
    capsys.readouterr()
    code, doc = run_json(capsys, "uninstall", "kiro")
    assert code == 0 and {f["action"] for f in doc["data"]["files"]} == {"delete"}
    assert main(["uninstall", "kiro"]) == 0
    assert "nothing to remove" in capsys.readouterr().out


def test_global_scope_writes_under_home(env, capsys, project):
    code, doc = run_json(capsys, "setup", "codex", "--global")
    assert code == 0 and doc["data"]["scope"] == "global" and doc["data"]["project"] is None
    assert (env / ".codex" / "config.toml").exists()
    assert not (project / ".codex").exists()


@pytest.mark.parametrize(
    ("argv", "exit_code", "error"),
    [
        (["setup", "emacs"], 2, "usage"),
        (["uninstall", "emacs"], 2, "usage"),
        (["setup", "cursor", "--global", "--project", "."], 2, "usage"),
        (["setup", "cursor", "--command", "uvx ctxmode"], 2, "usage"),
    ],
)
def test_bad_input_is_a_usage_error(project, capsys, argv, exit_code, error):
    code, doc = run_json(capsys, *argv)
    assert (code, doc["status"], doc["errors"][0]["code"]) == (exit_code, "error", error)


def test_a_malformed_settings_file_exits_1_and_is_untouched(project, capsys):
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": ', encoding="utf-8")
    code, doc = run_json(capsys, "setup", "claude-code")
    assert code == 1 and doc["errors"][0]["code"] == "bad_settings"
    assert str(settings) in doc["errors"][0]["message"]
    assert settings.read_text(encoding="utf-8") == '{"hooks": '
    assert not (project / ".mcp.json").exists()


def test_ctxmode_missing_from_path_exits_4_with_install_advice(project, capsys, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    code, doc = run_json(capsys, "setup", "claude-code")
    assert code == 4 and doc["errors"][0]["code"] == "environment"
    assert "uv tool install ctxmode" in doc["errors"][0]["message"]


def test_warnings_go_to_stderr(project, capsys):
    main(["setup", "claude-code"])
    capsys.readouterr()
    assert main(["setup", "vscode-copilot"]) == 0
    captured = capsys.readouterr()
    assert "chat.hookFilesLocations" in captured.err
    assert "chat.hookFilesLocations" not in captured.out


@pytest.mark.parametrize("command", ["setup", "uninstall"])
def test_help_has_an_example(command, capsys):
    assert main([command, "--help"]) == 0
    out = capsys.readouterr().out
    assert "Example: ctxmode" in out and "--dry-run" in out


def _ctxmode(cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """The real CLI in a child process, in the fake host's environment."""
    return subprocess.run(
        [sys.executable, "-m", "ctxmode", *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=dict(os.environ),
        timeout=120,
        check=False,
    )


def _exe(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    path.chmod(0o755)
    return path


@pytest.mark.parametrize("where", ["temp", "cache"])
def test_a_temp_or_cache_install_is_set_up_with_a_warning_and_dry_run_agrees(
    project, monkeypatch, tmp_path, where
):
    base = Path(tempfile.gettempdir()) if where == "temp" else tmp_path / "home" / ".cache"
    exe = _exe(base / "checkout" / ".venv" / "bin" / "ctxmode")
    monkeypatch.setenv("PATH", f"{exe.parent}{os.pathsep}/usr/bin{os.pathsep}/bin")
    for argv in ([], ["--command", str(exe)]):
        dry = _ctxmode(project, "setup", "claude-code", "--dry-run", *argv)
        real = _ctxmode(project, "setup", "claude-code", *argv)
        assert (dry.returncode, real.returncode) == (0, 0), real.stderr
        for run in (dry, real):
            flat = " ".join(run.stderr.split())
            assert "disappears" not in run.stdout and "--command /absolute/path/to/ctxmode" in flat
            assert ("temporary directory" if where == "temp" else "cache folder") in flat
    server = json.loads((project / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]
    assert server["ctxmode"]["command"] == str(exe)


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (["--command", "pip-build-env-x1/bin/ctxmode"], 2),  # pip deletes it when done
        (["--command", "nowhere/ctxmode"], 4),
    ],
)
def test_dry_run_exits_with_the_code_the_real_run_would(project, argv, code):
    if argv[1].startswith("pip-build-env"):
        _exe(project / argv[1])
    argv = [argv[0], str(project / argv[1])]
    dry = _ctxmode(project, "setup", "cursor", "--dry-run", *argv)
    real = _ctxmode(project, "setup", "cursor", *argv)
    assert dry.returncode == real.returncode == code
    assert not (project / ".cursor").exists()


USER_FILES = {
    ".vscode/mcp.json": '{\n  // mine\n  "servers": {"lint": {"command": "lint"},},\n}\n',
    ".mcp.json": '{"mcpServers": {"db": {"command": "db-mcp"',  # broken, and not ours
    ".cursor/hooks.json": '{"version": 1, "hooks": {"stop": [{"command": "say done"}]}}',
    ".gemini/settings.json": '{\n  "ui": {"theme": "dark"}\n}\n',
    ".codex/config.toml": '[mcp_servers.other]\ncommand = "x"\n',
    ".kiro/agents/ctxmode.json": '{"name": "ctxmode", "tools": ["*"]}',
}


def test_uninstall_leaves_files_it_never_wrote_alone_and_exits_0(project):
    for name, text in USER_FILES.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text, encoding="utf-8")
    for platform in ("vscode-copilot", "claude-code", "cursor", "gemini-cli", "codex", "kiro"):
        run = _ctxmode(project, "uninstall", platform)
        assert run.returncode == 0, run.stderr
        assert "nothing of ctxmode's was found; nothing to remove." in run.stdout
    for name, text in USER_FILES.items():
        assert (project / name).read_text(encoding="utf-8") == text
