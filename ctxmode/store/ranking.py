"""How a candidate chunk is scored against a query, once the ranked FTS lists are fused.

Score = fused rank (0..1) + share of the query's terms present (in the chunk, its title,
or its file's path) + terms in the title + a definition the title names (``def dedent``
for ``dedent``; a dotted reference resolved to its definition) + identifiers as written +
a pasted message found verbatim or phrase by phrase + proximity and adjacency of all
terms. Shares are of the query's weight, each term weighing its inverse document frequency
(`weights`), so a chunk holding the rare words of a query beats one holding its common
ones. A query of three or more terms (a question, a pasted message) adds what its rare
terms say, read where words and identifier parts start (`_telling_terms`). A question's
rare term missing from a chunk counts at `W_RELATED` of its weight where the chunk holds a
related word of it (`thesaurus`), in full when no chunk holds the term itself. The weights
were set on judged query sets and checked on held-out ones
(``benchmarks/retrieval_eval.py``).
"""

import re
from collections.abc import Sequence

from ctxmode.store import query as q
from ctxmode.store.excerpt import Telling, head_lines

W_TITLE_CODE = 0.6
W_TITLE_PROSE = 0.3
W_NAME = 0.8
W_PLACE = 0.3
W_PARENT = 0.5  # a name the title's enclosing definition defines (class A > def b: a)
W_RESOLVED = 1.5
# A short query naming a file and a definition in it, as words (see `Scorer.score`).
W_MODULE_NAME = 0.75
MODULE_TERMS_MAX = 3
W_LITERAL = 0.5
W_REFERENCE = 0.3
W_PHRASE = 1.0
W_VERBATIM = 1.0
VERBATIM_MIN = 12
W_PROXIMITY = 0.5
W_ADJACENT = 0.25
# Queries of MANY_TERMS or more terms (questions, pasted messages): rare terms.
MANY_TERMS = 3
W_RARE = 0.5
W_WINDOW = 1.0
W_SATURATED = 1.0
K1 = 1.2
AVERAGE_CHUNK = 1000  # characters
W_HEAD = 1.0
W_PRIVATE = 0.3
# A question's term found in a chunk only as a related word (`thesaurus`) counts for this
# share of its weight; in full when no chunk holds the term itself.
W_RELATED = 0.5
_COUNT_MAX = 20  # occurrences of a term worth counting (they saturate)
_RUN_MAX = 4  # consecutive terms that may spell one name
_DEFINED = re.compile(r"\b(?:def|class|function|fn|func|method)\s+([\w$]+)")
_LABEL_SPLIT = re.compile(r"[^\w]+|_")
_PLAIN = re.compile(r"[\w ]+")


