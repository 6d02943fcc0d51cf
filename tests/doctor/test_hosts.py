"""Host setup as doctor sees it, after real `ctxmode setup` runs into a temp home and project.
Doctor must never change a settings file."""

import json
import shutil
from pathlib import Path

from ctxmode.__main__ import main
from ctxmode.errors import UsageError
from ctxmode.setup.command import Command
from ctxmode.setup.model import Scope
from ctxmode.setup.targets import PLATFORMS, plan

from .support import by_name, doctor_json, doctor_text


def _setup(*argv: str) -> None:
    assert main(["setup", *argv, "--json"]) == 0


def _files(*roots: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for r in roots for p in sorted(r.rglob("*")) if p.is_file()}


def test_nothing_set_up_is_one_ok_line(project, capsys):
    code, data = doctor_json(capsys)
    setups = [c for c in data["checks"] if c["name"].startswith("setup")]
    assert [(c["name"], c["status"]) for c in setups] == [("setup", "OK")]
    assert "no host agent set up" in setups[0]["detail"]
    assert code == 0


def test_a_set_up_platform_is_ok_and_the_others_stay_quiet(project, capsys):
    _setup("claude-code")
    capsys.readouterr()
    code, data = doctor_json(capsys)
    setups = [c for c in data["checks"] if c["name"].startswith("setup")]
    assert [c["name"] for c in setups] == ["setup claude-code (project)"]
    assert setups[0]["status"] == "OK", setups[0]
    assert setups[0]["detail"] == (
        "hooks and MCP server registered in .claude/settings.json, .mcp.json"
    )
    assert code == 0


def test_a_host_that_runs_no_hooks_is_reported_as_the_server_alone(project, capsys):
    _setup("zed", "--global")
    capsys.readouterr()
    _, data = doctor_json(capsys)
    (check,) = [c for c in data["checks"] if c["name"].startswith("setup zed")]
    assert check["status"] == "OK", check
    assert check["detail"].startswith("MCP server registered in ")


def _scope(platform: str, project: Path) -> str:
    """``project``, or ``global`` for a host with no per-project configuration."""
    try:
        plan(platform, Scope(project), Command())
    except UsageError:
        return "global"
    return "project"


def test_every_platform_set_up_is_reported_ok(project, capsys):
    for platform in PLATFORMS:
        _setup(platform, *(["--global"] if _scope(platform, project) == "global" else []))
    capsys.readouterr()
    _, data = doctor_json(capsys)
    checks = by_name(data)
    for platform in PLATFORMS:
        check = checks[f"setup {platform} ({_scope(platform, project)})"]
        # complete; hosts side by side only earn setup's double-hook advice
        assert check["status"] == "OK" or (
            check["status"] == "WARN"
            and check["detail"].startswith("registered in ")
            and check["fix"] is None
        ), check


def test_global_setup_of_a_toml_host_is_reported_in_its_scope(project, home, capsys):
    _setup("codex", "--global")
    capsys.readouterr()
    _, data = doctor_json(capsys)
    codex = by_name(data)["setup codex (global)"]
    assert codex["status"] == "OK", codex
    assert "~/.codex/hooks.json" in codex["detail"] and "~/.codex/config.toml" in codex["detail"]

    config = home / ".codex" / "config.toml"
    config.write_text(config.read_text(encoding="utf-8").replace("hooks = true", "hooks = false"))
    _, data = doctor_json(capsys)
    codex = by_name(data)["setup codex (global)"]
    assert codex["status"] == "WARN"
    assert "~/.codex/config.toml differs from what setup writes" in codex["detail"]
    assert codex["fix"] == "ctxmode setup codex --global"


