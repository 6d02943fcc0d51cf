"""Answers to a client's opening messages, and the tool calls and cancellations after
them, read without the MCP SDK (`ctxmode.server.direct` runs the calls).

Loading the SDK takes most of a second (its pydantic models, for two protocol eras), and
hosts probe a server the moment they spawn it: Claude Code sends ``server/discover`` with
a short deadline, then the tool, prompt and resource lists; others send ``initialize``
and the same lists. Those answers depend on nothing but this server, so `Opening` gives
them from the catalog while the SDK loads (`ctxmode.server.boot`).

It answers only message shapes it fully understands, exactly as the SDK would (a test
holds both side by side for every shape hosts send, tool results included); the first
message it is not sure of ends its part, and the SDK answers that one and everything
after. The SDK is first fed the messages that shaped the session (the first request,
``initialize``, ``notifications/initialized``), so its session ends up as it would
have been anyway; its own answers to those are dropped.

Standard library only: this runs before anything heavy is imported.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ctxmode import __version__

# The protocol revisions of mcp 2.3 (`mcp_types.version`): the handshake era, oldest to
# newest, and the per-request-envelope era.
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_VERSION = "2026-07-28"

_META_VERSION = "io.modelcontextprotocol/protocolVersion"
_META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
_META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
_META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
_ENVELOPE = {_META_VERSION, _META_CLIENT_INFO, _META_CAPABILITIES}

SERVER_NAME = "ctxmode"
INSTRUCTIONS = (
    "ctxmode keeps raw tool output out of context: run code with ctx_execute / "
    "ctx_batch_execute, process files with ctx_execute_file, fetch pages with "
    "ctx_fetch_and_index, then ctx_search what was indexed."
)
# What the SDK derives from the handlers `app.build_server` registers.
CAPABILITIES: dict[str, Any] = {
    "prompts": {"listChanged": False},
    "resources": {"listChanged": False, "subscribe": False},
    "tools": {"listChanged": False},
}
_EMPTY_LISTS = {
    "prompts/list": "prompts",
    "resources/list": "resources",
    "resources/templates/list": "resourceTemplates",
}
_LISTS = {"tools/list", *_EMPTY_LISTS}
# Requests whose answers depend on nothing a client said before.
STATELESS_METHODS = frozenset({"ping", *_LISTS})


class Unsure(Exception):
    """This message, and every one after it, is for the SDK to answer."""


@dataclass(frozen=True)
class ToolCall:
    """A ``tools/call`` in a shape fully understood: for `ctxmode.server.direct` to run
    and answer (`tool_result`)."""

    id: str | int
    name: str
    arguments: dict[str, Any]
    meta: dict[str, Any]
    client: str | None  # the client's name (`results.structured_content`)
    caller: str  # the flood guard's key (`caller_key`)
    modern: bool  # a 2026-07-28 request: the result is shaped as the SDK shapes those


@dataclass(frozen=True)
class Cancel:
    """``notifications/cancelled`` of request `request_id`: no answer is sent for it."""

    request_id: str | int


def tool_dicts() -> list[dict[str, Any]]:
    """The tools list as it goes on the wire (``tools/list``)."""
    from ctxmode.server.catalog import TOOLS

    return [
        {
            "annotations": {
                "destructiveHint": t.destructive,
                "idempotentHint": t.idempotent,
                "openWorldHint": t.open_world,
                "readOnlyHint": t.read_only,
            },
            "description": t.description,
            "inputSchema": t.schema,
            "name": t.name,
            "title": t.title,
        }
        for t in TOOLS
    ]


def _server_info() -> dict[str, str]:
    return {"name": SERVER_NAME, "version": __version__}


def _is_id(value: object) -> bool:
    """A string or an integer; a string with a lone surrogate (``"\\ud800"``) is left to
    the SDK's side (`ctxmode.server.frames`), which cannot echo it."""
    if isinstance(value, str):
        return not any("\ud800" <= c <= "\udfff" for c in value)
    return isinstance(value, int) and not isinstance(value, bool)


def _objects(value: object) -> bool:
    """A JSON object whose values are all JSON objects."""
    return isinstance(value, dict) and all(isinstance(v, dict) for v in value.values())


def _shaped(value: object, fields: dict[str, Callable[[object], bool]]) -> bool:
    """A JSON object with only these fields, each passing its check."""
    return isinstance(value, dict) and all(k in fields and fields[k](v) for k, v in value.items())


def _is_str(value: object) -> bool:
    return isinstance(value, str)


def _is_bool(value: object) -> bool:
    return isinstance(value, bool)


def _is_object(value: object) -> bool:
    return isinstance(value, dict)


