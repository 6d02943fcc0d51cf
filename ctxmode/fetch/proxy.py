"""Which proxy, if any, carries a request: ``HTTP_PROXY`` / ``HTTPS_PROXY`` / ``NO_PROXY``.

The environment is read the way urllib reads it (`urllib.request.getproxies`, lower-case
names winning over upper-case, ``HTTP_PROXY`` ignored in a CGI request; on macOS and
Windows the system settings too) and ``NO_PROXY`` is matched with urllib's
`proxy_bypass`. Only ``http://`` proxies are supported (plain requests are sent in
absolute form, https goes through a ``CONNECT`` tunnel); credentials in the proxy URL
become a Basic ``Proxy-Authorization`` header and never appear in messages.
"""

import base64
import sys
import urllib.request
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from ctxmode.fetch.errors import ConnectError
from ctxmode.fetch.guard import Target


@dataclass(frozen=True)
class Proxy:
    host: str
    port: int
    auth: str | None  # a ready Proxy-Authorization value
    shown: str  # for messages: no credentials


def proxy_for(target: Target) -> Proxy | None:
    """The proxy the environment names for this target, or None (none set, or NO_PROXY).

    Raises:
        ConnectError: the proxy setting is malformed or not an http:// proxy.
    """
    proxies = urllib.request.getproxies()
    url = proxies.get(target.scheme)
    if not url:
        return None
    host = target.host if ":" in target.host else f"{target.host}:{target.port}"
    if sys.platform in ("win32", "darwin"):
        bypass = urllib.request.proxy_bypass(host)  # environment first, then system settings
    else:
        bypass = urllib.request.proxy_bypass(host, proxies)
    if bypass:
        return None
    if "://" not in url:
        url = "http://" + url
    parts = urlsplit(url)
    try:
        port = parts.port or 80
    except ValueError as exc:
        raise ConnectError(
            f"bad {target.scheme} proxy setting (host {parts.hostname}): {exc}"
        ) from exc
    shown = f"{parts.scheme}://{parts.hostname}:{port}"
    if parts.scheme.lower() != "http" or not parts.hostname:
        raise ConnectError(f"unsupported proxy {shown} (only http:// proxies are supported)")
    auth = None
    if parts.username is not None:
        pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
        auth = "Basic " + base64.b64encode(pair.encode("utf-8")).decode("ascii")
    return Proxy(parts.hostname, port, auth, shown)
