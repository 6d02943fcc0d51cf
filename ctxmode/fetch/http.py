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

Limits (`FetchLimits`): 10 s to connect, 20 s per read, 30 s for the whole fetch
(``CTXMODE_FETCH_TIMEOUT_MS``), 10 MiB of body both as sent and once gzip/deflate is undone
(a compression bomb stops at the cap). The body is streamed and the fetch aborted as soon as
a limit is passed.

The whole-fetch limit is a wall-clock deadline (`_Clock`), not a socket timeout: a server
that trickles its status line a byte every few seconds never lets a read time out. A watcher
thread shuts the fetch's sockets down when the deadline passes or the caller's cancel flag is
set, which ends whatever connect, handshake, read or write is blocked on them; name lookups
run in a thread of their own, waited for only as long as the deadline allows.
"""

import http.client
import socket
import ssl
import threading
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urljoin

from ctxmode import __version__, settings
from ctxmode.fetch import guard
from ctxmode.fetch.errors import (
    BadUrlError,
    BlockedAddressError,
    ConnectError,
    DnsError,
    FetchCancelledError,
    FetchError,
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
CANCEL_POLL_S = 0.05  # how often a fetch's watcher looks at its cancel flag
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
    total_timeout: float | None = None  # None: CTXMODE_FETCH_TIMEOUT_MS, 30 s by default
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


# --------------------------------------------------------------------------- the clock

_T = TypeVar("_T")


def _shut(sock: socket.socket) -> None:
    """End every operation blocked on `sock` (its owner still closes it)."""
    try:
        # The plain socket's shutdown, also for TLS: SSLSocket's own drops its TLS state
        # under the thread reading it.
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:  # not connected yet, or closed already
        pass


class _Clock:
    """One fetch's wall-clock deadline and its cancel flag, enforced on its sockets."""

    def __init__(self, total: float, cancel: threading.Event | None) -> None:
        self.total = total
        self.deadline = time.monotonic() + total
        self._cancel = cancel
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._finished = threading.Event()
        self._watcher: threading.Thread | None = None
        self.fired: FetchError | None = None  # what the watcher ended the fetch for

    def overdue(self) -> FetchError | None:
        if self._cancel is not None and self._cancel.is_set():
            return FetchCancelledError()
        if time.monotonic() >= self.deadline:
            return FetchTimeoutError(
                f"fetch took longer than its total time limit of {self.total:g} s"
            )
        return None

    def left(self) -> float:
        """Seconds left for the fetch.

        Raises:
            FetchTimeoutError, FetchCancelledError: none are left, or the caller cancelled.
        """
        over = self.fired or self.overdue()
        if over is not None:
            raise over
        return self.deadline - time.monotonic()

    def _slice(self) -> float:
        left = max(0.0, self.deadline - time.monotonic())
        return left if self._cancel is None else min(left, CANCEL_POLL_S)

    def watch(self, sock: socket.socket) -> None:
        """Shut `sock` down when the fetch runs out of time or is cancelled."""
        with self._lock:
            self._sockets.append(sock)
            if self._watcher is None and self.fired is None:
                self._watcher = threading.Thread(
                    target=self._watch, name="ctx-fetch-clock", daemon=True
                )
                self._watcher.start()
            fired = self.fired is not None
        if fired:
            _shut(sock)

    def _watch(self) -> None:
        while (over := self.overdue()) is None:
            if self._finished.wait(self._slice()):
                return
        with self._lock:
            self.fired = over
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)

    def run(self, work: Callable[[], _T]) -> _T:
        """`work()` in a thread of its own (a name lookup no timeout reaches), waited for
        while time is left; raises what it raised."""
        outcome: dict[str, Any] = {}
        done = threading.Event()

        def target() -> None:
            try:
                outcome["value"] = work()
            except BaseException as exc:  # re-raised in the fetching thread
                outcome["error"] = exc
            finally:
                done.set()

        threading.Thread(target=target, name="ctx-fetch-lookup", daemon=True).start()
        while not done.wait(self._slice()):
            self.left()
        if "error" in outcome:
            raise outcome["error"]
        return outcome["value"]  # type: ignore[no-any-return]

    def finish(self) -> None:
        self._finished.set()


# --------------------------------------------------------------------------- connections


def _connect_any(
    addresses: Sequence[Address], timeout: float | None, clock: _Clock
) -> socket.socket:
    """Connect to the first checked address that answers (several: IPv6 and IPv4)."""
    if not addresses:
        raise ConnectError("no checked address to connect to")
    last = OSError("no address")
    for address in addresses:
        left = clock.left()  # the next address only while time is left
        sock = socket.socket(address.family, socket.SOCK_STREAM)
        sock.settimeout(left if timeout is None else min(timeout, left))
        clock.watch(sock)
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

    def __init__(
        self, target: Target, addresses: Sequence[Address], timeout: float, clock: _Clock
    ) -> None:
        super().__init__(target.host, target.port, timeout=timeout)
        self._addresses = addresses
        self._clock = clock

    def connect(self) -> None:
        self.sock = _connect_any(self._addresses, self.timeout, self._clock)


