"""`http.fetch` against a real local server: redirects, limits, decoding, pinning, proxies."""

import base64
import shutil
import socket
import ssl
import subprocess

import pytest

from ctxmode.fetch.errors import (
    BlockedAddressError,
    ConnectError,
    DnsError,
    FetchTimeoutError,
    HttpStatusError,
    SchemeNotAllowedError,
    TlsError,
    TooLargeError,
    TooManyRedirectsError,
)
from ctxmode.fetch.http import USER_AGENT, FetchLimits, fetch, preflight

from .support import Served, handler_for, serve


def test_fetches_a_page_with_its_media_type_and_charset(site):
    resp = fetch(site.url("/page.html"))
    assert (resp.status, resp.content_type, resp.charset) == (200, "text/html", "utf-8")
    assert b"frobnicator" in resp.body
    assert resp.final_url == resp.url == site.url("/page.html")
    assert site.served.hits["/page.html"] == 1


def test_sends_user_agent_and_host(site, monkeypatch):
    seen = {}
    from http.server import BaseHTTPRequestHandler

    original = BaseHTTPRequestHandler.parse_request

    def spy(self):
        ok = original(self)
        seen.update(self.headers)
        return ok

    monkeypatch.setattr(BaseHTTPRequestHandler, "parse_request", spy)
    fetch(site.url("/notes.txt"))
    assert seen["User-Agent"] == USER_AGENT
    assert seen["Host"] == f"127.0.0.1:{site.port}"
    assert seen["Accept-Encoding"] == "gzip, deflate"


def test_follows_a_redirect_chain_of_five(site):
    resp = fetch(site.url("/chain/4"))
    assert resp.final_url == site.url("/page.html")
    assert len(resp.redirects) == 5
    assert b"Widget Guide" in resp.body


def test_relative_location_is_resolved(site):
    assert fetch(site.url("/to-page")).final_url == site.url("/page.html")


def test_a_sixth_redirect_is_refused(site):
    with pytest.raises(TooManyRedirectsError, match="exceeded 5 hops"):
        fetch(site.url("/chain/5"))
    assert site.served.hits["/page.html"] == 0


def test_redirect_loops_stop(site):
    with pytest.raises(TooManyRedirectsError):
        fetch(site.url("/loop"))
    assert site.served.hits["/loop"] == 6


@pytest.mark.parametrize("path", ["/to-metadata", "/to-zero"])
def test_redirect_to_a_blocked_address_is_refused(site, path):
    with pytest.raises(BlockedAddressError, match="redirect to .* refused"):
        fetch(site.url(path))


def test_redirect_to_a_file_url_is_refused(site):
    with pytest.raises(SchemeNotAllowedError, match="redirect"):
        fetch(site.url("/to-file"))


@pytest.mark.parametrize(("path", "status"), [("/missing", 404), ("/broken", 500)])
def test_error_statuses_raise_with_the_code(site, path, status):
    with pytest.raises(HttpStatusError) as info:
        fetch(site.url(path))
    assert info.value.status == status
    assert str(info.value).startswith(f"HTTP {status}")
    assert info.value.code == "http_status"


def test_a_stalled_server_times_out(site):
    with pytest.raises(FetchTimeoutError) as info:
        fetch(site.url("/slow"), limits=FetchLimits(read_timeout=0.2))
    assert info.value.code == "timeout"


def test_an_exhausted_total_budget_times_out_before_connecting(site):
    with pytest.raises(FetchTimeoutError, match="total time limit"):
        fetch(site.url("/page.html"), limits=FetchLimits(total_timeout=0))
    assert site.served.hits["/page.html"] == 0


def test_declared_oversize_body_is_refused(site):
    with pytest.raises(TooLargeError, match="5000 bytes") as info:
        fetch(site.url("/big"), limits=FetchLimits(max_bytes=1000))
    assert info.value.code == "too_large"


def test_streamed_oversize_body_is_cut_off(site):
    with pytest.raises(TooLargeError, match="exceeds"):
        fetch(site.url("/big-stream"), limits=FetchLimits(max_bytes=1000))
    assert len(fetch(site.url("/big-stream")).body) == 5000


def test_gzip_and_deflate_bodies_are_decoded(site):
    assert b"frobnicator" in fetch(site.url("/gzip.html")).body
    assert fetch(site.url("/deflate.txt")).body == b"deflated text"


def test_a_compression_bomb_stops_at_the_cap(site):
    with pytest.raises(TooLargeError, match="once decoded"):
        fetch(site.url("/bomb"), limits=FetchLimits(max_bytes=100_000))


