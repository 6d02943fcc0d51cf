"""Inline SVG charts drawn in Python.

No script, font or stylesheet is fetched: the page works from ``file://``, offline, and
under a Content-Security-Policy that allows nothing but inline styles. Colours come from
CSS classes (``kept``, ``ret``, ``bar``) so the page's light and dark themes apply.

Every label is untrusted text (file paths, tool and category names come from what agents
did) and goes through `esc`; numbers are formatted here, never taken as text.
"""

import re
from collections.abc import Callable
from html import escape
from typing import NamedTuple

WIDTH = 720
ROW_HEIGHT = 24
CHAR_WIDTH = 7  # px per character of the 12 px labels, to cut long labels
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def esc(text: object) -> str:
    """`text` safe in HTML and SVG text and attributes (control characters replaced)."""
    return escape(_CONTROL.sub("\N{REPLACEMENT CHARACTER}", str(text)), quote=True)


def clip(text: str, max_chars: int, *, keep_end: bool = False) -> str:
    """`text` cut to `max_chars` with an ellipsis; paths keep their end (the file name)."""
    text = " ".join(text.split())
    if len(text) <= max_chars:
        return text
    if keep_end:
        return "…" + text[len(text) - max_chars + 1 :]
    return text[: max_chars - 1] + "…"


class Segment(NamedTuple):
    """One part of a bar: a CSS class and a value."""

    css: str
    value: int


class Bar(NamedTuple):
    """One bar: its label, parts, the text printed after it and its tooltip."""

    label: str
    segments: tuple[Segment, ...]
    value_text: str
    tip: str


def _num(x: float) -> str:
    return f"{x:.1f}".removesuffix(".0")


def _svg(chart: str, title: str, height: int, body: str) -> str:
    title_id = f"chart-{chart}-title"
    return (
        f'<svg data-chart="{esc(chart)}" role="img" aria-labelledby="{title_id}" '
        f'viewBox="0 0 {WIDTH} {height}" width="100%" preserveAspectRatio="xMinYMin meet">'
        f'<title id="{title_id}">{esc(title)}</title>{body}</svg>'
    )


def empty_chart(chart: str, title: str, message: str) -> str:
    """The chart's frame with a message instead of bars: nothing was recorded."""
    body = f'<text class="empty" x="{WIDTH // 2}" y="34" text-anchor="middle">{esc(message)}</text>'
    return _svg(chart, title, 60, body)


def hbars(
    chart: str,
    title: str,
    bars: list[Bar],
    *,
    empty: str,
    label_width: int = 200,
    value_width: int = 150,
    keep_end: bool = False,
) -> str:
    """Horizontal (stacked) bars, one per row, scaled to the largest row's total."""
    if not bars:
        return empty_chart(chart, title, empty)
    largest = max(sum(s.value for s in bar.segments) for bar in bars) or 1
    x0 = label_width + 8
    span = WIDTH - x0 - value_width
    max_chars = label_width // CHAR_WIDTH
    rows = []
    for i, bar in enumerate(bars):
        y = i * ROW_HEIGHT + 4
        parts = [
            f'<g><title>{esc(bar.tip)}</title><text x="{label_width}" y="{y + 14}" '
            f'text-anchor="end">{esc(clip(bar.label, max_chars, keep_end=keep_end))}</text>'
        ]
        x = float(x0)
        for segment in bar.segments:
            if segment.value <= 0:
                continue
            w = max(1.0, segment.value / largest * span)
            parts.append(
                f'<rect class="{esc(segment.css)}" x="{_num(x)}" y="{y + 2}" '
                f'width="{_num(w)}" height="{ROW_HEIGHT - 8}" rx="2"/>'
            )
            x += w
        parts.append(
            f'<text class="value" x="{_num(x + 6)}" y="{y + 14}">{esc(bar.value_text)}</text></g>'
        )
        rows.append("".join(parts))
    return _svg(chart, title, len(bars) * ROW_HEIGHT + 8, "".join(rows))


class Column(NamedTuple):
    """One stacked column of a time chart: its axis label, parts and tooltip."""

    label: str
    segments: tuple[Segment, ...]
    tip: str


def _date_labels(count: int, most: int = 8) -> set[int]:
    """Which columns get a date under them: evenly spaced, the last one always."""
    every = max(1, -(-count // most))
    marks = list(range(0, count, every))
    if marks[-1] != count - 1:
        if count - 1 - marks[-1] < every and len(marks) > 1:
            marks[-1] = count - 1
        else:
            marks.append(count - 1)
    return set(marks)


def columns(
    chart: str, title: str, cols: list[Column], *, empty: str, axis_text: Callable[[int], str]
) -> str:
    """Vertical stacked columns over time, with a value axis (0, half, max) and dates."""
    if not cols or not any(s.value > 0 for c in cols for s in c.segments):
        return empty_chart(chart, title, empty)
    left, right, top, bottom = 64, WIDTH - 24, 10, 180
    height = bottom - top
    largest = max(sum(s.value for s in c.segments) for c in cols) or 1
    slot = (right - left) / len(cols)
    width = max(1.0, slot * 0.72)
    body = []
    for fraction in (0.0, 0.5, 1.0):
        y = bottom - fraction * height
        body.append(
            f'<line class="grid" x1="{left}" x2="{right}" y1="{_num(y)}" y2="{_num(y)}"/>'
            f'<text class="axis" x="{left - 6}" y="{_num(y + 4)}" text-anchor="end">'
            f"{esc(axis_text(round(largest * fraction)))}</text>"
        )
    dated = _date_labels(len(cols))
    for i, col in enumerate(cols):
        x = left + i * slot + (slot - width) / 2
        parts = [f"<g><title>{esc(col.tip)}</title>"]
        y = float(bottom)
        for segment in col.segments:
            if segment.value <= 0:
                continue
            h = max(1.0, segment.value / largest * height)
            y -= h
            parts.append(
                f'<rect class="{esc(segment.css)}" x="{_num(x)}" y="{_num(y)}" '
                f'width="{_num(width)}" height="{_num(h)}"/>'
            )
        parts.append("</g>")
        body.append("".join(parts))
        if i in dated:
            body.append(
                f'<text class="axis" x="{_num(x + width / 2)}" y="{bottom + 16}" '
                f'text-anchor="middle">{esc(col.label)}</text>'
            )
    return _svg(chart, title, bottom + 24, "".join(body))
