"""Protocol pipes without a thread per line.

The SDK's stdio transport reads and writes through worker threads: about a dozen thread
hops per request, most of the per-call overhead of a small tool call. When stdin and
stdout are pipes or sockets (they are, under every MCP client), we read and write them on
the event loop instead and hand the SDK stream objects it can use as-is. As the SDK does,
the protocol keeps private copies of fd 0 and 1 (`Wire`); fd 1 then points at stderr and
fd 0 at the null device, so a stray print or an inherited descriptor cannot corrupt the
wire.

Standard library only, and asyncio only once the loop runs: `claim` is called at process
start, before the SDK is loaded.
"""

import os
import stat
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio

_LINE_LIMIT = 1 << 30  # one JSON-RPC message per line, however large


def _is_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


@dataclass
class Wire:
    """The protocol's private copies of stdin and stdout, until `release`."""

    fd_in: int
    fd_out: int
    _saved_in: int
    _saved_out: int

    def write(self, data: bytes) -> None:
        """Write all of `data` to the protocol's stdout (blocking)."""
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd_out, view) :]

    def release(self) -> None:
        """Point fd 0 and 1 back at the wire and close the private copies."""
        os.dup2(self._saved_in, 0)
        os.dup2(self._saved_out, 1)
        for fd in (self._saved_in, self._saved_out, self.fd_in, self.fd_out):
            os.close(fd)


def claim() -> Wire | None:
    """Take stdin and stdout for the protocol when both are pipes or sockets (POSIX);
    None otherwise (the SDK's own transport serves them then)."""
    if os.name != "posix" or not (_is_pipe(0) and _is_pipe(1)):
        return None
    wire_in, wire_out = os.dup(0), os.dup(1)
    saved_in, saved_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return Wire(wire_in, wire_out, saved_in, saved_out)


class _Lines:
    """``async for line in ...`` over a StreamReader, as text."""

    def __init__(self, reader: "asyncio.StreamReader") -> None:
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

    def __init__(self, writer: "asyncio.StreamWriter") -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._writer.drain()


@asynccontextmanager
async def event_loop_pipes(wire: Wire, prefix: bytes = b"") -> AsyncIterator[tuple[Any, Any]]:
    """(stdin, stdout) objects for ``stdio_server`` over `wire`; what was read from it
    before (`prefix`) is read again first."""
    import asyncio

    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=_LINE_LIMIT)
    if prefix:
        reader.feed_data(prefix)
    read_transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader),
        os.fdopen(os.dup(wire.fd_in), "rb", buffering=0),
    )
    write_transport, write_protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(os.dup(wire.fd_out), "wb", buffering=0)
    )
    writer = asyncio.StreamWriter(write_transport, write_protocol, None, loop)
    try:
        yield _Lines(reader), _Writer(writer)
    finally:
        read_transport.close()
        write_transport.close()
