"""HTTP(S) GET with the SSRF guard pinned to the connection (stdlib ``http.client`` only).

Each hop (the URL, then every redirect target) goes through the same steps:

1. `guard.parse_url`: http or https only, a host, no credentials.
2. The host is resolved once and every address checked (`guard.resolve`).
3. Direct: the socket connects to one of *those* addresses, so a second DNS answer is
   never used (no rebinding window). For https the TLS handshake still uses the host name
   for SNI and the certificate check, and ``Host`` carries the name.
4. Through a proxy (``HTTP_PROXY`` / ``HTTPS_PROXY`` / ``NO_PROXY``, with urllib's
   semantics; lower-case names win): the target is still resolved and checked here, then
   the request goes to the proxy (absolute-form for http, a ``CONNECT`` tunnel for https).
   The proxy resolves the name again, so rebinding between our check and its lookup is a
   residual risk we accept: the proxy is the network boundary its operator chose. A name
   that does not resolve locally (split DNS behind a corporate proxy) is left to the proxy,
   except under strict mode.
5. Redirects (301/302/303/307/308) are followed by hand, at most 5, each hop re-checked.

Limits (`FetchLimits`): 10 s to connect, 20 s per read, 30 s for the whole fetch, 10 MiB
of body both as sent and once gzip/deflate is undone (a compression bomb stops at the cap).
The body is streamed and the fetch aborted as soon as a limit is passed.
"""

import http.client
import socket
import ssl
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urljoin

from ctxmode import __version__, settings
from ctxmode.fetch import guard
from ctxmode.fetch.errors import (
    BadUrlError,
    BlockedAddressError,
    ConnectError,
    DnsError,
    FetchTimeoutError,
    HttpStatusError,
    TlsError,
    TooLargeError,
    TooManyRedirectsError,
    UnsupportedContentError,
)
from ctxmode.fetch.guard import Address, Resolver, Target
from ctxmode.fetch.proxy import Proxy, proxy_for

DEFAULT_MAX_BYTES = 10 * 1024 * 1024
READ_CHUNK = 64 * 1024
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
USER_AGENT = f"Mozilla/5.0 (compatible; ctxmode/{__version__}; +https://pypi.org/project/ctxmode/)"
ACCEPT = (
    "text/html,application/xhtml+xml,application/json;q=0.9,"
    "text/markdown;q=0.9,text/plain;q=0.8,*/*;q=0.5"
)


@dataclass(frozen=True)
class FetchLimits:
    """Timeouts in seconds, the body cap in bytes and the redirect budget."""

    connect_timeout: float = 10.0
    read_timeout: float = 20.0
    total_timeout: float = 30.0
    max_bytes: int = DEFAULT_MAX_BYTES
    max_redirects: int = 5


@dataclass(frozen=True)
class Response:
    """A 2xx answer, body already un-gzipped. `content_type` is the bare media type."""

    url: str
    final_url: str
    status: int
    content_type: str  # "text/html"; "" when the server sent none
    charset: str | None
    body: bytes
    redirects: tuple[str, ...] = ()
    via_proxy: bool = False


def _check(
    target: Target, *, strict: bool, resolver: Resolver
) -> tuple[Proxy | None, tuple[Address, ...]]:
    """Guard one hop: the proxy to use (if any) and the checked addresses to pin."""
    proxy = proxy_for(target)
    try:
        return proxy, guard.resolve(target, strict=strict, resolver=resolver)
    except DnsError:
        if proxy is None or strict:
            raise
        return proxy, ()  # split DNS: only the proxy can resolve this name


def preflight(
    url: str, *, strict: bool | None = None, resolver: Resolver = socket.getaddrinfo
) -> Target:
    """Run the guard on `url` without fetching it (used before answering from the cache).

    Raises:
        BadUrlError, SchemeNotAllowedError, DnsError, BlockedAddressError, ConnectError.
    """
    target = guard.parse_url(url)
    _check(target, strict=settings.fetch_strict() if strict is None else strict, resolver=resolver)
    return target


# --------------------------------------------------------------------------- connections


