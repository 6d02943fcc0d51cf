"""Terminal controls never reach the agent: a run's output comes back as text."""

import pytest

from ctxmode.executor.capture import read_whole
from ctxmode.executor.controls import decode, has_controls, plain


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        ("\x1b[31mred\x1b[0m plain", "red plain"),  # CSI colours
        ("\x1b[2K\x1b[1Gcleared", "cleared"),  # erase line, cursor to column 1
        ("\x1b]0;a title\x07after", "after"),  # OSC ended by BEL
        ("\x1b]52;c;ZXZpbA==\x1b\\ok", "ok"),  # OSC 52 clipboard write, ended by ST
        ("\x1b]8;;http://x.test\x1b\\link\x1b]8;;\x1b\\", "link"),  # hyperlink
        ("\x1bPq#0;2;0;0;0\x1b\\sixel", "sixel"),  # DCS
        ("\x1b(Bx\x1b7y\x1b8", "xy"),  # charset choice, save and restore cursor
        ("\x9b31mc1 csi", "c1 csi"),  # the 8-bit CSI
        ("\x1b]unterminated\nnext line", "\nnext line"),  # cut at the line's end
        ("a\r\nb\r\n", "a\nb\n"),  # CRLF
        ("a\r\r\nb", "a\nb"),
        ("10%\r20%\r100%\ndone", "100%\ndone"),  # a progress bar's last state
        ("a\nb\rc\nd\re\rf\n", "a\nc\nf\n"),
        ("almost\r", "almost"),
        ("N\bNA\bAM\bME\bE", "NAME"),  # man's bold
        ("_\bu_\bn", "un"),  # man's underline
        ("x\x00y\x00", "x␀y␀"),  # NUL-separated lists keep their separators
        ("bell\x07", "bell␇"),
        ("lone\x1b\nend", "lone␛\nend"),
        ("del\x7f", "del␡"),
        ("é\x00", "é␀"),
        ("tab\there\n", "tab\there\n"),
        ("50 °C, £3", "50 °C, £3"),
    ],
)
def test_plain_turns_terminal_controls_into_text(raw, text):
    assert plain(raw) == text
    assert decode(raw.encode()) == text


def test_output_without_controls_is_returned_as_it_is():
    text = "line one\n\tindented\nünïcödé\n" * 100
    assert not has_controls(text.encode())
    assert plain(text) is text


@pytest.mark.parametrize(
    "raw",
    [
        "x" * 1_000_000 + "\r",
        "\r" * 1_000_000 + "x",
        "\x1b[" + "1" * 1_000_000,
        "\x1b]" * 300_000,
        "\x08" * 1_000_000,
        "é\x00" * 300_000,
    ],
)
def test_a_megabyte_of_hostile_controls_is_handled_in_one_pass(raw):
    """No pattern backtracks over a line per position (that was quadratic): each of these
    finishes at once, and leaves no control behind."""
    text = plain(raw)
    assert not has_controls(text.replace("é", "e").encode())


def test_a_run_returns_and_indexes_its_output_without_terminal_controls(run):
    result = run(
        "shell",
        r"printf '\033[31mred\033[0m\r\n10%%\r100%%\n\000x\a\n';"
        r" printf '\033]0;title\007err\n' >&2",
    )
    assert result.stdout == "red\n100%\n␀x␇\n"
    assert result.stderr == "err\n"


def test_the_whole_output_read_back_for_indexing_has_no_controls(tmp_path):
    path = tmp_path / "stdout"
    path.write_bytes(b"\x1b[1mone\x1b[0m\r\n\x1b[1mtwo\x1b[0m\r\nend\x00")
    assert read_whole(path, 1 << 20) == ("one\ntwo\nend␀", 0)
