"""SSRF guard: which URLs may be fetched and which addresses may be connected to.

Three verdicts for an IP address:

* ``public``: fetched.
* ``private`` (loopback, RFC 1918, IPv6 unique-local, CGNAT, the 198.18/15 range fake-IP
  proxies hand out): fetched by default, since local dev servers are a normal thing to
  read docs from; refused when ``CTXMODE_FETCH_STRICT=1`` (upstream's
  ``CTX_FETCH_STRICT=1`` is honoured too).
* ``blocked`` (link-local including the 169.254.169.254 metadata service, other cloud
  metadata addresses, multicast, 0.0.0.0/8, unspecified, reserved and documentation
  ranges, anything malformed): always refused.

IPv6 forms that carry an IPv4 address (``::ffff:a.b.c.d``, ``::a.b.c.d``, NAT64
``64:ff9b::/96``, 6to4, Teredo) are judged by that IPv4 address, and a zone id
(``fe80::1%eth0``) is dropped before judging.

`resolve` looks a host up once and checks every address it returns; `ctxmode.fetch.http`
then connects only to those checked addresses, so a DNS answer that changes between the
check and the connection (rebinding) is never used. Only ``http`` and ``https`` URLs get
this far: `parse_url` rejects everything else before any cache lookup or network access.
"""

import ipaddress
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any
from urllib.parse import SplitResult, quote, urlsplit

from ctxmode.fetch.errors import BadUrlError, BlockedAddressError, DnsError, SchemeNotAllowedError

ALLOWED_SCHEMES = ("http", "https")
DEFAULT_PORTS = {"http": 80, "https": 443}

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[..., Sequence[tuple[Any, ...]]]


class Verdict(Enum):
    PUBLIC = "public"
    PRIVATE = "private"
    BLOCKED = "blocked"


@dataclass(frozen=True)
class IpClass:
    """How the guard judges one address, and why (``loopback``, ``link-local`` …)."""

    verdict: Verdict
    category: str


@dataclass(frozen=True)
class Target:
    """A URL the guard accepted: scheme, host (IDNA, no brackets), port, request path."""

    url: str
    scheme: str
    host: str
    port: int
    path: str  # path + query, percent-encoded, never empty

    @property
    def netloc(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == DEFAULT_PORTS[self.scheme] else f"{host}:{self.port}"


@dataclass(frozen=True)
class Address:
    """One checked address from `resolve`, ready for ``socket.connect``."""

    family: int
    sockaddr: tuple[Any, ...]
    ip: str
    judged: IpClass


def _nets(*cidrs: str) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(c) for c in cidrs)


_Rules = tuple[tuple[tuple[Network, ...], IpClass], ...]

# Checked in order; the first match decides. Anything unlisted is public.
_V4_RULES: _Rules = (
    (_nets("0.0.0.0/8"), IpClass(Verdict.BLOCKED, "this-network 0.0.0.0/8")),
    (_nets("169.254.0.0/16"), IpClass(Verdict.BLOCKED, "link-local / cloud metadata")),
    # Alibaba Cloud metadata; Azure's platform (WireServer) address.
    (_nets("100.100.100.200/32", "168.63.129.16/32"), IpClass(Verdict.BLOCKED, "cloud metadata")),
    (_nets("224.0.0.0/4"), IpClass(Verdict.BLOCKED, "multicast")),
    (_nets("240.0.0.0/4"), IpClass(Verdict.BLOCKED, "reserved")),
    (
        _nets("192.0.0.0/24", "192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24"),
        IpClass(Verdict.BLOCKED, "reserved (protocol / documentation)"),
    ),
    (_nets("127.0.0.0/8"), IpClass(Verdict.PRIVATE, "loopback")),
    (_nets("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"), IpClass(Verdict.PRIVATE, "private")),
    (_nets("100.64.0.0/10"), IpClass(Verdict.PRIVATE, "shared address space (CGNAT)")),
    # Benchmarking range; also what fake-IP proxy modes (Clash, Surge) answer with.
    (_nets("198.18.0.0/15"), IpClass(Verdict.PRIVATE, "benchmarking / fake-IP proxy")),
)

_V6_RULES: _Rules = (
    (_nets("::/128"), IpClass(Verdict.BLOCKED, "unspecified")),
    (_nets("::1/128"), IpClass(Verdict.PRIVATE, "loopback")),
    (_nets("fd00:ec2::254/128"), IpClass(Verdict.BLOCKED, "cloud metadata")),
    (_nets("fe80::/10"), IpClass(Verdict.BLOCKED, "link-local")),
    (_nets("ff00::/8"), IpClass(Verdict.BLOCKED, "multicast")),
    (_nets("fc00::/7"), IpClass(Verdict.PRIVATE, "unique-local")),
    (_nets("fec0::/10"), IpClass(Verdict.PRIVATE, "site-local")),
    (_nets("64:ff9b:1::/48"), IpClass(Verdict.PRIVATE, "local-use NAT64")),
    (
        _nets("100::/64", "2001:db8::/32"),
        IpClass(Verdict.BLOCKED, "reserved (discard / documentation)"),
    ),
)
_V6_GLOBAL = ipaddress.ip_network("2000::/3")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_V4_COMPAT = ipaddress.ip_network("::/96")


