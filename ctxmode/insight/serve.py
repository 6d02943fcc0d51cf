"""Serving the dashboard on 127.0.0.1 so it stays live: every request renders it afresh.

Local-only by construction: the socket is bound to 127.0.0.1 (never all interfaces), no
CORS header is ever sent, only GET is answered (anything else is 405), and a request whose
Host is not this server's loopback address is refused, so a web page that rebinds its
domain to 127.0.0.1 cannot read file paths from ``/data.json``.
"""

import errno
import json
import logging
import socketserver
import sys
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from ctxmode.errors import EnvironmentProblem, UsageError
from ctxmode.insight.page import CSP, render

HOST = "127.0.0.1"
DEFAULT_PORT = 4747
log = logging.getLogger("ctxmode.insight")

Gather = Callable[[], dict[str, Any]]


class InsightServer(ThreadingHTTPServer):
    """A threading HTTP server on 127.0.0.1 that renders `gather()`'s data per request."""

    # Restart right after Ctrl+C (TIME_WAIT). Not on Windows: there SO_REUSEADDR lets a
    # second process bind a port that is already in use.
    allow_reuse_address = sys.platform != "win32"
    allow_reuse_port = False  # never share the port with another process
    daemon_threads = True

    def __init__(self, port: int, gather: Gather) -> None:
        self.gather = gather
        super().__init__((HOST, port), _Handler)

    def server_bind(self) -> None:
        # HTTPServer's version resolves the host's FQDN, a DNS lookup that can stall.
        socketserver.TCPServer.server_bind(self)
        self.server_name = HOST
        self.server_port = int(self.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.server_port}/"


class _Handler(BaseHTTPRequestHandler):
    server: InsightServer
    server_version = "ctxmode-insight"
    sys_version = ""

    def do_GET(self) -> None:
        if not self._host_allowed():
            self._send(403, "text/plain; charset=utf-8", b"forbidden host\n")
            return
        path = urlsplit(self.path).path
        if path not in ("/", "/data.json"):
            self._send(404, "text/plain; charset=utf-8", b"not found\n")
            return
        try:
            data = self.server.gather()
            if path == "/":
                body, kind = render(data).encode("utf-8"), "text/html; charset=utf-8"
            else:
                body = json.dumps(data, ensure_ascii=False, indent=2).encode("utf-8")
                kind = "application/json"
        except Exception as exc:  # a bad request must not stop the server
            log.exception("insight: rendering failed")
            self._send(500, "text/plain; charset=utf-8", f"cannot build the page: {exc}\n".encode())
            return
        self._send(200, kind, body)

    def __getattr__(self, name: str) -> Callable[[], None]:
        """Every method other than GET (POST, HEAD, OPTIONS, made-up ones): 405."""
        if name.startswith("do_"):
            return self._not_allowed
        raise AttributeError(name)

    def _not_allowed(self) -> None:
        self._send(405, "text/plain; charset=utf-8", b"method not allowed\n", allow="GET")

    def _host_allowed(self) -> bool:
        host = (self.headers.get("Host") or "").strip().lower()
        if not host:
            return True  # HTTP/1.0 clients send none
        port = self.server.server_port
        return host in (HOST, "localhost", f"{HOST}:{port}", f"localhost:{port}")

    def _send(self, status: int, kind: str, body: bytes, *, allow: str | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("Referrer-Policy", "no-referrer")
        if allow:
            self.send_header("Allow", allow)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("insight: " + format, *args)


def bind(port: int, gather: Gather) -> InsightServer:
    """A server listening on 127.0.0.1:`port` (0: any free port); not yet serving.

    Raises:
        UsageError: `port` is not a TCP port number.
        EnvironmentProblem: the port is in use or may not be used.
    """
    if not 0 <= port <= 65535:
        raise UsageError(f"port must be 0..65535, not {port}")
    try:
        return InsightServer(port, gather)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise EnvironmentProblem(
                f"port {port} on {HOST} is already in use; choose another port (--port N), "
                "or --port 0 for any free one"
            ) from exc
        if exc.errno in (errno.EACCES, errno.EPERM):
            raise EnvironmentProblem(
                f"not allowed to listen on port {port}; use a port above 1023, or --port 0"
            ) from exc
        raise EnvironmentProblem(f"cannot listen on {HOST}:{port}: {exc.strerror or exc}") from exc