@pytest.fixture
def tls_site(tmp_path, monkeypatch):
    """An HTTPS server whose self-signed certificate names docs.test, trusted via
    SSL_CERT_FILE (which OpenSSL reads for the default context)."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl command not installed")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"]
        + ["-keyout", str(key), "-out", str(cert), "-subj", "/CN=docs.test"]
        + ["-addext", "subjectAltName=DNS:docs.test"],
        check=True,
        capture_output=True,
    )
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    served = Served()
    server, thread = serve(handler_for(served), tls=tls)
    try:
        yield server.server_address[1], served
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _docs_test(host, port, **kwargs):
    assert host in ("docs.test", "127.0.0.1")
    return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]


def test_https_connects_to_the_pinned_address_and_checks_the_name(tls_site):
    port, served = tls_site
    resp = fetch(f"https://docs.test:{port}/notes.txt", resolver=_docs_test)
    assert b"quokkas" in resp.body
    assert served.hosts == [f"docs.test:{port}"]


def test_https_certificate_for_another_name_is_a_tls_error(tls_site):
    port, served = tls_site
    with pytest.raises(TlsError, match="certificate check failed"):
        fetch(f"https://127.0.0.1:{port}/notes.txt", resolver=_docs_test)
    assert served.hosts == []


def test_tls_to_a_plain_http_server_is_a_tls_error(site):
    with pytest.raises(TlsError) as info:
        fetch(f"https://127.0.0.1:{site.port}/page.html")
    assert info.value.code == "tls"


def test_connection_refused_is_a_connect_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens once it closes
    with pytest.raises(ConnectError) as info:
        fetch(f"http://127.0.0.1:{port}/")
    assert info.value.code == "connect_failed"


def test_file_url_is_refused_before_any_lookup():
    def no_dns(*args, **kwargs):
        raise AssertionError("no lookup expected")

    with pytest.raises(SchemeNotAllowedError):
        fetch("file:///etc/passwd", resolver=no_dns)


def test_strict_mode_blocks_loopback(site, monkeypatch):
    monkeypatch.setenv("CTXMODE_FETCH_STRICT", "1")
    with pytest.raises(BlockedAddressError, match="private address 127.0.0.1"):
        fetch(site.url("/page.html"))
    monkeypatch.delenv("CTXMODE_FETCH_STRICT")
    monkeypatch.setenv("CTX_FETCH_STRICT", "1")
    with pytest.raises(BlockedAddressError):
        fetch(site.url("/page.html"))
    assert site.served.hits["/page.html"] == 0


@pytest.mark.parametrize(
    "url", ["http://2130706433:1/", "http://0x7f.0.0.1:1/", "http://017700000001:1/", "http://0:1/"]
)
def test_numeric_host_spellings_are_judged_by_the_address_they_resolve_to(url):
    with pytest.raises((BlockedAddressError, DnsError)):
        fetch(url, strict=True)


def _rebinding(ips):
    """A resolver whose answer changes on every call (a rebinding DNS server)."""
    calls = []

    def resolver(host, port, **kwargs):
        ip = ips[min(len(calls), len(ips) - 1)]
        calls.append(host)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (ip, port))]

    return resolver, calls


def test_connection_is_pinned_to_the_checked_address(site):
    resolver, calls = _rebinding(["127.0.0.1", "169.254.169.254"])
    resp = fetch(f"http://rebind.test:{site.port}/page.html", resolver=resolver)
    assert resp.status == 200
    assert calls == ["rebind.test"]  # resolved once, connected to that answer
    assert site.served.hosts == [f"rebind.test:{site.port}"]


def test_a_name_resolving_to_metadata_is_refused(site):
    resolver, _ = _rebinding(["169.254.169.254"])
    with pytest.raises(BlockedAddressError, match='"metadata.test" resolves to 169.254.169.254'):
        fetch("http://metadata.test/latest", resolver=resolver)


def test_http_proxy_carries_the_request(site, proxy, monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    resp = fetch(site.url("/notes.txt"))
    assert resp.via_proxy
    assert b"quokkas" in resp.body
    assert proxy.requests == [f"GET {site.url('/notes.txt')}"]
    assert site.served.hits["/notes.txt"] == 1


def test_lower_case_proxy_variable_works_too(site, proxy, monkeypatch):
    monkeypatch.setenv("http_proxy", proxy.url)
    assert fetch(site.url("/notes.txt")).via_proxy
    assert len(proxy.requests) == 1


def test_no_proxy_bypasses_the_proxy(site, proxy, monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    monkeypatch.setenv("NO_PROXY", "localhost,127.0.0.1")
    resp = fetch(site.url("/notes.txt"))
    assert not resp.via_proxy
    assert proxy.requests == []
    assert site.served.hits["/notes.txt"] == 1


def test_the_guard_still_applies_through_a_proxy(proxy, monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    with pytest.raises(BlockedAddressError):
        fetch("http://169.254.169.254/latest/meta-data/")
    assert proxy.requests == []


def test_https_through_a_proxy_uses_a_connect_tunnel(site, proxy, monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    with pytest.raises(ConnectError, match="403"):
        fetch(f"https://127.0.0.1:{site.port}/page.html")
    assert proxy.requests == [f"CONNECT 127.0.0.1:{site.port}"]


def test_names_only_the_proxy_can_resolve_go_through_it(site, proxy, monkeypatch):
    def fail(*args, **kwargs):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    resp = fetch("http://intranet.corp/notes.txt", resolver=fail)
    assert b"quokkas" in resp.body
    assert site.served.hosts == ["intranet.corp"]
    with pytest.raises(DnsError):
        fetch("http://intranet.corp/notes.txt", resolver=fail, strict=True)


def test_proxy_credentials_become_a_header_and_stay_out_of_messages(site, proxy, monkeypatch):
    creds_url = proxy.url.replace("http://", "http://ada:p%40ss@")
    monkeypatch.setenv("HTTP_PROXY", creds_url)
    monkeypatch.setenv("HTTPS_PROXY", creds_url)
    fetch(site.url("/notes.txt"))
    with pytest.raises(ConnectError) as info:
        fetch(f"https://127.0.0.1:{site.port}/")
    expected = "Basic " + base64.b64encode(b"ada:p@ss").decode()
    assert proxy.auth == [expected, expected]
    assert "p%40ss" not in str(info.value) and "ada" not in str(info.value)


def test_unsupported_proxy_scheme_is_a_connect_error(site, monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", "socks5://127.0.0.1:1080")
    with pytest.raises(ConnectError, match="only http:// proxies"):
        fetch(site.url("/notes.txt"))


def test_preflight_runs_the_guard_without_a_request(site):
    assert preflight(site.url("/page.html")).port == site.port
    with pytest.raises(BlockedAddressError):
        preflight("http://169.254.169.254/")
    assert sum(site.served.hits.values()) == 0
