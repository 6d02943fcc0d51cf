#!/usr/bin/env python3
"""A scripted fake OpenAI-compatible chat-completions API on 127.0.0.1, for real-host runs.

Standard library only. Used in-process by the host drivers (``FakeAPI(script, log)`` as a
context manager) or standalone:

    python benchmarks/hosts/fakeapi.py --script script.json --log requests.jsonl \\
        [--port-file FILE] [--ready-dir DIR]

Endpoints (any path prefix: ``/v1/chat/completions``, ``/chat/completions``, ...):

* ``POST .../chat/completions``: the scripted reply, as SSE ``chat.completion.chunk`` events
  (``"stream": true``; a usage chunk when ``stream_options.include_usage``) or one
  ``chat.completion`` object;
* ``GET .../models``: the script's model;
* ``GET /page``: a small HTML page about "zebracorn deploys" (for ``ctx_fetch_and_index``);
* ``GET /curl-target``: what the scenario's shell ``curl`` asks for; a redirected curl never
  gets here, so every hit is logged as ``{"curl_target": true}``;
* ``GET /npm/...``: 404, a package registry that has nothing (``npm_config_registry``);
* ``POST /__mark`` ``{"run": NAME}``: a ``{"mark": NAME}`` line in the log (drivers mark each
  host invocation);
* anything else: ``200 {}``.

Every request is one JSON line of the log: method, path, body (parsed), the reply's label
(``reply_label``) and the reply itself (``reply``).

The script (`Script`) maps prompt keywords to step lists. A chat request's *prompt* is the
last user message containing one of the keywords; its *step* is the number of tool calls the
assistant made after that message. Each step is one tool call: ``tool`` names the tool
exactly, or ``mcp:<leaf>`` for an MCP tool whatever prefix the host gives it
(``ctxmode_ctx_execute``, ``mcp__ctxmode__ctx_execute``, ...); ``args`` are its arguments,
with ``{port}`` and ``{base}`` in strings replaced by this server's port and
``http://127.0.0.1:<port>``. After the last step the reply is the keyword's ``final`` text.
A request without tools, or without a keyword, is "aux" (titles, summaries, checks): it gets
`Script.aux_text` (or the first `Script.aux` entry whose key the request's text contains).
A step whose tool is not offered answers "TOOL <name> NOT AVAILABLE" as text (the run ends
there, visibly).

With a ready directory (ctxmode's ``<data root>/servers``), the first reply to each prompt
is held until a live ``ctxmode serve`` has written its readiness marker there
(``<pid>.json``, pid alive), at most `Script.ready_timeout` seconds; the wait is logged as
``ready_wait_s``. Hosts that start their MCP servers in the background would otherwise race
the hooks, which redirect only while a server is ready.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import threading
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PAGE = (
    "<html><head><title>Zebracorn page</title></head><body><h1>Zebracorn deploys</h1>"
    "<p>The zebracorn deploy pipeline runs nightly at 02:00 UTC.</p></body></html>"
)
CURL_TARGET = "zebracorn curl target: if a model sees this, the curl was not redirected\n"
CURL_HOST = "docs.zebracorn.example"


@dataclass
class Step:
    """One scripted tool call."""

    tool: str
    """The tool's exact name, or ``mcp:<leaf>`` for an MCP tool under any prefix."""
    args: dict[str, Any]


