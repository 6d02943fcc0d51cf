"""The MCP server: the tool catalog, one dispatcher mapping errors to results, and the
stdio run loop with its lifecycle.

Built on the SDK's low-level `Server` so that the tools list carries exactly our compact
schemas (argument names as upstream has them) and so that argument coercion and error
wording are ours. Tool handlers are synchronous core calls; they run in worker threads so
the loop keeps answering pings and cancellations while code runs.

The process starts in `ctxmode.server.boot`, which serves the client without this module
(`ctxmode.server.direct`) until a message needs the SDK; `serve` takes over from there.
"""

import json
import logging
import os
from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ctxmode import __version__, paths, readiness
from ctxmode.server import dispatch, early, frames, lifecycle, results
from ctxmode.server.handoff import Handoff
from ctxmode.server.pipes import event_loop_pipes
from ctxmode.server.state import ServerState

log = logging.getLogger("ctxmode.server")

INSTRUCTIONS = early.INSTRUCTIONS


def tool_list() -> list[types.Tool]:
    """The tools, from the same wire form `early` answers with before this module loads."""
    return [types.Tool.model_validate(tool) for tool in early.tool_dicts()]


def _caller(ctx: ServerRequestContext[Any]) -> str:
    """The flood guard's key (`early.caller_key`) for this client.

    A handshake-era client keeps one `initialize` for its connection, so its params
    identify it. Newer clients send no handshake; their client info names them (over
    stdio there is one client per process either way).
    """
    params = ctx.session.client_params
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        info = params.client_info if params is not None else None
        client = f"{info.name}/{info.version}" if info is not None else "client"
    else:
        client = str(id(params)) if params is not None else "client"
    return early.caller_key(client, dict(ctx.meta) if ctx.meta is not None else None)


def _client(ctx: ServerRequestContext[Any]) -> str | None:
    """The client's name from its ``initialize`` (or its request envelope)."""
    params = ctx.session.client_params
    info = params.client_info if params is not None else None
    return info.name if info is not None else None


def _result(text: str, is_error: bool, client: str | None = None) -> types.CallToolResult:
    result = types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], is_error=is_error
    )
    structured = results.structured_content(client, text)
    if structured is not None:
        result.structured_content = structured
    return result


async def _run_handler(
    state: ServerState, name: str, args: dict[str, Any], caller: str
) -> tuple[str, bool]:
    with state.cancellable(until_eof=name in dispatch.UNTIL_EOF) as cancel:
        try:
            return await anyio.to_thread.run_sync(
                lambda: dispatch.answer(state, name, args, caller, cancel),
                abandon_on_cancel=True,
            )
        except anyio.get_cancelled_exc_class():
            cancel.set()  # the request was cancelled: stop what it started
            raise


def build_server(state: ServerState) -> "Server[Any]":
    """A server bound to `state`; tests connect to it in memory."""

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        if params is not None and params.cursor is not None:
            # One page only: any cursor is one we never issued.
            raise MCPError(types.INVALID_PARAMS, f"invalid cursor: {params.cursor!r}")
        return types.ListToolsResult(tools=tool_list())

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        name = params.name
        args = dict(params.arguments or {})
        text, is_error = await _run_handler(state, name, args, _caller(ctx))
        return _result(text, is_error, _client(ctx))

    async def empty_resources(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[])

    async def empty_templates(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=[])

    async def empty_prompts(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[])

    return Server(
        "ctxmode",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=empty_resources,
        on_list_resource_templates=empty_templates,
        on_list_prompts=empty_prompts,
    )


def new_state(project: str | os.PathLike[str] | None = None) -> ServerState:
    return ServerState(paths.project_paths(project))


class _Drain:
    """Request ids forwarded to the server and not yet answered.

    On stdin EOF the SDK would cancel calls still running and drop their answers; the
    pump instead holds the server's input open until every forwarded request is answered.
    """

    def __init__(self) -> None:
        self.pending: set[Any] = set()
        self.methods: dict[Any, str] = {}  # request id -> its method, until answered
        self.initialized = False  # an initialize request went to the server
        self.before_initialize: set[Any] = set()  # requests sent ahead of it

    def forwarded(self, item: Any) -> None:
        message = getattr(item, "message", None)
        if isinstance(message, types.JSONRPCRequest):
            self.pending.add(message.id)
            self.methods[message.id] = message.method
            self.initialized = self.initialized or message.method == "initialize"
            if not self.initialized:
                self.before_initialize.add(message.id)
        elif (
            isinstance(message, types.JSONRPCNotification)
            and message.method == "notifications/cancelled"
            and isinstance(message.params, dict)
        ):
            # A cancelled request gets no answer (the protocol says so): nothing to wait for.
            self.pending.discard(message.params.get("requestId"))
            self.methods.pop(message.params.get("requestId"), None)

    def answered(self, item: Any) -> None:
        message = getattr(item, "message", None)
        if isinstance(message, (types.JSONRPCResponse, types.JSONRPCError)):
            self.pending.discard(message.id)
            self.methods.pop(message.id, None)


