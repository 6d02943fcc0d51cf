"""`ctxmode.server.direct.LineBuffer`: lines split as read, however the reads fall, and a
line past the limit kept only by its ends."""

import pytest

from ctxmode.server.direct import LineBuffer, Oversized


def _lines(chunks: list[bytes], limit: int = 1 << 20) -> tuple[list[bytes | Oversized], bytes]:
    buffer = LineBuffer(limit)
    out: list[bytes | Oversized] = []
    for chunk in chunks:
        out.extend(buffer.feed(chunk))
    return out, buffer.rest()


@pytest.mark.parametrize(
    "chunks",
    [
        [b'{"a":1}\n{"b":2}\n{"c"', b":3}"],
        [b'{"a"', b":1}", b'\n{"b":2}\n', b'{"c":3}'],
        [b'{"a":1}\n', b'{"b":2}', b'\n{"c":3}'],
        [bytes([c]) for c in b'{"a":1}\n{"b":2}\n{"c":3}'],
    ],
)
def test_lines_come_out_whole_wherever_the_reads_split_them(chunks):
    lines, rest = _lines(chunks)
    assert lines == [b'{"a":1}', b'{"b":2}']
    assert rest == b'{"c":3}'


def test_empty_lines_stay_lines():
    assert _lines([b"\n\nx\n"]) == ([b"", b"", b"x"], b"")


def test_a_line_past_the_limit_keeps_its_size_and_ends_and_the_next_line_is_whole():
    head = b'{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"content":"'
    body = b"x" * 50_000
    lines, rest = _lines([head, body[:20_000], body[20_000:], b'"}}\n{"id":2}\n'], limit=10_000)
    big, small = lines
    assert isinstance(big, Oversized)
    assert big.size == len(head) + len(body) + 3
    assert big.head.startswith(head) and big.tail.endswith(b'"}}')
    assert small == b'{"id":2}' and rest == b""
    answer = big.answer()
    assert answer is not None and answer["id"] == 41
    assert answer["error"]["code"] == -32600


def test_an_oversized_line_is_answered_on_an_id_found_at_its_end_or_on_null():
    at_end = Oversized(10, b'{"method":"tools/call","params":{"a":"', b'"},"id":"req-9"}')
    assert at_end.answer()["id"] == "req-9"
    nowhere = Oversized(10, b'{"method":"tools/call","params":{"a":"', b'xx"}}')
    assert nowhere.answer()["id"] is None
    note = Oversized(10, b'{"method":"notifications/cancelled","params":{"x":"', b'"}}')
    assert note.answer() is None  # a notification gets no answer


def test_an_id_written_inside_a_string_is_not_taken_for_the_message_id():
    inside = Oversized(10, b'{"params":{"content":"say \\"id\\": 5 here', b'"},"id":12}')
    assert inside.answer()["id"] == 12


def test_the_input_s_last_line_without_a_newline_comes_out_at_the_end():
    buffer = LineBuffer(1 << 20)
    assert buffer.feed(b'{"a":1}\n{"b"') == [b'{"a":1}']
    assert buffer.finish() == [b'{"b"']
    assert buffer.finish() == []


def test_input_ending_with_a_newline_has_no_last_line_to_add():
    buffer = LineBuffer(1 << 20)
    assert buffer.feed(b'{"a":1}\n') == [b'{"a":1}']
    assert buffer.finish() == []