@dataclass
class Script:
    """What the fake model does, per prompt keyword."""

    prompts: dict[str, list[Step]]
    """Keyword -> the tool calls to make, in order (an empty list: answer text at once)."""
    final: dict[str, str] = field(default_factory=dict)
    """Keyword -> the text after the last step (default "All steps done.")."""
    aux: dict[str, str] = field(default_factory=dict)
    """Substring of an aux request's text -> the text to answer it with."""
    aux_text: str = "ok"
    tokens: dict[str, int] = field(default_factory=dict)
    """Keyword -> the prompt tokens its first reply reports (default 100; later replies
    100): a large figure makes a host that compacts on overflow compact, once."""
    loader: Step | None = None
    """A tool that loads deferred tools (Qwen Code's ``tool_search``), called once per prompt
    when a step's MCP tool is not offered yet; ``{names}`` in its arguments becomes the
    comma-separated MCP tool names the request's text mentions. Its calls are not steps."""
    model: str = "fake-model"
    ready_dir: str | None = None
    ready_timeout: float = 60.0
    delay: float = 0.0
    """Seconds each scripted reply waits, as a model would: a host that stops a tool's
    hooks when its next step starts (Kimi Code) loses them to an instant reply."""

    def to_json(self) -> dict[str, Any]:
        return {
            "prompts": {k: [vars(s) for s in v] for k, v in self.prompts.items()},
            "final": self.final,
            "aux": self.aux,
            "aux_text": self.aux_text,
            "tokens": self.tokens,
            "loader": vars(self.loader) if self.loader else None,
            "model": self.model,
            "ready_dir": self.ready_dir,
            "ready_timeout": self.ready_timeout,
            "delay": self.delay,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Script:
        prompts = {
            k: [Step(s["tool"], s.get("args") or {}) for s in v] for k, v in data["prompts"].items()
        }
        return cls(
            prompts,
            dict(data.get("final") or {}),
            dict(data.get("aux") or {}),
            str(data.get("aux_text") or "ok"),
            {str(k): int(v) for k, v in (data.get("tokens") or {}).items()},
            Step(data["loader"]["tool"], data["loader"].get("args") or {})
            if data.get("loader")
            else None,
            str(data.get("model") or "fake-model"),
            data.get("ready_dir"),
            float(data.get("ready_timeout") or 60.0),
            float(data.get("delay") or 0.0),
        )


# --- reading a chat request ---------------------------------------------------------------


def text_of(content: Any) -> str:
    """A message's content as text (a string, or the text parts of a list)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(p.get("text") or "") for p in content if isinstance(p, dict) and "text" in p
        )
    return ""


def tool_names(body: Mapping[str, Any]) -> list[str]:
    """The names of the tools a chat request offers."""
    out = []
    for tool in body.get("tools") or []:
        if isinstance(tool, dict):
            fn = tool.get("function")
            name = fn.get("name") if isinstance(fn, dict) else tool.get("name")
            if isinstance(name, str):
                out.append(name)
    return out


def resolve(tool: str, offered: Sequence[str]) -> str | None:
    """The offered name `tool` means (``mcp:<leaf>``: the leaf itself or any name ending in
    ``_<leaf>`` or ``-<leaf>``, Copilot CLI's ``<server>-<tool>``)."""
    if not tool.startswith("mcp:"):
        return tool if tool in offered else None
    leaf = tool[4:]
    for name in offered:
        if name == leaf or name.endswith(("_" + leaf, "-" + leaf)):
            return name
    return None


def messages(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body.get("messages") or [] if isinstance(m, dict)]


def tool_calls(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A message's tool calls in the chat shape (an Anthropic ``tool_use`` block too)."""
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        return [c for c in calls if isinstance(c, dict)]
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    return [
        {
            "id": b.get("id"),
            "function": {"name": b.get("name"), "arguments": json.dumps(b.get("input") or {})},
        }
        for b in blocks
        if isinstance(b, dict) and b.get("type") == "tool_use"
    ]


_TAGGED = re.compile(r"\s*<([A-Za-z_][\w-]*)[^>]*>.*?</\1>", re.DOTALL)


def own_words(text: str) -> str:
    """A user message without the tagged blocks at its start: context a host or hook put
    there (``<system-reminder>``, ``<session_resume>``), not what the user typed."""
    while (m := _TAGGED.match(text)) is not None:
        text = text[m.end() :]
    return text


def find_prompt(
    body: Mapping[str, Any], keywords: Sequence[str], skip: str | None = None
) -> tuple[str | None, int]:
    """(the keyword of the request's prompt, the number of tool calls after it, calls of
    the tool `skip` left out)."""
    msgs = messages(body)
    for i in range(len(msgs) - 1, -1, -1):
        if msgs[i].get("role") != "user":
            continue
        text = own_words(text_of(msgs[i].get("content")))
        for key in keywords:
            if key in text:
                calls = [c for m in msgs[i + 1 :] for c in tool_calls(m)]
                return key, sum(1 for c in calls if _called(c) != skip)
    return None, 0


def _called(call: Mapping[str, Any]) -> str | None:
    fn = call.get("function")
    return str(fn.get("name")) if isinstance(fn, dict) else None


_MCP_NAME = re.compile(r"\bmcp__[A-Za-z0-9_-]+__[A-Za-z0-9_]+")


def _loader_args(value: Any, names: str) -> Any:
    if isinstance(value, str):
        return value.replace("{names}", names)
    if isinstance(value, dict):
        return {k: _loader_args(v, names) for k, v in value.items()}
    return value


def _fill(value: Any, port: int) -> Any:
    if isinstance(value, str):
        return value.replace("{base}", f"http://127.0.0.1:{port}").replace("{port}", str(port))
    if isinstance(value, list):
        return [_fill(v, port) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, port) for k, v in value.items()}
    return value


# --- the server -------------------------------------------------------------------------------


class FakeAPI:
    """The fake, serving on 127.0.0.1 from a thread. Use as a context manager."""

    def __init__(self, script: Script, log: str, port: int = 0) -> None:
        self.script = script
        self.log_path = log
        self._lock = threading.Lock()
        self._held: set[str] = set()
        self._counted: set[str] = set()
        handler = type("Handler", (_Handler,), {"api": self})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self.httpd.daemon_threads = True
        self.port: int = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> FakeAPI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def write(self, entry: dict[str, Any]) -> None:
        entry.setdefault("ts", time.time())
        line = json.dumps(entry, default=str)
        with self._lock, open(self.log_path, "a", encoding="utf-8") as f:
            f.write(line + "\n")

    def mark(self, run: str) -> None:
        """Start a new invocation's section of the log."""
        self.write({"mark": run})

    def entries(self) -> list[dict[str, Any]]:
        return load_log(self.log_path)

    # --- replies ---

    def _server_ready(self) -> bool:
        folder = self.script.ready_dir
        try:
            names = os.listdir(folder) if folder else []
        except OSError:
            return False
        for name in names:
            if name.endswith(".json") and name[:-5].isdigit():
                try:
                    os.kill(int(name[:-5]), 0)
                except ProcessLookupError:
                    continue
                except OSError:
                    pass
                return True
        return False

    def _hold(self, key: str) -> float | None:
        if not self.script.ready_dir:
            return None
        with self._lock:
            if key in self._held:
                return None
            self._held.add(key)
        t0 = time.monotonic()
        while not self._server_ready() and time.monotonic() - t0 < self.script.ready_timeout:
            time.sleep(0.05)
        return round(time.monotonic() - t0, 2)

    @staticmethod
    def _loaded(body: Mapping[str, Any], tool: str) -> bool:
        """`tool` (the loader) was called after the last user message."""
        msgs = messages(body)
        last = max((i for i, m in enumerate(msgs) if m.get("role") == "user"), default=-1)
        return any(_called(c) == tool for m in msgs[last + 1 :] for c in tool_calls(m))

    def reply(
        self, body: Mapping[str, Any]
    ) -> tuple[str, str, dict[str, Any] | None, dict[str, Any]]:
        """(label, text, tool call or None, extra log fields) for one chat request."""
        offered = tool_names(body)
        loader = self.script.loader
        skip = loader.tool if loader is not None else None
        keyword, step = find_prompt(body, list(self.script.prompts), skip)
        if not offered or keyword is None:
            everything = json.dumps(body.get("messages") or [])
            for key, text in self.script.aux.items():
                if key in everything:
                    return f"aux:{key}", text, None, {}
            return "aux", self.script.aux_text, None, {}
        extra: dict[str, Any] = {"prompt_key": keyword, "step": step}
        if keyword in self.script.tokens:
            with self._lock:
                if keyword not in self._counted:
                    self._counted.add(keyword)
                    extra["prompt_tokens"] = self.script.tokens[keyword]
        waited = self._hold(keyword)
        if waited is not None:
            extra["ready_wait_s"] = waited
        steps = self.script.prompts[keyword]
        if step >= len(steps):
            final = self.script.final.get(keyword, "All steps done.")
            return f"{keyword}:final", final, None, extra
        want = steps[step]
        name = resolve(want.tool, offered)
        if name is None and loader is not None and want.tool.startswith("mcp:"):
            if loader.tool in offered and not self._loaded(body, loader.tool):
                text = json.dumps(body.get("messages") or [])
                names = ",".join(dict.fromkeys(_MCP_NAME.findall(text)))
                want, name = Step(loader.tool, _loader_args(loader.args, names)), loader.tool
        if name is None:
            return f"{keyword}:step{step}:missing", f"TOOL {want.tool} NOT AVAILABLE", None, extra
        call = {
            "id": "call_" + uuid.uuid4().hex[:24],
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(_fill(want.args, self.port))},
        }
        return f"{keyword}:step{step}:{name}", "", call, extra


def usage_of(prompt_tokens: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": 10,
        "total_tokens": prompt_tokens + 10,
    }


def completion(
    model: str, text: str, call: dict[str, Any] | None, prompt_tokens: int = 100
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if call is not None:
        message["tool_calls"] = [call]
    return {
        "id": "chatcmpl-" + uuid.uuid4().hex[:24],
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if call is not None else "stop",
            }
        ],
        "usage": usage_of(prompt_tokens),
    }


