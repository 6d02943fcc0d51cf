"""`ctxmode session events` and `ctxmode session list`: JSON Lines a script (or the hook
fixture checker) can read."""

import json
from pathlib import Path

import pytest

from ctxmode.__main__ import main
from ctxmode.session.db import now_iso
from ctxmode.session.events import Event

from .support import PROJECT, open_db

SID = "4f1c2b9e-8a7d-4e3b-9c61-2d5e7f0a1b3c"


def _record(session: str, *events: Event, project: Path = PROJECT) -> None:
    with open_db(project) as sdb:
        sdb.add_events(session, events, source_hook="test", project_dir=str(project))


def _age(session: str, seconds: float) -> None:
    with open_db() as sdb:
        sdb.connection.execute(
            "UPDATE session_meta SET last_event_at = ? WHERE session_id = ?",
            (now_iso(-seconds), session),
        )


def _lines(capsys) -> list[dict]:
    out = capsys.readouterr().out
    return [json.loads(line) for line in out.splitlines() if line.strip()]


@pytest.fixture(autouse=True)
def _elsewhere(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # like the fixture checker: cwd is not the project


def test_events_print_one_json_object_per_line_with_the_fixture_kinds(capsys):
    _record(
        SID,
        Event("file_edit", f"{PROJECT}/src/users.py"),
        Event("git", "commit: validate email"),
        Event("error_tool", "$ pytest\nFAILED test_x"),
        Event("task_update", '{"taskId": "2", "status": "completed"}'),
        Event("user_prompt", "修复邮箱校验"),
        Event("snapshot_built", "Snapshot built. 900 bytes for 5 events.", bytes_avoided=900),
        Event("session_start", "session startup (claude-code)"),
        Event("rule_content", "# Rules"),
        Event("cwd", "/p"),
    )
    assert main(["session", "events", "--json", "--session", SID]) == 0
    lines = _lines(capsys)
    assert [(line["kind"], line["type"]) for line in lines] == [
        ("file_edit", "file_edit"),
        ("git", "git"),
        ("error", "error_tool"),
        ("task", "task_update"),
        ("prompt", "user_prompt"),
        ("snapshot", "snapshot_built"),
        ("session", "session_start"),
        ("rule", "rule_content"),
        ("cwd", "cwd"),
    ]
    assert lines[4]["data"] == "修复邮箱校验"
    assert lines[5]["bytes_avoided"] == 900
    assert set(lines[0]) == {
        "kind", "type", "data", "session_id", "created_at", "priority", "bytes_avoided",
        "bytes_returned",
    }  # fmt: skip


def test_events_only_of_the_asked_session(capsys):
    _record(SID, Event("file_edit", "mine.py"))
    _record("other", Event("file_edit", "theirs.py"))
    main(["session", "events", "--json", "--session", SID])
    assert [line["data"] for line in _lines(capsys)] == ["mine.py"]


def test_events_are_found_in_whichever_project_holds_the_session(capsys):
    _record(SID, Event("git", "commit: x"), project=Path("/home/dev/projects/elsewhere"))
    main(["session", "events", "--json", "--session", SID])
    assert [line["data"] for line in _lines(capsys)] == ["commit: x"]


def test_project_restricts_the_search_to_that_project(capsys, tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    _record(SID, Event("git", "commit: here"), project=project)
    _record(SID, Event("git", "commit: there"))
    main(["session", "events", "--json", "--session", SID, "--project", str(project)])
    assert [line["data"] for line in _lines(capsys)] == ["commit: here"]


def test_without_a_session_the_most_recently_active_one_is_shown(capsys):
    _record("older", Event("git", "commit: old"))
    _record("newer", Event("git", "commit: new"))
    _age("older", 60)
    main(["session", "events", "--json", "--session", ""])
    assert [line["session_id"] for line in _lines(capsys)] == ["newer"]


def test_a_known_session_without_events_prints_nothing(capsys):
    with open_db() as sdb:
        sdb.ensure_session("quiet", str(PROJECT))
    assert main(["session", "events", "--json", "--session", "quiet"]) == 0
    assert capsys.readouterr().out == ""


def test_an_unknown_session_is_not_found(capsys):
    _record(SID, Event("git", "commit: x"))
    assert main(["session", "events", "--session", "nope"]) == 3
    assert "no session 'nope'" in capsys.readouterr().err


def test_events_for_people_are_one_short_line_each(capsys):
    _record(SID, Event("error_tool", "$ pytest\n" + "long line " * 50))
    assert main(["session", "events", "--session", SID]) == 0
    out = capsys.readouterr().out
    assert f"session {SID}: 1 event\n" in out
    (line,) = [ln for ln in out.splitlines() if "error" in ln]
    assert "$ pytest long line" in line and line.endswith("…")


def test_list_shows_sessions_most_recent_first(capsys):
    _record("first", Event("git", "commit: a"))
    _record("second", Event("git", "commit: b"), Event("git", "commit: c"))
    _age("first", 60)
    assert main(["session", "list", "--json"]) == 0
    rows = _lines(capsys)
    assert [(r["session_id"], r["events"]) for r in rows] == [("second", 2), ("first", 1)]
    assert rows[0]["project_dir"] == str(PROJECT)


def test_an_empty_data_root_lists_nothing(capsys):
    assert main(["session", "list"]) == 0
    assert "No sessions recorded yet." in capsys.readouterr().out
    assert main(["session", "events", "--json"]) == 0
    assert capsys.readouterr().out == ""
