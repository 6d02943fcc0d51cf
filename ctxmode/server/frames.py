"""Every line from the client gets its due: an answer, or a line on stderr.

The SDK's stdio transport validates each line it reads and hands the server an exception
for a line it refuses; the server drops that at debug level. A request on such a line was
never answered and its client waited forever: text that is not JSON, a request of the
wrong shape, or valid JSON the SDK's parser refuses, a lone UTF-16 surrogate escaped in a
string (``"\\ud800"``).

`Recorded` stands between the line source and the transport and keeps every line it hands
over, in order. The transport makes exactly one item of each line, a message or an
exception, so `Screen` (on the server's side of the transport) takes the oldest kept line
with each item: the line it came from. A message passes as it is; that is the whole cost
when nothing is wrong. The line of an exception is read again with the standard library's
parser (`diagnose`):

* not JSON: -32700 Parse error, id null;
* lone surrogates: each becomes U+FFFD and the message goes on to the server (if the id
  holds one, it could not be echoed: -32600 with id null);
* anything else with an ``id``, or neither a request nor a notification: -32600 Invalid
  Request, with its id when that is a string or an integer (else null);
* a notification or a response of the wrong shape: logged to stderr, never answered, as
  JSON-RPC asks.

The SDK also reads a message whose ``id`` is null, fractional or boolean as a notification;
such a request gets -32600 with id null instead of silence.
"""

import json
import logging
import re
import sys
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage

log = logging.getLogger("ctxmode.server")

_SURROGATE = re.compile("[\ud800-\udfff]")  # json.loads pairs the valid ones: these are lone
_SHOWN = 200  # characters of a bad line quoted in the log


@dataclass(frozen=True)
class Fault:
    """What is wrong with a line, and the error to answer (`code` None: none, log it)."""

    code: int | None
    id: str | int | None
    message: str


class Recorded:
    """The transport's line source: each line that is not blank, kept until `Screen`
    takes the item the transport made of it (blank lines are skipped, as JSON-RPC has no
    message to answer there)."""

    def __init__(self, lines: AsyncIterator[str]) -> None:
        self._lines = lines
        self.kept: deque[str] = deque()

    def __aiter__(self) -> "Recorded":
        return self

    async def __anext__(self) -> str:
        while True:
            line = await self._lines.__anext__()
            if not line.isspace():
                self.kept.append(line)
                return line


class StdinLines:
    """Lines of the process's stdin read in a worker thread, as the SDK reads them when
    stdin is not a pipe (`ctxmode.server.pipes` serves pipes on the event loop)."""

    def __aiter__(self) -> "StdinLines":
        return self

    async def __anext__(self) -> str:
        line: bytes = await anyio.to_thread.run_sync(
            sys.stdin.buffer.readline, abandon_on_cancel=True
        )
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", "replace")


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _parsed(line: str) -> Any:
    try:
        return json.loads(line)
    except (ValueError, RecursionError):
        return None


