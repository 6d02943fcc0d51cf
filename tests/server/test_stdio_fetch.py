"""ctx_fetch_and_index through a real `ctxmode serve`, against a real server on 127.0.0.1
that trickles its answer: the total time limit (``CTXMODE_FETCH_TIMEOUT_MS``) holds, and
closing stdin ends the fetch and the server. Bounds are generous: they catch a hang, not a
slow machine; trickling the whole answer would take minutes."""

import time

from fetch.trickle import SLOW_HEAD, Trickle

from .support import CALL_S, EXIT_WITHIN_S, RawServer, start_process
from .support import SERVE as SERVE_ARGV


def _serve(tmp_path, project, data_root, started, deadline_ms: int) -> RawServer:
    proc = start_process(
        tmp_path,
        [*SERVE_ARGV, str(project)],
        data_root,
        CTXMODE_FETCH_TIMEOUT_MS=str(deadline_ms),
    )
    server = RawServer(proc)
    started.append(server)
    server.initialize()
    return server


def test_a_trickling_server_meets_the_fetch_deadline(tmp_path, project, data_root, started):
    server = _serve(tmp_path, project, data_root, started, deadline_ms=1500)
    with Trickle(SLOW_HEAD) as trickle:
        began = time.monotonic()
        result = server.call_tool(1, "ctx_fetch_and_index", {"url": trickle.url})
        took = time.monotonic() - began
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert text.startswith(f"Failed to fetch {trickle.url}: ")
    assert "total time limit of 1.5 s" in text
    assert took < 1.5 + 20.0  # trickling the head takes ~110 s


def test_closing_stdin_cancels_a_fetch_in_flight_and_the_server_exits(
    tmp_path, project, data_root, started
):
    server = _serve(tmp_path, project, data_root, started, deadline_ms=600_000)
    with Trickle(SLOW_HEAD) as trickle:
        server.request(
            1, "tools/call", {"name": "ctx_fetch_and_index", "arguments": {"url": trickle.url}}
        )
        assert trickle.accepted.wait(CALL_S), "the fetch never reached the server"
        server.close_stdin()
        answer = server.response(1, within=EXIT_WITHIN_S)
        assert server.proc.wait(EXIT_WITHIN_S) == 0
    assert answer["result"]["isError"] is True
    text = answer["result"]["content"][0]["text"]
    assert text.endswith(
        ": stopped before it finished: the client closed the server's input"
        " (or the server is stopping)"
    )