def _connect_any(addresses: Sequence[Address], timeout: float | None) -> socket.socket:
    """Connect to the first checked address that answers (several: IPv6 and IPv4)."""
    if not addresses:
        raise ConnectError("no checked address to connect to")
    last = OSError("no address")
    for address in addresses:
        sock = socket.socket(address.family, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(address.sockaddr)
        except OSError as exc:
            sock.close()
            last = exc
            continue
        return sock
    raise last


class _PinnedHTTP(http.client.HTTPConnection):
    """Connects to pre-checked addresses instead of resolving the host again."""

    def __init__(self, target: Target, addresses: Sequence[Address], timeout: float) -> None:
        super().__init__(target.host, target.port, timeout=timeout)
        self._addresses = addresses

    def connect(self) -> None:
        self.sock = _connect_any(self._addresses, self.timeout)


class _PinnedHTTPS(http.client.HTTPSConnection):
    """TLS to pre-checked addresses; SNI and the certificate check use the host name."""

    def __init__(
        self,
        target: Target,
        addresses: Sequence[Address],
        timeout: float,
        context: ssl.SSLContext,
    ) -> None:
        super().__init__(target.host, target.port, timeout=timeout, context=context)
        self._addresses = addresses
        self._tls = context

    def connect(self) -> None:
        sock = _connect_any(self._addresses, self.timeout)
        try:
            self.sock = self._tls.wrap_socket(sock, server_hostname=self.host)
        except BaseException:
            sock.close()
            raise


def _open(
    target: Target,
    proxy: Proxy | None,
    addresses: Sequence[Address],
    timeout: float,
) -> tuple[http.client.HTTPConnection, str]:
    """A connection for this hop and the request-target to send on it."""
    context = ssl.create_default_context()
    if proxy is None:
        if target.scheme == "https":
            return _PinnedHTTPS(target, addresses, timeout, context), target.path
        return _PinnedHTTP(target, addresses, timeout), target.path
    if target.scheme == "https":
        conn: http.client.HTTPConnection = http.client.HTTPSConnection(
            proxy.host, proxy.port, timeout=timeout, context=context
        )
        tunnel_headers = {"Proxy-Authorization": proxy.auth} if proxy.auth else None
        conn.set_tunnel(target.host, target.port, headers=tunnel_headers)
        return conn, target.path
    conn = http.client.HTTPConnection(proxy.host, proxy.port, timeout=timeout)
    return conn, f"http://{target.netloc}{target.path}"


# --------------------------------------------------------------------------- bodies


class _Decoder:
    """Undo Content-Encoding incrementally, refusing output past the cap."""

    def __init__(self, encoding: str | None, cap: int) -> None:
        self.encoding = (encoding or "identity").strip().lower()
        self.cap = cap
        self.size = 0
        self._z: zlib._Decompress | None = None
        self._fed = False
        if self.encoding in ("gzip", "x-gzip", "deflate"):
            self._z = zlib.decompressobj(32 + zlib.MAX_WBITS)  # gzip or zlib header
        elif self.encoding not in ("identity", ""):
            raise UnsupportedContentError(f"unsupported Content-Encoding {self.encoding!r}")

    def _grow(self, out: bytes) -> bytes:
        self.size += len(out)
        if self.size > self.cap:
            raise TooLargeError(f"response body exceeds the {_mib(self.cap)} limit once decoded")
        return out

    def feed(self, data: bytes) -> bytes:
        if self._z is None:
            return self._grow(data)
        limit = self.cap - self.size + 1
        try:
            out = self._z.decompress(data, limit)
        except zlib.error as exc:
            if self.encoding != "deflate" or self._fed:
                raise UnsupportedContentError(f"corrupt {self.encoding} body: {exc}") from exc
            # Some servers send raw deflate without the zlib header.
            self._z = zlib.decompressobj(-zlib.MAX_WBITS)
            out = self._z.decompress(data, limit)
        self._fed = True
        return self._grow(out)

    def finish(self) -> bytes:
        return self._grow(self._z.flush()) if self._z is not None else b""


def _mib(n: int) -> str:
    return f"{n / (1024 * 1024):g} MiB"


def _read_body(
    resp: http.client.HTTPResponse,
    sock: socket.socket | None,
    limits: FetchLimits,
    deadline: float,
) -> bytes:
    length = resp.getheader("Content-Length")
    if length and length.strip().isdigit() and int(length) > limits.max_bytes:
        raise TooLargeError(
            f"response body is {int(length)} bytes, over the {_mib(limits.max_bytes)} limit"
        )
    decoder = _Decoder(resp.getheader("Content-Encoding"), limits.max_bytes)
    parts: list[bytes] = []
    received = 0
    while True:
        _arm(sock, limits.read_timeout, deadline)
        data = resp.read1(READ_CHUNK)
        if not data:
            break
        received += len(data)
        if received > limits.max_bytes:
            raise TooLargeError(f"response body exceeds the {_mib(limits.max_bytes)} limit")
        parts.append(decoder.feed(data))
    parts.append(decoder.finish())
    return b"".join(parts)


def _arm(sock: socket.socket | None, read_timeout: float, deadline: float) -> None:
    """Give the next socket operation what is left of its budget."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise FetchTimeoutError("fetch took longer than its total time limit")
    if sock is not None:
        sock.settimeout(min(read_timeout, remaining))


# --------------------------------------------------------------------------- hops


@dataclass(frozen=True)
class _Hop:
    status: int
    reason: str
    location: str | None
    content_type: str
    charset: str | None
    body: bytes


def _request(
    target: Target,
    proxy: Proxy | None,
    addresses: Sequence[Address],
    limits: FetchLimits,
    deadline: float,
) -> _Hop:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise FetchTimeoutError("fetch took longer than its total time limit")
    conn, path = _open(target, proxy, addresses, min(limits.connect_timeout, remaining))
    resp: http.client.HTTPResponse | None = None
    try:
        conn.putrequest(
            "GET",
            path,
            skip_host=proxy is not None and target.scheme == "http",
            skip_accept_encoding=True,
        )
        if proxy is not None and target.scheme == "http":
            conn.putheader("Host", target.netloc)
            if proxy.auth:
                conn.putheader("Proxy-Authorization", proxy.auth)
        conn.putheader("User-Agent", USER_AGENT)
        conn.putheader("Accept", ACCEPT)
        conn.putheader("Accept-Encoding", "gzip, deflate")
        conn.putheader("Connection", "close")
        conn.endheaders()
        sock = conn.sock  # getresponse() drops it from the connection on Connection: close
        _arm(sock, limits.read_timeout, deadline)
        resp = conn.getresponse()
        status = resp.status
        if status in REDIRECT_STATUSES and resp.getheader("Location"):
            return _Hop(status, resp.reason, resp.getheader("Location"), "", None, b"")
        if not 200 <= status < 300:
            raise HttpStatusError(status, resp.reason)
        header = resp.getheader("Content-Type")
        content_type = resp.headers.get_content_type() if header else ""
        charset = resp.headers.get_content_charset() if header else None
        body = _read_body(resp, sock, limits, deadline)
        return _Hop(status, resp.reason, None, content_type, charset, body)
    finally:
        if resp is not None:
            resp.close()
        conn.close()


def _describe(target: Target, proxy: Proxy | None) -> str:
    host = f"[{target.host}]" if ":" in target.host else target.host
    where = f"{host}:{target.port}"
    return f"{where} via proxy {proxy.shown}" if proxy else where


def _hop(
    target: Target,
    proxy: Proxy | None,
    addresses: Sequence[Address],
    limits: FetchLimits,
    deadline: float,
) -> _Hop:
    """One request with low-level failures mapped to typed errors."""
    where = _describe(target, proxy)
    try:
        return _request(target, proxy, addresses, limits, deadline)
    except ssl.SSLCertVerificationError as exc:
        raise TlsError(f"TLS certificate check failed for {where}: {exc.verify_message}") from exc
    except ssl.SSLError as exc:
        raise TlsError(f"TLS error with {where}: {exc.reason or exc}") from exc
    except TimeoutError as exc:
        raise FetchTimeoutError(f"timed out talking to {where}") from exc
    except http.client.HTTPException as exc:
        raise ConnectError(f"bad HTTP response from {where}: {exc!r}") from exc
    except ConnectError:
        raise
    except OSError as exc:
        raise ConnectError(f"cannot reach {where}: {exc.strerror or exc}") from exc


def fetch(
    url: str,
    *,
    limits: FetchLimits | None = None,
    strict: bool | None = None,
    resolver: Resolver = socket.getaddrinfo,
) -> Response:
    """GET `url`, following redirects, with every hop checked by the SSRF guard.

    `strict` defaults to the ``CTXMODE_FETCH_STRICT`` / ``CTX_FETCH_STRICT`` setting.

    Raises:
        BadUrlError, SchemeNotAllowedError: before any network access.
        DnsError, BlockedAddressError: a hop's host does not resolve or is refused.
        ConnectError, TlsError, FetchTimeoutError: the transport failed.
        HttpStatusError: the final answer is not 2xx.
        TooLargeError, UnsupportedContentError, TooManyRedirectsError.
    """
    limits = limits or FetchLimits()
    strict = settings.fetch_strict() if strict is None else strict
    deadline = time.monotonic() + limits.total_timeout
    target = guard.parse_url(url)
    redirects: list[str] = []
    used_proxy = False
    while True:
        try:
            proxy, addresses = _check(target, strict=strict, resolver=resolver)
        except (BlockedAddressError, DnsError) as exc:
            if not redirects:
                raise
            raise type(exc)(f"redirect to {target.url} refused: {exc}") from exc
        used_proxy = used_proxy or proxy is not None
        hop = _hop(target, proxy, addresses, limits, deadline)
        if hop.location is None:
            return Response(
                url=url,
                final_url=target.url,
                status=hop.status,
                content_type=hop.content_type,
                charset=hop.charset,
                body=hop.body,
                redirects=tuple(redirects),
                via_proxy=used_proxy,
            )
        if len(redirects) >= limits.max_redirects:
            raise TooManyRedirectsError(
                f"redirect chain exceeded {limits.max_redirects} hops (last: {target.url})"
            )
        next_url = urljoin(target.url, hop.location.strip())
        redirects.append(next_url)
        try:
            target = guard.parse_url(next_url)
        except BadUrlError as exc:
            raise type(exc)(f"redirect from {target.url} refused: {exc}") from exc
