"""Fetch URLs into the knowledge base: the core of ``ctx_fetch_and_index``.

Layers, each usable alone:

* `guard`: which URLs and IP addresses may be fetched (SSRF policy).
* `http`: a stdlib GET that connects only to addresses the guard checked, follows
  redirects by hand, honours proxies and enforces time and size limits.
* `convert`: body → (text, chunker kind): HTML to markdown, JSON kept as JSON, text.
* `service.fetch_and_index`: labels, the 24 h cache, the batch pool and indexing;
  `render.render_report` turns its report into the tool's response text.

Only the standard library loads on import; beautifulsoup4 and markdownify load the first
time a page is converted.
"""

from ctxmode.fetch.convert import Converted, convert
from ctxmode.fetch.errors import (
    BadUrlError,
    BlockedAddressError,
    ConnectError,
    DnsError,
    EmptyContentError,
    FetchCancelledError,
    FetchError,
    FetchTimeoutError,
    HttpStatusError,
    SchemeNotAllowedError,
    TlsError,
    TooLargeError,
    TooManyRedirectsError,
    UnsupportedContentError,
)
from ctxmode.fetch.guard import IpClass, Verdict, classify_ip, parse_url
from ctxmode.fetch.http import FetchLimits, Response, fetch, preflight
from ctxmode.fetch.render import render_report
from ctxmode.fetch.service import (
    CACHE_TTL_S,
    FetchReport,
    FetchRequest,
    UrlResult,
    cache_label,
    fetch_and_index,
)

__all__ = [
    "CACHE_TTL_S",
    "BadUrlError",
    "BlockedAddressError",
    "ConnectError",
    "Converted",
    "DnsError",
    "EmptyContentError",
    "FetchCancelledError",
    "FetchError",
    "FetchLimits",
    "FetchReport",
    "FetchRequest",
    "FetchTimeoutError",
    "HttpStatusError",
    "IpClass",
    "Response",
    "SchemeNotAllowedError",
    "TlsError",
    "TooLargeError",
    "TooManyRedirectsError",
    "UnsupportedContentError",
    "UrlResult",
    "Verdict",
    "cache_label",
    "classify_ip",
    "convert",
    "fetch",
    "fetch_and_index",
    "parse_url",
    "preflight",
    "render_report",
]
