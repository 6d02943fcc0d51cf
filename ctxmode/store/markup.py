"""Chunkers for structured text that is not markdown: XML, YAML, HTML.

Each gives its chunks titles the agent can read: an XML element's path with what names it
(``changelog > release version=2.1.0``, ``feed > entry: Fixed the crash on start``), a YAML
key path (``services > web``), an HTML page's headings. XML and YAML keep their own lines
(a hit's line range points into the file); HTML is read as the markdown of its main
content, so its chunks carry no line range.
"""

import re
from dataclasses import dataclass, field
from xml.parsers import expat

from ctxmode.store.chunking import (
    MAX_CHUNK_BYTES,
    TITLE_MAX,
    Chunk,
    Line,
    byte_size,
    chunk_markdown,
    chunk_plain,
    emit_lines,
)

# Attributes, then child elements, whose value names an element, in this order.
_NAMING_ATTRIBUTES = ("name", "id", "version", "title", "key", "label", "ref", "type", "date")
_NAMING_CHILDREN = ("title", "name", "version", "summary", "id", "key", "label")


@dataclass
class _Element:
    tag: str
    attributes: dict[str, str]
    start: int
    end: int = 0
    children: list["_Element"] = field(default_factory=list)
    texts: dict[str, str] = field(default_factory=dict)  # naming child -> its text

    def name(self) -> str:
        for attr in _NAMING_ATTRIBUTES:
            value = self.attributes.get(attr, "").strip()
            if value:
                return f"{self.tag} {attr}={' '.join(value.split())}"
        for child in _NAMING_CHILDREN:
            text = self.texts.get(child, "")
            if text:
                return f"{self.tag}: {' '.join(text.split())}"
        return self.tag


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1].rsplit(":", 1)[-1]


def _parse_xml(text: str) -> _Element | None:
    parser = expat.ParserCreate()
    stack: list[_Element] = []
    root: list[_Element] = []
    texts: list[list[str]] = []

    def start(tag: str, attributes: dict[str, str]) -> None:
        element = _Element(_local(tag), attributes, parser.CurrentLineNumber)
        if stack:
            stack[-1].children.append(element)
        else:
            root.append(element)
        stack.append(element)
        texts.append([])

    def end(tag: str) -> None:
        element = stack.pop()
        element.end = parser.CurrentLineNumber
        text = "".join(texts.pop()).strip()
        if (
            stack
            and element.tag in _NAMING_CHILDREN
            and text
            and element.tag not in stack[-1].texts
        ):
            stack[-1].texts[element.tag] = text[:TITLE_MAX]

    def data(chunk: str) -> None:
        if texts:
            texts[-1].append(chunk)

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = data
    try:
        parser.Parse(text, True)
    except (expat.ExpatError, RecursionError, ValueError):
        return None
    return root[0] if root else None


def chunk_xml(text: str) -> list[Chunk]:
    """Elements that fit whole, titled by their path and what names them; an element over
    the size cap is split into its children. Text that does not parse is plain text."""
    root = _parse_xml(text)
    lines = text.split("\n")
    if root is None or len(lines) < 3:
        return chunk_plain(text)
    out: list[Chunk] = []

    def numbered(start: int, end: int) -> list[Line]:
        return [(n, lines[n - 1]) for n in range(start, min(end, len(lines)) + 1)]

    def walk(element: _Element, path: list[str]) -> None:
        title = " > ".join([*path, element.name()])[-TITLE_MAX * 2 :]
        body = numbered(element.start, element.end)
        if byte_size("\n".join(t for _, t in body)) <= MAX_CHUNK_BYTES or not element.children:
            out.extend(emit_lines(title, body, code=False))
            return
        covered = element.start
        for child in element.children:
            if child.start > covered + 1:  # text between children: with the element's title
                out.extend(emit_lines(title, numbered(covered + 1, child.start - 1), code=False))
            walk(child, [*path, element.name()])
            covered = max(covered, child.end)

    walk(root, [])
    return out or chunk_plain(text)


# --------------------------------------------------------------------------- YAML

_YAML_KEY = re.compile(r"^(\s*)(?:-\s+)?([\"']?)([^\s#:\"'][^:#]*?)\2\s*:(?:\s|$)")


def chunk_yaml(text: str) -> list[Chunk]:
    """Top-level keys (and ``---`` documents), titled by key; a key over the size cap is
    split by the keys under it (``top > sub``). Comments above a key go with it."""
    lines: list[Line] = list(enumerate(text.split("\n"), 1))
    out = _yaml_sections(lines, [])
    return out or chunk_plain(text)


def _yaml_sections(lines: list[Line], path: list[str]) -> list[Chunk]:
    indent = None
    for _, line in lines:
        m = _YAML_KEY.match(line)
        if m and not line.lstrip().startswith("#"):
            indent = len(m.group(1))
            break
    if indent is None:
        return emit_lines(" > ".join(path) or "(document)", lines, code=False)
    sections: list[tuple[str, list[Line]]] = []
    pending: list[Line] = []  # comments and blank lines waiting for the next key
    current: list[Line] = []
    name = " > ".join(path) or "(document)"
    for number, line in lines:
        stripped = line.strip()
        m = _YAML_KEY.match(line)
        if line.startswith("---") or line.startswith("..."):
            if current:
                sections.append((name, current))
            current, pending = [], []
            continue
        if m and len(m.group(1)) == indent and not stripped.startswith("#"):
            if current:
                sections.append((name, current))
            name = " > ".join([*path, m.group(3).strip()])
            current = [*pending, (number, line)]
            pending = []
        elif not stripped or (
            stripped.startswith("#") and len(line) - len(line.lstrip()) <= indent
        ):
            pending.append((number, line))
        else:
            current.extend(pending)
            pending = []
            current.append((number, line))
    if current:
        sections.append((name, current))
    out: list[Chunk] = []
    for title, body in sections:
        if byte_size("\n".join(t for _, t in body)) > MAX_CHUNK_BYTES and len(body) > 1:
            key = title.rsplit(" > ", 1)[-1]
            out.extend(_yaml_sections(body[1:], [*path, key]) or emit_lines(title, body))
        else:
            out.extend(emit_lines(title, body, code=False))
    return out


# --------------------------------------------------------------------------- HTML


def chunk_html(text: str) -> list[Chunk]:
    """The markdown of the page's main content, chunked by its headings (no line ranges:
    they would point into the markdown, not the file)."""
    from ctxmode.store.htmlmd import html_to_markdown  # bs4 and markdownify load only here

    try:
        markdown = html_to_markdown(text)
    except RecursionError:
        return chunk_plain(text)
    return [
        Chunk(c.title, c.content, c.content_type) for c in chunk_markdown(markdown)
    ] or chunk_plain(text)
