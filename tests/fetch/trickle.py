"""A real server on 127.0.0.1 that answers every connection a byte at a time.

A socket timeout never fires against it (each byte arrives well within one), so only a
deadline over the whole fetch ends a fetch from it. Used by the fetch tests and by the
server tests that fetch through a real `ctxmode serve`.
"""

import socket
import socketserver
import threading
from types import TracebackType

# A status line and headers made long enough that trickling them takes minutes.
SLOW_HEAD = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Pad: "
    + b"p" * 400
    + b"\r\nContent-Length: 5\r\n\r\nhello"
)


class Trickle:
    """Sends `fast` at once, then `slow` one byte every `every` seconds, to each
    connection; `accepted` is set once a request has come in."""

    def __init__(self, slow: bytes, *, fast: bytes = b"", every: float = 0.25) -> None:
        self.accepted = threading.Event()
        self._stop = threading.Event()
        owner = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                sock: socket.socket = self.request
                sock.recv(65536)  # the request: its content does not matter
                owner.accepted.set()
                try:
                    sock.sendall(fast)
                    for byte in slow:
                        if owner._stop.wait(every):
                            return
                        sock.sendall(bytes([byte]))
                except OSError:  # the client gave up: what the tests want
                    return

        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,))
        self._thread.daemon = True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/slow"

    def __enter__(self) -> "Trickle":
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
