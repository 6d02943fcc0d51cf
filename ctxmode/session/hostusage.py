"""What the host says its model used: token counts per model, read from the host's own record.

Three sources, one per host family (the platform descriptor's ``usage`` names it):

``claude-transcript``
    Claude Code's transcript (``transcript_path``, JSON lines): each ``assistant`` line has
    ``message.model`` and ``message.usage`` (``input_tokens``, ``output_tokens``,
    ``cache_read_input_tokens``, ``cache_creation_input_tokens``). A reply with several
    content blocks is written as several lines with one ``message.id``: it counts once.
    Sub-agent lines (``isSidechain``) and ``<synthetic>`` replies are left out.
``codex-rollout``
    Codex's rollout file: ``turn_context`` lines name the model, ``event_msg`` lines of
    type ``token_count`` carry ``info.last_token_usage``; a repeated count (the same
    cumulative total) is not added again. OpenAI's ``input_tokens`` include the cached
    ones, so input here is ``input_tokens`` less ``cached_input_tokens`` and
    ``cache_write_input_tokens`` (counted as cache read and cache creation).
``gemini-payload``
    Gemini CLI's AfterModel payload: ``llm_request.model`` and
    ``llm_response.usageMetadata``. The hook fires for every streamed chunk; only the chunk
    that finishes a candidate (``finishReason``) counts, so a reply is counted once.

Files are read from where the last read stopped (`Cursor`: the file, a byte offset, and
what a continued read must know), complete lines only, so a turn-end hook reads only what
the turn added however long the transcript grows. Standard library only (the hook path).
"""

import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path

from ctxmode.typenames import Any, NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import BinaryIO

MAX_READ_BYTES = 256 * 1024 * 1024  # one read's ceiling; the rest waits for the next turn


