"""TOML config files (Codex ``config.toml``), edited as text so the user's comments,
order and formatting survive: ctxmode appends, rewrites or removes only its own tables
and lines. Every edit is checked by parsing the result (``tomllib``, Python 3.11+) and
comparing it with the intended data; a mismatch aborts before anything is written.
"""

import copy
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxmode.setup.errors import SettingsFileError
from ctxmode.setup.jsonfile import MISSING

Key = tuple[str, ...]
_BARE = re.compile(r"[A-Za-z0-9_-]+")


def loads(path: Path, text: str) -> dict[str, Any] | None:
    """The parsed document, or None when no TOML parser is available (Python 3.10).

    Raises:
        SettingsFileError: the text is not valid TOML.
    """
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python 3.10 only
        try:
            import tomli as tomllib
        except ImportError:
            return None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SettingsFileError(
            f"{path} is not valid TOML ({exc}). Nothing was changed; fix the file or add "
            "ctxmode's entries by hand."
        ) from exc


def _parse_key(text: str) -> tuple[Key, str] | None:
    """A dotted key at the start of `text`, and the rest of the text after it."""
    keys: list[str] = []
    rest = text.lstrip()
    while True:
        if rest.startswith('"'):
            end = 1
            while end < len(rest) and rest[end] != '"':
                end += 2 if rest[end] == "\\" else 1
            if end >= len(rest):
                return None
            keys.append(json.loads(rest[: end + 1]))
            rest = rest[end + 1 :]
        elif rest.startswith("'"):
            end = rest.find("'", 1)
            if end < 0:
                return None
            keys.append(rest[1:end])
            rest = rest[end + 1 :]
        else:
            match = _BARE.match(rest)
            if not match:
                return None
            keys.append(match.group(0))
            rest = rest[match.end() :]
        rest = rest.lstrip()
        if not rest.startswith("."):
            return tuple(keys), rest
        rest = rest[1:].lstrip()


@dataclass(frozen=True)
class Table:
    """A ``[table]`` header and the lines of its body."""

    key: Key
    array: bool
    start: int  # header line
    end: int  # one past the last content line (trailing blanks and comments excluded)


@dataclass(frozen=True)
class Statement:
    """A ``key = value`` statement (possibly over several lines)."""

    key: Key
    start: int
    end: int  # one past its last line


def _scan_value(line: str, pos: int, ml: str | None, depth: int) -> tuple[str | None, int]:
    """Lexer state after `line[pos:]`: open multi-line string delimiter, bracket depth."""
    i, n = pos, len(line)
    while i < n:
        if ml is not None:
            if ml == '"""' and line[i] == "\\":
                i += 2
                continue
            if line.startswith(ml, i):
                i += 3
                while i < n and line[i] == ml[0]:
                    i += 1
                ml = None
                continue
            i += 1
            continue
        ch = line[i]
        if ch == "#":
            break
        if line.startswith('"""', i) or line.startswith("'''", i):
            ml = line[i : i + 3]
            i += 3
        elif ch in "\"'":
            i = _string_end(line, i)
        else:
            if ch in "[{":
                depth += 1
            elif ch in "]}":
                depth = max(0, depth - 1)
            i += 1
    return ml, depth


def comment_at(line: str) -> int:
    """Where the line's trailing ``# comment`` starts (``len(line)`` when it has none)."""
    i, n = 0, len(line)
    while i < n:
        ch = line[i]
        if ch == "#":
            return i
        if line.startswith('"""', i) or line.startswith("'''", i):
            return n
        i = _string_end(line, i) if ch in "\"'" else i + 1
    return n


def _string_end(line: str, i: int) -> int:
    """One past the one-line basic (``"…"``) or literal (``'…'``) string at `line[i]`."""
    n = len(line)
    if line[i] == '"':
        i += 1
        while i < n and line[i] != '"':
            i += 2 if line[i] == "\\" else 1
        return i + 1
    end = line.find("'", i + 1)
    return n if end < 0 else end + 1


