"""The protocol served without the MCP SDK, for as long as every message is one it fully
understands.

Importing the SDK takes most of a second (its pydantic models, for two protocol eras),
and after the opening every host sends the same few messages: tool calls, cancellations,
pings and lists. `serve` reads them, answers the opening ones from `early.Opening`, runs
each tool call in a worker thread (`Calls`: the same `dispatch.answer` the SDK server
runs) and writes its answer exactly as the SDK words it (a test holds both side by side).
The first message it is not sure of (`early.Unsure`) ends its part: the SDK is loaded
then, the calls in flight are finished, and the SDK server reads that message and all
that follow, after the opening messages again (answered already: its answers to those
are dropped). A connection that never sends such a message never loads the SDK.

Standard library and light ctxmode modules only at import (a test walks the imports).
"""

import json
import logging
import os
import re
import select
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from ctxmode.server import early, pipes

MAX_CALLS = 32  # tool calls run at once; more wait for a worker
MESSAGE_MAX_BYTES = 64 << 20  # one message; a longer line is answered with an error, unkept
_READ_SIZE = 1 << 16
_EDGE = 4096  # of a line too long, the bytes kept at each end (where its id is)
_ID = re.compile(rb'"id"\s*:\s*(-?\d+|"(?:[^"\\\n]|\\.)*")')
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_PAIR_ESCAPE = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}")

log = logging.getLogger("ctxmode.server")


def encode(message: dict[str, Any]) -> bytes:
    """One protocol line: compact JSON, UTF-8 as the SDK writes it (a lone surrogate in
    a text, which UTF-8 cannot carry, is escaped instead)."""
    text = json.dumps(message, separators=(",", ":"), ensure_ascii=False)
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        data = json.dumps(message, separators=(",", ":")).encode("ascii")
    return data + b"\n"


def _message(line: bytes) -> object:
    """A line as JSON, or None (the SDK answers it) when it is not JSON text or escapes a
    UTF-16 surrogate: the SDK reads a lone one as U+FFFD, which this reading would not."""
    if _SURROGATE_ESCAPE.search(line) and _SURROGATE_ESCAPE.search(_PAIR_ESCAPE.sub(b"", line)):
        return None
    try:
        return json.loads(line.decode("utf-8"))
    except (ValueError, RecursionError):  # UnicodeDecodeError included; nested too deep
        return None


@dataclass
class Oversized:
    """A line longer than `MESSAGE_MAX_BYTES`: its size and its first and last bytes."""

    size: int
    head: bytes
    tail: bytes

    def answer(self) -> dict[str, Any] | None:
        """The error it gets, on its id when either end shows one (None: a notification)."""
        ids = _ID.findall(self.head)[:1] or _ID.findall(self.tail)[-1:]
        if not ids and b'"notifications/' in self.head + self.tail:
            return None
        message = (
            f"Request too large: {self.size:,} bytes; a message holds at most"
            f" {MESSAGE_MAX_BYTES:,}. Index a large text by its path (ctx_index path)."
        )
        request_id = json.loads(ids[0]) if ids else None
        return {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32600, "message": message}}


class LineBuffer:
    """What is read, split into lines. Each read is scanned once (copying a long line at
    every read was quadratic), and a line past `limit` is not kept: it comes out as an
    `Oversized`."""

    def __init__(self, limit: int = MESSAGE_MAX_BYTES) -> None:
        self._limit = limit
        self._pieces: list[bytes] = []
        self._size = 0
        self._head = self._tail = b""

    def feed(self, chunk: bytes) -> "list[bytes | Oversized]":
        out: list[bytes | Oversized] = []
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            self._add(chunk[start:] if end < 0 else chunk[start:end])
            if end < 0:
                return out
            out.append(self._take())
            start = end + 1

    def rest(self) -> bytes:
        """The line begun and not ended (empty once it is past the limit)."""
        return b"".join(self._pieces)

    def finish(self) -> "list[bytes | Oversized]":
        """At the end of the input: its last line, when it has no newline."""
        return [self._take()] if self._size else []

    def _add(self, piece: bytes) -> None:
        self._size += len(piece)
        if self._size <= self._limit:
            self._pieces.append(piece)
            return
        if self._pieces:  # the line just passed the limit: keep its ends only
            kept = b"".join(self._pieces)
            self._head, self._tail, self._pieces = kept[:_EDGE], kept[-_EDGE:], []
        self._head = self._head or piece[:_EDGE]
        self._tail = (self._tail + piece)[-_EDGE:]

    def _take(self) -> "bytes | Oversized":
        line: bytes | Oversized = (
            b"".join(self._pieces)
            if self._size <= self._limit
            else Oversized(self._size, self._head, self._tail)
        )
        self._pieces, self._size, self._head, self._tail = [], 0, b"", b""
        return line


