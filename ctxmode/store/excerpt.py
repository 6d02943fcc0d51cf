"""The excerpt of a hit: the passage of its chunk the agent is shown.

The agent reads only the excerpt, so it must hold the text that answers, readable as it
stands: a contiguous passage, not lines picked apart by ``…``. A term's weight is its
inverse document frequency (a rare word says more than "file" or "value"); a term matches
where a word, or a camelCase / snake_case part of one, starts, in its inflected forms
(`query.term_matchers`); the words a term was expanded to (substring and typo corrections)
count only in a chunk where the term itself is absent.

1. The passage: of all runs of whole lines that fit the budget, the smallest that covers
   the most weight of distinct terms. A line where a term is *defined* (``def name``,
   ``--name``, ``name:``, ``.. option:: name``, a heading) counts more than a mention, and a
   line written in another script than the query's (the Russian paragraph of a
   Russian/English pair) counts less.
2. Then it grows to whole units: back to the start of its paragraph or sentence, on through
   the definition's docstring or help text, forward to the end of a sentence or paragraph,
   never into the next heading, within the budget.
3. The chunk's head (a signature and its docstring's first line) goes first when the
   passage does not hold it; a heading the title already shows is not repeated.
4. What room is left goes to a second, shorter passage after a ``…``: for the terms the
   first could not hold, else the next best region.

A line longer than the room is cut at sentence boundaries around its match. Budgets:
`TOP_BYTES` for a search's first hit, `EXCERPT_BYTES` for the others; chunks that fit
are shown whole.
"""

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate

from ctxmode.store.query import Matcher

EXCERPT_BYTES = 500  # the excerpt of every hit but the first
TOP_BYTES = 1000  # the first hit's: the best answer is read whole
INFLECTED = 0.8  # a term found only inside a longer word (differing for differ)
DEFINED = 1.3  # a term at the place that defines it
FOREIGN = 0.6  # a line in another script than the query's
LINE_CAP = 300  # a long line among others is cut to this many characters
SECOND_MIN = 120  # the least room worth a second passage
GAP = "\u2026"


@dataclass(frozen=True)
class Telling:
    """One query term as the excerpt looks for it: its weight, its own matcher, and the
    matcher of the words it was expanded to (used only where the term itself is absent)."""

    weight: float
    own: Matcher
    extra: Matcher | None = None
    term: bool = True  # a query term (not two terms together, not a phrase)

    @property
    def matchers(self) -> tuple[Matcher, ...]:
        return (self.own,) if self.extra is None else (self.own, self.extra)


_DEFINING_WORDS = frozenset(
    "def class fn func function async type interface struct enum trait impl const let var"
    " val export public private protected static module option directive method attribute"
    " data envvar confval describe program cmdoption object".split()
)
_LEAD_CHARS = " \t`*-#>|.:@'\"[("
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_SENTENCE_END = re.compile(r"[.!?:;)\]`\"']\s*$|^\s*$")
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`*\[(\"'])")
_UNDERLINE = re.compile(r"^([=\-~^\"'`*+#:.])\1{2,}\s*$")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]\s|\d+[.)]\s|\.\.\s|#|```|~~~|>)")
# A line that starts a log record: a date and time, a time, a syslog stamp, or a level.
_RECORD = re.compile(
    r"^\s*[\[(]?(?:\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}|\d{2}:\d{2}:\d{2}"
    r"|[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2}"
    r"|(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|FATAL|CRITICAL|SEVERE)\b)"
)
RECORDS = 0.6  # the share of a chunk's lines starting a record that makes it a log


def _size(line: str) -> int:
    return len(line.encode("utf-8")) + 1


def _defines(line: str, at: int) -> bool:
    """Whether the term at `at` is what the line defines: only markup, bullets or a
    defining keyword stand before it."""
    lead = line[:at].strip(_LEAD_CHARS)
    if not lead:
        return True
    words = lead.replace("::", " ").replace(":", " ").split()
    return len(words) <= 3 and all(w.strip(_LEAD_CHARS).lower() in _DEFINING_WORDS for w in words)