class Scorer:
    """Scores the candidates of one parsed query."""

    def __init__(
        self,
        parsed: q.ParsedQuery,
        extra: dict[str, tuple[str, ...]],
        corrections: dict[str, str],
        idf: Sequence[float] = (),
        related: dict[str, tuple[str, ...]] | None = None,
        unseen: frozenset[str] = frozenset(),
    ) -> None:
        self.parsed = parsed
        self.terms = parsed.terms
        self.extra = extra
        self.needles = [q.term_patterns(t, extra.get(t.text, ())) for t in self.terms]
        # A question's related words (`thesaurus`), and the share of a term's weight they
        # earn where the term itself is absent.
        related = related or {}
        self.related = [related.get(t.text, ()) for t in self.terms]
        self.related_share = [1.0 if t.text in unseen else W_RELATED for t in self.terms]
        self.related_matchers = [q.word_matcher(r) if r else None for r in self.related]
        # Each term's share of the query's weight: its IDF, or an equal share without one.
        raw = list(idf) if len(idf) == len(self.terms) else [1.0] * len(self.terms)
        total = sum(raw) or 1.0
        self.weights = [w / total for w in raw]
        # What an excerpt looks for: each term by its weight, two terms written together
        # by their mean, a pasted message's word runs by the whole query's.
        self.telling = [
            Telling(w, *q.term_matchers(t, extra.get(t.text, ())))
            for t, w in zip(self.terms, self.weights, strict=True)
        ]
        pairs = zip(self.terms, self.terms[1:], self.weights, self.weights[1:], strict=False)
        for first, second, w1, w2 in pairs:
            pair = q.pair_matcher(first, second)
            if pair is not None:
                self.telling.append(Telling((w1 + w2) / 2, pair, term=False))
        self.phrases = [q.phrase_pattern(p) for p in parsed.phrases]
        self.telling += [Telling(1.0, q.phrase_matcher(p), term=False) for p in parsed.phrases]
        self.literals = [t.literal for t in self.terms if t.literal]
        self.question = q.is_question(parsed)
        # Pasted text (several words) found as-is; a lone identifier is the references' job.
        words = parsed.raw.lower().split()
        verbatim = " ".join(words) if len(words) > 1 else ""
        self.verbatim = verbatim if len(verbatim) >= VERBATIM_MIN else ""
        # In a pasted message the reference (json.decoder.JSONDecodeError) is context; the
        # chunk producing the message is the answer, so resolving it counts for less.
        self.resolve_weight = W_RESOLVED if len(self.terms) <= 3 else W_RESOLVED / 2
        # Each term as corrected (a typo's correction), what names and file names match.
        self.words = [corrections.get(t.text, t.text) for t in self.terms]
        # Words and identifiers only (`textwrap dedent`), not a message (`--- Logging error`).
        self.plain = _PLAIN.fullmatch(parsed.raw.strip()) is not None

    def _telling_terms(self, content: str, lowered: str, title: str, titled: list[bool]) -> float:
        """What the rare terms of a query of several words say about a chunk.

        Reading each term where a word or a camelCase / snake_case part starts, in its
        inflected forms: the weight of the terms present (so a chunk holding the rare
        words beats one repeating common ones), the weight held by the best three
        consecutive lines (the terms of an answer sit together), their occurrences
        saturating as in BM25, and, for a question in words, the weight the chunk's head
        (signature, docstring summary, heading) holds, and a private helper's
        definition counting for less than a public one.
        """
        tells = self.telling[: len(self.terms)]
        counts = [0] * len(tells)
        lines: dict[int, set[int]] = {}
        weights = list(self.weights)
        for k, tell in enumerate(tells):
            found = tell.own.positions(content, lowered, _COUNT_MAX)
            if not found and tell.extra is not None:  # expansions: only where it is absent
                found = tell.extra.positions(content, lowered, _COUNT_MAX)
            related = self.related_matchers[k]
            if not found and related is not None:  # related words: for less
                found = related.positions(content, lowered, _COUNT_MAX)
                if found:
                    weights[k] *= self.related_share[k]
            counts[k] = len(found)
            for at in found:
                lines.setdefault(content.count("\n", 0, at), set()).add(k)
        present = sum(w for w, n, t in zip(weights, counts, titled, strict=True) if n or t)
        window = 0.0
        for i in lines:
            held = lines[i] | lines.get(i + 1, set()) | lines.get(i + 2, set())
            window = max(window, sum(weights[k] for k in held))
        length = 0.25 + 0.75 * len(content) / AVERAGE_CHUNK
        saturated = sum(w * n / (n + K1 * length) for w, n in zip(weights, counts, strict=True))
        score = W_RARE * present + W_WINDOW * window + W_SATURATED * saturated
        if self.question:
            head = head_lines(content.split("\n", 12)[:12])
            score += W_HEAD * sum(
                weights[k] for k in set().union(*(lines.get(i, set()) for i in head))
            )
            if _private(title):
                score -= W_PRIVATE
        return score

    def score(self, fused: float, label: str, title: str, content: str, kind: str) -> float:
        """`fused` is the chunk's fused rank score normalised to the best one (0..1]."""
        terms, needles, references = self.terms, self.needles, self.parsed.references
        original, heading = content, title
        content = content.lower()
        title = title.lower()
        # A term naming the file (textwrap in textwrap.dedent) is present by location.
        place = set(_LABEL_SPLIT.split(label.lower()))
        in_place = [t.text in place or w in place for t, w in zip(terms, self.words, strict=True)]
        weights = self.weights
        coverage = sum(
            w
            for w, group, located in zip(weights, needles, in_place, strict=True)
            if located or any(n in content or n in title for n in group)
        )
        full = coverage  # the terms as written
        for k, (w, group, located) in enumerate(zip(weights, needles, in_place, strict=True)):
            others = self.related[k]
            if others and not located and not any(n in content or n in title for n in group):
                if any(n in content or n in title for n in others):
                    coverage += self.related_share[k] * w
        titled = [any(n in title for n in group) for group in needles]
        title_hits = sum(w for w, t in zip(weights, titled, strict=True) if t)
        weight = W_TITLE_CODE if kind == "code" else W_TITLE_PROSE
        score = fused + coverage + weight * title_hits
        score += W_PLACE * sum(in_place) / len(terms)
        names = q.definition_names(title)
        if names:
            # The innermost definition of each one the title lists (`class A > def b, def c`).
            own = set().union(
                *(q.definition_names(part.rsplit(">", 1)[-1]) for part in title.split(", "))
            )
            matched = _name_match(terms, self.words, own, self.extra)
            matched += W_PARENT * _name_match(terms, self.words, names - own, self.extra)
            score += W_NAME * matched / len(terms)
            if references:
                resolved = sum(_resolves(ref, names, place) for ref in references)
                score += self.resolve_weight * resolved / len(references)
            elif self.plain and len(terms) <= MODULE_TERMS_MAX and any(in_place):
                # `textwrap dedent` as written for `textwrap.dedent`: one term names the
                # file, another the definition this chunk makes.
                if any(
                    w in own and not located
                    for w, located in zip(self.words, in_place, strict=True)
                ):
                    score += W_MODULE_NAME
        if self.literals:
            found = sum(1 for lit in self.literals if lit in content)
            score += W_LITERAL * found / len(self.literals)
        if references:
            score += W_REFERENCE * sum(1 for ref in references if ref in content) / len(references)
        if self.verbatim and self.verbatim in content:
            score += W_VERBATIM
        if self.phrases:
            found = sum(1 for p in self.phrases if p.search(content))
            score += W_PHRASE * found / len(self.phrases)
        if len(terms) >= MANY_TERMS:
            score += self._telling_terms(original, content, heading, titled)
        if len(needles) > 1 and full > 0.999:
            span = q.min_span(content, needles)
            if span is not None:
                score += W_PROXIMITY / (1 + span / 80)
            score += W_ADJACENT * min(1.0, q.adjacent_pairs(content, needles) / 4)
        return score