def test_a_removed_hook_entry_warns_with_the_setup_fix_and_nothing_is_written(
    project, home, data_root, capsys
):
    _setup("claude-code")
    settings = project / ".claude" / "settings.json"
    doc = json.loads(settings.read_text(encoding="utf-8"))
    del doc["hooks"]["PreCompact"]
    settings.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    before = _files(project, home, data_root / "setup")
    capsys.readouterr()

    code, data = doctor_json(capsys)
    check = by_name(data)["setup claude-code (project)"]
    assert check["status"] == "WARN"
    assert check["detail"] == "hooks missing in .claude/settings.json: PreCompact"
    assert check["fix"] == "ctxmode setup claude-code"
    assert code == 0
    code, text = doctor_text(capsys)
    assert (
        "[WARN] setup claude-code (project): hooks missing in .claude/settings.json: "
        "PreCompact — fix: ctxmode setup claude-code"
    ) in text
    assert _files(project, home, data_root / "setup") == before

    # and the fix it names does fix it
    _setup("claude-code")
    capsys.readouterr()
    _, data = doctor_json(capsys)
    assert by_name(data)["setup claude-code (project)"]["status"] == "OK"


def test_a_missing_mcp_server_warns(project, capsys):
    _setup("cursor")
    mcp = project / ".cursor" / "mcp.json"
    mcp.write_text('{"mcpServers": {}}\n', encoding="utf-8")
    capsys.readouterr()
    _, data = doctor_json(capsys)
    check = by_name(data)["setup cursor (project)"]
    assert check["status"] == "WARN"
    assert "MCP server mcpServers.ctxmode missing in .cursor/mcp.json" in check["detail"]


def test_hooks_found_without_an_ownership_record_still_count(project, data_root, capsys):
    _setup("gemini-cli")
    for record in (data_root / "setup").glob("gemini-cli-*.json"):
        record.unlink()
    capsys.readouterr()
    _, data = doctor_json(capsys)
    assert by_name(data)["setup gemini-cli (project)"]["status"] == "OK"


def test_a_hook_executable_that_no_longer_exists_fails(project, tmp_path, capsys):
    exe = tmp_path / "tools" / "ctxmode"
    exe.parent.mkdir()
    shutil.copy(tmp_path / "bin" / "ctxmode", exe)
    _setup("cursor", "--command", str(exe))
    capsys.readouterr()
    _, data = doctor_json(capsys)
    # the absolute --command is setup's advice, not a problem of this setup
    assert by_name(data)["setup cursor (project)"]["status"] == "OK"

    exe.unlink()
    code, data = doctor_json(capsys)
    check = by_name(data)["setup cursor (project)"]
    assert check["status"] == "FAIL"
    assert check["detail"].startswith("hooks run ") and "which no longer exists" in check["detail"]
    assert check["fix"].startswith("ctxmode setup cursor")
    assert code == 1


def test_an_unparsable_settings_file_of_a_set_up_host_fails(project, capsys):
    _setup("cursor")
    hooks = project / ".cursor" / "hooks.json"
    hooks.write_text('{"hooks": ', encoding="utf-8")
    capsys.readouterr()
    code, data = doctor_json(capsys)
    check = by_name(data)["setup cursor (project)"]
    assert check["status"] == "FAIL"
    assert "is not valid JSON" in check["detail"]
    assert check["fix"] == "fix that file, then run ctxmode setup cursor"
    assert hooks.read_text(encoding="utf-8") == '{"hooks": '
    assert code == 1


def test_a_broken_settings_file_of_a_host_never_set_up_is_not_reported(project, capsys):
    (project / ".cursor").mkdir()
    (project / ".cursor" / "hooks.json").write_text("// jsonc\n{}", encoding="utf-8")
    _, data = doctor_json(capsys)
    assert not any("cursor" in c["name"] for c in data["checks"])


def test_a_crashing_check_is_one_fail_line_and_the_report_goes_on(project, data_root, capsys):
    # An ownership record that is JSON but not what setup wrote makes the setup code raise
    # something other than its own errors.
    record = data_root / "setup" / "claude-code-global.json"
    record.parent.mkdir(parents=True)
    record.write_text(json.dumps({"files": [{"path": 5}]}), encoding="utf-8")
    code, text = doctor_text(capsys)
    assert code == 1
    line = next(x for x in text.splitlines() if x.startswith("[FAIL] setup: "))
    assert "the check itself failed: TypeError" in line
    assert "[OK] python: " in text and "] install: " in text  # the others still ran
    assert "Traceback" not in text
