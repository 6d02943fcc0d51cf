"""`ctxmode upgrade` end to end: --check offline, the full flow with a harmless command in
place of the package tool, the confirmation rules, and a failing tool."""

import io
import json
import sqlite3
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import ctxmode.upgrade.finishing as finishing
import ctxmode.upgrade.install as install_module
from ctxmode import paths, upgrade
from ctxmode.__main__ import main
from ctxmode.session.schema import MIGRATIONS as SESSION_MIGRATIONS
from ctxmode.store import ContentStore
from ctxmode.store.schema import MIGRATIONS as CONTENT_MIGRATIONS

OFFLINE = "http://127.0.0.1:9/pypi/ctxmode/json"  # the discard port: refused at once


class _FakePyPI(BaseHTTPRequestHandler):
    version = "99.0.0"

    def do_GET(self) -> None:
        body = json.dumps({"info": {"version": self.version}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


class _Newest(_FakePyPI):
    version = upgrade.__version__


@contextmanager
def _pypi(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """A package index on 127.0.0.1 answering PyPI's JSON; yields its URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/pypi/ctxmode/json"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture(autouse=True)
def env(fake_host, tmp_path, monkeypatch):
    """A fake home, ctxmode on PATH (for setup), a package index that knows no newer
    ctxmode, and a tool command that only prints."""
    home = fake_host
    with _pypi(_Newest) as url:
        monkeypatch.setenv("CTXMODE_PYPI_URL", url)
        _tool(monkeypatch, "print('upgraded by the tool')")
        work = tmp_path / "cwd"
        work.mkdir()
        monkeypatch.chdir(work)
        yield home


def _tool(monkeypatch, code: str) -> None:
    monkeypatch.setenv("CTXMODE_UPGRADE_COMMAND", json.dumps([sys.executable, "-c", code]))


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    return root.resolve()


@pytest.fixture
def state(project, capsys):
    """Old databases and a setup whose hooks someone deleted from the settings file."""
    root = paths.data_root()
    behind = root / "content" / f"{paths.project_hash(project)}.db"
    ContentStore(behind).close()
    con = sqlite3.connect(behind)
    con.execute("PRAGMA user_version = 1")
    con.close()
    empty_session = root / "sessions" / f"{paths.project_hash(project)}.db"
    empty_session.parent.mkdir(parents=True)
    sqlite3.connect(empty_session).close()  # schema version 0
    broken = root / "content" / "0123456789abcdef.db"
    broken.write_bytes(b"not a database at all " * 100)

    assert main(["setup", "claude-code", "--project", str(project)]) == 0
    settings = project / ".claude" / "settings.json"
    data = json.loads(settings.read_text(encoding="utf-8"))
    del data["hooks"]
    settings.write_text(json.dumps(data, indent=2), encoding="utf-8")
    capsys.readouterr()
    return {"behind": behind, "session": empty_session, "broken": broken, "settings": settings}


def _version(db) -> int:
    con = sqlite3.connect(db)
    try:
        return int(con.execute("PRAGMA user_version").fetchone()[0])
    finally:
        con.close()


def _envelope(capsys, *argv: str) -> tuple[int, dict, str]:
    code = main(["upgrade", *argv, "--json"])
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert doc["exit_code"] == code and doc["command"] == ["upgrade"]
    return code, doc, captured.err


# --------------------------------------------------------------------------- --check


def test_check_reports_everything_offline_and_changes_nothing(state, project, monkeypatch, capsys):
    monkeypatch.setenv("CTXMODE_PYPI_URL", OFFLINE)
    before = {p: p.read_bytes() for p in paths.data_root().rglob("*") if p.is_file()}
    code, doc, _ = _envelope(capsys, "--check")
    assert code == 0
    data = doc["data"]
    assert data["installed"] == upgrade.__version__
    assert data["latest"] == "unknown" and data["update_available"] is None
    assert data["command"][0] == sys.executable  # the override
    assert data["method"] in ("editable", "pipx", "uv-tool", "venv", "user", "system", "unknown")
    states = {d["path"]: d["state"] for d in data["databases"]}
    assert states[str(state["behind"])] == "behind"
    assert states[str(state["session"])] == "behind"
    assert states[str(state["broken"])] == "unreadable"
    assert data["schemas_behind"] == 2  # the content DB at 1 and the empty session DB
    assert data["platforms"] == [
        {
            "platform": "claude-code",
            "scope": "project",
            "project": str(project),
            "command": "ctxmode",
        }
    ]
    after = {p: p.read_bytes() for p in paths.data_root().rglob("*") if p.is_file()}
    assert after == before

    assert main(["upgrade", "--check"]) == 0
    out = capsys.readouterr().out
    assert "latest:     unknown" in out and "claude-code" in out and "behind" in out


def test_check_shows_the_latest_version_when_pypi_answers(monkeypatch, capsys):
    with _pypi(_FakePyPI) as url:
        monkeypatch.setenv("CTXMODE_PYPI_URL", url)
        code, doc, _ = _envelope(capsys, "--check")
    assert code == 0
    assert doc["data"]["latest"] == "99.0.0" and doc["data"]["update_available"] is True


# --------------------------------------------------------------------------- the full flow


def test_upgrade_runs_the_tool_then_migrates_and_sets_up_again_in_a_new_process(
    state, project, capsys
):
    broken_bytes = state["broken"].read_bytes()
    code, doc, err = _envelope(capsys, "--yes")

    assert code == 0, doc
    assert "upgraded by the tool" in err  # the tool's output streams to stderr
    done = doc["data"]["finish"]
    assert done["version"] == upgrade.__version__
    assert _version(state["behind"]) == len(CONTENT_MIGRATIONS)
    assert _version(state["session"]) == len(SESSION_MIGRATIONS)
    by_path = {d["path"]: d for d in done["databases"]}
    migrated = by_path[str(state["behind"])]
    assert (migrated["from"], migrated["to"]) == (1, len(CONTENT_MIGRATIONS))
    assert by_path[str(state["session"])]["from"] == 0
    assert "left alone" in by_path[str(state["broken"])]["problem"]
    assert state["broken"].read_bytes() == broken_bytes
    [again] = done["setups"]
    assert (again["platform"], again["project"], again["changed"]) == (
        "claude-code",
        str(project),
        True,
    )
    hooks = json.loads(state["settings"].read_text(encoding="utf-8"))["hooks"]
    assert any(
        "ctxmode hook claude-code" in h["command"]
        for groups in hooks.values()
        for group in groups
        for h in group["hooks"]
    )


def test_upgrade_human_output_ends_with_the_restart_advice(state, capsys):
    assert main(["upgrade", "--yes"]) == 0
    out = capsys.readouterr().out
    assert "migrated" in out and "Setup claude-code" in out
    assert out.rstrip().endswith("Restart your agents so they start the new ctxmode MCP server.")


def test_an_unchanged_version_says_it_is_the_newest_when_the_index_answers(state, capsys):
    assert main(["upgrade", "--yes"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"{upgrade.__version__} (version unchanged: it is the newest release)" in out


PIP_OFFLINE = (
    "import sys\n"
    'print("WARNING: Retrying (Retry(total=0, connect=None, read=None, redirect=None, '
    "status=None)) after connection broken by 'NewConnectionError(\\\"Failed to establish a new "
    'connection: [Errno 111] Connection refused\\")\': /simple/ctxmode/")\n'
    "print('Requirement already satisfied: ctxmode in /site-packages')\n"
)


def test_an_unreachable_index_is_exit_4_not_an_unchanged_upgrade(state, monkeypatch, capsys):
    """pip keeps what is installed and exits 0 when its index is out of reach: that is
    not an upgrade to the same version, and must not read as one."""
    monkeypatch.setenv("CTXMODE_PYPI_URL", OFFLINE)
    _tool(monkeypatch, PIP_OFFLINE)
    assert main(["upgrade", "--yes"]) == 4
    captured = capsys.readouterr()
    err = " ".join(captured.err.split())
    assert "Upgraded" not in captured.out and "version unchanged" not in captured.out
    assert f"ctxmode {upgrade.__version__} is still installed" in err
    assert "could not be checked: the package index did not answer" in err
    assert f"({OFFLINE}: Connection refused)" in err
    assert "Restart your agents" not in captured.out

    code, doc, _ = _envelope(capsys, "--yes")
    assert code == 4 and doc["status"] == "error"
    [error] = doc["errors"]
    assert error["code"] == "index_unreachable" and "Connection refused" in error["message"]
    assert doc["data"]["latest"] is None
    assert doc["data"]["index_problem"] == f"{OFFLINE}: Connection refused"
    assert doc["data"]["finish"]["version"] == upgrade.__version__  # the step after still ran


def test_a_newer_release_the_tool_did_not_install_is_a_warning(state, monkeypatch, capsys):
    with _pypi(_FakePyPI) as url:
        monkeypatch.setenv("CTXMODE_PYPI_URL", url)
        assert main(["upgrade", "--yes"]) == 0
    captured = capsys.readouterr()
    assert f"{upgrade.__version__} (version unchanged)." in " ".join(captured.out.split())
    err = " ".join(captured.err.split())
    assert "the package index offers ctxmode 99.0.0, but the upgrade left" in err


def test_a_changed_version_does_not_ask_the_index(state, monkeypatch, capsys):
    monkeypatch.setenv("CTXMODE_PYPI_URL", OFFLINE)
    monkeypatch.setattr(upgrade, "__version__", "0.0.1")  # the finish step reports the real one
    monkeypatch.setattr("ctxmode.cli.commands.upgrade.__version__", "0.0.1")
    code, doc, _ = _envelope(capsys, "--yes")
    assert code == 0 and doc["data"]["index_problem"] is None


def test_finish_alone_migrates_and_reports(state, capsys):
    code, doc, _ = _envelope(capsys, "--finish")
    assert code == 0 and doc["data"]["problems"] == 1  # the unreadable database
    assert _version(state["behind"]) == len(CONTENT_MIGRATIONS)


# --------------------------------------------------------------------------- refusals


def test_without_a_terminal_it_refuses_unless_yes(state, monkeypatch, capsys, tmp_path):
    marker = tmp_path / "tool-ran"
    _tool(monkeypatch, f"open({str(marker)!r}, 'w').close()")
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert main(["upgrade"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "--yes" in err and "not a terminal" in err and "Traceback" not in err
    assert not marker.exists() and _version(state["behind"]) == 1


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_at_a_terminal_no_means_nothing_happens_and_is_exit_0(state, monkeypatch, capsys, tmp_path):
    marker = tmp_path / "tool-ran"
    _tool(monkeypatch, f"open({str(marker)!r}, 'w').close()")
    monkeypatch.setattr(sys, "stdin", _Terminal("n\n"))
    assert main(["upgrade"]) == 0  # a choice, not a failure
    assert "nothing was changed" in " ".join(capsys.readouterr().err.split())
    assert not marker.exists() and _version(state["behind"]) == 1

    monkeypatch.setattr(sys, "stdin", _Terminal("n\n"))
    code, doc, _ = _envelope(capsys)
    assert code == 0 and doc["data"]["cancelled"] is True
    assert not marker.exists() and _version(state["behind"]) == 1


def test_help_lists_the_exit_codes_and_the_example(capsys):
    assert main(["upgrade", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Example: ctxmode upgrade --check" in out
    for said in ("decline", "nothing was changed", "1 when", "2 without", "4 when", "PEP 668"):
        assert said in out, said


def test_a_failing_tool_is_exit_1_with_its_message_and_nothing_else_touched(
    state, monkeypatch, capsys
):
    _tool(monkeypatch, "import sys; print('resolver exploded'); sys.exit(3)")
    code, doc, err = _envelope(capsys, "--yes")
    assert code == 1 and doc["status"] == "error"
    [error] = doc["errors"]
    assert "exit 3" in error["message"] and "resolver exploded" in error["message"]
    assert "resolver exploded" in err  # streamed as it ran
    assert _version(state["behind"]) == 1
    assert "hooks" not in json.loads(state["settings"].read_text(encoding="utf-8"))


def test_a_missing_tool_is_exit_1(monkeypatch, capsys):
    monkeypatch.setenv("CTXMODE_UPGRADE_COMMAND", '["ctxmode-no-such-tool", "upgrade"]')
    assert main(["upgrade", "--yes"]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert "cannot run ctxmode-no-such-tool" in err and "Traceback" not in err
    assert "on PATH" in err and "Nothing was changed" in err


def test_the_tool_runs_without_prompts(capsys):
    out = io.StringIO()
    code = "import os; print(os.environ['GIT_TERMINAL_PROMPT'], os.environ['PIP_NO_INPUT'])"
    upgrade.run_command(upgrade.Install("venv", [sys.executable, "-c", code], ""), out)
    assert out.getvalue().split() == ["0", "1"]


def test_a_tool_that_hangs_is_stopped_with_everything_it_started(tmp_path):
    """The grandchild holds the output pipe too: only killing the whole group ends it."""
    code = (
        "import subprocess, sys, time\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'])\n"
        "print('waiting for a password', flush=True)\n"
        "time.sleep(300)\n"
    )
    hanging = upgrade.Install("venv", [sys.executable, "-c", code], "")
    with pytest.raises(upgrade.UpgradeFailed) as failed:
        upgrade.run_command(hanging, io.StringIO(), timeout=2.0)
    assert "did not finish within 2 seconds and was stopped" in str(failed.value)


# --------------------------------------------------------------------------- install kinds


def _installed_as(monkeypatch, method: str, command: list[str], detail: str) -> None:
    """Detection answers `method`; no override, so its own command (if any) applies."""
    found = upgrade.Install(method, command, detail)
    monkeypatch.setattr(install_module, "detect", lambda facts=None: found)
    monkeypatch.delenv("CTXMODE_UPGRADE_COMMAND")


DEVELOPMENT = (
    "development install at /src/ctxmode: update the checkout yourself (git pull, pip install -e .)"
)


def test_a_development_install_skips_the_package_step_and_still_finishes(
    state, monkeypatch, capsys
):
    _installed_as(monkeypatch, "editable", [], DEVELOPMENT)
    code, doc, _ = _envelope(capsys, "--check")
    assert code == 0 and doc["data"]["command"] == []
    assert doc["data"]["package_step"] == "skipped"
    assert main(["upgrade", "--check"]) == 0
    out = capsys.readouterr().out
    assert "update the checkout yourself" in out and "only migrates the databases" in out

    assert main(["upgrade", "--yes"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Development install at /src/ctxmode: update the checkout yourself" in out
    assert "(git pull, pip install -e .)" in out and "the package step is skipped" in out
    assert "migrated" in out and "Setup claude-code" in out and "Upgraded" not in out
    assert _version(state["behind"]) == len(CONTENT_MIGRATIONS)
    assert "hooks" in json.loads(state["settings"].read_text(encoding="utf-8"))


def test_a_development_install_asks_about_the_step_it_runs(state, monkeypatch, capsys):
    _installed_as(monkeypatch, "editable", [], DEVELOPMENT)
    monkeypatch.setattr(sys, "stdin", _Terminal("n\n"))
    assert main(["upgrade"]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert "Migrate the databases and re-run setup" in err and "nothing was changed" in err
    assert _version(state["behind"]) == 1


def test_a_development_install_under_json_says_the_package_step_was_skipped(
    state, monkeypatch, capsys
):
    _installed_as(monkeypatch, "editable", [], DEVELOPMENT)
    code, doc, _ = _envelope(capsys, "--yes")
    assert code == 0 and doc["data"]["package_step"] == "skipped"
    assert doc["data"]["finish"]["version"] == upgrade.__version__
    assert _version(state["behind"]) == len(CONTENT_MIGRATIONS)


@pytest.mark.parametrize(
    ("method", "detail"),
    [
        ("system", "pip into the system Python /usr; this Python is externally managed (PEP 668)"),
        (
            "venv",
            "installed from /src/fork: reinstall from there (pip install --upgrade /src/fork)",
        ),
    ],
)
def test_no_command_and_not_development_is_exit_4_and_nothing_runs(
    state, monkeypatch, capsys, method, detail
):
    _installed_as(monkeypatch, method, [], detail)
    code, doc, _ = _envelope(capsys, "--yes")
    assert code == 4
    [error] = doc["errors"]
    assert error["message"] == f"ctxmode cannot upgrade itself here: {detail}"
    assert _version(state["behind"]) == 1  # the finish step did not run either
    code, doc, _ = _envelope(capsys, "--check")
    assert code == 0 and doc["data"]["package_step"] == "impossible"


# --------------------------------------------------------------------------- the finish step


def test_the_finish_steps_own_error_is_shown(state, monkeypatch, capsys):
    # --finish with --check is refused by the child with a usage error in its envelope
    monkeypatch.setattr(finishing, "FINISH_ARGV", [*finishing.FINISH_ARGV, "--check"])
    code, doc, _ = _envelope(capsys, "--yes")
    assert code == 1
    [error] = doc["errors"]
    assert "ctxmode was upgraded, but the step after it" in error["message"]
    assert "(exit 2)" in error["message"]
    assert "--finish and --check exclude each other." in error["message"]
    assert "ctxmode upgrade --finish" in error["message"]


def test_a_crashing_finish_step_shows_its_last_words(state, monkeypatch, capsys):
    crash = (
        "import sys; sys.stderr.write('Traceback (most recent call last):\\nBoom: no\\n'); "
        "sys.exit(1)"
    )
    monkeypatch.setattr(finishing, "FINISH_ARGV", ["-c", crash])
    assert main(["upgrade", "--yes"]) == 1
    err = capsys.readouterr().err
    assert "failed (exit 1)" in err and "Boom: no" in err
    assert "ctxmode upgrade --finish" in err


def test_a_finish_step_that_cannot_start_is_a_clear_error(state, monkeypatch, capsys, tmp_path):
    """`uv tool upgrade` rebuilt the environment: the old interpreter is gone."""
    monkeypatch.setattr(sys, "executable", str(tmp_path / "gone" / "python"))
    code, doc, _ = _envelope(capsys, "--yes")
    assert code == 1
    [error] = doc["errors"]
    assert "could not start" in error["message"] and "gone" in error["message"]
    assert "Run it again: ctxmode upgrade --finish" in error["message"]


@pytest.mark.parametrize(
    ("stdout", "stderr", "reason"),
    [
        (
            json.dumps({"errors": [{"code": "x", "message": "disk full"}, {"message": "again"}]}),
            "noise",
            "disk full\nagain",
        ),
        (
            "",
            "\n".join(f"line {i}" for i in range(30)) + "\n\n",
            "\n".join(f"line {i}" for i in range(20, 30)),
        ),
        ("not json\nlast words\n", "", "not json\nlast words"),
        (json.dumps({"errors": []}), "", '{"errors": []}'),
        ("", "", "(exit 3, no output)"),
    ],
)
def test_finish_reason_prefers_the_envelope_then_the_output_tail(stdout, stderr, reason):
    assert upgrade.finish_reason(3, stdout, stderr) == reason


def test_a_bad_override_is_a_usage_error(monkeypatch, capsys):
    monkeypatch.setenv("CTXMODE_UPGRADE_COMMAND", "pipx upgrade ctxmode")
    assert main(["upgrade", "--check"]) == 2
    assert "JSON list" in " ".join(capsys.readouterr().err.split())


# --------------------------------------------------------------------------- agents


def test_agent_instructions_for_a_development_install_leave_the_code_to_the_user(monkeypatch):
    _installed_as(monkeypatch, "editable", [], DEVELOPMENT)
    text = upgrade.agent_instructions()
    assert "upgrade --yes" in text and "development install" in text
    assert "git pull" in text and "only migrates" in text
    assert "It runs the package tool" not in text


def test_agent_instructions_name_the_command_the_method_and_the_restart(monkeypatch):
    text = upgrade.agent_instructions()
    assert "ctxmode upgrade --yes" in text  # ctxmode is on PATH in this fixture
    assert upgrade.current_install().method in text
    assert sys.executable in text  # the underlying (overridden) tool command
    assert "restart the agent afterwards so the new MCP server starts" in text

    monkeypatch.setenv("PATH", "")
    monkeypatch.setattr(sys, "argv", ["ctxmode-not-here"])
    text = upgrade.agent_instructions()
    assert "upgrade --yes" in text and not text.splitlines()[2].strip().startswith("ctxmode ")
