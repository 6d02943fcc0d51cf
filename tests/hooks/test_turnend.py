"""Turn-end hooks (ctxmode.hooks.turnend) as hosts run them: a subprocess per call with the
host's payload on stdin. They record the turn end, add the host's token counts per model to
the session database (the transcript read from where the last turn end stopped), print
nothing a host would act on, and fail open."""

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from session.test_hostusage import SESSION, assistant, gemini_payload, user, write

from ctxmode.session import where
from ctxmode.session.db import SessionDB
from ctxmode.stats.statsfile import snapshot, write_stats_file


@pytest.fixture
def project(tmp_path: Path) -> Path:
    found = tmp_path / "proj"
    found.mkdir()
    return found


def run_hook(platform: str, event: str, payload: Any, env: dict[str, str] | None = None):
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run(
        [sys.executable, "-m", "ctxmode", "hook", platform, event],
        input=data,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env={**os.environ, **(env or {})},
        timeout=30,
    )


def model_rows(project: Path) -> list[tuple[Any, ...]]:
    con = sqlite3.connect(where.session_db_path(project, remember=False))
    try:
        return con.execute(
            "SELECT session_id, model, replies, input_tokens, output_tokens, cache_read_tokens,"
            " cache_creation_tokens FROM model_usage ORDER BY model"
        ).fetchall()
    finally:
        con.close()


def stop_payload(project: Path, transcript: Path) -> dict[str, Any]:
    return {
        "session_id": SESSION,
        "transcript_path": str(transcript),
        "cwd": str(project),
        "hook_event_name": "Stop",
        "stop_hook_active": False,
        "last_assistant_message": "Done.",
    }


def test_claude_stop_adds_the_turns_tokens_once(project: Path, tmp_path: Path) -> None:
    transcript = tmp_path / f"{SESSION}.jsonl"
    write(transcript, user("go"), assistant("msg_1", cache_read=4000), assistant("msg_2"))
    first = run_hook("claude-code", "stop", stop_payload(project, transcript))
    assert (first.returncode, first.stdout) == (0, "")
    assert model_rows(project) == [(SESSION, "claude-opus-4-5", 2, 200, 40, 4000, 0)]
    # the next turn adds one reply; the first two are not counted again
    write(transcript, user("more"), assistant("msg_3", input_tokens=10, output=1))
    run_hook("claude-code", "stop", stop_payload(project, transcript))
    run_hook("claude-code", "stop", stop_payload(project, transcript))  # nothing new
    assert model_rows(project) == [(SESSION, "claude-opus-4-5", 3, 210, 41, 4000, 0)]
    with SessionDB(where.session_db_path(project, remember=False)) as sdb:
        ends = [e for e in sdb.events(SESSION) if e.type == "turn_end"]
    assert ends and "Done." in ends[0].data


def test_claude_stop_without_its_transcript_records_the_turn_end(
    project: Path, tmp_path: Path
) -> None:
    result = run_hook("claude-code", "stop", stop_payload(project, tmp_path / "missing.jsonl"))
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert model_rows(project) == []
    with SessionDB(where.session_db_path(project, remember=False)) as sdb:
        assert [e.type for e in sdb.events(SESSION)] == ["turn_end"]


def test_stop_with_garbage_stdin_fails_open_silently() -> None:
    result = run_hook("claude-code", "stop", "{not json")
    assert (result.returncode, result.stdout) == (0, "")


def test_stop_refreshes_an_existing_stats_file_with_the_tokens(
    project: Path, tmp_path: Path
) -> None:
    db = where.session_db_path(project)
    with SessionDB(db) as sdb:
        write_stats_file(where.stats_file_for(db), snapshot(sdb, SESSION, str(project)))
    transcript = tmp_path / "t.jsonl"
    write(transcript, assistant("msg_1"))
    run_hook("claude-code", "stop", stop_payload(project, transcript))
    data = json.loads(where.stats_file_for(db).read_text(encoding="utf-8"))
    assert data["session_models"]["claude-opus-4-5"]["input"] == 100
    assert data["project_models"]["claude-opus-4-5"]["replies"] == 1


def test_codex_stop_reads_the_rollout_under_codex_home(project: Path, tmp_path: Path) -> None:
    day = tmp_path / "codex" / "sessions" / "2026" / "12" / "06"
    day.mkdir(parents=True)
    rollout = day / f"rollout-2026-12-06T12-00-00-{SESSION}.jsonl"
    usage = {"input_tokens": 500, "cached_input_tokens": 100, "output_tokens": 9}
    lines = [
        {"type": "turn_context", "payload": {"model": "gpt-5.5"}},
        {"type": "event_msg", "payload": {"type": "token_count", "info": {
            "last_token_usage": usage, "total_token_usage": usage}}},
    ]  # fmt: skip
    write(rollout, *lines)
    payload = {"session_id": SESSION, "transcript_path": None, "cwd": str(project),
               "hook_event_name": "Stop", "model": "gpt-5.5"}  # fmt: skip
    result = run_hook("codex", "stop", payload, {"CODEX_HOME": str(tmp_path / "codex")})
    assert (result.returncode, result.stdout) == (0, "")
    assert model_rows(project) == [(SESSION, "gpt-5.5", 1, 400, 9, 100, 0)]


def test_gemini_after_model_counts_replies_not_chunks(project: Path) -> None:
    usage = {"promptTokenCount": 1000, "candidatesTokenCount": 50, "totalTokenCount": 1050}
    for finish in (None, None, "STOP", None, "STOP"):
        payload = {**gemini_payload(finish, usage), "cwd": str(project)}
        result = run_hook("gemini-cli", "aftermodel", payload)
        assert (result.returncode, result.stdout) == (0, "")
    assert model_rows(project) == [(SESSION, "gemini-2.5-pro", 2, 2000, 100, 0, 0)]


def test_kimi_session_end_is_recorded_once(project: Path) -> None:
    payload = {"session_id": "k1", "cwd": str(project), "hook_event_name": "SessionEnd"}
    result = run_hook("kimi", "sessionend", {**payload, "reason": "exit"})
    assert (result.returncode, result.stdout) == (0, "")
    with SessionDB(where.session_db_path(project, remember=False)) as sdb:
        assert [(e.type, e.data) for e in sdb.events("k1")] == [
            ("session_end", "session ended (exit)")
        ]


def test_deleting_a_session_keeps_its_tokens_in_the_project_total(
    project: Path, tmp_path: Path
) -> None:
    transcript = tmp_path / "t.jsonl"
    write(transcript, assistant("msg_1"))
    run_hook("claude-code", "stop", stop_payload(project, transcript))
    with SessionDB(where.session_db_path(project)) as sdb:
        sdb.delete_session(SESSION)
    assert model_rows(project) == [("", "claude-opus-4-5", 1, 100, 20, 0, 0)]