_CAPABILITY_FIELDS: dict[str, Callable[[object], bool]] = {
    "roots": lambda v: _shaped(v, {"listChanged": _is_bool}),
    "sampling": lambda v: _shaped(v, {"context": _is_object, "tools": _is_object}),
    "elicitation": lambda v: _shaped(v, {"form": _is_object, "url": _is_object}),
    "experimental": _objects,
    "extensions": _objects,
}


def _client_capabilities(value: object) -> bool:
    """Capabilities the SDK accepts: the known ones well formed (``tasks``, whose shape
    is deeper, is left to the SDK); unknown ones are ignored by the SDK as well."""
    if not isinstance(value, dict) or "tasks" in value:
        return False
    return all(check(value[k]) for k, check in _CAPABILITY_FIELDS.items() if k in value)


def _implementation(value: object) -> bool:
    """A ``clientInfo`` with a name and a version, and text fields only."""
    return (
        _shaped(
            value,
            {
                "name": _is_str,
                "version": _is_str,
                "title": _is_str,
                "description": _is_str,
                "websiteUrl": _is_str,
            },
        )
        and isinstance(value, dict)
        and "name" in value
        and "version" in value
    )


def _plain(params: object) -> bool:
    """Handshake-era list or ping params: none, or at most a progress token."""
    if params is None or params == {}:
        return True
    return _shaped(params, {"_meta": lambda m: _shaped(m, {"progressToken": _is_id})})


def _envelope(params: object) -> bool:
    """Params carrying exactly a well-formed 2026-07-28 envelope and nothing else."""
    if not _shaped(params, {"_meta": _is_object}) or not isinstance(params, dict):
        return False
    meta = params.get("_meta")
    return (
        isinstance(meta, dict)
        and set(meta) == _ENVELOPE
        and meta[_META_VERSION] == MODERN_VERSION
        and _implementation(meta[_META_CLIENT_INFO])
        and _client_capabilities(meta[_META_CAPABILITIES])
    )


def _has_envelope(params: object) -> bool:
    """Whether params claim the 2026-07-28 era (the SDK's test for it)."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and _META_VERSION in meta


class Opening:
    """The opening of one connection, answered message by message until `Unsure`.

    The first request decides the era, as in the SDK: ``server/discover`` carrying the
    2026-07-28 envelope opens a modern connection, anything else a handshake one.
    """

    def __init__(self, tools: list[dict[str, Any]]) -> None:
        self.era: str | None = None  # "handshake" or "modern" once the first request came
        self.initialized = False  # a handshake connection answered `initialize`
        self._tools = tools  # `tool_dicts()`
        self._done = False
        self._client: str | None = None  # the handshake client's name

    def answer(self, message: object) -> dict[str, Any] | ToolCall | Cancel | None:
        """The response to `message`, the call or cancellation it is, or None for a
        notification that needs nothing done.

        Raises:
            Unsure: the SDK must answer this message and all that follow.
        """
        if self._done:
            raise Unsure
        try:
            return self._answer(message)
        except Unsure:
            self._done = True
            raise

    def _answer(self, message: object) -> dict[str, Any] | ToolCall | Cancel | None:
        if (
            not isinstance(message, dict)
            or message.get("jsonrpc") != "2.0"
            or not set(message) <= {"jsonrpc", "id", "method", "params"}
            or not isinstance(message.get("method"), str)
        ):
            raise Unsure
        method, params = message["method"], message.get("params")
        if "id" not in message:
            if method == "notifications/initialized" and self.initialized:
                if params is None or params == {}:
                    return None
            if method == "notifications/cancelled" and self.era is not None:
                return _cancel(params)
            raise Unsure
        msg_id = message["id"]
        if not _is_id(msg_id):
            raise Unsure
        if self.era is None:
            return self._first(msg_id, method, params)
        if self.era == "handshake":
            if method == "initialize" and not self.initialized:
                return self._initialize(msg_id, params)
            if method == "ping" and _plain(params):
                return _result(msg_id, {})
            if method in _LISTS and self.initialized and _plain(params):
                return _result(msg_id, self._list(method))
            if method == "tools/call" and self.initialized:
                return _tool_call(msg_id, params, self._client, modern=False)
            raise Unsure
        if method == "tools/call":
            return _tool_call(msg_id, params, None, modern=True)
        if method in _LISTS and _envelope(params):
            return _result(msg_id, _modern(self._list(method)))
        if method == "server/discover" and _envelope(params):
            return _result(msg_id, _modern(_discovery()))
        raise Unsure

    def _first(self, msg_id: object, method: str, params: object) -> dict[str, Any]:
        if method == "server/discover" and _envelope(params):
            self.era = "modern"
            return _result(msg_id, _modern(_discovery()))
        if _has_envelope(params):
            raise Unsure
        if method == "initialize":
            return self._initialize(msg_id, params)
        if method == "ping" and _plain(params):
            self.era = "handshake"
            return _result(msg_id, {})
        if method == "server/discover" and (params is None or params == {}):
            self.era = "handshake"  # no envelope: a handshake-era server knows no such method
            error = {"code": -32601, "message": "Method not found", "data": method}
            return {"jsonrpc": "2.0", "id": msg_id, "error": error}
        raise Unsure

    def _initialize(self, msg_id: object, params: object) -> dict[str, Any]:
        if not (
            isinstance(params, dict)
            and set(params) == {"protocolVersion", "capabilities", "clientInfo"}
            and isinstance(params["protocolVersion"], str)
            and params["protocolVersion"] != MODERN_VERSION
            and _client_capabilities(params["capabilities"])
            and _implementation(params["clientInfo"])
        ):
            raise Unsure
        asked = params["protocolVersion"]
        self.era = "handshake"
        self.initialized = True
        self._client = params["clientInfo"]["name"]
        return _result(
            msg_id,
            {
                "capabilities": CAPABILITIES,
                "instructions": INSTRUCTIONS,
                "protocolVersion": asked if asked in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1],
                "serverInfo": _server_info(),
            },
        )

    def _list(self, method: str) -> dict[str, Any]:
        if method == "tools/list":
            return {"tools": self._tools}
        return {_EMPTY_LISTS[method]: []}


def _discovery() -> dict[str, Any]:
    return {
        "capabilities": CAPABILITIES,
        "instructions": INSTRUCTIONS,
        "supportedVersions": [MODERN_VERSION],
    }


def _modern(result: dict[str, Any]) -> dict[str, Any]:
    """A result as the SDK shapes it for a 2026-07-28 client: cache hints, result type
    and the server's name in ``_meta``."""
    return {
        "cacheScope": "private",
        **result,
        "resultType": "complete",
        "ttlMs": 0,
        "_meta": {_META_SERVER_INFO: _server_info()},
    }


