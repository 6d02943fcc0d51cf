"""Ownership records, whole files, scopes and the import budget of the setup package."""

import json
import os
import subprocess
import sys

import pytest

from ctxmode.setup import setup, targets, uninstall
from ctxmode.setup.errors import SetupConflictError, SetupWriteError


def test_the_record_names_each_file_and_the_entries_written(project):
    result = setup("cursor", project=project)
    rec = json.loads(result.record_path.read_text(encoding="utf-8"))
    assert rec["platform"] == "cursor" and rec["scope"] == "project"
    assert rec["project"] == str(project) and rec["command"] == "ctxmode"
    files = {f["path"]: f for f in rec["files"]}
    hooks = files[str(project / ".cursor" / "hooks.json")]
    assert hooks["created_file"] is True
    assert hooks["created_dirs"] == [str(project / ".cursor")]
    assert {
        "event": "stop",
        "matcher": None,
        "command": "ctxmode hook cursor stop",
        "item": {"command": "ctxmode hook cursor stop"},
    } in hooks["hooks"]
    assert hooks["settings"] == [
        {"path": ["version"], "value": 1, "created": True, "structural": True}
    ]
    assert result.record_path.parent.name == "setup"
    assert result.record_path.name.startswith("cursor-")


def test_uninstall_cleans_files_recorded_under_an_earlier_environment(tmp_path, monkeypatch):
    first = tmp_path / "first"
    monkeypatch.setenv("CODEX_HOME", str(first))
    setup("codex", project=None)
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "second"))
    result = uninstall("codex", project=None)
    assert {c.path.parent for c in result.changes if c.action == "delete"} == {first}
    assert not first.exists()


def test_an_unreadable_record_is_ignored_with_a_warning(project):
    result = setup("qwen-code", project=project)
    result.record_path.write_text("not json", encoding="utf-8")
    result = uninstall("qwen-code", project=project)
    assert any("unreadable ownership record" in w for w in result.warnings)
    assert not (project / ".qwen" / "settings.json").exists() or "ctxmode" not in (
        project / ".qwen" / "settings.json"
    ).read_text(encoding="utf-8")


def test_a_foreign_plugin_file_is_not_overwritten(project):
    plugin = project / ".opencode" / "plugins" / "ctxmode.js"
    plugin.parent.mkdir(parents=True)
    plugin.write_text("// mine\n", encoding="utf-8")
    with pytest.raises(SetupConflictError, match="not the file ctxmode installed"):
        setup("opencode", project=project)
    assert plugin.read_text(encoding="utf-8") == "// mine\n"
    assert not (project / "opencode.json").exists()


def test_an_edited_plugin_is_kept_by_uninstall(project):
    setup("opencode", project=project)
    plugin = project / ".opencode" / "plugins" / "ctxmode.js"
    plugin.write_text(plugin.read_text(encoding="utf-8") + "// my tweak\n", encoding="utf-8")
    result = uninstall("opencode", project=project)
    assert any("differs from the file ctxmode installed" in w for w in result.warnings)
    assert plugin.exists() and not (project / "opencode.json").exists()


def test_an_outdated_plugin_of_ours_is_upgraded(project, monkeypatch):
    monkeypatch.setattr(targets, "opencode_plugin_source", lambda: "// v1\n")
    setup("opencode", project=project)
    monkeypatch.setattr(targets, "opencode_plugin_source", lambda: "// v2\n")
    result = setup("opencode", project=project)
    plugin = project / ".opencode" / "plugins" / "ctxmode.js"
    assert plugin.read_text(encoding="utf-8") == "// v2\n"
    assert [c.action for c in result.changes] == ["update", "unchanged"]
    uninstall("opencode", project=project)
    assert not (project / ".opencode").exists()


def test_a_command_override_is_baked_into_the_opencode_plugin(tmp_path, project):
    exe = tmp_path / "opt" / "ctxmode"
    exe.parent.mkdir()
    exe.write_text("#!/bin/sh\n", encoding="utf-8")
    exe.chmod(0o755)
    setup("opencode", project=project, command=str(exe))
    plugin = (project / ".opencode" / "plugins" / "ctxmode.js").read_text(encoding="utf-8")
    assert f'process.env.CTXMODE_BIN || "{exe}"' in plugin


def test_a_build_without_the_plugin_shim_says_so(project, monkeypatch):
    from ctxmode.errors import EnvironmentProblem

    monkeypatch.setattr(targets, "opencode_plugin_source", lambda: None)
    with pytest.raises(EnvironmentProblem, match="opencode_plugin.js"):
        setup("opencode", project=project)


def test_unknown_platform_is_a_usage_error_before_anything_else(monkeypatch, project):
    from ctxmode.errors import UsageError

    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(UsageError, match="claude-code, qwen-code"):
        setup("emacs", project=project)


def test_project_and_global_records_are_separate(project, home):
    setup("claude-code", project=project)
    setup("claude-code", project=None)
    uninstall("claude-code", project=project)
    assert "ctxmode" in (home / ".claude.json").read_text(encoding="utf-8")
    assert not (project / ".mcp.json").exists()


def test_importing_the_setup_package_pulls_in_nothing_heavy():
    code = (
        "import sys, json, ctxmode.setup, ctxmode.setup.engine\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, encoding="utf-8", check=True
    ).stdout
    heavy = ("typer", "rich", "mcp", "psutil", "platformdirs", "ctxmode.cli", "ctxmode.server")
    loaded = json.loads(out)
    assert [m for m in loaded if m.split(".")[0] in heavy or m.startswith(heavy)] == []


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root may write anywhere"
)
def test_a_read_only_directory_fails_the_dry_run_just_as_the_real_run(project):
    (project / ".cursor").mkdir()
    (project / ".cursor").chmod(0o555)
    for dry_run in (True, False):
        with pytest.raises(SetupWriteError, match="not writable"):
            setup("cursor", project=project, dry_run=dry_run)
    assert list((project / ".cursor").iterdir()) == []
