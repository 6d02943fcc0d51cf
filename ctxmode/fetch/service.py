"""`fetch_and_index`: fetch URLs, convert them, index them, answer repeats from the store.

Labels and the cache:

* A URL's label is ``<source>::<url>`` when a source is given (an empty source still
  composes, ``::<url>``), else the URL itself. The label is both the cache key and the
  store label, so two URLs sharing a source are stored side by side, and
  ``ctx_search(source="Docs")`` still finds both through its substring filter.
* A label indexed less than 24 h ago (the ``indexed_at`` of its row in the store's
  ``sources``) answers from the store with no HTTP request, unless ``force``. The SSRF
  guard still runs first (scheme, DNS, address class), so a URL that is refused now (for
  instance under ``CTXMODE_FETCH_STRICT=1``) is never answered from an older fetch.
  Deleting or purging the source empties the cache for it; nothing else is kept.

A batch is fetched by a bounded thread pool (default 4, at most 8 threads; fetching is
I/O). Converting runs in the same worker; indexing runs afterwards in the calling thread,
one source at a time in input order, because the store's connection belongs to it. One
URL's failure is its own result, never the batch's.
"""

import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from ctxmode.errors import CtxError, UsageError
from ctxmode.fetch import http
from ctxmode.fetch.convert import Converted, convert
from ctxmode.fetch.errors import EmptyContentError, FetchCancelledError
from ctxmode.fetch.http import FetchLimits
from ctxmode.store import ContentStore, SourceInfo

CACHE_TTL_S = 24 * 3600
GLIMPSE_BYTES = 1024  # of a fetched page's opening, in whole lines
SECTIONS_BYTES = 600  # of the headings of the rest of the page
DEFAULT_CONCURRENCY = 4
MAX_CONCURRENCY = 8
MAX_BATCH = 100
USAGE = (
    "ctx_fetch_and_index requires either `url` (single) or "
    "`requests: [{url, source?}, ...]` (batch)."
)

Clock = Callable[[], float]


@dataclass(frozen=True)
class FetchRequest:
    """One URL to fetch, and the optional source name its label starts with."""

    url: str
    source: str | None = None

    @property
    def label(self) -> str:
        return cache_label(self.url, self.source)


@dataclass(frozen=True)
class UrlResult:
    """What happened to one URL: indexed now, answered from the cache, or an error."""

    url: str
    label: str
    source: str | None = None
    chunks: int = 0
    bytes: int = 0  # UTF-8 size of the indexed text
    fetched_bytes: int = 0  # size of the body as received (0 for a cache hit)
    from_cache: bool = False
    age_seconds: float | None = None  # cache hits: how old the indexed copy is
    kind: str | None = None  # chunker kind: markdown, json, plain, a language
    final_url: str | None = None  # after redirects
    preview: str = ""  # `page_glimpse` of the indexed text
    truncated: bool = False  # the text is longer than the preview
    error: str | None = None
    error_code: str | None = None  # a CtxError code: bad_scheme, blocked_address, …

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class FetchReport:
    """Per-URL results in input order, and how the batch was run."""

    results: tuple[UrlResult, ...]
    single: bool  # called with one URL string (the legacy response shape)
    concurrency: int  # threads actually used
    ttl_s: float = CACHE_TTL_S  # how long an indexed page counted as fresh

    @property
    def fetched(self) -> tuple[UrlResult, ...]:
        return tuple(r for r in self.results if r.ok and not r.from_cache)

    @property
    def cached(self) -> tuple[UrlResult, ...]:
        return tuple(r for r in self.results if r.ok and r.from_cache)

    @property
    def failed(self) -> tuple[UrlResult, ...]:
        return tuple(r for r in self.results if not r.ok)

    @property
    def all_failed(self) -> bool:
        """True only when every URL failed: the tool's ``isError``."""
        return bool(self.results) and not any(r.ok for r in self.results)

    @property
    def is_error(self) -> bool:
        return self.all_failed


