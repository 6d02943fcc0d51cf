"""How a candidate chunk is scored against a query, once the ranked FTS lists are fused.

Score = fused rank (0..1) + share of the query's terms present (in the chunk, its title,
or its file's path) + terms in the title + a definition the title names (``def dedent``
for ``dedent``; a dotted reference resolved to its definition) + identifiers as written +
a pasted message found verbatim or phrase by phrase + proximity and adjacency of all
terms. The weights were set on a judged query set and checked on a held-out one
(``benchmarks/retrieval_eval.py``).
"""

import re

from ctxmode.store import query as q

W_TITLE_CODE = 0.6
W_TITLE_PROSE = 0.3
W_NAME = 0.8
W_PLACE = 0.3
W_RESOLVED = 1.5
W_LITERAL = 0.5
W_REFERENCE = 0.3
W_PHRASE = 1.0
W_VERBATIM = 1.0
VERBATIM_MIN = 12
W_PROXIMITY = 0.5
W_ADJACENT = 0.25
_LABEL_SPLIT = re.compile(r"[^\w]+|_")


class Scorer:
    """Scores the candidates of one parsed query."""

    def __init__(
        self,
        parsed: q.ParsedQuery,
        extra: dict[str, tuple[str, ...]],
        corrections: dict[str, str],
    ) -> None:
        self.parsed = parsed
        self.terms = parsed.terms
        self.extra = extra
        self.corrections = corrections
        self.needles = [q.term_patterns(t, extra.get(t.text, ())) for t in self.terms]
        self.flat = [n for group in self.needles for n in group]
        self.literals = [t.literal for t in self.terms if t.literal]
        self.phrases = [q.phrase_pattern(p) for p in parsed.phrases]
        # Pasted text (several words) found as-is; a lone identifier is the references' job.
        words = parsed.raw.lower().split()
        verbatim = " ".join(words) if len(words) > 1 else ""
        self.verbatim = verbatim if len(verbatim) >= VERBATIM_MIN else ""
        # In a pasted message the reference (json.decoder.JSONDecodeError) is context; the
        # chunk producing the message is the answer, so resolving it counts for less.
        self.resolve_weight = W_RESOLVED if len(self.terms) <= 3 else W_RESOLVED / 2

    def score(self, fused: float, label: str, title: str, content: str, kind: str) -> float:
        """`fused` is the chunk's fused rank score normalised to the best one (0..1]."""
        terms, needles, references = self.terms, self.needles, self.parsed.references
        content = content.lower()
        title = title.lower()
        # A term naming the file (textwrap in textwrap.dedent) is present by location.
        place = set(_LABEL_SPLIT.split(label.lower()))
        in_place = [t.text in place for t in terms]
        present = sum(
            1
            for group, located in zip(needles, in_place, strict=True)
            if located or any(n in content or n in title for n in group)
        )
        coverage = present / len(needles)
        title_hits = sum(1 for group in needles if any(n in title for n in group))
        weight = W_TITLE_CODE if kind == "code" else W_TITLE_PROSE
        score = fused + coverage + weight * title_hits / len(needles)
        score += W_PLACE * sum(in_place) / len(terms)
        names = q.definition_names(title)
        if names:
            matched = _name_match(terms, names, self.extra, self.corrections)
            score += W_NAME * matched / len(terms)
            if references:
                resolved = sum(_resolves(ref, names, place) for ref in references)
                score += self.resolve_weight * resolved / len(references)
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
        if len(needles) > 1 and coverage == 1.0:
            span = q.min_span(content, needles)
            if span is not None:
                score += W_PROXIMITY / (1 + span / 80)
            score += W_ADJACENT * min(1.0, q.adjacent_pairs(content, needles) / 4)
        return score


def _name_match(
    terms: list[q.Term],
    names: set[str],
    extra: dict[str, tuple[str, ...]],
    corrections: dict[str, str],
) -> float:
    """How many terms a chunk's title defines: exactly (or its typo correction), or, for
    a fragment, as the start of a name (``copytr`` → ``def copytree``, not ``_copytree``)."""
    units = 0.0
    for term in terms:
        if term.text in names or corrections.get(term.text) in names:
            units += 1.0
        elif term.text in extra and any(name.startswith(term.text) for name in names):
            units += 0.6
    return units


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
