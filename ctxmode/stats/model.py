"""What ctxmode counts, and the one formula that turns counts into "kept out".

Counters are measured, never estimated: for each MCP tool call, the bytes of the answer the
agent received (``returned``) and the bytes that call handled without showing them
(``sandboxed``: a run's output beyond what was printed back, a file processed or indexed
from disk, fetched pages, batch output). Hook-captured session events are material
ctxmode *recorded*, not context it *saved*: they appear as "captured" and never in the
formula.

The formula (one, everywhere: report, statusline, JSON, dashboard)::

    without = sandboxed + returned     what the context would have taken
    with    = max(1, returned)         what it took
    kept out = 1 - with / without

With nothing measured yet there is no percentage at all (an honest empty state, never
"100 % saved" with no calls). ``with <= without`` holds whenever anything was measured.
Tokens are estimates (bytes / 4) and always labelled so.
"""

from typing import NamedTuple

from ctxmode.session.usage import COUNTER_COLUMNS, EARLIER_SESSIONS, Usage

__all__ = ["COUNTER_COLUMNS", "EARLIER_SESSIONS", "Usage"]

BYTES_PER_TOKEN = 4


def total(usages: "dict[str, Usage] | list[Usage]") -> Usage:
    result = Usage()
    for usage in usages.values() if isinstance(usages, dict) else usages:
        result = result.plus(usage)
    return result


class Savings(NamedTuple):
    without: int
    with_: int
    kept_out: int  # bytes: without - returned
    ratio: float  # 0..1
    multiplier: float  # without / with

    @property
    def percent(self) -> float:
        """One decimal; 100.0 only when nothing at all entered the context."""
        value = round(self.ratio * 100, 1)
        return min(value, 99.9) if self.kept_out < self.without else value

    @property
    def times(self) -> str:
        """The multiplier as people read it: ``1.4x``, ``22x``, ``3775x``."""
        return f"{self.multiplier:.1f}x" if self.multiplier < 10 else f"{self.multiplier:.0f}x"


def savings(sandboxed: int, returned: int) -> Savings | None:
    """The strict formula; None when nothing was measured (the empty state)."""
    sandboxed = max(0, sandboxed)
    returned = max(0, returned)
    if sandboxed + returned == 0:
        return None
    without = sandboxed + returned
    with_ = max(1, returned)
    ratio = max(0.0, 1 - with_ / without)
    return Savings(without, with_, sandboxed, ratio, without / with_)


def tokens(nbytes: int) -> int:
    """An estimate: bytes / 4 (no tokenizer is bundled)."""
    return round(max(0, nbytes) / BYTES_PER_TOKEN)


def fmt_bytes(nbytes: float) -> str:
    """``0 B``, ``512 B``, ``12.3 KB``, ``456 KB``, ``7.8 MB``, ``1.25 GB`` (1 KB = 1024 B)."""
    n = float(nbytes)
    if n <= 0:
        return "0 B"
    if n < 1024:
        return f"{int(n)} B"
    for unit, scale in (("KB", 1024), ("MB", 1024**2)):
        value = n / scale
        if round(value, 1) < 100:
            return f"{value:.1f} {unit}"
        if round(value) < 1024:  # decided on the rounded figure: no "1024 KB", no "100.0 KB"
            return f"{value:.0f} {unit}"
    return f"{n / 1024**3:.2f} GB"


def fmt_count(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 10_000:
        return f"{n / 1000:.1f}K"
    return f"{n:,}"