def cache_label(url: str, source: str | None) -> str:
    """``<source>::<url>`` when a source is given (even an empty one), else the URL."""
    return url if source is None else f"{source}::{url}"


def _requests(urls: str | Sequence[Any] | None, source: str | None) -> list[FetchRequest]:
    if isinstance(urls, str):
        if not urls.strip():
            raise UsageError(USAGE)
        return [FetchRequest(urls.strip(), source)]
    if not urls:
        raise UsageError(USAGE)
    if not isinstance(urls, Sequence):  # `requests: true`, `requests: 5`
        raise UsageError(f"requests must be an array of {{url, source}}, not {urls!r}")
    if len(urls) > MAX_BATCH:
        raise UsageError(f"at most {MAX_BATCH} URLs per call (got {len(urls)})")
    out = []
    for item in urls:
        if isinstance(item, FetchRequest):
            out.append(item if item.source is not None else FetchRequest(item.url, source))
            continue
        if isinstance(item, str) and item.strip():  # lenient: a bare URL string
            out.append(FetchRequest(item.strip(), source))
            continue
        url = item.get("url") if isinstance(item, Mapping) else None
        own = item.get("source") if isinstance(item, Mapping) else None
        if not isinstance(url, str) or not url.strip() or not (own is None or isinstance(own, str)):
            raise UsageError(
                f"each request needs a `url` string and an optional `source`: {item!r}"
            )
        out.append(FetchRequest(url.strip(), own if own is not None else source))
    return out


def _parse_time(text: str) -> float | None:
    try:
        stamp = datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace(" ", "T"))
    except ValueError:
        return None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=timezone.utc)
    return stamp.timestamp()


def _fresh(
    store: ContentStore, labels: set[str], now: float, ttl_s: float = CACHE_TTL_S
) -> dict[str, tuple[SourceInfo, float]]:
    """The labels indexed less than `ttl_s` ago, with their age in seconds."""
    fresh = {}
    for info in store.sources():
        if info.label not in labels:
            continue
        indexed = _parse_time(info.indexed_at)
        if indexed is not None and 0 <= now - indexed < ttl_s:
            fresh[info.label] = (info, now - indexed)
    return fresh


@dataclass(frozen=True)
class _Outcome:
    hit: tuple[SourceInfo, float] | None = None
    fetched: tuple[http.Response, Converted] | None = None
    error: CtxError | None = None


def _work(
    request: FetchRequest,
    hit: tuple[SourceInfo, float] | None,
    limits: FetchLimits | None,
    strict: bool | None,
    cancel: threading.Event | None,
) -> _Outcome:
    try:
        if cancel is not None and cancel.is_set():
            raise FetchCancelledError()
        if hit is not None:
            http.preflight(request.url, strict=strict)
            return _Outcome(hit=hit)
        response = http.fetch(request.url, limits=limits, strict=strict, cancel=cancel)
        converted = convert(
            response.body, response.content_type, charset=response.charset, url=response.final_url
        )
        if not converted.text.strip():
            raise EmptyContentError("empty content (no text left after conversion)")
        return _Outcome(fetched=(response, converted))
    except CtxError as exc:
        return _Outcome(error=exc)


def _error(request: FetchRequest, exc: CtxError) -> UrlResult:
    return UrlResult(
        request.url, request.label, request.source, error=str(exc), error_code=exc.code
    )


def _index(store: ContentStore, request: FetchRequest, outcome: _Outcome) -> UrlResult:
    if outcome.error is not None:
        return _error(request, outcome.error)
    if outcome.hit is not None:
        info, age = outcome.hit
        return UrlResult(
            request.url,
            request.label,
            request.source,
            chunks=info.chunks,
            bytes=info.bytes,
            from_cache=True,
            age_seconds=age,
            kind=info.kind,
        )
    if outcome.fetched is None:
        raise AssertionError("an outcome is a hit, a fetch or an error")
    response, converted = outcome.fetched
    try:
        indexed = store.index_text(converted.text, request.label, kind=converted.kind)
    except CtxError as exc:
        return _error(request, exc)
    return UrlResult(
        request.url,
        request.label,
        request.source,
        chunks=indexed.chunks,
        bytes=indexed.bytes,
        fetched_bytes=len(response.body),
        kind=converted.kind,
        final_url=response.final_url,
        preview=(glimpse := page_glimpse(converted.text)),
        truncated=len(glimpse) < len(converted.text),
    )


