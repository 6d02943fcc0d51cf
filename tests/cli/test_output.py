"""CLI output: plain text written without Rich is what Rich writes to a pipe, and piped
output is never wrapped."""

import io
import json

import pytest
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ctxmode.cli import output
from ctxmode.wording import plural

HOSTILE = [
    "plain words",
    "tab\tin the middle\tand\tmore",
    "\tleading tab",
    "1234567\t8 exact",
    "12345678\tnine",
    "wide 数据库\ttab after CJK",
    "emoji 🎉\tthen tab",
    "carriage\rreturn and bell\x07 and backspace\x08 form\x0cfeed vtab\x0b",
    "multi\nline\n\twith tab on the second",
    "ends with newline\n",
    "[bold]not markup[/bold] :smile: not an emoji",
    "x" * 300,
    "",
]


def _rich_pipe(text: str) -> str:
    """What the CLI's stdout console wrote to a pipe before output.say existed."""
    buffer = io.StringIO()
    console = Console(
        file=buffer, highlight=False, markup=False, emoji=False, soft_wrap=True, width=80
    )
    console.print(Text(text))
    return buffer.getvalue()


@pytest.mark.parametrize("text", HOSTILE)
def test_plain_text_is_what_rich_writes_to_a_pipe(text, capsys):
    output.say(text)
    assert capsys.readouterr().out == _rich_pipe(text)


def test_notes_and_messages_go_to_stderr_without_markup(capsys):
    output.note("re-indexed [1] file")
    output.warn("careful: [red]x[/red]")
    output.error("it broke", "boom", 1)
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "re-indexed [1] file\nWarning: careful: [red]x[/red]\nError: it broke\n"
    )


def test_a_long_message_is_one_line_when_piped(capsys):
    output.warn("word " * 60)
    assert capsys.readouterr().err.count("\n") == 1


def test_tables_are_not_wrapped_when_piped(capsys):
    table = Table(box=None)
    table.add_column("source", overflow="fold")
    table.add_column("bytes", justify="right")
    label = "docs/" + "very-long-directory-name/" * 8 + "file.md"
    table.add_row(label, "1,234")
    output.stdout.print(table)
    lines = capsys.readouterr().out.splitlines()
    assert any(label in line for line in lines)
    assert len(lines) == 2


def test_styled_follows_richs_terminal_rules(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    for var in ("TTY_COMPATIBLE", "FORCE_COLOR"):
        monkeypatch.delenv(var, raising=False)
    assert output.styled(Tty()) and not output.styled(io.StringIO())
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert output.styled(io.StringIO())
    monkeypatch.setenv("TTY_COMPATIBLE", "0")
    assert not output.styled(Tty())


@pytest.mark.parametrize(
    ("count", "noun", "expected"),
    [(0, "chunk", "0 chunks"), (1, "chunk", "1 chunk"), (2, "session", "2 sessions")],
)
def test_counts_are_pluralised(count, noun, expected):
    assert plural(count, noun) == expected
    assert plural(1_204, "file") == "1,204 files"
    assert plural(2, "match", "matches") == "2 matches"


def test_json_written_in_batches_is_what_one_dump_writes(capsys, monkeypatch) -> None:
    # a result many batches long, with text that is not ASCII, split anywhere
    monkeypatch.setattr(output, "JSON_WRITE_CHARS", 50)
    monkeypatch.setattr(output.mode, "command", ["index"])
    data = {"indexed": [{"label": f"docs/数据库-{n}.md", "chunks": n} for n in range(300)]}
    output.emit_json(data, exit_code=2, errors=[{"code": "x", "message": "ünïcode"}])
    doc = output.envelope(
        ["index"], data, exit_code=2, errors=[{"code": "x", "message": "ünïcode"}]
    )
    assert capsys.readouterr().out == json.dumps(doc, ensure_ascii=False, indent=2) + "\n"
