"""Split text into searchable chunks: markdown (and reStructuredText), plain text, JSON;
source code in `codechunks`; `kinds` picks the chunker for a file or a kind.

Every chunker is a pure function ``str -> list[Chunk]``. A chunk carries the title shown to
the agent (heading path, JSON key path or definition name), its text, whether it is code or
prose, and, where the text has lines, the 1-based line range it came from.
"""

import json
import re
from dataclasses import dataclass
from typing import Any

MAX_CHUNK_BYTES = 4096
PLAIN_SECTION_MAX = 5000
WINDOW_LINES = 20
WINDOW_OVERLAP = 2
TITLE_MAX = 80


@dataclass(frozen=True)
class Chunk:
    title: str
    content: str
    content_type: str  # "code" | "prose"
    start_line: int | None = None
    end_line: int | None = None


def byte_size(text: str) -> int:
    return len(text.encode("utf-8"))


# --------------------------------------------------------------------------- splitting helpers

Line = tuple[int, str]  # (1-based line number, text)
_FENCE_CHARS = "`~"


def _units(lines: list[Line]) -> list[list[Line]]:
    """Blank-line separated paragraphs; blank lines inside a code fence do not separate."""
    units: list[list[Line]] = []
    current: list[Line] = []
    fence: str | None = None
    for item in lines:
        stripped = item[1].strip()
        if stripped[:1] in _FENCE_CHARS and stripped:  # only these lines can open or close
            marker = _fence_marker(stripped)
            if fence is None and marker:
                fence = marker
            elif fence is not None and stripped.startswith(fence) and not stripped.strip("`~"):
                fence = None
        if fence is None and not stripped:
            if current:
                units.append(current)
                current = []
            continue
        current.append(item)
    if current:
        units.append(current)
    return units


def _hard_split(unit: list[Line], limit: int) -> list[list[Line]]:
    """Cut a unit larger than `limit` on line boundaries (and overlong lines by bytes)."""
    parts: list[list[Line]] = []
    current: list[Line] = []
    size = 0
    for number, text in unit:
        pieces = [text]
        if byte_size(text) > limit:
            encoded = text.encode("utf-8")
            pieces = [
                encoded[i : i + limit].decode("utf-8", "ignore")
                for i in range(0, len(encoded), limit)
            ]
        for piece in pieces:
            piece_size = byte_size(piece) + 1
            if current and size + piece_size > limit:
                parts.append(current)
                current, size = [], 0
            current.append((number, piece))
            size += piece_size
    if current:
        parts.append(current)
    return parts


def _pack(lines: list[Line], limit: int = MAX_CHUNK_BYTES) -> list[list[Line]]:
    """Greedy paragraph packing so each part stays within `limit` bytes."""
    parts: list[list[Line]] = []
    current: list[Line] = []
    size = 0
    for unit in _units(lines):
        unit_size = sum(byte_size(t) + 1 for _, t in unit) + 1
        if unit_size > limit:
            if current:
                parts.append(current)
                current, size = [], 0
            parts.extend(_hard_split(unit, limit))
            continue
        if current and size + unit_size > limit:
            parts.append(current)
            current, size = [], 0
        if current:
            current.append((unit[0][0], ""))
        current.extend(unit)
        size += unit_size
    if current:
        parts.append(current)
    return parts


def emit_lines(title: str, lines: list[Line], code: bool | None = None) -> list[Chunk]:
    """One chunk, or several titled ``title (n)`` when over the size cap."""
    while lines and not lines[-1][1].strip():
        lines = lines[:-1]
    while lines and not lines[0][1].strip():
        lines = lines[1:]
    text = "\n".join(t for _, t in lines).strip()
    if not text:
        return []
    if byte_size(text) <= MAX_CHUNK_BYTES:
        is_code = code if code is not None else "```" in text or "~~~" in text
        return [Chunk(title, text, "code" if is_code else "prose", lines[0][0], lines[-1][0])]
    parts = [p for p in _pack(lines) if "\n".join(t for _, t in p).strip()]
    out = []
    for i, part in enumerate(parts, 1):
        body = "\n".join(t for _, t in part).strip()
        is_code = code if code is not None else "```" in body or "~~~" in body
        name = f"{title} ({i})" if len(parts) > 1 else title
        out.append(Chunk(name, body, "code" if is_code else "prose", part[0][0], part[-1][0]))
    return out


# --------------------------------------------------------------------------- markdown / rst

