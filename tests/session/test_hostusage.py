"""Reading the host's own token counts: Claude Code transcripts and Codex rollouts read from
where the last read stopped, Gemini AfterModel payloads counted once per reply."""

import json
from pathlib import Path
from typing import Any

from ctxmode.session.hostusage import (
    Cursor,
    TokenUsage,
    codex_rollout,
    from_gemini,
    read_claude,
    read_codex,
)

SESSION = "4cf78cf0-cb6a-47e4-8618-fcdea7019b2a"


def assistant(
    message_id: str,
    model: str = "claude-opus-4-5",
    *,
    input_tokens: int = 100,
    output: int = 20,
    cache_read: int = 0,
    cache_creation: int = 0,
    sidechain: bool = False,
    block: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """An assistant line as Claude Code 2.1 writes it (fields trimmed to the ones it always has)."""
    return {
        "parentUuid": "ef054094-14b1-4879-ab69-711c857df966",
        "isSidechain": sidechain,
        "message": {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [block or {"type": "text", "text": "Done."}],
            "stop_reason": "end_turn",
            "usage": {
                "input_tokens": input_tokens,
                "cache_creation_input_tokens": cache_creation,
                "cache_read_input_tokens": cache_read,
                "output_tokens": output,
                "service_tier": "standard",
            },
        },
        "requestId": "req_fake",
        "type": "assistant",
        "uuid": f"uuid-{message_id}",
        "sessionId": SESSION,
        "version": "2.1.332",
    }


def user(text: str) -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": text}, "sessionId": SESSION}


def write(path: Path, *records: dict[str, Any], mode: str = "a") -> None:
    with path.open(mode, encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record) + "\n")


def test_claude_transcript_counts_each_reply_once_per_model(tmp_path: Path) -> None:
    transcript = tmp_path / f"{SESSION}.jsonl"
    tool = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}
    write(
        transcript,
        user("fix the tests"),
        # one reply with two content blocks: two lines, one message id, one count
        assistant("msg_a", cache_read=5000, cache_creation=300, output=5),
        assistant("msg_a", cache_read=5000, cache_creation=300, output=40, block=tool),
        assistant("msg_b", model="claude-haiku-4-5", input_tokens=7, output=3),
        assistant("msg_side", sidechain=True, input_tokens=999),
        assistant("msg_err", model="<synthetic>", input_tokens=0, output=0),
    )
    found, cursor = read_claude(str(transcript), Cursor())
    assert found == {
        "claude-opus-4-5": TokenUsage(100, 40, 5000, 300, 1),
        "claude-haiku-4-5": TokenUsage(7, 3, 0, 0, 1),
    }
    assert cursor.offset == transcript.stat().st_size
    assert cursor.last_id == "msg_b"