def chunks(
    model: str, text: str, call: dict[str, Any] | None, usage: bool, prompt_tokens: int = 100
) -> Iterator[dict[str, Any]]:
    """The SSE events of one streamed reply (role, content or tool call, finish, usage)."""
    ident, created = "chatcmpl-" + uuid.uuid4().hex[:24], int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": ident,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    yield chunk({"role": "assistant", "content": ""})
    if text:
        yield chunk({"content": text})
    if call is not None:
        fn = call["function"]
        yield chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": call["id"],
                        "type": "function",
                        "function": {"name": fn["name"], "arguments": ""},
                    }
                ]
            }
        )
        yield chunk({"tool_calls": [{"index": 0, "function": {"arguments": fn["arguments"]}}]})
    yield chunk({}, "tool_calls" if call is not None else "stop")
    if usage:
        yield {
            "id": ident,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [],
            "usage": usage_of(prompt_tokens),
        }


# --- the Anthropic Messages API (Claude Code) ------------------------------------------------


def anthropic_blocks(text: str, call: dict[str, Any] | None) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    if call is not None:
        fn = call["function"]
        ident = "toolu_" + call["id"][5:]
        blocks.append(
            {
                "type": "tool_use",
                "id": ident,
                "name": fn["name"],
                "input": json.loads(fn["arguments"]),
            }
        )
    return blocks or [{"type": "text", "text": "ok"}]


