"""The MCP server: the tool catalog, one dispatcher mapping errors to results, and the
stdio run loop with its lifecycle.

Built on the SDK's low-level `Server` so that the tools list carries exactly our compact
schemas (argument names as upstream has them) and so that argument coercion and error
wording are ours. Tool handlers are synchronous core calls; they run in worker threads so
the loop keeps answering pings and cancellations while code runs.
"""

import logging
import os
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ctxmode import __version__, paths, readiness
from ctxmode.errors import CtxError
from ctxmode.server import lifecycle, meta, tools
from ctxmode.server.catalog import TOOLS
from ctxmode.server.pipes import event_loop_pipes
from ctxmode.server.state import ServerState
from ctxmode.server.tools import Call
from ctxmode.stats.model import Usage

log = logging.getLogger("ctxmode.server")

HANDLERS: dict[str, tools.Handler] = {**tools.HANDLERS, **meta.HANDLERS}

INSTRUCTIONS = (
    "ctxmode keeps raw tool output out of context: run code with ctx_execute / "
    "ctx_batch_execute, process files with ctx_execute_file, fetch pages with "
    "ctx_fetch_and_index, then ctx_search what was indexed."
)


def tool_list() -> list[types.Tool]:
    return [
        types.Tool(
            name=t.name,
            title=t.title,
            description=t.description,
            input_schema=t.schema,
            annotations=types.ToolAnnotations(
                read_only_hint=t.read_only,
                destructive_hint=t.destructive,
                idempotent_hint=t.idempotent,
                open_world_hint=t.open_world,
            ),
        )
        for t in TOOLS
    ]


def _caller(ctx: ServerRequestContext[Any]) -> str:
    """The flood guard's key: this client, and the agent when `_meta` names one.

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
    meta: dict[str, Any] = dict(ctx.meta) if ctx.meta is not None else {}
    agent = next(
        (f"{k}={v}" for k, v in meta.items() if "agent" in k.lower() and isinstance(v, (str, int))),
        "",
    )
    return f"{client}:{agent}"


def _result(text: str, is_error: bool) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], is_error=is_error
    )


def _counted(state: ServerState, name: str, args: dict[str, Any], call: Call) -> tuple[str, bool]:
    """Run a handler and count the call: its answer's bytes, and what it kept out.

    A purge is not counted, and does not even look up the session: that would create the
    very database it is about to delete (and report it deleted on an empty project).
    """
    counted = name not in meta.UNCOUNTED
    if counted:
        state.session_id = state.recorder.session_id()
    try:
        text, is_error = HANDLERS[name](state, args, call)
    except CtxError as exc:
        text, is_error = str(exc), True
    if not counted:
        return text, is_error
    returned = len(text.encode("utf-8", "surrogatepass"))
    meter = call.meter
    usage = Usage(
        calls=1,
        returned=returned,
        sandboxed=max(0, meter.handled - returned),
        indexed=meter.indexed,
        cache_hits=meter.cache_hits,
        cache_saved=meter.cache_saved,
    )
    state.recorder.record(name, usage, state.session_id)
    return text, is_error


async def _run_handler(
    state: ServerState, name: str, args: dict[str, Any], caller: str
) -> tuple[str, bool]:
    with state.cancellable() as cancel:
        call = Call(caller, cancel)
        try:
            return await anyio.to_thread.run_sync(
                lambda: _counted(state, name, args, call), abandon_on_cancel=True
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
        if name not in HANDLERS:
            return _result(f"Unknown tool: {name}", True)
        try:
            text, is_error = await _run_handler(state, name, args, _caller(ctx))
        except Exception as exc:  # a bug of ours: say so, keep serving
            log.exception("tool %s failed", name)
            return _result(f"Internal error in {name}: {type(exc).__name__}: {exc}", True)
        return _result(text, is_error)

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

    def forwarded(self, item: Any) -> None:
        message = getattr(item, "message", None)
        if isinstance(message, types.JSONRPCRequest):
            self.pending.add(message.id)

    def answered(self, item: Any) -> None:
        message = getattr(item, "message", None)
        if isinstance(message, (types.JSONRPCResponse, types.JSONRPCError)):
            self.pending.discard(message.id)


class _DrainingRead:
    """The server's input: at EOF, holds the end back until `_Drain` is empty."""

    def __init__(self, inner: Any, drain: _Drain) -> None:
        self._inner = inner
        self._drain = drain

    async def receive(self) -> Any:
        try:
            item = await self._inner.receive()
        except anyio.EndOfStream:
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


class _WatchedWrite:
    """The server's output stream, telling `_Drain` which requests got their answer."""

    def __init__(self, inner: Any, drain: _Drain) -> None:
        self._inner = inner
        self._drain = drain

    async def send(self, item: Any) -> None:
        await self._inner.send(item)
        self._drain.answered(item)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def __aenter__(self) -> "_WatchedWrite":
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)


async def serve_stdio(state: ServerState) -> None:
    """Serve until stdin closes (after answering what is in flight), a signal arrives or
    the parent dies; then stop every run and remove the readiness marker."""
    from mcp.server.stdio import stdio_server

    server = build_server(state)
    marker: Path | None = None
    drain = _Drain()

    async def cleanup() -> None:
        if marker is not None:
            readiness.remove_marker(marker)
        await anyio.to_thread.run_sync(state.shutdown)

    async def stop_now() -> None:
        await cleanup()
        logging.shutdown()
        os._exit(0)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(lifecycle.watch_parent, stop_now)
        tasks.start_soon(lifecycle.watch_signals, stop_now)
        tasks.start_soon(lifecycle.housekeeping, state.project.root, state.project_dir)
        try:
            async with (
                event_loop_pipes() as pipes,
                stdio_server(*(pipes or ())) as (
                    read_stream,
                    write_stream,
                ),
            ):
                marker = readiness.write_marker(state.project.root, state.project_dir)
                await server.run(
                    _DrainingRead(read_stream, drain),
                    _WatchedWrite(write_stream, drain),
                    server.create_initialization_options(),
                )
        finally:
            await cleanup()
        tasks.cancel_scope.cancel()


def run(project: str | os.PathLike[str] | None = None) -> int:
    """Entry point of ``ctxmode serve``."""
    state = new_state(project)
    lifecycle.setup_logging(state.project.logs_dir)
    log.info("serving %s (pid %d)", state.project_dir, os.getpid())
    try:
        anyio.run(serve_stdio, state)
    except KeyboardInterrupt:
        pass
    log.info("stopped")
    return 0
