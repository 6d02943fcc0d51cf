"""Fixtures: the test site, a forwarding proxy in front of it, and a real store."""

import http.client
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

import pytest

from ctxmode.store import ContentStore

from .support import PROXY_VARS, Proxy, Served, Site, handler_for, reply, serve


@pytest.fixture(autouse=True)
def _no_proxy_env(monkeypatch):
    """A proxy set on the host must not carry our localhost traffic."""
    for name in PROXY_VARS:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def site() -> Iterator[Site]:
    served = Served()
    server, thread = serve(handler_for(served))
    port = server.server_address[1]
    try:
        yield Site(f"http://127.0.0.1:{port}", port, served)
    finally:
        served.release.set()
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def proxy(site: Site) -> Iterator[Proxy]:
    """A forwarding HTTP proxy that sends every request on to the test site."""
    record = Proxy("")

    class Forward(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            record.requests.append(f"GET {self.path}")
            record.auth.append(self.headers.get("Proxy-Authorization", ""))
            upstream = http.client.HTTPConnection("127.0.0.1", site.port, timeout=5)
            try:
                path = self.path.split("://", 1)[-1]
                path = "/" + path.split("/", 1)[1] if "/" in path else "/"
                upstream.request("GET", path, headers={"Host": self.headers.get("Host", "")})
                resp = upstream.getresponse()
                body = resp.read()
                ctype = resp.getheader("Content-Type") or "application/octet-stream"
                reply(self, body, ctype, status=resp.status)
            finally:
                upstream.close()

        def do_CONNECT(self) -> None:  # noqa: N802 - http.server's naming
            record.requests.append(f"CONNECT {self.path}")
            record.auth.append(self.headers.get("Proxy-Authorization", ""))
            self.send_response(403)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server, thread = serve(Forward)
    record.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield record
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def store(tmp_path) -> Iterator[ContentStore]:
    with ContentStore(tmp_path / "kb.db") as s:
        yield s
