"""The per-tool counters a session database keeps (`ctxmode.stats` turns them into figures)."""

from ctxmode.typenames import NamedTuple

EARLIER_SESSIONS = ""  # session id under which deleted sessions' counters are kept


# The database columns of the counters, in `Usage` field order (tool_calls, usage_daily).
COUNTER_COLUMNS = (
    "calls",
    "bytes_returned",
    "bytes_sandboxed",
    "bytes_indexed",
    "cache_hits",
    "cache_bytes_saved",
)


class Usage(NamedTuple):
    """Counters of one tool (or a sum of tools)."""

    calls: int = 0
    returned: int = 0
    sandboxed: int = 0
    indexed: int = 0
    cache_hits: int = 0
    cache_saved: int = 0

    def plus(self, other: "Usage") -> "Usage":
        return Usage(*(a + b for a, b in zip(self, other, strict=True)))