class _DrainingRead:
    """The server's input: each item past `frames.Screen` (which answers the lines the
    SDK could not read); at EOF, `on_eof` is told and the end held back until `_Drain`
    is empty."""

    def __init__(
        self, inner: Any, drain: _Drain, screen: frames.Screen, on_eof: Callable[[], None]
    ) -> None:
        self._inner = inner
        self._drain = drain
        self._screen = screen
        self._on_eof = on_eof

    async def receive(self) -> Any:
        try:
            item = await self._screen.next(self._inner)
        except anyio.EndOfStream:
            self._on_eof()
            while self._drain.pending:  # stdin closed: answer what was asked first
                await anyio.sleep(0.01)
            raise
        self._drain.forwarded(item)
        return item

    def __aiter__(self) -> "_DrainingRead":
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def __aenter__(self) -> "_DrainingRead":
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)


def _id_key(value: Any) -> tuple[bool, Any]:
    return isinstance(value, str), value  # the id 1 and the id "1" are different requests


class _Answered:
    """Responses `early.Opening` sent before the SDK ran. The SDK reads those requests
    again and answers them too: its answers are dropped, after checking they agree."""

    def __init__(self, responses: list[dict[str, Any]]) -> None:
        self._sent: dict[tuple[bool, Any], list[dict[str, Any]]] = {}
        for response in responses:
            self._sent.setdefault(_id_key(response["id"]), []).append(response)

    def drop(self, item: Any) -> bool:
        """Whether `item` answers a request answered already (it is then not sent)."""
        message = getattr(item, "message", None)
        if not self._sent or not isinstance(message, (types.JSONRPCResponse, types.JSONRPCError)):
            return False
        key = _id_key(message.id)
        sent = self._sent.get(key)
        if not sent:
            return False
        early_answer = sent.pop(0)
        if not sent:
            del self._sent[key]
        answer = json.loads(message.model_dump_json(by_alias=True, exclude_unset=True))
        if answer != early_answer:
            log.warning("answered %r at start-up with %s; the SDK says %s", message.id,
                        json.dumps(early_answer), json.dumps(answer))  # fmt: skip
        return True


# What the SDK's bare "Invalid request parameters" leaves unsaid, for the methods agents call.
_PARAMS_SHAPES = {
    "tools/call": '{"name": "<a tool of tools/list>", "arguments": {...}} (arguments an object)',
    "resources/read": '{"uri": "<a resource URI>"}',
    "prompts/get": '{"name": "<a prompt>", "arguments": {...}}',
}


class _WatchedWrite:
    """The server's output stream, telling `_Drain` which requests got their answer, and
    holding back the SDK's answers to requests answered at start-up."""

    def __init__(self, inner: Any, drain: _Drain, answered: _Answered) -> None:
        self._inner = inner
        self._drain = drain
        self._answered = answered

    async def send(self, item: Any) -> None:
        if not self._answered.drop(item):
            await self._inner.send(self._worded(item))
        self._drain.answered(item)

    def _worded(self, item: Any) -> Any:
        """The SDK answers a request sent before ``initialize``, and one whose params do not
        have its method's shape, with a bare -32602 and no detail: the same error, saying
        what to do."""
        message = getattr(item, "message", None)
        if (
            not isinstance(message, types.JSONRPCError)
            or message.error.code != types.INVALID_PARAMS
            or message.error.data
        ):
            return item
        if message.id in self._drain.before_initialize:
            update = {
                "message": "Invalid request parameters: the session is not initialized",
                "data": "send initialize (and notifications/initialized) first",
            }
        else:
            method = self._drain.methods.get(message.id)
            if method is None:
                return item
            shape = _PARAMS_SHAPES.get(method, "the fields the protocol gives this method")
            update = {"data": f"the params of {method} do not have its shape: {shape}"}
        error = message.error.model_copy(update=update)
        return type(item)(message.model_copy(update={"error": error}))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def __aenter__(self) -> "_WatchedWrite":
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)


async def serve_stdio(state: ServerState, handoff: Handoff) -> None:
    """Serve until stdin closes (after answering what is in flight), a signal arrives or
    the parent dies; then stop every run and remove the readiness marker."""
    from mcp.server.stdio import stdio_server

    server = build_server(state)
    drain = _Drain()
    answered = _Answered(handoff.answered)

    async def cleanup() -> None:
        if handoff.marker is not None:
            readiness.remove_marker(handoff.marker)
        await anyio.to_thread.run_sync(state.shutdown)

    async def stop_now() -> None:
        await cleanup()
        logging.shutdown()
        os._exit(0)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(lifecycle.watch_parent, stop_now, handoff.parent)
        tasks.start_soon(lifecycle.watch_signals, stop_now)
        tasks.start_soon(lifecycle.housekeeping, state.project.root, state.project_dir)
        try:
            async with AsyncExitStack() as stack:
                stdin: Any = frames.StdinLines()
                stdout: Any = None  # the SDK's own, on fd 1
                if handoff.wire is not None:
                    stdin, stdout = await stack.enter_async_context(
                        event_loop_pipes(handoff.wire, handoff.prefix)
                    )
                lines: Any = frames.Recorded(stdin)  # an async iterable of str lines
                streams = await stack.enter_async_context(stdio_server(lines, stdout))
                read_stream, write_stream = streams
                screen = frames.Screen(lines, write_stream)
                await server.run(
                    _DrainingRead(read_stream, drain, screen, state.close_input),
                    _WatchedWrite(write_stream, drain, answered),
                    server.create_initialization_options(),
                )
        finally:
            await cleanup()
        tasks.cancel_scope.cancel()


def serve(state: ServerState, handoff: Handoff) -> None:
    """Serve the protocol over what `ctxmode.server.boot` hands over, until the end."""
    try:
        anyio.run(serve_stdio, state, handoff)
    except KeyboardInterrupt:
        pass