class TokenUsage(NamedTuple):
    """Tokens of one model (or a sum): input not read from cache, output, cache read, cache
    creation, and the replies they came from."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_creation: int = 0
    replies: int = 0

    def plus(self, other: "TokenUsage") -> "TokenUsage":
        return TokenUsage(*(a + b for a, b in zip(self, other, strict=True)))

    @property
    def prompt_side(self) -> int:
        """Every token the model read: input, cache read and cache creation."""
        return self.input + self.cache_read + self.cache_creation


class Cursor(NamedTuple):
    """How far a host file has been read."""

    path: str = ""
    offset: int = 0
    model: str = ""  # the model last named in the file (Codex names it once per turn)
    last_id: str = ""  # the last reply counted (Claude: message id; Codex: running total)


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def add(found: dict[str, TokenUsage], model: str, usage: TokenUsage) -> None:
    found[model] = found.get(model, TokenUsage()).plus(usage)


def _lines(handle: "BinaryIO", start: int) -> Iterator[tuple[int, bytes]]:
    """(offset after the line, line) for every complete line from `start`, within the
    read ceiling."""
    handle.seek(start)
    offset = start
    for line in handle:
        if not line.endswith(b"\n") or offset + len(line) - start > MAX_READ_BYTES:
            return
        offset += len(line)
        yield offset, line


def _open_at(path: str, cursor: Cursor) -> "tuple[BinaryIO, Cursor]":
    """The file and where to start: where the cursor stopped, or the start of a file that
    is new, replaced or shorter than what was read.

    Raises:
        OSError: the file cannot be read.
    """
    handle = open(path, "rb")  # noqa: SIM115 - returned to the caller, which closes it
    size = os.fstat(handle.fileno()).st_size
    if cursor.path != path or size < cursor.offset:
        cursor = Cursor(path)
    return handle, cursor


def _json(line: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def read_claude(path: str, cursor: Cursor) -> tuple[dict[str, TokenUsage], Cursor]:
    """The tokens per model of the replies added to a Claude Code transcript since `cursor`.

    Raises:
        OSError: the transcript cannot be read.
    """
    handle, cursor = _open_at(path, cursor)
    replies: dict[str, tuple[str, TokenUsage]] = {}
    offset, last_id = cursor.offset, cursor.last_id
    with handle:
        for offset, line in _lines(handle, cursor.offset):  # noqa: B007 - offset is kept
            if b'"assistant"' not in line or b'"usage"' not in line:
                continue
            record = _json(line)
            if record is None or record.get("type") != "assistant" or record.get("isSidechain"):
                continue
            message = record.get("message")
            if not isinstance(message, Mapping):
                continue
            model, usage = message.get("model"), message.get("usage")
            if not isinstance(model, str) or not model or model.startswith("<"):
                continue
            if not isinstance(usage, Mapping):
                continue
            reply = message.get("id") or record.get("requestId") or record.get("uuid") or ""
            reply = str(reply) or f"line-{offset}"
            if reply == cursor.last_id:
                continue  # counted by the previous read
            tokens = TokenUsage(
                _int(usage.get("input_tokens")),
                _int(usage.get("output_tokens")),
                _int(usage.get("cache_read_input_tokens")),
                _int(usage.get("cache_creation_input_tokens")),
                1,
            )
            seen = replies.get(reply)
            if seen is None or tokens.output >= seen[1].output:
                replies[reply] = (model, tokens)  # a later line of one reply: its final count
            last_id = reply
    found: dict[str, TokenUsage] = {}
    for model, tokens in replies.values():
        add(found, model, tokens)
    return found, Cursor(path, offset, cursor.model, last_id)


def read_codex(path: str, cursor: Cursor) -> tuple[dict[str, TokenUsage], Cursor]:
    """The tokens per model of the turns added to a Codex rollout file since `cursor`.

    Raises:
        OSError: the rollout cannot be read.
    """
    handle, cursor = _open_at(path, cursor)
    found: dict[str, TokenUsage] = {}
    offset, model, last_total = cursor.offset, cursor.model, cursor.last_id
    with handle:
        for offset, line in _lines(handle, cursor.offset):  # noqa: B007 - offset is kept
            if b"turn_context" not in line and b"token_count" not in line:
                continue
            record = _json(line)
            payload = record.get("payload") if record else None
            if not isinstance(payload, Mapping) or record is None:
                continue
            if record.get("type") in ("turn_context", "session_meta"):
                named = payload.get("model")
                model = named if isinstance(named, str) and named else model
                continue
            if record.get("type") != "event_msg" or payload.get("type") != "token_count":
                continue
            info = payload.get("info")
            if not isinstance(info, Mapping):
                continue  # a session-start ping or an interrupted turn
            last, whole = info.get("last_token_usage"), info.get("total_token_usage")
            if not isinstance(last, Mapping):
                continue
            total = json.dumps(whole, sort_keys=True) if isinstance(whole, Mapping) else ""
            if total and total == last_total:
                continue  # the same count announced again
            last_total = total or last_total
            cached = _int(last.get("cached_input_tokens"))
            written = _int(last.get("cache_write_input_tokens"))
            fresh = max(0, _int(last.get("input_tokens")) - cached - written)
            usage = TokenUsage(fresh, _int(last.get("output_tokens")), cached, written, 1)
            if model and usage.prompt_side + usage.output:
                add(found, model, usage)
    return found, Cursor(path, offset, model, last_total)


def from_gemini(payload: Mapping[str, Any]) -> tuple[str, TokenUsage] | None:
    """(model, tokens) of a Gemini AfterModel chunk that finishes a reply, else None."""
    response, request = payload.get("llm_response"), payload.get("llm_request")
    if not isinstance(response, Mapping) or not isinstance(request, Mapping):
        return None
    meta, candidates = response.get("usageMetadata"), response.get("candidates")
    if not isinstance(meta, Mapping) or not isinstance(candidates, list):
        return None
    if not any(isinstance(c, Mapping) and c.get("finishReason") for c in candidates):
        return None
    model = request.get("model")
    if not isinstance(model, str) or not model:
        return None
    cached = _int(meta.get("cachedContentTokenCount"))
    output = _int(meta.get("candidatesTokenCount")) + _int(meta.get("thoughtsTokenCount"))
    usage = TokenUsage(max(0, _int(meta.get("promptTokenCount")) - cached), output, cached, 0, 1)
    return (model, usage) if usage.prompt_side + usage.output else None


def codex_rollout(session_id: str, env: Mapping[str, str]) -> str | None:
    """Codex's rollout file of a session: ``$CODEX_HOME/sessions/YYYY/MM/DD/
    rollout-<time>-<session id>.jsonl`` (for builds whose Stop payload has no transcript)."""
    if not session_id or any(c in session_id for c in "/\\*?["):
        return None
    home = (env.get("CODEX_HOME") or "").strip() or os.path.join(
        env.get("HOME") or str(Path.home()), ".codex"
    )
    found = sorted(Path(home, "sessions").glob(f"*/*/*/rollout-*-{session_id}.jsonl"))
    return str(found[-1]) if found else None
