"""Capture one output stream of a run: every byte to a file on disk, a bounded window in memory.

A `Capture` is fed the bytes of a stream as they arrive. It appends them to a file in the
run's temp directory, keeps the first `head` bytes and (rolling) the last `tail` bytes in
memory, and counts bytes and lines. Whatever a run prints, a stream costs at most
head + tail bytes of memory. `finish` gives the text: all of it when it fit the window,
else the head, one line saying what was not kept, and the tail, cut on line boundaries.
The text is decoded once, without terminal controls (`controls`); the file keeps the bytes.
"""

import os
from dataclasses import dataclass
from pathlib import Path

from ctxmode.executor.controls import decode as _decode

HEAD_BYTES = 1024 * 1024
TAIL_BYTES = 256 * 1024
_ALIGN = 4096  # how far to look for a line boundary to cut the window at
_BLOCK = 1024 * 1024


def size(n: int) -> str:
    """A byte count for people: 512 bytes, 4.0KB, 100.0MB."""
    if n < 1024:
        return f"{n} bytes"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f}KB"
    return f"{n / (1024 * 1024):.1f}MB"


@dataclass(frozen=True)
class Extent:
    """How much a stream printed, and how much of it its captured text leaves out."""

    bytes: int = 0
    lines: int = 0
    omitted_bytes: int = 0
    omitted_lines: int = 0

    @property
    def cut(self) -> bool:
        return self.omitted_bytes > 0

    def gap(self) -> str:
        """The line that stands in the captured text for what was not kept."""
        return f"[… {size(self.omitted_bytes)}, {self.omitted_lines:,} lines not kept …]"


class Capture:
    """One stream: to `path` (None: memory only), with a head and a rolling tail in memory.

    The file is created only once the stream outgrows the head (all of it is in memory
    until then): most runs print a few lines and never touch the disk."""

    def __init__(
        self, path: Path | None, *, head: int = HEAD_BYTES, tail: int = TAIL_BYTES
    ) -> None:
        self._path = path
        self._fd: int | None = None
        self._head_limit = head
        self._tail_limit = tail
        self._head = bytearray()
        self._tail = bytearray()
        self.bytes = 0
        self._newlines = 0
        self._ends_with_newline = True

    def feed(self, data: bytes) -> None:
        if not data:
            return
        if self._fd is not None or self.bytes + len(data) > self._head_limit:
            self._to_disk(data)
        self.bytes += len(data)
        self._newlines += data.count(b"\n")
        self._ends_with_newline = data.endswith(b"\n")
        room = self._head_limit - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if data and self._tail_limit > 0:
            self._tail += data
            if len(self._tail) > 2 * self._tail_limit:  # trim now and then, not every time
                del self._tail[: len(self._tail) - self._tail_limit]

    def _to_disk(self, data: bytes) -> None:
        if self._fd is None:
            if self._path is None:
                return
            try:
                self._fd = os.open(self._path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            except OSError:
                self._path = None  # no disk copy; the window is all there is anyway
                return
            data = bytes(self._head) + data  # all of the stream so far
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._fd, view) :]
        except OSError:  # a full disk ends the disk copy, never the run
            self.close()
            self._path = None

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def finish(self) -> tuple[str, Extent]:
        """The captured text and its extent (closes the file)."""
        self.close()
        head = bytes(self._head)
        tail = bytes(self._tail[-self._tail_limit :]) if self._tail_limit > 0 else b""
        lines = self._newlines + (0 if self._ends_with_newline or not self.bytes else 1)
        if len(head) + len(tail) == self.bytes:
            return _decode(head + tail), Extent(self.bytes, lines)
        cut = head.rfind(b"\n", max(0, len(head) - _ALIGN))
        if cut >= 0:
            head = head[: cut + 1]
        start = tail.find(b"\n", 0, _ALIGN)
        if 0 <= start < len(tail) - 1:
            tail = tail[start + 1 :]
        tail_lines = tail.count(b"\n") + (0 if not tail or tail.endswith(b"\n") else 1)
        extent = Extent(
            self.bytes,
            lines,
            self.bytes - len(head) - len(tail),
            max(0, lines - head.count(b"\n") - tail_lines),
        )
        head_text = _decode(head)
        if head_text and not head_text.endswith("\n"):
            head_text += "\n"
        return f"{head_text}{extent.gap()}\n{_decode(tail)}", extent


def read_capture(
    path: Path, *, limit: int, head: int = HEAD_BYTES, tail: int = TAIL_BYTES
) -> tuple[str, Extent]:
    """The text and extent of an output file (its first `limit` bytes), read in blocks."""
    capture = Capture(None, head=head, tail=tail)
    try:
        with path.open("rb") as handle:
            while capture.bytes < limit:
                block = handle.read(min(_BLOCK, limit - capture.bytes))
                if not block:
                    break
                capture.feed(block)
    except OSError:
        pass
    return capture.finish()


def read_whole(path: Path, limit: int) -> tuple[str, int]:
    """All of an output file, with runs of three or more identical lines folded into the
    line and ``[… repeated N times]`` as it is read (a flood of one line costs its line, not
    gigabytes of list), up to `limit` bytes of that text, cut on a line boundary; and how
    many bytes of the file are left unread."""
    from itertools import groupby

    parts: list[str] = []
    carry = b""
    read = produced = 0
    previous: str | None = None
    repeats = 0

    def flush() -> None:
        if previous is not None and repeats >= 3:
            parts.append(f"[… repeated {repeats:,} times]\n")
        elif previous is not None and repeats == 2:
            parts.append(previous + "\n")

    try:
        with path.open("rb") as handle:
            while produced < limit:
                block = handle.read(min(_BLOCK, limit - produced))
                if not block:
                    break
                read += len(block)
                produced += len(block)
                data = carry + block
                cut = data.rfind(b"\n")
                if cut < 0 and produced < limit:
                    carry = data
                    continue
                carry, data = data[cut + 1 :], data[: cut + 1]
                for line, group in groupby(_decode(data).split("\n")[:-1]):
                    n = sum(1 for _ in group)
                    if line == previous:
                        repeats += n
                        produced -= (len(line) + 1) * n  # folded: costs nothing more
                        continue
                    produced -= (len(line) + 1) * (n - 1)
                    flush()
                    parts.append(line + "\n")
                    previous, repeats = line, n
            size = os.fstat(handle.fileno()).st_size
    except OSError:
        return "".join(parts), 0
    flush()
    if carry and read >= size:
        parts.append(_decode(carry))
        carry = b""
    return "".join(parts), max(0, size - read) + len(carry)


def measured(text: str, extent: Extent | None) -> Extent:
    """`extent`, or for a text that no capture measured (None), the text's own."""
    if extent is not None:
        return extent
    if not text:
        return Extent()
    lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    return Extent(len(text.encode("utf-8", "surrogatepass")), lines)