def _private(title: str) -> bool:
    """The definition a code chunk's title ends with is private (``def _helper``)."""
    names = _DEFINED.findall(title)
    return bool(names) and names[-1].startswith("_") and names[-1] != "__init__"


def _name_match(
    terms: list[q.Term], words: list[str], names: set[str], extra: dict[str, tuple[str, ...]]
) -> float:
    """How many terms a chunk's title defines: exactly (or its typo correction), as a
    run of consecutive terms spelling one name (``temporary directory`` → ``class
    TemporaryDirectory``, ``ip network`` → ``def ip_network``), or, for a fragment, as the
    start of a name (``copytr`` → ``def copytree``, not ``_copytree``). `words`: the
    terms as corrected."""
    units = [0.0] * len(terms)
    for k, term in enumerate(terms):
        if term.text in names or words[k] in names:
            units[k] = 1.0
        elif term.text in extra and any(name.startswith(term.text) for name in names):
            units[k] = 0.6
    if len(terms) > 1:
        joined = {name.replace("_", "") for name in names}
        for start in range(len(terms) - 1):
            for end in range(start + 2, min(len(terms), start + _RUN_MAX) + 1):
                if "".join(words[start:end]).replace("_", "") in joined:
                    units[start:end] = [1.0] * (end - start)
    return sum(units)


def _resolves(reference: str, names: set[str], place: set[str]) -> float:
    """1 when a chunk defines what a dotted reference names (``textwrap.dedent``: a
    ``def dedent`` in textwrap.py), 0.5 when only some qualifiers agree, else 0."""
    parts = [p for p in q.reference_parts(reference) if p]
    if len(parts) < 2 or parts[-1] not in names:
        return 0.0
    qualifiers = parts[:-1]
    agreeing = sum(1 for part in qualifiers if part in names or part in place)
    if agreeing == len(qualifiers):
        return 1.0
    return 0.5 if agreeing else 0.0