_HEADING = re.compile(r"^(#{1,4})\s+(.+?)\s*#*\s*$")
_RULE = re.compile(r"^\s{0,3}([-_*])(\s*\1){2,}\s*$")
_UNDERLINE = re.compile(r"^([=\-~^\"'`*+#:.])\1{2,}\s*$")
_WORDY = re.compile(r"[^\W\d_]{2}")  # two letters in a row: a heading reads as words
_STRUCTURE_START = frozenset("=-~^\"'`*+#:._")
# A changelog's release line, at the start of a paragraph: ``bash (5.2-3) unstable;
# urgency=medium`` (Debian), ``Version 2.3.1 (2024-01-02)``, ``v1.2.0 - 2024-01-01``,
# ``1.4.0 (unreleased)``. It titles the entries under it, below any heading.
_RELEASE = re.compile(
    r"^(?:[a-z0-9][\w.+-]* \(\d[^)\s]*\) [\w -]+;.*urgency="
    r"|(?:(?:version|release|v)\s*)?\d+\.\d+(?:\.\d+)*[\w.+-]*"
    r"(?:\s*(?:\(.*\)|[-–—:]\s*\S.*|\[.*\]))?\s*$)",
    re.IGNORECASE,
)
RELEASE_LEVEL = 5  # deeper than any markdown heading the chunker splits on


def _fence_marker(stripped: str) -> str | None:
    for mark in ("```", "~~~"):
        if stripped.startswith(mark):
            run = len(stripped) - len(stripped.lstrip(mark[0]))
            return mark[0] * run
    return None


def _paragraph_tail(current: list[Line], i: int) -> list[Line]:
    """The lines of `current` right above line index `i` in its paragraph (at most 3; a
    structure line such as a rule ends it)."""
    lead: list[Line] = []
    for number, text in reversed(current[-3:]):
        if number != i - len(lead) or not text.strip() or text.lstrip()[:1] in _STRUCTURE_START:
            break
        lead.insert(0, (number, text))
    return lead


def chunk_markdown(text: str) -> list[Chunk]:
    """Split on H1-H4 (ATX, setext and reStructuredText underlines), horizontal rules and
    changelog release lines.

    Titles are the heading path joined with `` > ``; fenced code is never split unless a
    fence alone exceeds the size cap; chunks containing a fence are ``code``.
    """
    raw = text.split("\n")
    chunks: list[Chunk] = []
    stack: list[tuple[int, str]] = []
    underline_levels: list[str] = []
    current: list[Line] = []

    def title() -> str:
        return " > ".join(h for _, h in stack) if stack else "Untitled"

    def flush() -> None:
        nonlocal current
        if current:
            chunks.extend(emit_lines(title(), current))
        current = []

    def push(level: int, heading: str) -> None:
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, heading))

    i = 0
    end = len(raw)
    while i < end:
        line = raw[i]
        # Fast path: most lines can start no structure, and no underline follows them.
        if line.lstrip()[:1] not in _STRUCTURE_START and (
            i + 1 == end or raw[i + 1][:1] not in _STRUCTURE_START
        ):
            if (
                line[:1].isalnum()
                and len(line) < 120
                and (i == 0 or not raw[i - 1].strip())
                and _RELEASE.match(line)
            ):
                flush()
                push(RELEASE_LEVEL, line.strip())
            current.append((i + 1, line))
            i += 1
            continue
        stripped = line.strip()
        marker = _fence_marker(stripped)
        if marker:
            block = [(i + 1, line)]
            i += 1
            while i < len(raw):
                block.append((i + 1, raw[i]))
                closing = raw[i].strip()
                i += 1
                if closing.startswith(marker) and closing.strip(marker[0]) == "":
                    break
            current.extend(block)
            continue
        heading = _HEADING.match(line)
        if heading:
            flush()
            push(len(heading.group(1)), heading.group(2).strip())
            current.append((i + 1, line))
            i += 1
            continue
        nxt = raw[i + 1] if i + 1 < len(raw) else ""
        underline = _UNDERLINE.match(nxt)
        if (
            stripped
            and underline
            and len(nxt.strip()) >= min(len(stripped), 3)
            and _WORDY.search(stripped)  # not a progress line of dots and letters
            and not _RULE.match(line)
            and not _UNDERLINE.match(line)
        ):
            char = underline.group(1)
            if char not in underline_levels:
                underline_levels.append(char)
            level = underline_levels.index(char) + 1
            if level <= 4:
                # A heading of several lines (a test's header and its summary under
                # it): the paragraph's first line titles it, its lines go with it.
                lead = _paragraph_tail(current, i)
                current = current[: len(current) - len(lead)]
                flush()
                push(level, lead[0][1].strip() if lead else stripped)
                current.extend(lead)
                current.append((i + 1, line))
                i += 2
                continue
        if _UNDERLINE.match(line) and i + 2 < len(raw) and _UNDERLINE.match(raw[i + 2]):
            i += 1  # reStructuredText overline: the title and underline follow
            continue
        if _RULE.match(line):
            flush()
            i += 1
            continue
        current.append((i + 1, line))
        i += 1
    flush()
    return chunks


# --------------------------------------------------------------------------- plain text


def _first_line_title(text: str, fallback: str) -> str:
    for line in text.split("\n"):
        if line.strip():
            return line.strip()[:TITLE_MAX]
    return fallback