def anthropic_events(
    model: str, blocks: list[dict[str, Any]], stop: str
) -> Iterator[tuple[str, Any]]:
    """The SSE events of one streamed Messages reply."""
    usage = {"input_tokens": 100, "output_tokens": 1}
    message = {
        "id": "msg_" + uuid.uuid4().hex[:24],
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    yield "message_start", {"type": "message_start", "message": message}
    for i, b in enumerate(blocks):
        if b["type"] == "text":
            start, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": b["text"]}
        else:
            start = {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(b["input"])}
        yield (
            "content_block_start",
            {"type": "content_block_start", "index": i, "content_block": start},
        )
        yield "content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": i}
    end = {"stop_reason": stop, "stop_sequence": None}
    yield "message_delta", {"type": "message_delta", "delta": end, "usage": {"output_tokens": 20}}
    yield "message_stop", {"type": "message_stop"}


class _Handler(BaseHTTPRequestHandler):
    api: FakeAPI
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base's name)
        pass

    def _send(self, code: int, body: bytes, ctype: str = "application/json") -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _json(self, value: Any, code: int = 200) -> None:
        self._send(code, json.dumps(value).encode())

    def do_GET(self) -> None:  # noqa: N802 (the base's name)
        path = self.path.split("?", 1)[0]
        entry: dict[str, Any] = {"method": "GET", "path": self.path}
        if path == "/page":
            self.api.write(entry)
            self._send(200, PAGE.encode(), "text/html; charset=utf-8")
        elif path == "/curl-target":
            self.api.write({**entry, "curl_target": True})
            self._send(200, CURL_TARGET.encode(), "text/plain")
        elif path.startswith("/npm/"):
            # A package registry that has nothing (npm_config_registry=<url>/npm/): hosts that
            # install packages at start fail at once instead of retrying an unreachable one.
            self.api.write(entry)
            self._json({"error": "Not found"}, 404)
        elif path.endswith("/models"):
            self.api.write(entry)
            model = self.api.script.model
            self._json(
                {"object": "list", "data": [{"id": model, "object": "model", "owned_by": "fake"}]}
            )
        else:
            self.api.write(entry)
            self._json({})

    def do_POST(self) -> None:  # noqa: N802 (the base's name)
        size = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(size) if size else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"_unparsed": raw.decode("utf-8", "replace")}
        path = self.path.split("?", 1)[0]
        if path == "/__mark":
            self.api.mark(str(body.get("run") if isinstance(body, dict) else body))
            self._json({})
            return
        if path.endswith("/v1/messages/count_tokens"):
            self.api.write({"method": "POST", "path": self.path})
            self._json({"input_tokens": 1000})
            return
        if path.endswith("/v1/messages") and isinstance(body, dict):
            self._anthropic(body)
            return
        if not path.endswith("/chat/completions") or not isinstance(body, dict):
            self.api.write({"method": "POST", "path": self.path, "body": body})
            self._json({})
            return
        label, text, call, extra = self.api.reply(body)
        if self.api.script.delay and not label.startswith("aux"):
            time.sleep(self.api.script.delay)
        model = str(body.get("model") or self.api.script.model)
        stream = bool(body.get("stream"))
        opts = body.get("stream_options")
        usage = isinstance(opts, dict) and bool(opts.get("include_usage"))
        self.api.write(
            {
                "method": "POST",
                "path": self.path,
                "body": body,
                "reply_label": label,
                "reply": {"text": text, "tool_call": call},
                **extra,
            }
        )
        tokens = int(extra.get("prompt_tokens") or 100)
        if not stream:
            self._json(completion(model, text, call, tokens))
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        try:
            for event in chunks(model, text, call, usage, tokens):
                self.wfile.write(b"data: " + json.dumps(event).encode() + b"\n\n")
                self.wfile.flush()
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _anthropic(self, body: dict[str, Any]) -> None:
        label, text, call, extra = self.api.reply(body)
        blocks = anthropic_blocks(text, call)
        stop = "tool_use" if call is not None else "end_turn"
        self.api.write(
            {
                "method": "POST",
                "path": self.path,
                "body": body,
                "reply_label": label,
                "reply": {"text": text, "tool_call": call},
                **extra,
            }
        )
        model = str(body.get("model") or self.api.script.model)
        if not body.get("stream"):
            usage = {"input_tokens": 100, "output_tokens": 20}
            reply = {"id": "msg_" + uuid.uuid4().hex[:24], "type": "message", "role": "assistant"}
            reply.update(model=model, content=blocks, stop_reason=stop, stop_sequence=None)
            self._json({**reply, "usage": usage})
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        try:
            for name, data in anthropic_events(model, blocks, stop):
                self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass


