"""Setup of the plugin hosts, Pi, Oh My Pi and OpenClaw: the shim each one loads, where
it goes, and what else their configuration needs."""

import json
from pathlib import Path

import pytest

from ctxmode.errors import UsageError
from ctxmode.setup import setup, uninstall
from ctxmode.setup.errors import SettingsFileError
from ctxmode.setup.jsplugins import shim_source

from .conftest import snapshot


def _json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_pi_installs_the_extension_with_the_shared_helpers(project, home):
    setup("pi", project=project)
    shim = (project / ".pi" / "extensions" / "ctxmode.js").read_text(encoding="utf-8")
    assert 'const PLATFORM = "pi";' in shim
    assert "/* ctxmode: shim_common.js */" not in shim
    assert "function hook(event, payload)" in shim
    assert list(project.iterdir()) == [project / ".git", project / ".pi"]  # no MCP file
    uninstall("pi", project=project)
    assert not (project / ".pi").exists()


def test_pi_global_honours_the_agent_dir(home, tmp_path, monkeypatch):
    setup("pi", project=None)
    assert (home / ".pi" / "agent" / "extensions" / "ctxmode.js").is_file()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    setup("pi", project=None, dry_run=True)  # the record is per scope, not per directory
    uninstall("pi", project=None)
    setup("pi", project=None)
    assert (tmp_path / "agent" / "extensions" / "ctxmode.js").is_file()


def test_a_command_path_is_baked_into_the_shim(project, tmp_path):
    exe = tmp_path / "stable" / "ctxmode-stable"
    exe.parent.mkdir()
    exe.write_text("#!/bin/sh\n", encoding="utf-8")
    exe.chmod(0o755)
    result = setup("pi", project=project, command=str(exe))
    shim = (project / ".pi" / "extensions" / "ctxmode.js").read_text(encoding="utf-8")
    assert f'process.env.CTXMODE_BIN || "{exe}"' in shim
    assert not [w for w in result.warnings if "shim" in w]


def test_omp_gets_the_same_extension_and_an_mcp_server(project):
    setup("omp", project=project)
    shim = (project / ".omp" / "extensions" / "ctxmode.js").read_text(encoding="utf-8")
    assert 'const PLATFORM = "omp";' in shim
    assert _json(project / ".omp" / "mcp.json")["mcpServers"]["ctxmode"] == {
        "type": "stdio",
        "command": "ctxmode",
        "args": ["serve"],
    }


def _openclaw_config(home: Path) -> Path:
    path = home / ".openclaw" / "openclaw.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def test_openclaw_is_set_up_globally_only(project):
    with pytest.raises(UsageError, match="--global"):
        setup("openclaw", project=project)
    with pytest.raises(UsageError, match="--global"):
        uninstall("openclaw", project=project)


def test_openclaw_loads_and_enables_the_plugin_and_registers_the_server(home):
    config = _openclaw_config(home)
    text = (
        "{\n  // my gateway\n"
        '  "plugins": {"load": {"paths": ["/opt/mine.js"]},'
        ' "entries": {"mine": {"enabled": true}}},\n'
        '  "mcp": {"servers": {"docs": {"url": "https://example.invalid/mcp"}}}\n}\n'
    )
    config.write_text(text, encoding="utf-8")
    before = snapshot(home)
    setup("openclaw", project=None)
    plugin = home / ".openclaw" / "ctxmode" / "ctxmode.js"
    assert 'const PLATFORM = "openclaw";' in plugin.read_text(encoding="utf-8")
    written = config.read_text(encoding="utf-8")
    assert "// my gateway" in written
    data = json.loads(written.replace("  // my gateway\n", ""))
    assert data["plugins"]["load"]["paths"] == ["/opt/mine.js", str(plugin)]
    assert data["plugins"]["entries"]["ctxmode"] == {
        "enabled": True,
        "hooks": {"allowConversationAccess": True},
    }
    assert data["mcp"]["servers"]["ctxmode"] == {"command": "ctxmode", "args": ["serve"]}
    assert data["mcp"]["servers"]["docs"] == {"url": "https://example.invalid/mcp"}
    assert not setup("openclaw", project=None).changed
    uninstall("openclaw", project=None)
    after = snapshot(home)
    assert {k: v for k, v in after.items() if "/.local/share/" not in k} == {
        k: v for k, v in before.items() if "/.local/share/" not in k
    }


def test_openclaw_honours_its_state_and_config_variables(home, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENCLAW_HOME", str(tmp_path / "oc-home"))
    result = setup("openclaw", project=None, dry_run=True)
    assert {c.path for c in result.changes} == {
        tmp_path / "oc-home" / ".openclaw" / "ctxmode" / "ctxmode.js",
        tmp_path / "oc-home" / ".openclaw" / "openclaw.json",
    }
    monkeypatch.setenv("OPENCLAW_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("OPENCLAW_CONFIG_PATH", str(tmp_path / "conf" / "openclaw.json"))
    result = setup("openclaw", project=None, dry_run=True)
    assert {c.path for c in result.changes} == {
        tmp_path / "state" / "ctxmode" / "ctxmode.js",
        tmp_path / "conf" / "openclaw.json",
    }


def test_openclaw_says_when_the_server_would_miss_the_data_root(home, monkeypatch):
    monkeypatch.delenv("CTXMODE_DIR", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    assert not [n for n in setup("openclaw", project=None, dry_run=True).notes if "env" in n]
    monkeypatch.setenv("CTXMODE_DIR", str(home / "data"))
    notes = setup("openclaw", project=None, dry_run=True).notes
    assert any("CTXMODE_DIR" in n and "mcp.servers.ctxmode.env" in n for n in notes)


def test_openclaw_refuses_a_config_it_cannot_parse(home):
    config = _openclaw_config(home)
    config.write_text("{ plugins: { load: ", encoding="utf-8")
    with pytest.raises(SettingsFileError):
        setup("openclaw", project=None)
    assert config.read_text(encoding="utf-8") == "{ plugins: { load: "
    assert not (home / ".openclaw" / "ctxmode").exists()


def test_every_shim_is_shipped():
    for name in ("pi_extension.js", "openclaw_plugin.js", "shim_common.js"):
        assert shim_source(name)
