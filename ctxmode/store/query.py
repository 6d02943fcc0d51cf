"""Query handling that needs no database: parsing, FTS5 expressions, matching in text.

User text never reaches ``MATCH`` as syntax: it is cut into terms (words, dotted or
snake_case identifiers, CJK runs) and each term is emitted as a quoted FTS5 phrase, so
operators, quotes, colons and parentheses in a query are just characters.
"""

import re
from bisect import bisect_left, bisect_right
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field

from ctxmode.store.text import (
    CJK_RUN,
    MAX_VOCAB_LEN,
    MIN_VOCAB_LEN,
    QUERY_NOISE,
    SYNONYMS,
    cjk_bigrams,
    has_cjk,
    spelling_variant,
)
from ctxmode.store.thesaurus import related

# A compound identifier (os.path.join, get_user_name, foo-bar, a::b) or a single word.
_TERM = re.compile(r"[^\W_]+(?:[._:/\\-]+[^\W_]+)*")
_SPLIT = re.compile(r"[^\w]+|_+")


@dataclass(frozen=True)
class Term:
    """One query term: its text, the words it contains, and its FTS5 phrase."""

    text: str
    words: tuple[str, ...]
    cjk: bool = False
    literal: str = ""  # a compound identifier as written (os.path.join, get_user_name)
    synonyms: tuple[str, ...] = ()

    @property
    def fts(self) -> str:
        phrase = quote_phrase(" ".join(self.words))
        if not self.synonyms:
            return phrase
        return group_expr([phrase, *(quote_phrase(s) for s in self.synonyms)])

    @property
    def expandable(self) -> bool:
        """Worth a substring lookup: one latin word or identifier as long as a known
        word may be."""
        return (
            not self.cjk
            and MIN_VOCAB_LEN <= len(self.text) <= MAX_VOCAB_LEN
            and " " not in self.text
        )


@dataclass
class ParsedQuery:
    raw: str
    terms: list[Term] = field(default_factory=list)
    # Runs of 3+ words between punctuation: the literal text of a pasted message.
    phrases: list[str] = field(default_factory=list)
    # Dotted references as written (difflib.sequencematcher, os.path.join).
    references: list[str] = field(default_factory=list)


# What a question in words does not hold: code, paths, quoted or bracketed text.
_CODEISH = re.compile(r"[:()\[\]{}<>=_\"`/\\]|[a-z][A-Z]|\w\.\w")


def is_question(parsed: "ParsedQuery") -> bool:
    """A question in a user's words (three or more terms, nothing like code in it)."""
    return len(parsed.terms) >= 3 and not parsed.references and not _CODEISH.search(parsed.raw)


def related_words(parsed: "ParsedQuery") -> dict[str, tuple[str, ...]]:
    """For a question in words, each plain word's related words (`thesaurus`) not
    already among the query's terms; nothing for any other query."""
    if not is_question(parsed):
        return {}
    own = {t.text for t in parsed.terms}
    out: dict[str, tuple[str, ...]] = {}
    for term in parsed.terms:
        if term.cjk or term.literal:
            continue
        words = tuple(w for w in related(term.text) if w not in own)
        if words:
            out[term.text] = words
    return out