# --- reading the log --------------------------------------------------------------------------


def load_log(path: str) -> list[dict[str, Any]]:
    out = []
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    try:
                        out.append(json.loads(line))
                    except ValueError:
                        continue
    except OSError:
        pass
    return out


def segments(entries: Sequence[Mapping[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """{mark: the log entries after it} ("" before the first mark)."""
    out: dict[str, list[dict[str, Any]]] = {"": []}
    current = ""
    for entry in entries:
        if "mark" in entry:
            current = str(entry["mark"])
            out[current] = []
        else:
            out[current].append(dict(entry))
    return out


def chat_requests(entries: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The chat-completions requests of a log (in order)."""
    return [dict(e) for e in entries if "reply_label" in e]


def tool_results(body: Mapping[str, Any]) -> list[tuple[str, str]]:
    """[(tool name, result text)] of every tool result in a chat request, in order."""
    names: dict[str, str] = {}
    out = []
    for m in messages(body):
        for call in tool_calls(m):
            fn = call.get("function")
            if isinstance(fn, dict):
                names[str(call.get("id"))] = str(fn.get("name") or "")
        if m.get("role") == "tool":
            out.append((names.get(str(m.get("tool_call_id")), ""), text_of(m.get("content"))))
        content = m.get("content")
        out.extend(  # Anthropic: tool_result blocks in a user message
            (names.get(str(b.get("tool_use_id")), ""), text_of(b.get("content")))
            for b in (content if isinstance(content, list) else [])
            if isinstance(b, dict) and b.get("type") == "tool_result"
        )
    return out


_WS = re.compile(r"\s+")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("--script", required=True, help="a Script as JSON")
    ap.add_argument("--log", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    ap.add_argument("--ready-dir")
    a = ap.parse_args()
    with open(a.script, encoding="utf-8") as f:
        script = Script.from_json(json.load(f))
    if a.ready_dir:
        script.ready_dir = a.ready_dir
    api = FakeAPI(script, a.log, a.port)
    if a.port_file:
        with open(a.port_file, "w") as f:
            f.write(str(api.port))
    print(api.url, flush=True)
    try:
        api.httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        api.httpd.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
