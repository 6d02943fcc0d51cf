"""A real HTTP server on 127.0.0.1 in a thread, with counted routes.

Routes are plain functions of the handler; each request is counted per path so tests can
prove that a cache hit or a refusal never reached the network.
"""

import gzip
import json
import ssl
import threading
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PROXY_VARS = (
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "REQUEST_METHOD",
)

PAGE = """<!doctype html>
<html><head><title>Widget Guide</title><meta charset="utf-8">
<style>body { color: red }</style><script>var tracking = 1;</script></head>
<body>
<nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<header><p>Site banner noise</p></header>
<main>
<h1>Widget Guide</h1>
<p>The <strong>frobnicator</strong> turns widgets. See <a href="/api">the API</a>.</p>
<h2>Install</h2>
<pre><code class="language-python">import widget
widget.frobnicate(level=3)
</code></pre>
<h2>Configure</h2>
<p>Set <code>WIDGET_HOME</code> before running.</p>
</main>
<footer>Copyright footer noise</footer>
</body></html>
"""


@dataclass
class Served:
    """What the test server saw."""

    hits: Counter[str] = field(default_factory=Counter)
    hosts: list[str] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)


Route = Callable[[BaseHTTPRequestHandler], None]


def reply(
    h: BaseHTTPRequestHandler,
    body: bytes | str,
    ctype: str = "text/plain; charset=utf-8",
    status: int = 200,
    headers: dict[str, str] | None = None,
    length: bool = True,
) -> None:
    data = body.encode("utf-8") if isinstance(body, str) else body
    h.send_response(status)
    h.send_header("Content-Type", ctype)
    for name, value in (headers or {}).items():
        h.send_header(name, value)
    if length:
        h.send_header("Content-Length", str(len(data)))
    h.end_headers()
    h.wfile.write(data)


def redirect(h: BaseHTTPRequestHandler, location: str, status: int = 302) -> None:
    reply(h, "", status=status, headers={"Location": location})


def _chain(h: BaseHTTPRequestHandler) -> None:
    left = int(h.path.rsplit("/", 1)[1])
    redirect(h, f"/chain/{left - 1}" if left > 0 else "/page.html", status=301)


def _slow(h: BaseHTTPRequestHandler, served: Served) -> None:
    h.send_response(200)
    h.send_header("Content-Type", "text/plain")
    h.send_header("Content-Length", "100")
    h.end_headers()
    h.wfile.write(b"partial")
    h.wfile.flush()
    served.release.wait(10)  # held until teardown; the client gives up long before


def _routes(served: Served) -> dict[str, Route]:
    bomb = gzip.compress(b"\0" * 2_000_000)
    return {
        "/page.html": lambda h: reply(h, PAGE, "text/html; charset=utf-8"),
        "/data.json": lambda h: reply(
            h,
            json.dumps({"users": [{"id": 1, "name": "ada"}, {"id": 2, "name": "bob"}]}),
            "application/json",
        ),
        "/notes.txt": lambda h: reply(h, "plain notes\nsecond line about quokkas\n"),
        "/long.md": lambda h: reply(
            h, "".join(f"## Part {i}\n\n" + "lorem ipsum " * 40 + "\n\n" for i in range(20))
        ),
        "/readme.md": lambda h: reply(h, "# Readme\n\nraw markdown served as text\n"),
        "/latin1.txt": lambda h: reply(
            h, "café crème".encode("latin-1"), "text/plain; charset=iso-8859-1"
        ),
        "/gzip.html": lambda h: reply(
            h, gzip.compress(PAGE.encode()), "text/html", headers={"Content-Encoding": "gzip"}
        ),
        "/deflate.txt": lambda h: reply(
            h, zlib.compress(b"deflated text"), headers={"Content-Encoding": "deflate"}
        ),
        "/bomb": lambda h: reply(h, bomb, headers={"Content-Encoding": "gzip"}),
        "/big": lambda h: reply(h, "x" * 5000),
        "/big-stream": lambda h: reply(h, "y" * 5000, length=False),
        "/empty.html": lambda h: reply(
            h, "<html><body><script>x()</script></body></html>", "text/html"
        ),
        "/image.png": lambda h: reply(h, b"\x89PNG\r\n\x1a\n\0\0\0", "image/png"),
        "/missing": lambda h: reply(h, "nope", status=404),
        "/broken": lambda h: reply(h, "boom", status=500),
        "/slow": lambda h: _slow(h, served),
        "/to-page": lambda h: redirect(h, "page.html"),
        "/to-metadata": lambda h: redirect(h, "http://169.254.169.254/latest/meta-data/"),
        "/to-zero": lambda h: redirect(h, "http://0.0.0.0/"),
        "/to-file": lambda h: redirect(h, "file:///etc/passwd"),
        "/loop": lambda h: redirect(h, "/loop"),
    }


def handler_for(served: Served) -> type[BaseHTTPRequestHandler]:
    routes = _routes(served)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            path = self.path.split("?", 1)[0]
            served.hits[path] += 1
            served.hosts.append(self.headers.get("Host", ""))
            if path.startswith("/chain/"):
                _chain(self)
            elif path in routes:
                routes[path](self)
            else:
                reply(self, "no such route", status=404)

        def log_message(self, *args: object) -> None:
            pass

    return Handler


def serve(
    handler: type[BaseHTTPRequestHandler], tls: ssl.SSLContext | None = None
) -> tuple[ThreadingHTTPServer, threading.Thread]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    return server, thread


@dataclass
class Site:
    base: str
    port: int
    served: Served

    def url(self, path: str) -> str:
        return self.base + path


@dataclass
class Proxy:
    url: str
    requests: list[str] = field(default_factory=list)  # request lines as received
    auth: list[str] = field(default_factory=list)  # Proxy-Authorization values received