def _latin(text: str) -> float:
    """The share of the letters of `text` that are ASCII (1.0 for none)."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return 1.0
    return sum(c.isascii() for c in letters) / len(letters)


def _heading_text(line: str) -> str | None:
    m = _HEADING.match(line)
    return m.group(2).strip() if m else None


def _shown_by_title(lines: list[str], title: str) -> int:
    """How many first lines are a heading the hit's title already shows (an ATX heading,
    or a heading line with its underline) and the blank line after it."""
    text = _heading_text(lines[0])
    last = re.sub(r" \(\d+\)$", "", title.rsplit(" > ", 1)[-1]).strip()
    if text is not None:
        n = 1 if text == last else 0
    else:
        n = 1 if lines[0].strip() == last else 0
        if n and len(lines) > 1 and _UNDERLINE.match(lines[1]):
            n = 2
    if n and len(lines) > n and not lines[n].strip():
        n += 1
    return n


def _clip(line: str, at: int, cap: int) -> str:
    """`line` cut to at most `cap` characters around position `at`, at sentence
    boundaries where the sentences allow, else at word boundaries."""
    if len(line) <= cap:
        return line
    starts = [0] + [m.end() for m in _SENTENCE_BREAK.finditer(line)]
    begin = starts[bisect_right(starts, at) - 1]
    # Earlier sentences join while the match stays in the first third of the room.
    for s in reversed(starts):
        if s < begin and at - s <= cap // 3:
            begin = s
    if at - begin > cap - 20:  # one long sentence: a window around the match
        space = line.rfind(" ", 0, max(0, at - cap // 3))
        begin = space + 1 if space >= 0 else max(0, at - cap // 3)
    end = begin + cap - 2
    if end < len(line):
        ends = [s for s in starts if begin < s <= end]
        if ends and ends[-1] > at:
            end = ends[-1]
        else:
            space = line.rfind(" ", at, end)
            end = space if space > at else end
    head = GAP if begin else ""
    tail = GAP if end < len(line) else ""
    return head + line[begin:end].rstrip() + tail


def head_lines(lines: list[str]) -> list[int]:
    """The chunk's first line (a signature, a heading) and, in code, the first line of
    the docstring or comment under it."""
    for i in range(1, min(len(lines), 12)):
        stripped = lines[i].strip()
        if not stripped.startswith(_OPENERS):
            continue
        if stripped in _BARE:  # the text starts on the next line
            return [0, i + 1] if i + 1 < len(lines) else [0]
        if any(c.isalnum() for c in stripped):  # not a rule (----) or a lone marker
            return [0, i]
    return [0]


def _head(lines: list[str]) -> list[int]:
    """`head_lines`, with a decorated definition's own line after its decorators."""
    head = head_lines(lines)
    if lines[0].lstrip().startswith("@"):
        for i in range(1, min(len(lines), 5)):
            if not lines[i].lstrip().startswith("@"):
                return sorted({*head, *range(i + 1)})
    return head


_OPENERS = ('"""', "'''", "/**", "///", "//", "#", "--", 'r"""')
_BARE = ('"""', "'''", "/**", 'r"""')


class _Lines:
    """The chunk's lines, what terms each holds and how much each is worth."""

    def __init__(self, content: str, terms: Sequence[Telling]) -> None:
        self.lines = content.split("\n")
        self.terms = terms
        n = len(self.lines)
        starts = list(accumulate((len(line) + 1 for line in self.lines[:-1]), initial=0))
        lowered = content.lower()
        self.held: list[dict[int, float]] = [{} for _ in range(n)]  # term -> its factor here
        self.at: list[int | None] = [None] * n  # where the weightiest term starts
        best: list[float] = [0.0] * n
        latin_query = _latin(" ".join(n for t in terms for n in t.own.needles)) > 0.5
        foreign = [
            latin_query and _latin(line) < 0.5 if any(c.isalpha() for c in line) else False
            for line in self.lines
        ]
        for k, term in enumerate(terms):
            matcher = term.own
            if term.extra is not None and term.own.first(content, lowered) is None:
                matcher = term.extra
            for pos in matcher.positions(content, lowered):
                i = bisect_right(starts, pos) - 1
                col = pos - starts[i]
                factor = 1.0 if matcher.whole_word(content, pos) else INFLECTED
                if factor == 1.0 and _defines(self.lines[i], col):
                    factor *= DEFINED
                if foreign[i]:
                    factor *= FOREIGN
                if factor > self.held[i].get(k, 0.0):
                    self.held[i][k] = factor
                if term.weight * factor > best[i]:
                    best[i] = term.weight * factor
                    self.at[i] = col
        self.hits = [i for i in range(n) if self.held[i]]
        self.sizes = [_size(line) for line in self.lines]
        # A log: each record (its line and the lines under it, a stack trace) is a
        # paragraph of its own; the neighbouring records are not the answer.
        starts_record = [bool(_RECORD.match(line)) for line in self.lines]
        filled = [line for line in self.lines if line.strip()]
        self.record = (
            starts_record if filled and sum(starts_record) >= RECORDS * len(filled) else None
        )

    def cost(self, i: int, cap: int) -> int:
        return min(self.sizes[i], cap + 3)

    def blank(self, i: int) -> bool:
        return not self.lines[i].strip()

    def closes(self, i: int) -> bool:
        """Whether a passage may end after line `i`: a sentence, paragraph, item or log
        record ends."""
        if i + 1 >= len(self.lines) or self.blank(i + 1) or self.blank(i):
            return True
        if self.record is not None:
            return self.record[i + 1]
        if _LIST_ITEM.match(self.lines[i + 1]):
            return True
        return bool(_SENTENCE_END.search(self.lines[i]))

    def opens(self, i: int) -> bool:
        """Whether a passage may start at line `i`."""
        if self.record is not None:
            return i == 0 or self.record[i] or self.blank(i - 1)
        return (
            i == 0
            or self.blank(i - 1)
            or self.closes(i - 1)
            or bool(_LIST_ITEM.match(self.lines[i]))
        )

    def ends_record(self, j: int) -> bool:
        """Whether line `j` starts a new log record (a passage does not run into it)."""
        return self.record is not None and self.record[j]


