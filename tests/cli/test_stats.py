"""`ctxmode stats` and `ctxmode statusline` over real session databases and stats files."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ctxmode import paths
from ctxmode.__main__ import main
from ctxmode.session.db import SessionDB
from ctxmode.session.events import Event
from ctxmode.session.where import session_db_path
from ctxmode.stats.model import Usage
from ctxmode.stats.record import Recorder

from .support import run_json


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = (tmp_path / "proj").resolve()
    folder.mkdir()
    monkeypatch.setenv("CTXMODE_PROJECT_DIR", str(folder))
    monkeypatch.setenv("CTXMODE_SESSION_SUFFIX", "")
    return folder


def record(project: Path, session: str, tool: str, usage: Usage) -> Recorder:
    recorder = Recorder(session_db_path(project, paths.data_root()), project)
    recorder.record(tool, usage, session)
    recorder.close()
    return recorder


def test_json_report_contract(project, capsys):
    record(project, "s1", "ctx_execute", Usage(2, 1000, 99_000))
    record(project, "s1", "ctx_search", Usage(1, 500, 0))
    record(project, "s0", "ctx_batch_execute", Usage(1, 100, 10_000))
    with SessionDB(session_db_path(project, paths.data_root())) as sdb:
        sdb.add_event("s1", Event("file_read", "a.py"), source_hook="PostToolUse")
    code, doc = run_json(capsys, "stats", "--session", "s1")
    assert code == 0
    data = doc["data"]
    assert data["session_id"] == "s1"
    session = data["session"]
    assert session["totals"]["returned"] == 1500 and session["totals"]["sandboxed"] == 99_000
    assert session["savings"] == {
        "measured": True,
        "without_bytes": 100_500,
        "with_bytes": 1500,
        "kept_out_bytes": 99_000,
        "kept_out_percent": 98.5,
        "multiplier": 67.0,
        "without_tokens_estimate": 25_125,
        "with_tokens_estimate": 375,
    }
    assert set(session["by_tool"]) == {"ctx_execute", "ctx_search"}
    assert session["by_tool"]["ctx_execute"]["sandboxed"] == 99_000
    assert session["by_tool"]["ctx_execute"]["kept_out_tokens_estimate"] == 24_750
    assert session["captured"]["events"] == 1  # shown apart, never in the formula
    project_totals = data["project"]["totals"]
    assert project_totals["sandboxed"] == 109_000 and project_totals["calls"] == 4
    assert data["tokens_are_estimates"] is True


def test_empty_project_reports_the_empty_state(project, capsys):
    code, doc = run_json(capsys, "stats")
    assert code == 0
    assert doc["data"]["project"] is None and doc["data"]["session"] is None
    assert main(["stats"]) == 0
    out = capsys.readouterr().out
    assert "No measurable activity yet" in out and "%" not in out.split("Percentages")[0]


def test_all_projects_adds_every_project(project, tmp_path, capsys, monkeypatch):
    record(project, "s1", "ctx_execute", Usage(1, 10, 1000))
    other = (tmp_path / "other").resolve()
    other.mkdir()
    record(other, "s9", "ctx_execute", Usage(1, 20, 3000))
    code, doc = run_json(capsys, "stats", "--all-projects")
    assert code == 0
    everything = doc["data"]["all_projects"]
    assert everything["totals"]["sandboxed"] == 4000
    assert {p["project_dir"] for p in everything["projects"]} == {str(project), str(other)}
    # part <= whole, as displayed
    assert doc["data"]["project"]["totals"]["sandboxed"] <= everything["totals"]["sandboxed"]


def test_the_report_names_every_projects_total_in_one_line(project, tmp_path, capsys):
    record(project, "s1", "ctx_execute", Usage(1, 10, 1000))
    other = (tmp_path / "other").resolve()
    other.mkdir()
    record(other, "s9", "ctx_execute", Usage(1, 20, 3000))
    assert main(["stats"]) == 0
    out = capsys.readouterr().out
    assert "All 2 projects: 3.9 KB kept out, 99.3%" in out


def test_a_damaged_session_database_does_not_break_the_report(project, capsys):
    db = session_db_path(project, paths.data_root())
    db.parent.mkdir(parents=True, exist_ok=True)
    db.write_bytes(b"this is not sqlite" * 100)
    code, doc = run_json(capsys, "stats")
    assert code == 0
    assert doc["data"]["problems"]


def _statusline(project: Path, stdin: str = "") -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "ctxmode", "statusline"],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=project,
    )
    assert proc.returncode == 0 and proc.stderr == ""
    return proc.stdout.strip()


def test_statusline_without_data(project):
    assert _statusline(project) == "ctxmode  ●  no measured activity yet"


def test_statusline_shows_the_session_and_all_projects(project, tmp_path):
    record(project, "s1", "ctx_execute", Usage(1, 1024, 99 * 1024))
    other = (tmp_path / "other").resolve()
    other.mkdir()
    record(other, "s2", "ctx_execute", Usage(1, 0, 1024 * 1024))
    line = _statusline(project, json.dumps({"session_id": "s1", "cwd": str(project)}))
    assert line == "ctxmode  ●  99.0% kept out  ·  99.0 KB this session  ·  1.1 MB all projects"
    # another chat in the same project sees the project's figures, labelled so
    line = _statusline(project, json.dumps({"session_id": "zz", "cwd": str(project)}))
    assert "this project" in line and "this session" not in line


def test_statusline_survives_a_garbage_stats_file(project):
    record(project, "s1", "ctx_execute", Usage(1, 10, 100))
    stats = session_db_path(project, paths.data_root()).with_name(
        f"{paths.project_hash(project)}.stats.json"
    )
    stats.write_text("{not json", encoding="utf-8")
    assert _statusline(project).startswith("ctxmode  ●  ")


def test_session_project_and_all_projects_nest_in_the_report(project, tmp_path, capsys):
    record(project, "s1", "ctx_execute", Usage(2, 100, 9000))
    record(project, "s0", "ctx_search", Usage(1, 700, 0))
    other = (tmp_path / "other").resolve()
    other.mkdir()
    record(other, "s9", "ctx_batch_execute", Usage(1, 50, 40_000))
    code, doc = run_json(capsys, "stats", "--all-projects", "--session", "s1")
    assert code == 0
    data = doc["data"]
    scopes = [data["session"], data["project"], data["all_projects"]]
    for part, whole in zip(scopes, scopes[1:], strict=False):
        for key in ("calls", "returned", "sandboxed"):
            assert part["totals"][key] <= whole["totals"][key]
        assert part["savings"]["kept_out_bytes"] <= whole["savings"]["kept_out_bytes"]
        assert part["savings"]["without_bytes"] <= whole["savings"]["without_bytes"]
    assert [s["totals"]["sandboxed"] for s in scopes] == [9000, 9000, 49_000]


def test_the_all_projects_line_uses_this_projects_database_not_a_stale_file(
    project, tmp_path, capsys
):
    record(project, "s1", "ctx_execute", Usage(1, 10, 5000))
    other = (tmp_path / "other").resolve()
    other.mkdir()
    record(other, "s9", "ctx_execute", Usage(1, 10, 1000))
    mine = session_db_path(project, paths.data_root())
    mine.with_name(mine.name.removesuffix(".db") + ".stats.json").unlink()  # lost or stale
    assert main(["stats"]) == 0
    assert "All 2 projects: 5.9 KB kept out" in capsys.readouterr().out


def test_an_unexpected_os_error_is_a_message_not_a_traceback(project, capsys, monkeypatch):
    from ctxmode.stats import report

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied", "/somewhere/locked")

    monkeypatch.setattr(report, "build", refuse)
    code, doc = run_json(capsys, "stats")
    assert code == 1
    assert doc["errors"] == [
        {"code": "os_error", "message": "Permission denied: /somewhere/locked"}
    ]
