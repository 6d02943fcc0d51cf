"""Protocol pipes without a thread per line.

The SDK's stdio transport reads and writes through worker threads: about a dozen thread
hops per request, most of the per-call overhead of a small tool call. When stdin and
stdout are pipes or sockets (they are, under every MCP client), we read and write them on
the event loop instead and hand the SDK stream objects it can use as-is. As the SDK does,
the protocol keeps private copies of fd 0 and 1; fd 1 then points at stderr and fd 0 at
the null device, so a stray print or an inherited descriptor cannot corrupt the wire.
"""

import asyncio
import os
import stat
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

_LINE_LIMIT = 1 << 30  # one JSON-RPC message per line, however large


def _is_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class _Lines:
    """``async for line in ...`` over a StreamReader, as text."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    def __aiter__(self) -> "_Lines":
        return self

    async def __anext__(self) -> str:
        line = await self._reader.readline()
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", "replace")


class _Writer:
    """``await write(text)`` / ``await flush()`` over a StreamWriter."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._writer.drain()


@asynccontextmanager
async def event_loop_pipes() -> AsyncIterator[tuple[Any, Any] | None]:
    """(stdin, stdout) objects for ``stdio_server``, or None when they are not pipes."""
    if os.name != "posix" or not (_is_pipe(0) and _is_pipe(1)):
        yield None
        return
    loop = asyncio.get_running_loop()
    wire_in, wire_out = os.dup(0), os.dup(1)
    saved_in, saved_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    reader = asyncio.StreamReader(limit=_LINE_LIMIT)
    read_transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(wire_in, "rb", buffering=0)
    )
    write_transport, write_protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(wire_out, "wb", buffering=0)
    )
    writer = asyncio.StreamWriter(write_transport, write_protocol, None, loop)
    try:
        yield _Lines(reader), _Writer(writer)
    finally:
        read_transport.close()
        write_transport.close()
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        os.close(saved_in)
        os.close(saved_out)
