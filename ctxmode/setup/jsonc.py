"""JSON with comments (JSONC), read and edited in place.

Hosts' settings files are often JSONC: VS Code's ``mcp.json``, OpenCode's config and Gemini's
settings accept ``//`` and ``/* */`` comments and trailing commas. `loads` reads them; `patch`
changes the text so that it holds new data by splicing in or out only the members and items
that differ, found by their byte spans. Every other byte (comments, key order, number and
string spelling, blank lines, line endings, the final newline) stays as it was. Inserted text
follows the file's own indentation, key-value spacing and trailing-comma habit, and removing
an inserted entry takes out exactly what was put in, so setup followed by uninstall gives the
original file back.

Standard library only: the PyPI parsers either drop comments when writing (json5, pyjson5,
commentjson, jsonc-parser) or keep them only in a document model whose new nodes carry no
layout (json-five), which would leave the indentation of inserted entries to us anyway.
"""

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_LITERALS = {"true": True, "false": False, "null": None}
_WS = " \t\r\n"
_DECODER = json.JSONDecoder()
_INLINE_GAP = re.compile(r"[ \t]*,[ \t]*")
_KV_GAP = re.compile(r"[ \t]*:[ \t]*")

KeyPath = tuple[str | int, ...]


class JsoncError(ValueError):
    """The text is not JSON with comments; ``line`` and ``column`` are 1-based."""

    def __init__(self, message: str, text: str, pos: int) -> None:
        self.message = message
        self.line = text.count("\n", 0, pos) + 1
        self.column = pos - (text.rfind("\n", 0, pos) + 1) + 1
        super().__init__(f"{message} (line {self.line}, column {self.column})")


@dataclass
class Node:
    """A value and its span ``[start, end)``; containers list their entries."""

    start: int
    end: int
    value: Any
    entries: "list[Entry] | None" = None  # None for scalars


@dataclass
class Entry:
    """An object member (``key`` set) or an array item, and the comma after it."""

    start: int  # the key's opening quote, or the item's first character
    node: Node
    key: str | None = None
    key_end: int = 0
    comma: int | None = None


@dataclass
class _Parser:
    text: str
    pos: int = 0
    depth: int = 0
    first_member: Entry | None = field(default=None)

    def fail(self, message: str, pos: int | None = None) -> JsoncError:
        return JsoncError(message, self.text, self.pos if pos is None else pos)

    def skip(self) -> None:
        """Move past whitespace and comments."""
        text, n = self.text, len(self.text)
        while self.pos < n:
            ch = text[self.pos]
            if ch in _WS:
                self.pos += 1
            elif text.startswith("//", self.pos):
                end = text.find("\n", self.pos)
                self.pos = n if end < 0 else end
            elif text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                if end < 0:
                    raise self.fail("unterminated /* comment")
                self.pos = end + 2
            else:
                return

    def value(self) -> Node:
        self.skip()
        if self.pos >= len(self.text):
            raise self.fail("expected a value")
        ch = self.text[self.pos]
        if ch in "{[":
            self.depth += 1
            if self.depth > 500:
                raise self.fail("nested too deeply")
            node = self.container(ch)
            self.depth -= 1
            return node
        start = self.pos
        if ch == '"':
            text = self.string()
            return Node(start, self.pos, text)
        match = _NUMBER.match(self.text, start)
        if match:
            self.pos = match.end()
            return Node(start, self.pos, json.loads(match.group(0)))
        for word, literal in _LITERALS.items():
            if self.text.startswith(word, start):
                self.pos = start + len(word)
                return Node(start, self.pos, literal)
        raise self.fail(f"unexpected character {ch!r}")

    def string(self) -> str:
        try:
            value, self.pos = _DECODER.raw_decode(self.text, self.pos)
        except json.JSONDecodeError as exc:
            raise self.fail(exc.msg, exc.pos) from exc
        return str(value)

    def container(self, opener: str) -> Node:
        start = self.pos
        closer = "}" if opener == "{" else "]"
        self.pos += 1
        entries: list[Entry] = []
        data: Any = {} if opener == "{" else []
        while True:
            self.skip()
            if self.text.startswith(closer, self.pos):
                self.pos += 1
                return Node(start, self.pos, data, entries)
            if entries and entries[-1].comma is None:
                raise self.fail(f"expected ',' or {closer!r}")
            entry_start = self.pos
            if opener == "{":
                if not self.text.startswith('"', self.pos):
                    raise self.fail("expected a double-quoted key")
                key = self.string()
                key_end = self.pos
                self.skip()
                if not self.text.startswith(":", self.pos):
                    raise self.fail("expected ':'")
                self.pos += 1
                node = self.value()
                entry = Entry(entry_start, node, key, key_end)
                data[key] = node.value
                if self.first_member is None:
                    self.first_member = entry
            else:
                node = self.value()
                entry = Entry(entry_start, node)
                data.append(node.value)
            entries.append(entry)
            self.skip()
            if self.text.startswith(",", self.pos):
                entry.comma = self.pos
                self.pos += 1