class _PinnedHTTPS(http.client.HTTPSConnection):
    """TLS to pre-checked addresses; SNI and the certificate check use the host name."""

    def __init__(
        self,
        target: Target,
        addresses: Sequence[Address],
        timeout: float,
        context: ssl.SSLContext,
        clock: _Clock,
    ) -> None:
        super().__init__(target.host, target.port, timeout=timeout, context=context)
        self._addresses = addresses
        self._tls = context
        self._clock = clock

    def connect(self) -> None:
        sock = _connect_any(self._addresses, self.timeout, self._clock)
        try:
            tls = self._tls.wrap_socket(
                sock, server_hostname=self.host, do_handshake_on_connect=False
            )
        except BaseException:
            sock.close()
            raise
        try:
            self._clock.watch(tls)  # the handshake too is bounded by the deadline
            tls.do_handshake()
        except BaseException:
            tls.close()
            raise
        self.sock = tls


def _open(
    target: Target,
    proxy: Proxy | None,
    addresses: Sequence[Address],
    timeout: float,
    clock: _Clock,
) -> tuple[http.client.HTTPConnection, str]:
    """A connection for this hop and the request-target to send on it."""
    context = ssl.create_default_context()
    if proxy is None:
        if target.scheme == "https":
            return _PinnedHTTPS(target, addresses, timeout, context, clock), target.path
        return _PinnedHTTP(target, addresses, timeout, clock), target.path
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
    clock: _Clock,
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
        _arm(sock, limits.read_timeout, clock)
        data = resp.read1(READ_CHUNK)
        if not data:
            break
        received += len(data)
        if received > limits.max_bytes:
            raise TooLargeError(f"response body exceeds the {_mib(limits.max_bytes)} limit")
        parts.append(decoder.feed(data))
    parts.append(decoder.finish())
    return b"".join(parts)


def _arm(sock: socket.socket | None, read_timeout: float, clock: _Clock) -> None:
    """Give the next socket operation what is left of its budget."""
    remaining = clock.left()
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
    clock: _Clock,
) -> _Hop:
    timeout = min(limits.connect_timeout, clock.left())
    conn, path = _open(target, proxy, addresses, timeout, clock)
    resp: http.client.HTTPResponse | None = None
    try:
        conn.connect()
        if conn.sock is not None:  # through a proxy: watched from here on
            clock.watch(conn.sock)
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
        _arm(sock, limits.read_timeout, clock)
        resp = conn.getresponse()
        status = resp.status
        if status in REDIRECT_STATUSES and resp.getheader("Location"):
            return _Hop(status, resp.reason, resp.getheader("Location"), "", None, b"")
        if not 200 <= status < 300:
            raise HttpStatusError(status, resp.reason)
        header = resp.getheader("Content-Type")
        content_type = resp.headers.get_content_type() if header else ""
        charset = resp.headers.get_content_charset() if header else None
        body = _read_body(resp, sock, limits, clock)
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
    clock: _Clock,
) -> _Hop:
    """One request with failures mapped to typed errors; once the clock has shut the
    sockets down, its own error (what a read cut short looks like is no answer)."""
    try:
        hop = _mapped(target, proxy, addresses, limits, clock)
    except FetchError as exc:
        if clock.fired is not None:
            raise clock.fired from exc
        raise
    if clock.fired is not None:
        raise clock.fired
    return hop


def _mapped(
    target: Target,
    proxy: Proxy | None,
    addresses: Sequence[Address],
    limits: FetchLimits,
    clock: _Clock,
) -> _Hop:
    where = _describe(target, proxy)
    try:
        return _request(target, proxy, addresses, limits, clock)
    except ssl.SSLCertVerificationError as exc:
        raise TlsError(f"TLS certificate check failed for {where}: {exc.verify_message}") from exc
    except ssl.SSLError as exc:
        raise TlsError(f"TLS error with {where}: {exc.reason or exc}") from exc
    except TimeoutError as exc:
        # A read whose timeout ran out with the fetch's own time: the total limit, not a
        # slow read (the clock's watcher may not have woken up yet).
        over = clock.fired or clock.overdue()
        if over is not None:
            raise over from exc
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
    cancel: threading.Event | None = None,
) -> Response:
    """GET `url`, following redirects, with every hop checked by the SSRF guard.

    `strict` defaults to the ``CTXMODE_FETCH_STRICT`` / ``CTX_FETCH_STRICT`` setting, the
    total time limit to ``CTXMODE_FETCH_TIMEOUT_MS``. Setting `cancel` stops the fetch
    (within `CANCEL_POLL_S`).

    Raises:
        BadUrlError, SchemeNotAllowedError: before any network access.
        DnsError, BlockedAddressError: a hop's host does not resolve or is refused.
        ConnectError, TlsError, FetchTimeoutError: the transport failed.
        FetchCancelledError: `cancel` was set.
        HttpStatusError: the final answer is not 2xx.
        TooLargeError, UnsupportedContentError, TooManyRedirectsError.
    """
    limits = limits or FetchLimits()
    strict = settings.fetch_strict() if strict is None else strict
    total = limits.total_timeout
    clock = _Clock(settings.fetch_timeout_ms() / 1000 if total is None else total, cancel)
    target = guard.parse_url(url)

    def lookup(*args: Any, **kwargs: Any) -> Sequence[tuple[Any, ...]]:
        return clock.run(lambda: resolver(*args, **kwargs))

    try:
        return _follow(url, target, limits, strict, lookup, clock)
    finally:
        clock.finish()


def _follow(
    url: str, target: Target, limits: FetchLimits, strict: bool, resolver: Resolver, clock: _Clock
) -> Response:
    """`fetch` from its first hop to the answer that is not a redirect."""
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
        hop = _hop(target, proxy, addresses, limits, clock)
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
