"""The total time limit of a fetch is a wall-clock deadline over all of it (name lookup,
connect, headers, body), and a cancel flag stops a fetch wherever it waits.

Against real servers on 127.0.0.1 that trickle their answer (`trickle.Trickle`); the
bounds are generous (a busy machine), far below what trickling the whole answer takes.
"""

import socket
import threading
import time

import pytest

from ctxmode.fetch import FetchCancelledError, FetchTimeoutError, fetch, fetch_and_index
from ctxmode.fetch.http import FetchLimits

from .trickle import SLOW_HEAD, Trickle

DEADLINE_S = 1.5
MARGIN_S = 15.0  # a hang, not a slow machine; trickling SLOW_HEAD takes ~2 minutes


def test_a_status_line_sent_a_byte_at_a_time_meets_the_total_limit_of_the_setting(
    monkeypatch,
):
    monkeypatch.setenv("CTXMODE_FETCH_TIMEOUT_MS", str(int(DEADLINE_S * 1000)))
    with Trickle(SLOW_HEAD) as server:
        began = time.monotonic()
        with pytest.raises(FetchTimeoutError, match="total time limit of 1.5 s") as info:
            fetch(server.url)
        took = time.monotonic() - began
    assert info.value.code == "timeout"
    assert took < DEADLINE_S + MARGIN_S


def test_a_body_sent_a_byte_at_a_time_meets_the_total_limit():
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 500\r\n\r\n"
    with Trickle(b"b" * 500, fast=head) as server:
        began = time.monotonic()
        with pytest.raises(FetchTimeoutError, match="total time limit"):
            fetch(server.url, limits=FetchLimits(total_timeout=DEADLINE_S))
        assert time.monotonic() - began < DEADLINE_S + MARGIN_S


def test_a_name_lookup_that_hangs_meets_the_total_limit():
    release = threading.Event()

    def hanging_lookup(*args, **kwargs):
        release.wait(120)
        return socket.getaddrinfo(*args, **kwargs)

    began = time.monotonic()
    try:
        with pytest.raises(FetchTimeoutError, match="total time limit"):
            fetch(
                "http://docs.example.test/",
                limits=FetchLimits(total_timeout=DEADLINE_S),
                resolver=hanging_lookup,
            )
        assert time.monotonic() - began < DEADLINE_S + MARGIN_S
    finally:
        release.set()


def test_setting_the_cancel_flag_stops_a_fetch_in_flight():
    cancel = threading.Event()
    outcome: list[BaseException] = []

    def run() -> None:
        try:
            fetch(trickle.url, limits=FetchLimits(total_timeout=300), cancel=cancel)
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            outcome.append(exc)

    with Trickle(SLOW_HEAD) as trickle:
        worker = threading.Thread(target=run, daemon=True)
        worker.start()
        assert trickle.accepted.wait(MARGIN_S), "the fetch never reached the server"
        cancel.set()
        worker.join(MARGIN_S)
        assert not worker.is_alive(), "the fetch went on after it was cancelled"
    assert len(outcome) == 1 and isinstance(outcome[0], FetchCancelledError)
    assert outcome[0].code == "cancelled"


def test_a_cancelled_batch_fails_every_url_without_fetching(site, store):
    cancel = threading.Event()
    cancel.set()
    report = fetch_and_index(
        store, [site.url("/page.html"), site.url("/notes.txt")], concurrency=2, cancel=cancel
    )
    assert [r.error_code for r in report.results] == ["cancelled", "cancelled"]
    assert report.all_failed
    assert sum(site.served.hits.values()) == 0


def test_a_fast_answer_is_unaffected_by_the_clock(site):
    response = fetch(site.url("/notes.txt"), limits=FetchLimits(total_timeout=DEADLINE_S))
    assert response.body == b"plain notes\nsecond line about quokkas\n"