def page_glimpse(text: str) -> str:
    """What the agent is shown of a fetched page: its opening in whole lines (up to
    `GLIMPSE_BYTES`), then the headings of the rest, so it knows what to search for."""
    lines = text.split("\n")
    shown: list[str] = []
    used = 0
    for line in lines:
        cost = len(line.encode("utf-8")) + 1
        if used + cost > GLIMPSE_BYTES and shown:
            break
        shown.append(line if cost <= GLIMPSE_BYTES else line[: GLIMPSE_BYTES // 2] + "…")
        used += cost
    while shown and not shown[-1].strip():
        shown.pop()
    headings = [
        m.group(1).strip()
        for line in lines[len(shown) :]
        if (m := re.match(r"^#{1,4}\s+(.+?)\s*#*$", line))
    ]
    listed: list[str] = []
    for heading in dict.fromkeys(headings):
        if sum(len(h) + 2 for h in listed) + len(heading) > SECTIONS_BYTES:
            listed.append("…")
            break
        listed.append(heading)
    opening = "\n".join(shown)
    return f"{opening}\n\nSections: " + "; ".join(listed) if listed else opening


def fetch_and_index(
    store: ContentStore,
    urls: str | Sequence[FetchRequest | Mapping[str, Any] | str] | None,
    *,
    source: str | None = None,
    force: bool = False,
    ttl_s: float | None = None,
    concurrency: int | None = None,
    limits: FetchLimits | None = None,
    strict: bool | None = None,
    clock: Clock = time.time,
    cancel: threading.Event | None = None,
) -> FetchReport:
    """Fetch, convert and index one URL (a string) or a batch (requests), as upstream's tool does.

    `urls` is a URL string (the legacy single shape; `source` names it) or a sequence of
    `FetchRequest`, ``{"url": ..., "source": ...}`` or bare URL strings (a request without
    a source takes `source`). A page indexed less than `ttl_s` seconds ago (default
    `CACHE_TTL_S`) is not fetched again unless `force`. `concurrency` (default 4) is
    clamped to 1..8. `strict` defaults to ``CTXMODE_FETCH_STRICT``. Setting `cancel` ends
    every fetch still running or waiting as a failed URL. Per-URL failures are results,
    not exceptions.

    Raises:
        UsageError: no URL at all, a malformed request, or more than MAX_BATCH.
    """
    requests = _requests(urls, source)
    unique = list(dict.fromkeys(r.label for r in requests))
    first: dict[str, FetchRequest] = {}
    for request in requests:
        first.setdefault(request.label, request)
    ttl = CACHE_TTL_S if ttl_s is None else ttl_s
    fresh = {} if force or ttl <= 0 else _fresh(store, set(unique), clock(), ttl)
    wanted = DEFAULT_CONCURRENCY if concurrency is None else concurrency
    workers = max(1, min(wanted, MAX_CONCURRENCY, len(unique)))

    def job(label: str) -> _Outcome:
        return _work(first[label], fresh.get(label), limits, strict, cancel)

    if workers == 1:
        outcomes = [job(label) for label in unique]
    else:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ctx-fetch") as pool:
            outcomes = list(pool.map(job, unique))
    done: dict[str, UrlResult] = {}
    for label, outcome in zip(unique, outcomes, strict=True):
        done[label] = _index(store, first[label], outcome)
    # A label asked for twice was fetched once; both lines report it.
    results = tuple(done[r.label] for r in requests)
    return FetchReport(results, single=isinstance(urls, str), concurrency=workers, ttl_s=ttl)