@dataclass
class _Document:
    text: str
    root: Node
    first_member: Entry | None


def _parse(text: str) -> _Document:
    parser = _Parser(text)
    root = parser.value()
    parser.skip()
    if parser.pos != len(text):
        raise parser.fail("extra data after the value")
    return _Document(text, root, parser.first_member)


def loads(text: str) -> Any:
    """The data in a JSONC text (comments and trailing commas allowed).

    Raises:
        JsoncError: not JSON with comments.
    """
    return _parse(text).root.value


def canonical(value: Any) -> str:
    """A text equal for equal JSON values only (``1`` and ``true`` differ)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


# --- layout ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Style:
    newline: str
    unit: str  # one level of indentation
    kv: str  # between a key and its value, e.g. ": "
    sep: str  # between inline items, e.g. ", "
    pretty: bool  # new containers span lines


def _line_start(text: str, pos: int) -> int:
    return text.rfind("\n", 0, pos) + 1


def _indent(text: str, pos: int) -> str:
    start = _line_start(text, pos)
    line = text[start:pos]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _alone_before(text: str, pos: int) -> bool:
    return not text[_line_start(text, pos) : pos].strip(" \t")


def _line_end_after(text: str, pos: int) -> int | None:
    """The start of the next line when only blanks and a comment follow `pos` on its line."""
    n = len(text)
    while pos < n and text[pos] in " \t":
        pos += 1
    if text.startswith("/*", pos):
        end = text.find("*/", pos + 2)
        if end < 0 or "\n" in text[pos:end]:
            return None
        pos = end + 2
        while pos < n and text[pos] in " \t":
            pos += 1
    if text.startswith("//", pos):
        end = text.find("\n", pos)
        return n if end < 0 else end + 1
    if text.startswith("\r\n", pos):
        return pos + 2
    if text.startswith("\n", pos):
        return pos + 1
    return n if pos == n else None


def _walk(node: Node) -> Iterator[Node]:
    yield node
    for entry in node.entries or ():
        yield from _walk(entry.node)


def _style(doc: _Document) -> _Style:
    text = doc.text
    unit = ""
    for node in _walk(doc.root):
        if not node.entries:
            continue
        first = node.entries[0]
        outer, inner = _indent(text, node.start), _indent(text, first.start)
        if _alone_before(text, first.start) and inner.startswith(outer) and inner != outer:
            unit = inner[len(outer) :]
            break
    kv = ": "
    member = doc.first_member
    if member is not None and _KV_GAP.fullmatch(text[member.key_end : member.node.start]):
        kv = text[member.key_end : member.node.start]
    sep = ", " if kv.endswith(" ") else ","
    for node in _walk(doc.root):
        gap = _inline_gap(text, node)
        if gap is not None:
            sep = gap
            break
    pretty = "\n" in text[doc.root.start : doc.root.end] or not doc.root.entries
    return _Style("\r\n" if "\r\n" in text else "\n", unit or "  ", kv, sep, pretty)


def _inline_gap(text: str, node: Node) -> str | None:
    """The separator between two items written on one line in `node`, if it has such."""
    entries = node.entries or []
    for a, b in zip(entries, entries[1:], strict=False):
        if a.comma is not None and _INLINE_GAP.fullmatch(text[a.node.end : b.start]):
            return text[a.comma : b.start]
    return None


def _render(value: Any, style: _Style, indent: str, multiline: bool) -> str:
    if not multiline:
        return json.dumps(value, ensure_ascii=False, separators=(style.sep, style.kv))
    body = json.dumps(value, ensure_ascii=False, indent=style.unit, separators=(",", style.kv))
    return body.replace("\n", style.newline + indent)


def _entry_text(key: str | None, value: Any, style: _Style, indent: str, multiline: bool) -> str:
    rendered = _render(value, style, indent, multiline)
    if key is None:
        return rendered
    return json.dumps(key, ensure_ascii=False) + style.kv + rendered


# --- edits ----------------------------------------------------------------------------------

Splice = tuple[int, int, str]


def _apply(text: str, splices: list[Splice]) -> str:
    for start, end, new in sorted(splices, key=lambda s: s[0], reverse=True):
        text = text[:start] + new + text[end:]
    return text


def _resolve(doc: _Document, path: KeyPath) -> Node:
    node = doc.root
    for part in path:
        entries = node.entries or []
        if isinstance(part, int):
            node = entries[part].node
        else:
            node = next(e for e in reversed(entries) if e.key == part).node
    return node


def _multiline(text: str, node: Node) -> bool:
    return "\n" in text[node.start : node.end]


def _insert(
    doc: _Document, style: _Style, node: Node, index: int, key: str | None, value: Any
) -> str:
    """`node` with a new entry at `index` (appended when `index` is its length)."""
    text = doc.text
    entries = node.entries or []
    if not entries:
        interior = text[node.start + 1 : node.end - 1]
        outer = _indent(text, node.start)
        multiline = "\n" in interior or style.pretty
        if not interior.strip(_WS):
            if multiline:
                inner = outer + style.unit
                new = style.newline + inner + _entry_text(key, value, style, inner, True)
                return _apply(text, [(node.start + 1, node.end - 1, new + style.newline + outer)])
            return _apply(
                text, [(node.start + 1, node.end - 1, _entry_text(key, value, style, "", False))]
            )
        close = node.end - 1
        if _alone_before(text, close):
            inner = outer + style.unit
            line = inner + _entry_text(key, value, style, inner, True) + style.newline
            return _apply(text, [(_line_start(text, close), _line_start(text, close), line)])
        return _apply(text, [(close, close, _entry_text(key, value, style, "", False))])
    if index < len(entries):
        target = entries[index]
        if _alone_before(text, target.start):
            indent = _indent(text, target.start)
            line = indent + _entry_text(key, value, style, indent, True) + "," + style.newline
            at = _line_start(text, target.start)
            return _apply(text, [(at, at, line)])
        gap = _inline_gap(text, node) or style.sep
        new = _entry_text(key, value, style, "", False) + gap
        return _apply(text, [(target.start, target.start, new)])
    last = entries[-1]
    after = last.node.end if last.comma is None else last.comma + 1
    line_end = _line_end_after(text, after)
    if _multiline(text, node) and _alone_before(text, last.start) and line_end is not None:
        indent = _indent(text, last.start)
        trailing = "," if last.comma is not None else ""
        line = indent + _entry_text(key, value, style, indent, True) + trailing + style.newline
        splices = [(line_end, line_end, line)]
        if last.comma is None:
            splices.append((last.node.end, last.node.end, ","))
        return _apply(text, splices)
    if _multiline(text, node):
        indent = (
            _indent(text, last.start)
            if _alone_before(text, last.start)
            else _indent(text, node.start) + style.unit
        )
        new = "," + style.newline + indent + _entry_text(key, value, style, indent, True)
        if last.comma is None:
            return _apply(text, [(last.node.end, last.node.end, new)])
        return _apply(text, [(last.comma + 1, last.comma + 1, new[1:] + ",")])
    gap = _inline_gap(text, node) or style.sep
    new = _entry_text(key, value, style, "", False)
    if last.comma is None:
        return _apply(text, [(last.node.end, last.node.end, gap + new)])
    return _apply(text, [(last.comma + 1, last.comma + 1, gap[1:] + new + ",")])


def _delete(doc: _Document, node: Node, index: int) -> str:
    """`node` without its entry at `index`: the inverse of `_insert`."""
    text = doc.text
    entries = node.entries or []
    entry = entries[index]
    after = entry.node.end if entry.comma is None else entry.comma + 1
    if len(entries) == 1:
        rest = text[node.start + 1 : entry.start] + text[after : node.end - 1]
        if not rest.strip(_WS):
            return _apply(text, [(node.start + 1, node.end - 1, "")])
    last = index == len(entries) - 1
    line_end = _line_end_after(text, after)
    if _alone_before(text, entry.start) and line_end is not None:
        splices = [(_line_start(text, entry.start), line_end, "")]
        if last and entry.comma is None and index > 0:
            prev = entries[index - 1]
            if prev.comma is not None:
                splices.append((prev.comma, prev.comma + 1, ""))
        return _apply(text, splices)
    if not last:
        return _apply(text, [(entry.start, entries[index + 1].start, "")])
    if index == 0:
        return _apply(text, [(entry.start, after, "")])
    prev = entries[index - 1]
    assert prev.comma is not None  # an entry follows it
    if entry.comma is not None:
        return _apply(text, [(prev.comma + 1, entry.comma + 1, "")])
    gap_start = prev.node.end if not text[prev.node.end : prev.comma].strip() else prev.comma
    return _apply(text, [(gap_start, entry.node.end, "")])


def _replace(doc: _Document, style: _Style, path: KeyPath, value: Any) -> str:
    node = _resolve(doc, path)
    if path:
        parent = _resolve(doc, path[:-1])
        multiline = _multiline(doc.text, parent)
    else:
        multiline = style.pretty
    new = _render(value, style, _indent(doc.text, node.start), multiline)
    return _apply(doc.text, [(node.start, node.end, new)])


# --- diff -----------------------------------------------------------------------------------

Op = tuple[Any, ...]


def _diff(path: KeyPath, old: Any, new: Any) -> Iterator[Op]:
    """Edits that turn `old` into `new`, in an order where each path stays valid."""
    if canonical(old) == canonical(new):
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for key in old:
            if key in new:
                yield from _diff((*path, key), old[key], new[key])
        for key in old:
            if key not in new:
                yield ("delete", path, key)
        for key in new:
            if key not in old:
                yield ("insert", path, key, new[key])
        return
    if isinstance(old, list) and isinstance(new, list):
        a, b = [canonical(v) for v in old], [canonical(v) for v in new]
        opcodes = SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
        for tag, i1, i2, j1, j2 in reversed(opcodes):
            if tag == "equal":
                continue
            if tag == "replace" and i2 - i1 == j2 - j1:
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                    yield from _diff((*path, i), old[i], new[j])
                continue
            for i in reversed(range(i1, i2)):
                yield ("delete", path, i)
            for offset, j in enumerate(range(j1, j2)):
                yield ("insert", path, i1 + offset, new[j])
        return
    yield ("replace", path, new)


def _step(text: str, op: Op) -> str:
    doc = _parse(text)
    style = _style(doc)
    kind, path = op[0], op[1]
    if kind == "replace":
        return _replace(doc, style, path, op[2])
    node = _resolve(doc, path)
    entries = node.entries or []
    if kind == "delete":
        if isinstance(op[2], int):
            return _delete(doc, node, op[2])
        index = max(i for i, e in enumerate(entries) if e.key == op[2])
        text = _delete(doc, node, index)
        if any(e.key == op[2] for e in entries[:index]):  # a duplicate key: delete it too
            return _step(text, op)
        return text
    where, value = op[2], op[3]
    if isinstance(where, int):
        return _insert(doc, style, node, where, None, value)
    return _insert(doc, style, node, len(entries), where, value)


def patch(text: str, new: Any) -> str:
    """`text` edited so that it holds `new`, changing only the entries that differ.

    Raises:
        JsoncError: `text` is not JSON with comments, or the edit would not read back as
            `new` (then nothing should be written).
    """
    old = loads(text)
    for op in list(_diff((), old, new)):
        text = _step(text, op)
    if canonical(loads(text)) != canonical(new):
        raise JsoncError("the edited text would not hold the intended data", text, 0)
    return text