def test_claude_transcript_second_read_counts_only_what_the_turn_added(tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    write(transcript, assistant("msg_1"), assistant("msg_2"))
    first, cursor = read_claude(str(transcript), Cursor())
    assert first["claude-opus-4-5"].replies == 2
    write(transcript, user("more"), assistant("msg_3", input_tokens=50, output=10))
    second, cursor = read_claude(str(transcript), cursor)
    assert second == {"claude-opus-4-5": TokenUsage(50, 10, 0, 0, 1)}
    again, _ = read_claude(str(transcript), cursor)
    assert again == {}


def test_claude_transcript_partial_last_line_waits_for_the_next_read(tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    write(transcript, assistant("msg_1"))
    line = json.dumps(assistant("msg_2", input_tokens=1))
    with transcript.open("a", encoding="utf-8") as handle:
        handle.write(line[:40])  # the host is still writing it
    found, cursor = read_claude(str(transcript), Cursor())
    assert found["claude-opus-4-5"].replies == 1
    with transcript.open("a", encoding="utf-8") as handle:
        handle.write(line[40:] + "\n")
    rest, _ = read_claude(str(transcript), cursor)
    assert rest == {"claude-opus-4-5": TokenUsage(1, 20, 0, 0, 1)}


def test_claude_transcript_replaced_by_a_shorter_file_is_read_from_the_start(
    tmp_path: Path,
) -> None:
    transcript = tmp_path / "t.jsonl"
    write(transcript, *(assistant(f"msg_{i}") for i in range(5)))
    _, cursor = read_claude(str(transcript), Cursor())
    write(transcript, assistant("msg_new", input_tokens=3), mode="w")
    found, _ = read_claude(str(transcript), cursor)
    assert found == {"claude-opus-4-5": TokenUsage(3, 20, 0, 0, 1)}


def test_claude_transcript_of_another_path_starts_at_zero(tmp_path: Path) -> None:
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    write(one, *(assistant(f"msg_{i}") for i in range(3)))
    write(two, assistant("msg_x", input_tokens=9))
    _, cursor = read_claude(str(one), Cursor())
    found, moved = read_claude(str(two), cursor)
    assert found == {"claude-opus-4-5": TokenUsage(9, 20, 0, 0, 1)}
    assert moved.path == str(two)


def rollout_line(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": "2026-12-06T12:00:00.000Z", "type": kind, "payload": payload}


def token_count(last: dict[str, int] | None, total: dict[str, int] | None) -> dict[str, Any]:
    info = None if last is None else {"last_token_usage": last, "total_token_usage": total}
    return rollout_line("event_msg", {"type": "token_count", "info": info, "rate_limits": {}})


def test_codex_rollout_counts_turns_per_model_without_repeats(tmp_path: Path) -> None:
    rollout = tmp_path / f"rollout-2026-12-06T12-00-00-{SESSION}.jsonl"
    turn = {"input_tokens": 1200, "cached_input_tokens": 1000, "output_tokens": 80}
    total = {"input_tokens": 1200, "cached_input_tokens": 1000, "output_tokens": 80}
    write(
        rollout,
        rollout_line("session_meta", {"id": SESSION, "cwd": "/p"}),
        token_count(None, None),  # the session-start ping
        rollout_line("turn_context", {"model": "gpt-5.5", "cwd": "/p"}),
        token_count(turn, total),
        token_count(turn, total),  # announced again with the same running total
    )
    found, cursor = read_codex(str(rollout), Cursor())
    assert found == {"gpt-5.5": TokenUsage(200, 80, 1000, 0, 1)}
    later = {"input_tokens": 300, "cached_input_tokens": 0, "output_tokens": 7}
    write(rollout, token_count(later, {"input_tokens": 1500, "output_tokens": 87}))
    more, _ = read_codex(str(rollout), cursor)
    assert more == {"gpt-5.5": TokenUsage(300, 7, 0, 0, 1)}  # the model remembered


def test_codex_cache_writes_are_cache_creation_not_input(tmp_path: Path) -> None:
    rollout = tmp_path / "rollout.jsonl"
    turn = {"input_tokens": 1000, "cached_input_tokens": 600, "cache_write_input_tokens": 300,
            "output_tokens": 5}  # fmt: skip
    write(rollout, rollout_line("turn_context", {"model": "gpt-5.5"}), token_count(turn, turn))
    found, _ = read_codex(str(rollout), Cursor())
    assert found == {"gpt-5.5": TokenUsage(100, 5, 600, 300, 1)}


def test_codex_rollout_is_found_under_codex_home(tmp_path: Path) -> None:
    day = tmp_path / "sessions" / "2026" / "12" / "06"
    day.mkdir(parents=True)
    rollout = day / f"rollout-2026-12-06T12-00-00-{SESSION}.jsonl"
    rollout.write_text("", encoding="utf-8")
    assert codex_rollout(SESSION, {"CODEX_HOME": str(tmp_path)}) == str(rollout)
    assert codex_rollout("../x", {"CODEX_HOME": str(tmp_path)}) is None


def gemini_payload(finish: str | None, usage: dict[str, int] | None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": ["ok"]}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    response: dict[str, Any] = {"text": "ok", "candidates": [candidate]}
    if usage is not None:
        response["usageMetadata"] = usage
    return {
        "session_id": SESSION,
        "hook_event_name": "AfterModel",
        "llm_request": {"model": "gemini-2.5-pro", "messages": []},
        "llm_response": response,
    }


def test_gemini_after_model_counts_the_finishing_chunk_only() -> None:
    usage = {"promptTokenCount": 12840, "candidatesTokenCount": 212, "totalTokenCount": 13052}
    assert from_gemini(gemini_payload(None, usage)) is None
    assert from_gemini(gemini_payload("STOP", usage)) == (
        "gemini-2.5-pro",
        TokenUsage(12840, 212, 0, 0, 1),
    )
    cached = {**usage, "cachedContentTokenCount": 12000, "thoughtsTokenCount": 30}
    assert from_gemini(gemini_payload("STOP", cached)) == (
        "gemini-2.5-pro",
        TokenUsage(840, 242, 12000, 0, 1),
    )
    assert from_gemini(gemini_payload("STOP", None)) is None
    assert from_gemini({"llm_response": "garbage"}) is None