def _embedded_v4(addr: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address stands for, if it is one of the tunnelling forms."""
    if addr.ipv4_mapped is not None:
        return addr.ipv4_mapped
    if addr in _NAT64 or (addr in _V4_COMPAT and int(addr) > 1):
        return ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF)
    if addr.sixtofour is not None:
        return addr.sixtofour
    if addr.teredo is not None:
        return addr.teredo[1]
    return None


def _match(addr: IPAddress, rules: _Rules) -> IpClass | None:
    for nets, judged in rules:
        if any(addr.version == net.version and addr in net for net in nets):
            return judged
    return None


def _parse_ip(text: str) -> IPAddress | None:
    raw = text.strip()
    if raw.startswith("[") and raw.endswith("]"):
        raw = raw[1:-1]
    raw = raw.replace("%25", "%").split("%", 1)[0]  # zone id: fe80::1%eth0, %25eth0 in URLs
    try:
        return ipaddress.ip_address(raw)
    except ValueError:
        return None


def classify_ip(text: str) -> IpClass:
    """Judge one IP address given as text. Malformed input is ``blocked``."""
    addr = _parse_ip(text)
    if addr is None:
        return IpClass(Verdict.BLOCKED, "malformed address")
    if isinstance(addr, ipaddress.IPv6Address):
        inner = _embedded_v4(addr)
        if inner is not None:
            return classify_ip(str(inner))
        judged = _match(addr, _V6_RULES)
        if judged is not None:
            return judged
        if addr not in _V6_GLOBAL:
            return IpClass(Verdict.BLOCKED, "reserved")
        return IpClass(Verdict.PUBLIC, "public")
    return _match(addr, _V4_RULES) or IpClass(Verdict.PUBLIC, "public")


def check_ip(ip: str, host: str, *, strict: bool) -> IpClass:
    """Judge `ip` (an address `host` resolved to) and refuse it when policy says so.

    Raises:
        BlockedAddressError: a blocked address, or a private one under strict mode.
    """
    judged = classify_ip(ip)
    if judged.verdict is Verdict.BLOCKED:
        raise BlockedAddressError(
            f'URL host "{host}" resolves to {ip} — blocked ({judged.category})'
        )
    if judged.verdict is Verdict.PRIVATE and strict:
        from ctxmode import settings

        found = settings.FETCH_STRICT.lookup()  # the name the user set, as they set it
        why = f"{found[0]}={found[1]}" if found else f"strict mode ({settings.FETCH_STRICT.name})"
        raise BlockedAddressError(
            f'URL host "{host}" resolves to private address {ip} ({judged.category}) '
            f"— blocked under {why}"
        )
    return judged


def _idna(host: str) -> str:
    try:
        host.encode("ascii")
        return host.lower()
    except UnicodeEncodeError:
        pass
    try:
        return host.encode("idna").decode("ascii").lower()
    except UnicodeError as exc:
        raise BadUrlError(f'invalid host name "{host}": {exc}') from exc


def _split(url: str) -> SplitResult:
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError as exc:
        raise BadUrlError(f"invalid URL {url!r}: {exc}") from exc
    return parts


def _request_path(parts: SplitResult) -> str:
    # Keep existing escapes and reserved characters; encode spaces and non-ASCII.
    safe = "!#$%&'()*+,/:;=?@[]~"
    path = quote(parts.path or "/", safe=safe)
    if parts.query:
        path += "?" + quote(parts.query, safe=safe)
    return path


def parse_url(url: str) -> Target:
    """Accept an absolute ``http(s)://`` URL with a host; nothing here touches the network.

    Raises:
        SchemeNotAllowedError: any scheme other than http or https.
        BadUrlError: unparsable, no host, a bad port, or credentials in the URL.
    """
    parts = _split(url)
    scheme = parts.scheme.lower()
    host_port = "://" not in url and parts.path.isdigit()  # "localhost:8080" is no scheme
    if scheme and scheme not in ALLOWED_SCHEMES and not host_port:
        raise SchemeNotAllowedError(f'URL scheme "{scheme}:" not allowed (only http: and https:)')
    if scheme not in ALLOWED_SCHEMES or "://" not in url:
        raise BadUrlError(f"invalid URL {url!r}: expected http://… or https://…")
    if parts.username is not None or parts.password is not None:
        # Defense in depth: credentials would be stored in the label and shown in results.
        raise BadUrlError("URLs with credentials (user:password@host) are not fetched")
    host = parts.hostname
    if not host:
        raise BadUrlError(f"invalid URL {url!r}: no host")
    port = DEFAULT_PORTS[scheme] if parts.port is None else parts.port
    if not 0 < port < 65536:
        raise BadUrlError(f"invalid URL {url!r}: bad port")
    return Target(url.strip(), scheme, _idna(host), port, _request_path(parts))


def resolve(
    target: Target,
    *,
    strict: bool,
    resolver: Resolver = socket.getaddrinfo,
) -> tuple[Address, ...]:
    """Look the host up once and check every address; all must pass.

    Raises:
        DnsError: the name does not resolve.
        BlockedAddressError: some address is refused (see `check_ip`).
    """
    host = target.host.replace("%25", "%")
    if _parse_ip(host) is not None:
        check_ip(host, target.host, strict=strict)  # a literal: judged before any lookup
    try:
        infos = resolver(host, target.port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise DnsError(f'DNS lookup failed for "{host}": {exc}') from exc
    if not infos:
        raise DnsError(f'DNS lookup failed for "{host}": no addresses')
    seen: dict[tuple[Any, ...], Address] = {}
    for family, _type, _proto, _canon, sockaddr in infos:
        if family not in (socket.AF_INET, socket.AF_INET6):
            continue
        ip = str(sockaddr[0])
        judged = check_ip(ip, target.host, strict=strict)
        seen.setdefault(tuple(sockaddr), Address(family, tuple(sockaddr), ip, judged))
    if not seen:
        raise DnsError(f'DNS lookup failed for "{host}": no IPv4 or IPv6 address')
    return tuple(seen.values())