def _best_run(
    lines: _Lines, budget: int, cap: int, skip: frozenset[int], banned: frozenset[int]
) -> tuple[int, int] | None:
    """The smallest run of lines within `budget` bytes holding the most term weight, not
    crossing `banned` lines and not counting `skip` terms: each distinct term at its best
    factor in the run, plus a little for up to two more lines holding it (mentions say
    less than a definition)."""
    hits = [i for i in lines.hits if i not in banned and set(lines.held[i]) - skip]
    if not hits:
        return None
    weights = [t.weight for t in lines.terms]
    spent = list(accumulate((lines.cost(j, cap) for j in range(len(lines.lines))), initial=0))
    walls = list(accumulate((j in banned for j in range(len(lines.lines))), initial=0))
    best: tuple[float, int, int, int] | None = None  # (worth, -cost, a, b)
    for x, a in enumerate(hits):
        factors: dict[int, float] = {}
        again: dict[int, int] = {}
        worth = 0.0
        for b in hits[x:]:
            cost = spent[b + 1] - spent[a]
            if b > a and (cost > budget or walls[b + 1] != walls[a]):
                break
            for k, factor in lines.held[b].items():
                if k in skip:
                    continue
                if k in factors:
                    if again.get(k, 0) < 2:
                        again[k] = again.get(k, 0) + 1
                        worth += 0.05 * weights[k]
                    if factor > factors[k]:
                        worth += (factor - factors[k]) * weights[k]
                        factors[k] = factor
                else:
                    factors[k] = factor
                    worth += factor * weights[k]
            key = (round(worth, 9), -cost, a, b)
            if best is None or key[:2] > best[:2]:
                best = key
    return None if best is None else (best[2], best[3])


def _grow(
    lines: _Lines, a: int, b: int, room: int, cap: int, banned: frozenset[int]
) -> tuple[int, int, int]:
    """Widen the run to whole sentences and paragraphs while `room` bytes last: back to
    where a sentence opens, on through a definition's text, forward to where one closes.
    Never across a heading below the run's first line or into `banned` lines."""
    n = len(lines.lines)

    def ok(j: int) -> bool:
        return 0 <= j < n and j not in banned and lines.cost(j, cap) <= room

    def heading(j: int) -> bool:
        return _heading_text(lines.lines[j]) is not None

    # Back to an opening, at most a few lines (a paragraph's start, a sentence's start).
    steps = 0
    while not lines.opens(a) and steps < 4 and ok(a - 1) and not lines.blank(a - 1):
        a -= 1
        room -= lines.cost(a, cap)
        steps += 1
    # On to where the sentence or paragraph closes; after a definition, through its text.
    defines = any(
        _defines(lines.lines[i], lines.at[i] or 0) for i in range(a, b + 1) if lines.held[i]
    )
    while not lines.closes(b) and ok(b + 1) and not heading(b + 1):
        b += 1
        room -= lines.cost(b, cap)
    if defines and lines.record is None:  # the docstring or help text: the next paragraph
        j = b + 1
        while j < n and lines.blank(j):
            j += 1
        while (
            j < n
            and not lines.blank(j)
            and not heading(j)
            and ok(j)
            and sum(lines.cost(k, cap) for k in range(b + 1, j + 1)) <= room
        ):
            if j + 1 >= n or lines.closes(j):
                room -= sum(lines.cost(k, cap) for k in range(b + 1, j + 1))
                b = j
            j += 1
    # Then whole sentences forward while they fit, within the paragraph (a log record).
    j = b + 1
    spent = 0
    while (
        j < n
        and not lines.blank(j)
        and not heading(j)
        and j not in banned
        and not lines.ends_record(j)
    ):
        spent += lines.cost(j, cap)
        if spent > room:
            break
        if lines.closes(j):
            room -= spent
            spent = 0
            b = j
        j += 1
    return a, b, room