def _scrub(value: Any) -> Any:
    """`value` with every lone surrogate replaced by U+FFFD; `value` itself if it has none."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value) if _SURROGATE.search(value) else value
    if isinstance(value, list):
        items = [_scrub(v) for v in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    if isinstance(value, dict):
        pairs = [(_scrub(k), _scrub(v)) for k, v in value.items()]
        same = all(k is a and v is b for (k, v), (a, b) in zip(pairs, value.items(), strict=True))
        return value if same else dict(pairs)
    return value


def _usable_id(value: object) -> str | int | None:
    """The id to answer with: a string or an integer, else null."""
    if isinstance(value, str) and not _SURROGATE.search(value):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


def _what_is_wrong(message: dict[str, Any]) -> str:
    if message.get("jsonrpc") != "2.0":
        return 'jsonrpc must be "2.0"'
    if "method" not in message:
        return "no method, result or error"
    if not isinstance(message["method"], str):
        return "method must be a string"
    if "id" in message and _usable_id(message["id"]) is None:
        return "id must be a string or an integer"
    if message.get("params") is not None and not isinstance(message["params"], dict):
        return "params must be an object"
    return "not a JSON-RPC request the server understands"


def invalid(message: dict[str, Any]) -> Fault:
    """The fault of a JSON object the SDK refused (or read as a notification although it
    has an ``id``)."""
    if "method" not in message and "id" in message and ("result" in message or "error" in message):
        return Fault(None, None, "ignored a malformed response")
    if "method" in message and "id" not in message:
        return Fault(None, None, "ignored a malformed notification")
    reason = _what_is_wrong(message)
    return Fault(types.INVALID_REQUEST, _usable_id(message.get("id")), f"Invalid Request: {reason}")


_ID_VALUE = re.compile(r'\s*:\s*(-?\d+(?![.eE\d])|"(?:[^"\\]|\\.)*")')


def _top_level_id(line: str) -> str | int | None:
    """The ``"id"`` of the outermost object of `line`, read without parsing the rest (it
    may be nested too deeply to parse); None when it has none that can be answered."""
    depth = 0
    i, n = 0, len(line)
    while i < n:
        ch = line[i]
        if ch == '"':
            end = i + 1
            while end < n and line[end] != '"':
                end += 2 if line[end] == "\\" else 1
            if depth == 1 and line[i + 1 : end] == "id":
                value = _ID_VALUE.match(line, end + 1)
                if value is not None:
                    try:
                        return _usable_id(json.loads(value.group(1)))
                    except ValueError:
                        return None
            i = end + 1
            continue
        if ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
        i += 1
    return None


def diagnose(line: str) -> str | Fault:
    """Why the SDK refused `line`: a `Fault`, or the line repaired (lone surrogates
    replaced) for the SDK to read again."""
    try:
        value = json.loads(line, parse_constant=_refuse_constant)
    except ValueError as exc:
        return Fault(types.PARSE_ERROR, None, f"Parse error: {exc}")
    except RecursionError:
        # Valid JSON may be deeper than a parser reads: answer its request, by its id.
        found = _top_level_id(line)
        if found is None:
            return Fault(types.PARSE_ERROR, None, "Parse error: nested too deeply")
        why = "Invalid Request: nested more deeply than the server reads"
        return Fault(types.INVALID_REQUEST, found, why)
    if not isinstance(value, dict):
        what = "a batch (JSON array)" if isinstance(value, list) else "not a JSON object"
        return Fault(types.INVALID_REQUEST, None, f"Invalid Request: {what}")
    msg_id = value.get("id")
    if isinstance(msg_id, str) and _SURROGATE.search(msg_id):
        if "method" not in value:
            return Fault(None, None, "ignored a response whose id holds a lone surrogate")
        return Fault(types.INVALID_REQUEST, None, "Invalid Request: the id holds a lone surrogate")
    try:
        repaired = _scrub(value)
        if repaired is not value:
            return json.dumps(repaired)
    except RecursionError:
        pass
    return invalid(value)


class Screen:
    """Takes each item the transport reads, with the line it came from (`Recorded`), and
    answers or logs what the SDK would have dropped; `replies` is the transport's write
    stream."""

    def __init__(self, lines: Recorded, replies: Any) -> None:
        self._lines = lines
        self._replies = replies

    async def next(self, inner: Any) -> Any:
        """The next message for the server from `inner`, the transport's read stream.

        Raises:
            anyio.EndOfStream: stdin is closed.
        """
        while (message := await self.admit(await inner.receive())) is None:
            pass
        return message

    async def admit(self, item: Any) -> Any:
        """The message to hand the server for `item`, or None when there is none (the
        line was answered or logged here)."""
        line = self._lines.kept.popleft() if self._lines.kept else None
        if line is None:  # cannot happen: the transport makes one item of each line
            if isinstance(item, SessionMessage):
                return item
            log.warning("the transport refused a line that was not kept: %s", _shown(str(item)))
            return None
        if isinstance(item, SessionMessage):
            if isinstance(item.message, types.JSONRPCNotification) and '"id"' in line:
                value = _parsed(line)
                if isinstance(value, dict) and "id" in value:  # a request, to the SDK not
                    await self._answer(invalid(value), line)
                    return None
            return item
        verdict = diagnose(line)
        if isinstance(verdict, str):
            try:
                message = types.jsonrpc_message_adapter.validate_json(verdict, by_name=False)
            except ValueError:  # repaired, and still refused
                verdict = invalid(json.loads(verdict))
            else:
                log.info("replaced lone surrogates with U+FFFD in: %s", _shown(line))
                return SessionMessage(message)
        await self._answer(verdict, line)
        return None

    async def _answer(self, fault: Fault, line: str) -> None:
        if fault.code is None:
            log.warning("%s: %s", fault.message, _shown(line.rstrip()))
            return
        log.info("answered %s to: %s", fault.message, _shown(line.rstrip()))
        error = types.ErrorData(code=fault.code, message=fault.message)
        await self._replies.send(
            SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=fault.id, error=error))
        )


def _shown(line: str) -> str:
    """A refused line as the log keeps it: its first `_SHOWN` characters, secrets masked
    (the log is on disk too)."""
    from ctxmode.session.redact import redact_text

    return redact_text(line[:_SHOWN])
