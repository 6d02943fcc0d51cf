"""Data directory and databases: real files, real SQLite, and nothing changed by looking."""

import sqlite3

from ctxmode.paths import ProjectPaths
from ctxmode.session.db import SessionDB
from ctxmode.session.schema import MIGRATIONS as SESSION_MIGRATIONS
from ctxmode.session.where import session_db_path
from ctxmode.store import ContentStore
from ctxmode.store.schema import MIGRATIONS as STORE_MIGRATIONS

from .support import by_name, doctor_json, doctor_text


def _content_db(data_root, project):
    return ProjectPaths(data_root, project).content_db


def _user_version(path) -> int:
    con = sqlite3.connect(path)
    try:
        return int(con.execute("PRAGMA user_version").fetchone()[0])
    finally:
        con.close()


def _set_user_version(path, version: int) -> None:
    con = sqlite3.connect(path)
    try:
        con.execute(f"PRAGMA user_version={version}")
    finally:
        con.close()


def test_absent_databases_are_ok_not_created_yet(project, capsys):
    code, data = doctor_json(capsys)
    checks = by_name(data)
    for name in ("content db", "session db"):
        assert checks[name]["status"] == "OK"
        assert checks[name]["detail"].endswith("not created yet")
    assert code == 0


def test_healthy_databases_report_their_current_schema(project, data_root, capsys):
    with ContentStore(_content_db(data_root, project)) as store:
        store.index_text("# Notes\n\nhello doctor\n", "notes.md")
    with SessionDB(session_db_path(project, data_root)) as sessions:
        sessions.ensure_session("s1", str(project), "claude-code")
    code, data = doctor_json(capsys)
    checks = by_name(data)
    content, session = checks["content db"], checks["session db"]
    assert content["status"] == "OK", content
    assert content["detail"].endswith(f"intact, schema {len(STORE_MIGRATIONS)} (current)")
    assert session["status"] == "OK", session
    assert session["detail"].endswith(f"intact, schema {len(SESSION_MIGRATIONS)} (current)")
    assert code == 0


def test_a_corrupt_content_db_fails_with_the_purge_fix_and_is_left_alone(
    project, data_root, capsys
):
    path = _content_db(data_root, project)
    path.parent.mkdir(parents=True)
    garbage = b"this is not a database, just garbage bytes\n" * 200
    path.write_bytes(garbage)

    code, data = doctor_json(capsys)
    content = by_name(data)["content db"]
    assert code == 1
    assert content["status"] == "FAIL"
    assert "damaged" in content["detail"] and "not a database" in content["detail"]
    assert content["fix"] == "ctxmode purge --all"
    assert data["summary"]["fail"] == 1

    code, text = doctor_text(capsys)
    assert code == 1
    line = next(x for x in text.splitlines() if x.startswith("[FAIL] content db: "))
    assert line.endswith(" — fix: ctxmode purge --all")
    assert text.splitlines()[-1].endswith("1 failure")
    # Diagnosing does not set the file aside the way opening the store would.
    assert path.read_bytes() == garbage
    assert [p.name for p in path.parent.iterdir() if ".corrupt-" in p.name] == []


def test_json_envelope_of_a_failure_is_an_error_naming_the_check(project, data_root, capsys):
    import json

    from ctxmode.__main__ import main

    path = _content_db(data_root, project)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\x00garbage" * 100)
    assert main(["doctor", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] == "error" and doc["exit_code"] == 1
    assert [e["code"] for e in doc["errors"]] == ["check_failed"]
    assert doc["errors"][0]["message"].startswith("content db: ")


def test_a_schema_behind_warns_and_is_not_migrated_by_doctor(project, data_root, capsys):
    path = _content_db(data_root, project)
    ContentStore(path).close()
    behind = len(STORE_MIGRATIONS) - 1
    _set_user_version(path, behind)

    code, data = doctor_json(capsys)
    content = by_name(data)["content db"]
    assert content["status"] == "WARN"
    assert f"schema {behind} of {len(STORE_MIGRATIONS)}" in content["detail"]
    assert "will be migrated on next open" in content["detail"]
    assert code == 0
    assert _user_version(path) == behind


def test_a_schema_from_a_newer_ctxmode_fails(project, data_root, capsys):
    path = session_db_path(project, data_root)
    SessionDB(path).close()
    _set_user_version(path, len(SESSION_MIGRATIONS) + 1)
    code, data = doctor_json(capsys)
    session = by_name(data)["session db"]
    assert session["status"] == "FAIL"
    assert "newer than this ctxmode understands" in session["detail"]
    assert session["fix"] == "upgrade ctxmode"
    assert code == 1


def test_an_unusable_data_directory_fails(project, tmp_path, monkeypatch, capsys):
    # A regular file where a directory should be: not writable even for root.
    blocker = tmp_path / "blocker"
    blocker.write_text("x", encoding="utf-8")
    monkeypatch.setenv("CTXMODE_DIR", str(blocker / "data"))
    code, data = doctor_json(capsys)
    storage = by_name(data)["storage"]
    assert storage["status"] == "FAIL"
    assert "is not writable" in storage["detail"]
    assert "CTXMODE_DIR" in storage["fix"]
    assert code == 1


def test_a_writable_data_directory_is_created_and_left_clean(project, data_root, capsys):
    code, data = doctor_json(capsys)
    assert by_name(data)["storage"]["status"] == "OK"
    assert data_root.is_dir()
    assert [p.name for p in data_root.iterdir() if p.name.startswith(".doctor-")] == []
    assert code == 0


def test_fix_names_the_project_when_doctor_looked_at_another_one(
    project, data_root, tmp_path, capsys
):
    other = (tmp_path / "other").resolve()
    (other / ".git").mkdir(parents=True)
    path = _content_db(data_root, other)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"garbage" * 300)
    code, data = doctor_json(capsys, "-p", str(other))
    content = by_name(data)["content db"]
    assert content["status"] == "FAIL" and code == 1
    assert content["fix"].startswith("ctxmode purge --all --project ")
    assert content["fix"].endswith("/other")