def chunk_plain(text: str) -> list[Chunk]:
    """Blank-line sections (3 to 200 of them, each < 5,000 bytes, titled by their first
    line), else untitled 20-line windows."""
    if not text.strip():
        return []
    raw = text.split("\n")
    sections: list[list[Line]] = []
    current: list[Line] = []
    for number, line in enumerate(raw, 1):
        if line.strip():
            current.append((number, line))
        elif current:
            sections.append(current)
            current = []
    if current:
        sections.append(current)
    if 3 <= len(sections) <= 200 and all(
        byte_size("\n".join(t for _, t in s)) < PLAIN_SECTION_MAX for s in sections
    ):
        out = []
        for i, section in enumerate(sections):
            body = "\n".join(t for _, t in section).strip()
            out.append(
                Chunk(
                    _first_line_title(body, f"Section {i + 1}"),
                    body,
                    "prose",
                    section[0][0],
                    section[-1][0],
                )
            )
        return out
    if len(raw) <= WINDOW_LINES and byte_size(text) <= MAX_CHUNK_BYTES:
        return [Chunk("Output", text, "prose", 1, len(raw))]
    out = []
    step = WINDOW_LINES - WINDOW_OVERLAP
    for start in range(0, len(raw), step):
        window = raw[start : start + WINDOW_LINES]
        body = "\n".join(window)
        if body.strip():
            # No title: a window's first line is only where it happens to start (a log
            # line), and its place is the line range every hit shows.
            title = ""
            lines = [(start + 1 + k, t) for k, t in enumerate(window)]
            for piece in (
                _hard_split(lines, MAX_CHUNK_BYTES)
                if byte_size(body) > MAX_CHUNK_BYTES
                else [lines]
            ):
                out.append(
                    Chunk(title, "\n".join(t for _, t in piece), "prose", piece[0][0], piece[-1][0])
                )
        if start + WINDOW_LINES >= len(raw):
            break
    return out


# --------------------------------------------------------------------------- JSON

_IDENTITY_FIELDS = ("id", "name", "title", "path", "slug", "key", "label")


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def _identity(item: Any) -> str | None:
    if isinstance(item, dict):
        for field in _IDENTITY_FIELDS:
            value = item.get(field)
            if isinstance(value, (str, int, float)) and not isinstance(value, bool):
                return str(value)
    return None


def _walk_json(value: Any, path: list[str], out: list[Chunk]) -> None:
    prefix = " > ".join(path) if path else "(root)"
    text = _pretty(value)
    nested = isinstance(value, dict) and any(isinstance(v, (dict, list)) for v in value.values())
    if byte_size(text) <= MAX_CHUNK_BYTES and not nested:
        kind = "code" if isinstance(value, (dict, list)) else "prose"
        out.append(Chunk(prefix, text, kind))
        return
    if isinstance(value, dict):
        if not value:
            out.append(Chunk(prefix, text, "code"))
        for key, child in value.items():
            _walk_json(child, [*path, str(key)], out)
        return
    if isinstance(value, list):
        batch: list[tuple[int, Any]] = []
        size = 0

        def flush_batch() -> None:
            nonlocal batch, size
            if not batch:
                return
            ids = [_identity(item) for _, item in batch]
            if all(ids):
                if len(batch) == 1:
                    label = f"{prefix} > {ids[0]}"
                elif len(batch) <= 3:
                    label = f"{prefix} > " + ", ".join(str(i) for i in ids)
                else:
                    label = f"{prefix} > {ids[0]}\u2026{ids[-1]}"
            else:
                first, last = batch[0][0], batch[-1][0]
                label = f"{prefix} > [{first}]" if first == last else f"{prefix} > [{first}-{last}]"
            out.append(Chunk(label, _pretty([item for _, item in batch]), "code"))
            batch, size = [], 0

        for index, item in enumerate(value):
            item_size = byte_size(_pretty(item)) + 4
            if item_size > MAX_CHUNK_BYTES:
                flush_batch()
                if isinstance(item, (dict, list)):
                    _walk_json(item, [*path, f"[{index}]"], out)
                else:
                    out.append(Chunk(f"{prefix} > [{index}]", _pretty(item), "prose"))
                continue
            if batch and size + item_size > MAX_CHUNK_BYTES:
                flush_batch()
            batch.append((index, item))
            size += item_size
        flush_batch()
        return
    out.append(Chunk(prefix, text, "prose"))


def chunk_json(text: str) -> list[Chunk]:
    """Objects by key path, arrays in size-bounded batches titled by an identity field."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return chunk_plain(text)
    out: list[Chunk] = []
    try:
        _walk_json(value, [], out)
    except RecursionError:
        return chunk_plain(text)
    return out or chunk_plain(text)


# --------------------------------------------------------------------------- dispatch