def _content(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


class TomlText:
    """A TOML document as lines, with its tables and statements located."""

    def __init__(self, text: str) -> None:
        self.newline = "\r\n" if "\r\n" in text else "\n"
        self.lines = text.splitlines()
        self.final_newline = text.endswith(("\n", "\r")) or not text
        self._index()

    def _index(self) -> None:
        self.tables: list[Table] = []
        self.statements: list[tuple[int, Statement]] = []  # (table index or -1, statement)
        ml: str | None = None
        depth = 0
        headers: list[tuple[int, Key, bool]] = []
        current: tuple[int, Key] | None = None  # statement being read: (start, key)
        for number, line in enumerate(self.lines):
            stripped = line.lstrip()
            if ml is None and depth == 0 and current is None:
                if stripped.startswith("["):
                    array = stripped.startswith("[[")
                    parsed = _parse_key(stripped[2 if array else 1 :])
                    if parsed is not None:
                        headers.append((number, parsed[0], array))
                    continue
                if not _content(line):
                    continue
                parsed = _parse_key(stripped)
                if parsed is None or not parsed[1].startswith("="):
                    continue
                current = (number, parsed[0])
                pos = len(line) - len(parsed[1]) + 1
                ml, depth = _scan_value(line, pos, ml, depth)
            else:
                ml, depth = _scan_value(line, 0, ml, depth)
            if current is not None and ml is None and depth == 0:
                owner = len(headers) - 1
                self.statements.append((owner, Statement(current[1], current[0], number + 1)))
                current = None
        for i, (start, key, array) in enumerate(headers):
            stop = headers[i + 1][0] if i + 1 < len(headers) else len(self.lines)
            end = start + 1
            for number in range(start + 1, stop):
                if _content(self.lines[number]):
                    end = number + 1
            self.tables.append(Table(key, array, start, end))

    def text(self) -> str:
        body = self.newline.join(self.lines)
        if self.lines and self.final_newline:
            body += self.newline
        return body

    def table(self, key: Key) -> Table | None:
        return next((t for t in self.tables if t.key == key and not t.array), None)

    def statement(self, table: Table, key: Key) -> Statement | None:
        index = self.tables.index(table)
        return next((s for owner, s in self.statements if owner == index and s.key == key), None)

    def replace(self, start: int, end: int, new: list[str]) -> None:
        self.lines[start:end] = new
        self._index()

    def simple_value(self, statement: Statement) -> Any:
        """A statement's value when it is JSON-compatible (strings, numbers, booleans, flat
        arrays, which may span lines); `MISSING` otherwise. The fallback reader when Python
        has no TOML parser."""
        lines = self.lines[statement.start : statement.end]
        text = " ".join(line[: comment_at(line)] for line in lines).split("=", 1)[1].strip()
        text = re.sub(r",\s*\]$", "]", text)
        if len(text) >= 2 and text[0] == text[-1] == "'":
            return text[1:-1]
        try:
            return json.loads(text)
        except ValueError:
            return MISSING

    def lookup(self, key: Key) -> Any:
        """`key` read from the text alone: a table as a dict of its simple values, or one
        simple value of a table."""
        table = self.table(key)
        if table is not None:
            index = self.tables.index(table)
            return {
                ".".join(s.key): self.simple_value(s)
                for owner, s in self.statements
                if owner == index
            }
        parent = self.table(key[:-1]) if len(key) > 1 else None
        statement = None if parent is None else self.statement(parent, key[-1:])
        return MISSING if statement is None else self.simple_value(statement)

    def restate(self, statement: Statement, text: str) -> None:
        """Replace a statement by ``text``, keeping a one-line statement's indentation and
        trailing comment."""
        if statement.end - statement.start == 1:
            line = self.lines[statement.start]
            cut = comment_at(line)
            indent = line[: len(line) - len(line.lstrip())]
            text = indent + text + line[len(line[:cut].rstrip()) :]
        self.replace(statement.start, statement.end, text.split("\n"))

    def remove_block(self, start: int, end: int) -> None:
        """Delete lines [start, end) and the blank line that separated them, if any."""
        if (
            start > 0
            and not self.lines[start - 1].strip()
            and (end >= len(self.lines) or not self.lines[end].strip())
        ):
            start -= 1
        self.replace(start, end, [])

    def append_block(self, new: list[str]) -> None:
        if self.lines and self.lines[-1].strip():
            new = ["", *new]
        self.replace(len(self.lines), len(self.lines), new)  # a missing final newline stays so


def value(data: Any) -> str:
    """A TOML literal for a string, number, bool, list or table (inline)."""
    if isinstance(data, bool):
        return "true" if data else "false"
    if isinstance(data, (int, float)):
        return repr(data)
    if isinstance(data, str):
        return json.dumps(data, ensure_ascii=False)
    if isinstance(data, list):
        return "[" + ", ".join(value(v) for v in data) + "]"
    if isinstance(data, dict):
        return "{ " + ", ".join(f"{key_text((k,))} = {value(v)}" for k, v in data.items()) + " }"
    return json.dumps(str(data))


def statement(key: Key, data: Any) -> str:
    """``key = value``; a long list of strings gets one item per line."""
    if isinstance(data, list) and len(data) > 3 and all(isinstance(v, str) for v in data):
        items = "".join(f"\n  {value(v)}," for v in data)
        return f"{key_text(key)} = [{items}\n]"
    return f"{key_text(key)} = {value(data)}"


def key_text(key: Key) -> str:
    return ".".join(k if _BARE.fullmatch(k) else json.dumps(k) for k in key)


def prune(data: Any) -> Any:
    """Drop empty tables, recursively (implicit tables vanish when emptied)."""
    if isinstance(data, dict):
        pruned = {k: prune(v) for k, v in data.items()}
        return {k: v for k, v in pruned.items() if v != {}}
    return data


def check(path: Path, text: str, expected: dict[str, Any] | None) -> None:
    """Abort unless `text` parses to `expected` (skipped without a TOML parser).

    Raises:
        SettingsFileError: the edit would not produce exactly the intended data.
    """
    if expected is None:
        return
    actual = loads(path, text)
    if actual is not None and prune(actual) != prune(expected):
        raise SettingsFileError(
            f"{path}: ctxmode could not edit this file safely (its layout is unusual). "
            "Nothing was changed; add ctxmode's entries by hand."
        )


def expect_set(data: dict[str, Any] | None, key: Key, new: Any) -> dict[str, Any] | None:
    if data is None:
        return None
    result = copy.deepcopy(data)
    node = result
    for part in key[:-1]:
        node = node.setdefault(part, {})
    node[key[-1]] = copy.deepcopy(new)
    return result


def expect_del(data: dict[str, Any] | None, key: Key) -> dict[str, Any] | None:
    if data is None:
        return None
    result = copy.deepcopy(data)
    node = result
    for part in key[:-1]:
        node = node[part]
    del node[key[-1]]
    return result
