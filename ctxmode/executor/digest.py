"""Make a run's output fit a byte budget: repeats collapsed, then its head and its tail.

`digest(text, extent, budget)` is what the knowledge base gets of a large output and, with
a small budget, the preview an answer shows. Steps, each only while the text is still over
budget:

1. runs of three or more identical lines become the line and ``[… repeated N times]``;
2. runs of three or more lines that differ only in their numbers become the first line,
   ``[… N similar lines …]`` and the last line;
3. the head (three quarters of the budget) and the tail are kept, with one line saying
   how many bytes and lines of the output are left out between them.

Counts in those lines are of the whole stream the text came from (`Extent`), including
what its capture had already not kept, so a preview of a 100 MB flood says 100 MB.

Runs are found by comparing whole lists of lines at C speed (no Python work per line), so
a digest of a capture window of hundreds of thousands of lines takes a few tens of ms.
"""

import re
from dataclasses import dataclass
from itertools import compress
from operator import ne

from ctxmode.executor.capture import Extent, size

REPEAT_MIN = 3
_NUMBER = re.compile(r"\d+")
_GAP = "\x00ctxmode: the capture's gap\x00"  # stands for what the capture did not keep


@dataclass(frozen=True)
class Digest:
    text: str
    collapsed: bool = False  # repeated or similar lines were folded
    omitted_bytes: int = 0  # of the stream, not shown (also what the capture did not keep)
    omitted_lines: int = 0

    @property
    def whole(self) -> bool:
        return not self.collapsed and not self.omitted_bytes


def omitted(nbytes: int, lines: int) -> str:
    return f"[… {size(nbytes)}, {lines:,} line{'' if lines == 1 else 's'} omitted …]"


def _lines(part: str) -> list[str]:
    lines = part.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _bounds(keys: list[str]) -> list[int]:
    """Where runs of equal consecutive keys start, and the end: [0, ..., len(keys)]."""
    if not keys:
        return [0]
    changes = compress(range(1, len(keys)), map(ne, keys[1:], keys[:-1]))
    return [0, *changes, len(keys)]


class _Runs:
    """The lines of an output (the capture's gap as one line `_GAP`) grouped into runs:
    of identical lines, or (`similar`) of lines equal but for their numbers."""

    def __init__(self, lines: list[str], gap: Extent | None, *, similar: bool) -> None:
        self.lines = lines
        self.gap = gap
        self.similar = similar
        keys = _NUMBER.sub("0", "\n".join(lines)).split("\n") if similar and lines else lines
        self.bounds = _bounds(keys)
        b = self.bounds  # the runs rendered shorter than their lines: `REPEAT_MIN` or more
        self.long = [k for k in range(len(b) - 1) if b[k + 1] - b[k] >= REPEAT_MIN]

    def __len__(self) -> int:
        return len(self.bounds) - 1

    def span(self, k: int) -> tuple[int, int]:
        return self.bounds[k], self.bounds[k + 1]

    def is_gap(self, k: int) -> bool:
        return self.gap is not None and self.lines[self.bounds[k]] == _GAP

    def render(self, k: int) -> str:
        start, end = self.span(k)
        line, count = self.lines[start], end - start
        if self.is_gap(k):
            assert self.gap is not None
            return omitted(self.gap.omitted_bytes, self.gap.omitted_lines)
        if count == 1:
            return line
        if count < REPEAT_MIN:
            return "\n".join(self.lines[start:end])
        if not self.similar or self.lines[start:end].count(line) == count:
            return f"{line}\n[… repeated {count:,} times]" if line.strip() else line
        return f"{line}\n[… {count - 2:,} similar lines …]\n{self.lines[end - 1]}"

    def weight(self, k: int) -> tuple[int, int]:
        """(bytes, lines) of the output that run `k` stands for."""
        start, end = self.span(k)
        if self.is_gap(k):
            assert self.gap is not None
            return self.gap.omitted_bytes, self.gap.omitted_lines
        line, count = self.lines[start], end - start
        if self.lines[start:end].count(line) == count:
            return (len(line.encode("utf-8", "replace")) + 1) * count, count
        return sum(map(len, self.lines[start:end])) + count, count

    def folded(self) -> bool:
        return any(self.lines[self.bounds[k]].strip() for k in self.long)

    def cost(self) -> int:
        """The characters of all runs rendered (one line break after each)."""
        total = sum(map(len, self.lines)) + len(self.lines)
        for k in self.long:
            start, end = self.span(k)
            shown = len(self.render(k)) + 1
            total += shown - sum(map(len, self.lines[start:end])) - (end - start)
        return total + (60 if self.gap is not None else 0)

    def render_all(self) -> str:
        """All runs rendered; the lines between folded runs are copied as they are."""
        special = self.long
        if self.gap is not None:
            special = sorted({*special, self.bounds.index(self.lines.index(_GAP))})
        parts: list[str] = []
        at = 0
        for k in special:
            start, end = self.span(k)
            parts += self.lines[at:start]
            parts.append(self.render(k))
            at = end
        parts += self.lines[at:]
        return "\n".join(parts) + "\n"

    def take(self, order: range, budget: int, *, from_end: bool) -> tuple[list[str], int, int]:
        """Rendered runs in `order` until `budget` (or the gap), with the bytes and lines
        they stand for; a first run too long on its own is cut."""
        shown: list[str] = []
        nbytes = nlines = used = 0
        for k in order:
            if self.is_gap(k):
                break
            text = self.render(k)
            weight = self.weight(k)
            if used + len(text) + 1 > budget:
                if not shown and budget > 1:
                    piece = text[1 - budget :] if from_end else text[: budget - 1]
                    shown.append(piece)
                    nbytes += min(weight[0], len(piece.encode("utf-8", "replace")))
                break
            shown.append(text)
            used += len(text) + 1
            nbytes += weight[0]
            nlines += weight[1]
        return shown, nbytes, nlines


def _split(text: str, extent: Extent) -> tuple[list[str], Extent | None]:
    """The text's lines, the capture's gap (if any) as the one line `_GAP`."""
    marker = f"{extent.gap()}\n"
    if extent.cut and marker in text:
        head, tail = text.split(marker, 1)
        return [*_lines(head), _GAP, *_lines(tail)], extent
    return _lines(text), None


def digest(text: str, extent: Extent, budget: int) -> Digest:
    """`text` (the captured text of a stream of `extent`) made to fit `budget` bytes."""
    if not extent.cut and extent.bytes <= budget and len(text) <= budget:
        return Digest(text)
    lines, gap = _split(text, extent)
    runs = _Runs(lines, gap, similar=False)
    collapsed = runs.folded()
    if runs.cost() > budget:
        runs = _Runs(lines, gap, similar=True)
        collapsed = collapsed or runs.folded()
    if runs.cost() <= budget:
        return Digest(
            runs.render_all(),
            collapsed,
            gap.omitted_bytes if gap else 0,
            gap.omitted_lines if gap else 0,
        )
    head_budget = budget * 3 // 4
    head, head_bytes, head_lines = runs.take(range(len(runs)), head_budget, from_end=False)
    rest = range(len(runs) - 1, len(head) - 1, -1)
    tail, tail_bytes, tail_lines = runs.take(rest, budget - head_budget, from_end=True)
    total = extent.bytes or len(text.encode("utf-8", "replace"))
    left_bytes = max(0, total - head_bytes - tail_bytes)
    left_lines = max(0, (extent.lines or len(lines)) - head_lines - tail_lines)
    body = "\n".join([*head, omitted(left_bytes, left_lines), *tail[::-1]]) + "\n"
    return Digest(body, collapsed, left_bytes, left_lines)
