"""The ``ctx_fetch_and_index`` response text for a `FetchReport`.

A URL string gets upstream's legacy single-URL wording (``Cached: …`` / ``Fetched and
indexed …`` / ``Failed to fetch …``); a ``requests`` list gets the batch summary: one
header, one line per URL in input order, then short previews of what was fetched now.
Counts agree in number everywhere ("1 section", "2 sections"). The tool's ``isError`` is
`FetchReport.all_failed`: true only when every URL failed.
"""

from ctxmode.fetch.service import FetchReport, UrlResult

BATCH_PREVIEW_CHARS = 384
TRUNCATED = "\n\n…[truncated — use ctx_search() for full content]"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _kb(n: int) -> str:
    return f"{n / 1024:.1f}KB"


def age_text(seconds: float | None) -> str:
    """``3h ago`` / ``12m ago`` / ``just now``."""
    s = max(0.0, seconds or 0.0)
    if s >= 3600:
        return f"{int(s // 3600)}h ago"
    if s >= 60:
        return f"{int(s // 60)}m ago"
    return "just now"


def _search_hint(label: str) -> str:
    return f'ctx_search(queries: [...], source: "{label}")'


def _error_line(result: UrlResult) -> str:
    if result.error_code == "empty_content":
        return f"Fetched {result.url} but got empty content"
    return f"Failed to fetch {result.url}: {result.error}"


def ttl_text(seconds: float) -> str:
    """A cache lifetime as the agent reads it: 24h, 90m, 30s, 7d (days past one day)."""
    if seconds > 86400 and seconds % 86400 == 0:
        return f"{seconds / 86400:g}d"
    for unit, size in (("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds / size:g}{unit}"
    return f"{seconds:g}s"


def _single(result: UrlResult, ttl_s: float) -> str:
    if not result.ok:
        return _error_line(result)
    if result.from_cache:
        return (
            f"Cached: **{result.label}** — {_plural(result.chunks, 'section')}, "
            f"indexed {age_text(result.age_seconds)} (fresh, TTL: {ttl_text(ttl_s)}).\n"
            "To refresh: call ctx_fetch_and_index again with `force: true`.\n\n"
            "You MUST call ctx_search() to answer questions about this content — "
            "this cached response contains no content.\n"
            f"Use: {_search_hint(result.label)}"
        )
    lines = [
        f"Fetched and indexed **{_plural(result.chunks, 'section')}** ({_kb(result.bytes)}) "
        f"from: {result.label}"
    ]
    if result.final_url and result.final_url != result.url:
        lines.append(f"Redirected to: {result.final_url}")
    lines.append(f"Full content indexed — use {_search_hint(result.label)} for specific lookups.")
    preview = result.preview + (TRUNCATED if result.truncated else "")
    return "\n".join(lines) + "\n\n---\n\n" + preview


def _batch_hint(report: FetchReport) -> str:
    ok = [r for r in report.results if r.ok]
    sources = {r.source for r in ok}
    if len(sources) == 1 and None not in sources:
        return _search_hint(str(next(iter(sources))))
    labels = {r.label for r in ok}
    return _search_hint(next(iter(labels)) if len(labels) == 1 else "<label>")


def _short(preview: str, cut: bool) -> str:
    if len(preview) > BATCH_PREVIEW_CHARS:
        return preview[:BATCH_PREVIEW_CHARS].rstrip() + "…"
    return preview.rstrip() + ("…" if cut else "")


def _batch(report: FetchReport) -> str:
    ok = [r for r in report.results if r.ok]
    sections = sum(r.chunks for r in ok)
    nbytes = sum(r.bytes for r in ok)
    out = [
        f"fetched {len(report.results)} c={report.concurrency}. "
        f"ok={len(report.fetched)} cache={len(report.cached)} err={len(report.failed)}. "
        f"{_plural(sections, 'section')} {_kb(nbytes)}.",
        "",
    ]
    for r in report.results:
        if not r.ok:
            out.append(f"- [err]   {r.url}: {r.error}")
        elif r.from_cache:
            out.append(
                f"- [cache] {r.label} — {_plural(r.chunks, 'section')} ({age_text(r.age_seconds)})"
            )
        else:
            out.append(f"- [new]   {r.label} — {_plural(r.chunks, 'section')} ({_kb(r.bytes)})")
    if ok:
        out += ["", f"{_batch_hint(report)} for full content."]
    shown: set[str] = set()
    previews = []
    for r in report.fetched:
        if r.label in shown:
            continue
        shown.add(r.label)
        previews += [f"### {r.label}", "", _short(r.preview, r.truncated), ""]
    if previews:
        out += ["", "---", "", *previews]
    return "\n".join(out).rstrip("\n")


def render_report(report: FetchReport) -> str:
    """The tool's response text (legacy single shape or batch summary)."""
    if report.single and len(report.results) == 1:
        return _single(report.results[0], report.ttl_s)
    return _batch(report)