def excerpt(
    content: str,
    terms: Sequence[Telling],
    budget: int = EXCERPT_BYTES,
    max_chars: int | None = None,
    title: str = "",
) -> str:
    """The passage of `content` that best covers `terms`, in `budget` bytes.

    Content that fits is returned whole; a first line that is a heading `title` already
    shows is left out. The result never exceeds `max_chars` characters.
    """
    if max_chars is not None:
        budget = min(budget, max_chars)
    first = _shown_by_title(content.split("\n", 3)[:3], title) if title else 0
    body = content.split("\n", first)[-1] if first else content
    if len(body.encode("utf-8")) <= budget:
        return body[:max_chars] if max_chars is not None else body
    lines = _Lines(content, terms)
    skipped = frozenset(range(first))
    if not lines.hits or all(i < first for i in lines.hits):
        return _opening(lines, first, budget, max_chars)

    cap = LINE_CAP if budget > LINE_CAP + 100 else budget - 10
    head = [j for j in _head(lines.lines) if j >= first] if lines.record is None else []
    head_cost = sum(lines.cost(j, cap) for j in head)
    if head_cost > budget // 3:
        head, head_cost = [], 0
    run = _best_run(lines, budget - head_cost, cap, frozenset(), skipped)
    if run is None:
        return _opening(lines, first, budget, max_chars)
    a, b = run
    if head and a <= max(head) + 2:  # the passage runs on from the head
        a = min(head)
        head, head_cost = [], 0
    core = range(a, b + 1)
    room = budget - head_cost - sum(lines.cost(j, cap) for j in core)
    keep: dict[int, tuple[int, int]] = {}  # line -> (where to clip it, to how many chars)
    if a == b and lines.sizes[a] > budget - head_cost:  # one long line: cut around its match
        keep[a] = (lines.at[a] or 0, max(60, budget - head_cost - 10))
        room = 0
    a, b, room = _grow(lines, a, b, room, cap, skipped)
    for j in [*head, *range(a, b + 1)]:
        keep.setdefault(j, (lines.at[j] or 0, cap))
    covered = {k for i in keep for k in lines.held[i]}
    missing = frozenset(
        k for i in lines.hits for k in lines.held[i] if k not in covered and terms[k].term
    )
    if room >= SECOND_MIN:  # the terms left out first, else the next best region
        banned = skipped | frozenset(keep)
        small = min(cap, room - 10)
        others = frozenset(range(len(terms))) - missing if missing else frozenset()
        second = _best_run(lines, room - 4, small, others, banned)
        if second is not None:
            c, d = second
            used = sum(lines.cost(j, small) for j in range(c, d + 1))
            c, d, _ = _grow(lines, c, d, room - 4 - used, small, banned)
            for j in range(c, d + 1):
                keep[j] = (lines.at[j] or 0, small)
    # Over the budget (the gap marks, clipped lines' marks): the lines farthest from the
    # passage's core go first, then the head, then the core from its end.
    order = sorted(
        keep,
        key=lambda j: (j in core, j in head, -j if j in core else -abs(j - core.start)),
    )
    text = _render(lines, keep, first)
    while len(text.encode("utf-8")) > budget and len(keep) > 1:
        del keep[order.pop(0)]
        text = _render(lines, keep, first)
    return text[:max_chars] if max_chars is not None else text


def _opening(lines: _Lines, first: int, budget: int, max_chars: int | None) -> str:
    """The chunk's first whole lines within `budget` (no term was found in it)."""
    out: list[str] = []
    used = 0
    for line in lines.lines[first:]:
        cost = _size(line)
        if used + cost > budget - 4:
            if not out:
                out.append(_clip(line, 0, budget - 4))
            break
        out.append(line)
        used += cost
    text = "\n".join(out) + "\n" + GAP
    return text[:max_chars] if max_chars is not None else text


def _render(lines: _Lines, keep: dict[int, tuple[int, int]], first: int) -> str:
    """The kept lines in order, ``…`` where lines are left out (not before `first`)."""
    out: list[str] = []
    previous = first - 1
    for i in sorted(keep):
        if i != previous + 1:
            out.append(GAP)
        out.append(_clip(lines.lines[i], *keep[i]))
        previous = i
    if previous < len(lines.lines) - 1:
        out.append(GAP)
    return "\n".join(out)