def _result(msg_id: object, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def caller_key(client: str, call_meta: dict[str, Any] | None) -> str:
    """The flood guard's key: the client, and the agent when the call's ``_meta`` names
    one (parallel sub-agents of one client each get their own window)."""
    agent = next(
        (
            f"{k}={v}"
            for k, v in (call_meta or {}).items()
            if "agent" in k.lower() and isinstance(v, (str, int))
        ),
        "",
    )
    return f"{client}:{agent}"


_HANDSHAKE_CLIENT = "stdio"  # one client per process: its flood-guard key


def _tool_call(msg_id: str | int, params: object, client: str | None, *, modern: bool) -> ToolCall:
    """The call `params` ask for, when every field is one the SDK reads the same way.

    Raises:
        Unsure: a field this module does not know (``task``), a malformed one, or a
            2026-07-28 call without a well-formed envelope.
    """
    if not isinstance(params, dict) or not set(params) <= {"name", "arguments", "_meta"}:
        raise Unsure
    name, arguments = params.get("name"), params.get("arguments")
    call_meta = params.get("_meta", {})
    if not isinstance(name, str) or not isinstance(arguments, (dict, type(None))):
        raise Unsure
    if not isinstance(call_meta, dict) or not _is_id(call_meta.get("progressToken", 0)):
        raise Unsure
    if modern:
        envelope = {k: call_meta.get(k) for k in _ENVELOPE}
        if not _envelope({"_meta": envelope}):
            raise Unsure
        info = envelope[_META_CLIENT_INFO]
        assert isinstance(info, dict)  # checked by `_envelope`
        client = info["name"]
        caller_client = f"{info['name']}/{info['version']}"
    else:
        if any(k in call_meta for k in _ENVELOPE):
            raise Unsure
        caller_client = _HANDSHAKE_CLIENT
    return ToolCall(
        msg_id,
        name,
        dict(arguments or {}),
        call_meta,
        client,
        caller_key(caller_client, call_meta),
        modern,
    )


def _cancel(params: object) -> Cancel:
    if not _shaped(params, {"requestId": _is_id, "reason": _is_str, "_meta": _is_object}):
        raise Unsure
    assert isinstance(params, dict)
    if "requestId" not in params:
        raise Unsure
    return Cancel(params["requestId"])


def tool_result(call: ToolCall, text: str, is_error: bool) -> dict[str, Any]:
    """The response to `call` as the SDK words it (`app.build_server`'s ``call_tool``)."""
    from ctxmode.server.results import structured_content

    result: dict[str, Any] = {"content": [{"text": text, "type": "text"}], "isError": is_error}
    structured = structured_content(call.client, text)
    if structured is not None:
        result["structuredContent"] = structured
    if call.modern:  # no cache hints on a call's result
        result = {**result, "resultType": "complete", "_meta": {_META_SERVER_INFO: _server_info()}}
    return _result(call.id, result)