def quote_phrase(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


_REFERENCE_SEP = re.compile(r"::|[.:/\\]")
_PHRASE_BREAK = re.compile(r"[^\w\s'-]+|(?<!\w)'|'(?!\w)|\b\d+\b")
_PHRASE_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
MAX_PHRASES = 3
MAX_PHRASE_WORDS = 32  # a run's first words: enough to find pasted text where it is written
# Terms a query is searched with, at most: a longer paste (a log, a file) keeps its first
# and last ones, where a traceback's context and its error sit.
MAX_TERMS = 64
# Queries one tool call searches (ctx_search, ctx_batch_execute), at most.
MAX_QUERIES = 100
MAX_HITS = 100  # results one query returns, at most
MAX_TERM_WORDS = 16  # words of one identifier matched as a phrase (x_x_x_... pasted 10,000 times)


def reference_parts(reference: str) -> list[str]:
    return _REFERENCE_SEP.split(reference)


def _word_term(token: str) -> Term | None:
    """A plain word, or a snake_case / kebab-case identifier kept whole."""
    token = token.strip("_-")
    words = tuple(w for w in _SPLIT.split(token) if w)[:MAX_TERM_WORDS]
    if not words:
        return None
    if len(words) > 1:
        return Term(token, words, literal=token)
    synonyms = SYNONYMS.get(token, ())
    variant = spelling_variant(token)
    if variant and variant not in synonyms:
        synonyms = (*synonyms, variant)
    return Term(token, words, synonyms=synonyms)


def _phrases(text: str) -> list[str]:
    found = []
    for segment in _PHRASE_BREAK.split(text):
        words = _PHRASE_WORD.findall(segment)
        start = 0
        while start < len(words) and words[start] in QUERY_NOISE:
            start += 1
        if len(words) - start >= 3:
            words = words[start:]
        if len(words) >= 3:
            found.append(" ".join(words[:MAX_PHRASE_WORDS]))
    found.sort(key=len, reverse=True)
    return found[:MAX_PHRASES]


def parse_query(raw: str) -> ParsedQuery:
    """Cut `raw` into terms; drop question words unless nothing else is left.

    A dotted or ``::`` reference (``SequenceMatcher.get_opcodes``) becomes one term per
    part, since code defines the parts apart (``class SequenceMatcher`` … ``def
    get_opcodes``); the reference as written is kept to reward chunks that use it.
    """
    text = raw.lower()
    terms: list[Term] = []
    references: list[str] = []
    seen: set[str] = set()

    def add(term: Term | None) -> None:
        if term is not None and term.text not in seen:
            seen.add(term.text)
            terms.append(term)

    for run in CJK_RUN.findall(text):
        add(Term(run, tuple(cjk_bigrams(run)), cjk=True))
    latin = CJK_RUN.sub(" ", text)
    for match in _TERM.finditer(latin):
        token = match.group(0).strip("._:/\\-")
        parts = [p for p in _REFERENCE_SEP.split(token) if p.strip("_-")]
        if len(parts) > 1:
            references.append(token)
            for part in parts:
                if not part.isdigit():
                    add(_word_term(part))
        else:
            add(_word_term(token))
    meaningful = [t for t in terms if t.cjk or (t.text not in QUERY_NOISE and len(t.text) >= 2)]
    if meaningful:
        terms = meaningful
    if len(terms) > MAX_TERMS:
        terms = terms[: MAX_TERMS // 2] + terms[-(MAX_TERMS // 2) :]
    return ParsedQuery(raw, terms, _phrases(latin), references[:MAX_TERMS])


_DEFINITION = re.compile(
    r"\b(?:def|class|function|fn|func|method|type|interface|enum|struct|trait|impl|const"
    r"|macro|module|union|namespace|record|object)\s+([\w$.:~]+)"
)


def definition_names(title: str) -> set[str]:
    """Names a code chunk's title defines: ``class A > def b`` gives {"a", "b"}."""
    names: set[str] = set()
    for name in _DEFINITION.findall(title.lower()):
        names.add(name)
        names.update(p for p in _REFERENCE_SEP.split(name) if p)
    return names


def phrase_pattern(phrase: str) -> re.Pattern[str]:
    """Matches the words of `phrase` in order, whatever punctuation lies between them."""
    return re.compile(r"\b" + r"\W+".join(re.escape(w) for w in phrase.split()) + r"\b")


def group_expr(alternatives: list[str]) -> str:
    return alternatives[0] if len(alternatives) == 1 else "(" + " OR ".join(alternatives) + ")"


def and_expr(groups: list[str]) -> str:
    return " AND ".join(groups)


def or_expr(groups: list[str]) -> str:
    return " OR ".join(groups)


# --------------------------------------------------------------------------- matching in text


def term_patterns(term: Term, extra: tuple[str, ...] = ()) -> list[str]:
    """Lower-case strings whose presence in a chunk means `term` matched there.

    Porter stemming matches word variants, so a long word is looked for by its first
    characters (``connection`` → ``connect``).
    """
    out: list[str] = []
    if term.cjk:
        out.append(term.text)
    else:
        out.extend(w[: max(4, len(w) - 3)] if len(w) > 6 else w for w in term.words)
    out.extend(term.synonyms)
    out.extend(extra)
    return out


def stems(word: str) -> set[str]:
    """`word` and the prefixes its inflections share (``cached`` → ``cach``, matching
    ``cache`` and ``caching``; ``directories`` → ``director``)."""
    out = {word}
    if len(word) > 6:
        out.add(word[: max(4, len(word) - 3)])  # connection → connect
    base = base_form(word)
    if base:
        out.add(base)
    return out


def base_form(word: str) -> str | None:
    """`word` without its inflection's suffix (``stopped`` → ``stop``, ``caches`` →
    ``cach``), or None when it has none."""
    for suffix, keep in (("ies", 3), ("ing", 4), ("ed", 3), ("es", 3), ("ly", 4), ("s", 3)):
        if word.endswith(suffix) and len(word) - len(suffix) >= keep:
            if suffix == "s" and word[-2] in "su":  # class, status
                continue
            if suffix == "es" and not (word[-3] in "sxz" or word[-4:-2] in ("ch", "sh")):
                continue  # names → name (by "s"), not nam
            stem = word[: -len(suffix)]
            if suffix in ("ing", "ed") and len(stem) > 3 and stem[-1] == stem[-2]:
                stem = stem[:-1]  # stopped → stop, running → run
            return stem
    return None


def _starts_word(text: str, at: int) -> bool:
    """A word starts at `at`: after a non-alphanumeric, or at a camelCase or ACRONYMWord
    boundary."""
    if at == 0:
        return True
    before, here = text[at - 1], text[at]
    if not before.isalnum():
        return True
    if here.isupper() and (before.islower() or before.isdigit()):
        return True
    return here.isupper() and before.isupper() and text[at + 1 : at + 2].islower()


class _Positions:
    """What both kinds of pattern offer besides `positions`."""

    __slots__ = ()

    def positions(self, text: str, lowered: str | None = None, most: int = 0) -> list[int]:
        raise NotImplementedError

    def first(self, text: str, lowered: str | None = None) -> int | None:
        found = self.positions(text, lowered, 1)
        return found[0] if found else None


class WordPattern(_Positions):
    """Words found where a word, or a camelCase / snake_case part of one, starts: ``size``
    in ``get_terminal_size`` and ``getTerminalSize``, not in ``oversize``. Case-insensitive
    for the words, case-aware for the boundary. Words (and their stems, which are
    prefixes) are looked for with ``str.find`` in the lower-cased text, an `expression` (an
    identifier's parts with any separator, a phrase) with ``re``; both only after a
    substring test (`needles`, any of them or `every` one): most chunks hold none of a
    query's words."""

    __slots__ = ("_bounded", "_every", "_expression", "_whole", "_words", "needles")

    def __init__(
        self,
        words: Sequence[str] = (),
        expression: str = "",
        needles: Sequence[str] = (),
        bounded: bool = True,
        every: bool = False,
        whole: Sequence[str] = (),
    ) -> None:
        # A word that starts with another one adds nothing: its matches are the other's.
        kept = sorted(set(words), key=len)
        self._words = tuple(
            w for i, w in enumerate(kept) if not any(w.startswith(v) for v in kept[:i])
        )
        self._expression = expression
        self._bounded = bounded
        self._every = every
        self.needles = (*self._words, *needles) if self._words else tuple(needles)
        self._whole = frozenset(whole)

    def whole_word(self, text: str, at: int) -> bool:
        """The match at `at` is one of the words as given, not a longer word (``differ:``,
        not ``differing``); always true without `whole` words."""
        if not self._whole:
            return True
        end = at + 1
        while (
            end < len(text)
            and text[end].isalnum()
            and not (text[end].isupper() and text[end - 1].islower())
        ):
            end += 1
        return text[at:end].lower() in self._whole

    def positions(self, text: str, lowered: str | None = None, most: int = 0) -> list[int]:
        """Where the matches in `text` start, in order (the first `most` of them, when
        given); `lowered` is ``text.lower()``."""
        low = text.lower() if lowered is None else lowered
        if self._every:
            if not all(n in low for n in self.needles):
                return []
        else:
            for needle in self.needles:
                if needle in low:
                    break
            else:
                return []
        found: set[int] = set()
        if len(low) == len(text):
            for word in self._words:
                at = low.find(word)
                while at != -1 and len(found) < _FOUND_MAX:
                    found.add(at)
                    at = low.find(word, at + 1)
        elif self._words:  # lower case changed the length: positions must come from `text`
            plain = "|".join(re.escape(w) for w in self._words)
            found.update(m.start() for m in re.compile(plain, re.I).finditer(text))
        if self._expression:
            found.update(m.start() for m in re.compile(self._expression, re.I).finditer(text))
        out: list[int] = []
        for at in sorted(found):
            if not self._bounded or _starts_word(text, at):
                out.append(at)
                if len(out) == most:
                    break
        return out


_FOUND_MAX = 200
_JOINED = re.compile(r"[^\W_]+[\W_]{0,3}")


class PairPattern(_Positions):
    """Two words written next to each other, in order, at most three separators apart
    (``logging error`` in ``--- Logging error ---``, ``temporary directory`` in
    ``TemporaryDirectory``)."""

    __slots__ = ("_first", "_second", "needles")

    def __init__(self, first: WordPattern, second: WordPattern) -> None:
        self._first, self._second = first, second
        self.needles = first.needles

    def positions(self, text: str, lowered: str | None = None, most: int = 0) -> list[int]:
        low = text.lower() if lowered is None else lowered
        seconds = self._second.positions(text, low)
        out: list[int] = []
        if seconds:
            for at in self._first.positions(text, low):
                j = bisect_right(seconds, at)
                if j < len(seconds) and _JOINED.fullmatch(text, at, seconds[j]):
                    out.append(at)
                    if len(out) == most:
                        break
        return out

    def whole_word(self, text: str, at: int) -> bool:
        return True


Matcher = WordPattern | PairPattern


def _word_alternatives(words: Sequence[str]) -> tuple[list[str], list[str]]:
    """(plain words with their stems, expressions for identifiers of several parts)."""
    plain: set[str] = set()
    compound: set[str] = set()
    for word in words:
        parts = [p for p in _SPLIT.split(word.lower()) if p]
        if len(parts) > 1:  # snake_case as written, or its camelCase / spaced spellings
            compound.add(r"[\W_]?".join(re.escape(p) for p in parts))
        elif parts:
            plain.update(stems(parts[0]))
    return sorted(plain), sorted(compound)


def word_matcher(words: Sequence[str]) -> WordPattern | None:
    """Matches any of `words` or their stems where a word or an identifier part starts."""
    plain, compound = _word_alternatives(words)
    whole = [w.lower() for w in words if len(_SPLIT.split(w)) == 1]
    if not compound:
        return WordPattern(plain, whole=whole) if plain else None
    # An identifier of several parts is only there if its longest part is.
    longest = [max(_SPLIT.split(w.lower()), key=len) for w in words if _SPLIT.sub("", w)]
    return WordPattern(plain, "|".join(compound), needles=longest, whole=whole)


def term_matchers(
    term: Term, extra: tuple[str, ...] = ()
) -> tuple[WordPattern, WordPattern | None]:
    """(the term itself with its stems and synonyms, the words it was expanded to)."""
    own = None if term.cjk else word_matcher(_own_words(term))
    if own is None:
        own = WordPattern([term.text], bounded=False)
    return own, word_matcher(extra) if extra else None


def _own_words(term: Term) -> list[str]:
    return [term.literal] if term.literal else [term.text, *term.synonyms]


def pair_matcher(first: Term, second: Term) -> PairPattern | None:
    """Two consecutive query terms written next to each other, in order."""
    if first.cjk or second.cjk:
        return None
    a, b = word_matcher(_own_words(first)), word_matcher(_own_words(second))
    return PairPattern(a, b) if a is not None and b is not None else None


def phrase_matcher(phrase: str) -> WordPattern:
    """The words of `phrase` in order, whatever punctuation lies between them, any case."""
    return WordPattern(
        expression=phrase_pattern(phrase).pattern, needles=phrase.split(), every=True
    )


def _positions(haystack: str, needle: str) -> list[int]:
    out: list[int] = []
    start = haystack.find(needle)
    while start != -1 and len(out) < 200:
        out.append(start)
        start = haystack.find(needle, start + 1)
    return out


def min_span(text: str, needles: list[list[str]]) -> int | None:
    """Smallest window of `text` that holds one alternative of every needle group."""
    events: list[tuple[int, int, int]] = []
    for group, alternatives in enumerate(needles):
        found = False
        for alt in alternatives:
            for pos in _positions(text, alt):
                events.append((pos, pos + len(alt), group))
                found = True
        if not found:
            return None
    events.sort()
    need = len(needles)
    counts = [0] * need
    have = 0
    best: int | None = None
    left = 0
    ends: deque[int] = deque()  # window events by falling end: the first ends last
    for right, (_, end, g) in enumerate(events):
        while ends and events[ends[-1]][1] <= end:
            ends.pop()
        ends.append(right)
        counts[g] += 1
        if counts[g] == 1:
            have += 1
        while have == need:
            while ends[0] < left:
                ends.popleft()
            span = events[ends[0]][1] - events[left][0]
            if best is None or span < best:
                best = span
            lg = events[left][2]
            counts[lg] -= 1
            if counts[lg] == 0:
                have -= 1
            left += 1
    return best


def adjacent_pairs(text: str, needles: list[list[str]], gap: int = 30) -> int:
    """Occurrences of consecutive terms within `gap` characters, each right hit used once."""
    total = 0
    for left, right in zip(needles, needles[1:], strict=False):
        rights = sorted(p for alt in right for p in _positions(text, alt))
        used: set[int] = set()
        for alt in left:
            for pos in _positions(text, alt):
                end = pos + len(alt)
                at = bisect_left(rights, end)
                while at < len(rights) and rights[at] <= end + gap:
                    if rights[at] not in used:
                        used.add(rights[at])
                        total += 1
                        break
                    at += 1
    return total


# --------------------------------------------------------------------------- excerpts

SNIPPET_MAX = 1500  # characters, the most a hit's excerpt may hold (see `excerpt`)


def has_cjk_query(raw: str) -> bool:
    return has_cjk(raw)
