"""bin/ctxmode-plugin and its bridge, run for real: fail open while ctxmode is not built,
answer the MCP host at once, run the built environment, key it by version and folder."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import ctxmode

ROOT = Path(__file__).resolve().parents[2]
LAUNCHER = ROOT / "bin" / "ctxmode-plugin"


@pytest.fixture
def data(tmp_path, monkeypatch) -> Path:
    """The plugin's data folder; a Python that runs scripts (the bridge) but cannot build a
    venv, so no test installs anything."""
    folder = tmp_path / "plugin-data"
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(folder))
    python = tmp_path / "python-without-venv"
    python.write_text(
        f'#!/bin/sh\ncase "$1" in -m) exit 1 ;; esac\nexec {sys.executable} "$@"\n',
        encoding="utf-8",
    )
    python.chmod(0o755)
    monkeypatch.setenv("CTXMODE_PYTHON", str(python))
    return folder


def launch(*args: str, stdin: str = "", root: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["sh", str(root / "bin" / "ctxmode-plugin"), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def where(root: Path = ROOT) -> Path:
    return Path(launch("--where", root=root).stdout.strip())


def test_a_hook_before_the_build_answers_nothing_and_exits_0(data):
    payload = {"tool_name": "Bash", "tool_input": {"command": "curl https://example.com"}}
    done = launch("hook", "claude-code", "pretooluse", stdin=json.dumps(payload))
    assert done.returncode == 0
    assert done.stdout == ""


def test_the_environment_is_keyed_by_version_and_plugin_folder(data, tmp_path):
    venv = where()
    assert venv.parent == data and venv.name.startswith(f"venv-{ctxmode.__version__}-")
    other = tmp_path / "other-plugin"
    (other / "bin").mkdir(parents=True)
    (other / "ctxmode").mkdir()
    shutil.copy(LAUNCHER, other / "bin" / "ctxmode-plugin")
    (other / "ctxmode" / "__init__.py").write_text('__version__ = "9.9.9"\n', encoding="utf-8")
    upgraded = where(other)
    assert upgraded.name.startswith("venv-9.9.9-") and upgraded != venv


def test_a_built_environment_runs_ctxmode(data):
    venv = where()
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)  # this test's Python has ctxmode
    (venv / ".ready").touch()
    done = launch("--version")
    assert done.returncode == 0 and ctxmode.__version__ in done.stdout
    assert launch("--where").returncode == 0


def test_a_failed_build_says_where_the_log_is(data):
    done = launch("stats")
    assert done.returncode == 1
    assert "install.log" in done.stderr and done.stdout == ""
    assert not where().exists() and not list(data.glob("*.lock"))


def test_the_bridge_answers_initialize_at_once_and_reports_a_failed_build(data):
    proc = subprocess.Popen(
        ["sh", str(LAUNCHER), "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None

    def ask(message: dict) -> dict:
        proc.stdin.write((json.dumps(message) + "\n").encode())
        proc.stdin.flush()
        return json.loads(proc.stdout.readline())

    init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}}
    reply = ask({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
    assert reply["id"] == 1
    assert reply["result"]["capabilities"]["tools"]["listChanged"] is True
    assert "installed" in reply["result"]["instructions"]
    for _ in range(50):  # the build (with that Python) fails within moments
        answer = ask({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {}})
        if "could not be installed" in answer["error"]["message"]:
            break
    assert "install.log" in answer["error"]["message"]
    proc.stdin.close()
    assert proc.wait(timeout=30) == 0
    proc.stdout.close()


def test_without_a_data_variable_the_hosts_data_folder_beside_its_cache_is_used(
    tmp_path, monkeypatch
):
    """Codex starts MCP servers without $PLUGIN_DATA: the server must find the folder its
    hooks are given, <plugins>/data/<name>-<marketplace>, from the plugin's own folder."""
    monkeypatch.delenv("CLAUDE_PLUGIN_DATA", raising=False)
    monkeypatch.delenv("PLUGIN_DATA", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    root = tmp_path / "plugins" / "cache" / "market" / "ctxmode" / ctxmode.__version__
    (root / "bin").mkdir(parents=True)
    (root / "ctxmode").mkdir()
    shutil.copy(LAUNCHER, root / "bin" / "ctxmode-plugin")
    shutil.copy(ROOT / "ctxmode" / "__init__.py", root / "ctxmode" / "__init__.py")
    # The host's folder even before a hook made it: the server (started first) and the
    # hooks build one environment, not one each.
    host_data = tmp_path / "plugins" / "data" / "ctxmode-market"
    assert where(root).parent == host_data
    assert host_data.is_dir()
    loose = tmp_path / "elsewhere" / "ctxmode" / ctxmode.__version__  # not a host's cache
    (loose / "bin").mkdir(parents=True)
    (loose / "ctxmode").mkdir()
    shutil.copy(LAUNCHER, loose / "bin" / "ctxmode-plugin")
    shutil.copy(ROOT / "ctxmode" / "__init__.py", loose / "ctxmode" / "__init__.py")
    assert where(loose).parent == tmp_path / "xdg" / "ctxmode-plugin"
    monkeypatch.setenv("PLUGIN_DATA", str(tmp_path / "given"))
    assert where(root).parent == tmp_path / "given"