class Calls:
    """Tool calls in flight, each in a worker thread that writes its own answer.

    A cancelled call's answer is not sent (as the SDK does); calls ended by the client
    closing stdin still answer (`ServerState.close_input`).
    """

    def __init__(self, wire: pipes.Wire, state: Callable[[], Any]) -> None:
        self._wire = wire
        self._state = state  # waits for the core to load
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._running: dict[threading.Event, Any] = {}  # cancel flag -> request id
        self._cancelled: set[threading.Event] = set()
        self._pool = ThreadPoolExecutor(MAX_CALLS, thread_name_prefix="ctxmode-call")

    def write(self, message: dict[str, Any]) -> bool:
        """Send one message; False when the client is gone."""
        data = encode(message)
        with self._write_lock:
            try:
                self._wire.write(data)
            except OSError:
                return False
        return True

    def start(self, call: early.ToolCall) -> None:
        event = threading.Event()
        with self._lock:
            self._running[event] = call.id
        self._pool.submit(self._run, call, event)

    def cancel(self, request_id: str | int) -> None:
        """Cancel the call `request_id` names, if it is still running."""
        with self._lock:
            for event, running_id in self._running.items():
                if running_id == request_id and type(running_id) is type(request_id):
                    self._cancelled.add(event)
                    event.set()

    def _run(self, call: early.ToolCall, event: threading.Event) -> None:
        from ctxmode.server import dispatch

        try:
            state = self._state()
            with state.cancellable(event, until_eof=call.name in dispatch.UNTIL_EOF):
                text, is_error = dispatch.answer(
                    state, call.name, call.arguments, call.caller, event
                )
            response = early.tool_result(call, text, is_error)
        except Exception as exc:  # the core could not load: say so on this request
            log.exception("tool %s failed", call.name)
            error = {"code": -32603, "message": f"Internal error: {type(exc).__name__}: {exc}"}
            response = {"jsonrpc": "2.0", "id": call.id, "error": error}
        try:
            with self._lock:
                cancelled = event in self._cancelled
            if not cancelled:
                self.write(response)
        finally:
            with self._lock:
                self._running.pop(event, None)
                self._cancelled.discard(event)
                self._idle.notify_all()

    def wait_idle(self) -> None:
        """Until every call started has answered."""
        with self._lock:
            while self._running:
                self._idle.wait()


@dataclass
class Ending:
    """How `serve` ended: at EOF (`eof`), or at a message for the SDK, with what the SDK
    must read first (`prefix`) and the answers already sent to what it reads again."""

    eof: bool
    prefix: bytes = b""
    answered: list[dict[str, Any]] = field(default_factory=list)


def serve(
    wire: pipes.Wire,
    calls: Calls,
    tools: list[dict[str, Any]],
    loaded_fd: int,
    on_loaded: Callable[[], None],
) -> Ending:
    """Read and answer the wire until EOF or the first message for the SDK.

    `on_loaded` is called once, from this thread, when `loaded_fd` becomes readable (the
    core has loaded).
    """
    opening = early.Opening(tools)
    fed: list[bytes] = []  # the lines the SDK must read again: those that shape a session
    answered: list[dict[str, Any]] = []
    buffer = LineBuffer()
    watched = [wire.fd_in, loaded_fd]
    while True:
        ready, _, _ = select.select(watched, [], [])
        if loaded_fd in ready:
            watched.remove(loaded_fd)
            on_loaded()
        if wire.fd_in not in ready:
            continue
        chunk = os.read(wire.fd_in, _READ_SIZE)
        lines = buffer.feed(chunk) if chunk else buffer.finish()  # a last line unended too
        for index, line in enumerate(lines):
            if isinstance(line, Oversized):
                refusal = line.answer()
                if refusal is not None and not calls.write(refusal):
                    return Ending(eof=True)
                continue
            message = _message(line)
            try:
                reply = opening.answer(message)
            except early.Unsure:
                later: list[bytes] = []
                for item in lines[index:]:  # the SDK reads these again, but one too long
                    if isinstance(item, bytes):
                        later.append(item)
                    elif (refusal := item.answer()) is not None:
                        calls.write(refusal)
                rest = b"\n".join([*later, buffer.rest()])
                return Ending(False, b"".join(f + b"\n" for f in fed) + rest, answered)
            if isinstance(reply, early.ToolCall):
                calls.start(reply)
                continue
            if isinstance(reply, early.Cancel):
                calls.cancel(reply.request_id)
                continue
            assert isinstance(message, dict)
            if not fed or message["method"] not in early.STATELESS_METHODS:
                fed.append(line)
                if reply is not None:
                    answered.append(reply)
            if reply is not None and not calls.write(reply):
                return Ending(eof=True)  # the client is gone
        if not chunk:
            return Ending(eof=True)
