"""Search over one knowledge base connection: ranked FTS5 lists, fused, then reranked.

Ranked lists (the query's phrases, all of its terms, any of them, substrings of known
words, typo corrections against the vocabulary, a short query's words within the files one
of them names, and for a question in words its rare terms' related words) are fused by
reciprocal rank, then each candidate is scored by how
well it answers the query (`ranking`), and shows the lines that best cover the query
(`excerpt`). Freshness (which hits may be served at all) is the store's job.
"""

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from ctxmode import db
from ctxmode.store import query as q
from ctxmode.store import thesaurus
from ctxmode.store.excerpt import EXCERPT_BYTES, TOP_BYTES, excerpt
from ctxmode.store.ranking import Scorer
from ctxmode.store.text import QUERY_NOISE, STOPWORDS, WORD
from ctxmode.store.vocab import Vocabulary
from ctxmode.store.weights import TermWeights

RRF_K = 60
FETCH_MIN = 30
PARTIAL_BELOW = 10
RELATED_RARE = 100  # a question's term in at most 1 chunk in this many is expanded
# A short query's term that may name a file (see `run`): its length, and the query's.
LOCATED_MIN_CHARS = 4
LOCATED_MAX_TERMS = 3
# Unknown words a query has corrected, at most (about 6 ms each): a query holding more is
# pasted text (ids, hashes, minified code), not a few typos.
CORRECT_MAX = 8
# A search scoped to the sources whose label holds some text finds them in the label index
# first when at most this many match (a word of a file name); for more (`src`), or text too
# short for trigrams, it checks the label of each chunk the query matches.
LABELS_LOOKED_UP = 1000
SCOPE_LOOKUPS = 200  # chunks of a scope looked up in FTS5 one by one, at most


@dataclass(frozen=True)
class SearchHit:
    source: str
    title: str
    content_type: str
    layer: str  # phrase, all-terms, any-term, substring, fuzzy, located or related
    score: float
    snippet: str
    chunk_id: int
    file_path: str | None = None
    start_line: int | None = None
    end_line: int | None = None
    indexed_at: str | None = None


class Retrieval:
    """One search's view of a connection, its vocabulary and its term weights."""

    def __init__(self, con: sqlite3.Connection, vocabulary: Vocabulary, weights: TermWeights):
        self.con = con
        self.vocabulary = vocabulary
        self.weights = weights
        self._plans: dict[tuple[str, bool], str | None] = {}  # each scope's `_scope_plan`

    def ranked(
        self,
        expr: str,
        limit: int,
        source: str | None,
        content_type: str | None,
        exact: bool,
        literals: Sequence[str] = (),
    ) -> list[int]:
        sql = [
            "SELECT f.rowid AS id FROM chunks_fts f",
        ]
        params: list[object] = [expr]
        where = ["chunks_fts MATCH ?"]
        # A scope's chunks as a set: few, each is looked up in FTS5; more, each FTS5 match
        # is looked up in the set (`+` keeps FTS5 driving). Not a join from each match to
        # its label.
        joined = False
        plan = None if source is None else self._scope_plan(source, exact)
        if source is not None and plan is not None:
            scope = (
                "(SELECT id FROM sources WHERE label = ?)"
                if exact
                else "(SELECT rowid FROM labels_tri WHERE labels_tri MATCH ?)"
            )
            driver = "f.rowid" if plan == "lookup" else "+f.rowid"
            where.append(f"{driver} IN (SELECT id FROM chunks WHERE source_id IN {scope})")
            params.append(source if exact else q.quote_phrase(source))
        elif source is not None:
            sql.append("JOIN chunks c ON c.id = f.rowid JOIN sources s ON s.id = c.source_id")
            joined = True
            where.append("s.label LIKE ? ESCAPE '\\'")
            escaped = source.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            params.append(f"%{escaped}%")
        if content_type is not None or literals:
            if not joined:
                sql.append("JOIN chunks c ON c.id = f.rowid")
            for literal in literals:
                where.append("instr(lower(c.content), ?) > 0")
                params.append(literal)
            if content_type is not None:
                where.append("c.content_type = ?")
                params.append(content_type)
        sql.append("WHERE " + " AND ".join(where))
        sql.append("ORDER BY bm25(chunks_fts, 5.0, 1.0) LIMIT ?")
        params.append(limit)
        try:
            return [r[0] for r in self.con.execute(" ".join(sql), params)]
        except sqlite3.OperationalError as exc:
            if db.is_busy(exc) or db.is_corrupt(exc) or db.is_full(exc):
                raise
            return []  # an expression FTS5 cannot parse matches nothing

    def _scope_plan(self, text: str, exact: bool) -> str | None:
        """How to search the sources labelled `text` (`exact`) or whose label holds it:
        "lookup" their chunks in FTS5 one by one (at most `SCOPE_LOOKUPS` of them), "filter"
        the matches by the set of them (one label, or at most `LABELS_LOOKED_UP` holding
        it), or None: check the label of each match."""
        key = (text, exact)
        if key not in self._plans:
            self._plans[key] = self._plan(text, exact)
        return self._plans[key]

    def _plan(self, text: str, exact: bool) -> str | None:
        if exact:
            sql = "SELECT count(*), sum(chunk_count) FROM sources WHERE label = ?"
            arg = text
        elif len(text) < 3:  # no trigram to look up
            return None
        else:
            sql = (
                "SELECT count(*), sum(chunk_count) FROM sources WHERE id IN"
                " (SELECT rowid FROM labels_tri WHERE labels_tri MATCH ? LIMIT ?)"
            )
            arg = q.quote_phrase(text)
        try:
            params = (arg,) if exact else (arg, LABELS_LOOKED_UP + 1)
            sources, chunks = self.con.execute(sql, params).fetchone()
        except sqlite3.OperationalError as exc:
            if db.is_busy(exc) or db.is_corrupt(exc) or db.is_full(exc):
                raise
            # No label index (a database opened for reading only before it had one); an
            # exact label needs none, and the search meets any other error itself.
            return "filter" if exact else None
        if not exact and sources > LABELS_LOOKED_UP:
            return None
        return "lookup" if (chunks or 0) <= SCOPE_LOOKUPS else "filter"

    def run(
        self,
        query: str,
        limit: int,
        source: str | None,
        content_type: str | None,
        exact_source: bool,
        snippet_chars: int,
        hidden: frozenset[str] = frozenset(),
    ) -> tuple[list[SearchHit], dict[str, str]]:
        """The hits for `query` (at most `limit`), and the typo corrections made.
        `source` scopes it to labels containing that text (equal to it with
        `exact_source`); `hidden` labels are never returned."""
        parsed = q.parse_query(query)
        limit = min(max(1, int(limit)), q.MAX_HITS)
        if not parsed.terms:
            return [], {}
        fetch = max(FETCH_MIN, 3 * limit)
        args = (fetch, source, content_type, exact_source)

        exact = [t.fts for t in parsed.terms]
        literals = [t.literal for t in parsed.terms if t.literal]
        lists: list[tuple[str, list[int]]] = []
        if parsed.phrases:  # a pasted message matches its source text word for word
            phrases = q.or_expr([q.quote_phrase(p) for p in parsed.phrases])
            lists.append(("phrase", self.ranked(phrases, *args)))
        if literals:  # identifiers as written outrank the same words as prose
            lists.append(("all-terms", self.ranked(q.and_expr(exact), *args, literals)))
        everything = self.ranked(q.and_expr(exact), *args)
        lists.append(("all-terms", everything))
        # Partial matches and substring expansions are only worth their cost (OR queries
        # over common words score thousands of rows) when all-terms matching is thin.
        thin = len(everything) < max(PARTIAL_BELOW, limit)
        if len(exact) > 1 and thin:
            lists.append(("any-term", self.ranked(q.or_expr(exact), *args)))

        extra: dict[str, tuple[str, ...]] = {}
        corrections: dict[str, str] = {}
        groups: list[str] = []  # each term, its expansions or its correction
        corrected: list[str] = []  # each term, its correction (not its expansions)
        expanded = False
        attempts = 0  # typo corrections tried
        for term in parsed.terms:
            alternatives = [term.fts]
            # A stopword is no fragment of a longer word (`and` is not `android`).
            if (
                term.expandable
                and term.text not in QUERY_NOISE
                and (thin or not self.vocabulary.known(term.text))
            ):
                words = self.vocabulary.expansions(term.text)
                if not words and attempts < CORRECT_MAX and self._typo(term.text):
                    attempts += 1
                    fixed = self.vocabulary.correct(term.text)
                    # tokens → token is stemming's job, not a typo
                    if fixed and not (fixed.startswith(term.text) or term.text.startswith(fixed)):
                        corrections[term.text] = fixed
                        words = [fixed]
                if words:
                    expanded = True
                    extra[term.text] = tuple(words)
                    alternatives += [q.quote_phrase(" ".join(WORD.findall(w))) for w in words]
            groups.append(q.group_expr(alternatives))
            corrected.append(groups[-1] if term.text in corrections else term.fts)
        if expanded:
            layer = "fuzzy" if corrections else "substring"
            found = self.ranked(q.and_expr(groups), *args)
            if not found and len(groups) > 1:
                found = self.ranked(q.or_expr(groups), *args)
            lists.append((layer, found))
        if source is None:
            located = self._located(parsed, corrected, corrections, thin)
            lists += [
                ("located", self.ranked(e, fetch, w, content_type, False)) for e, w in located
            ]
        # A question in other words than its answer's: its rare words also match their
        # related words (`thesaurus`), when no chunk holds all of its words.
        related = {} if everything else self._related_words(parsed)
        if related:
            widened = [
                q.group_expr([g, *(q.quote_phrase(w) for w in related.get(t.text, ()))])
                for t, g in zip(parsed.terms, groups, strict=True)
            ]
            found = self.ranked(q.and_expr(widened), *args)
            if len(found) < max(PARTIAL_BELOW, limit):
                found += [c for c in self.ranked(q.or_expr(widened), *args) if c not in found]
            lists.append(("related", found))

        idf = self.weights.idf(groups) if len(groups) > 1 else [1.0]
        fused: dict[int, float] = {}
        first_layer: dict[int, str] = {}
        for layer, ids in lists:
            for rank, cid in enumerate(ids):
                fused[cid] = fused.get(cid, 0.0) + 1.0 / (RRF_K + rank + 1)
                first_layer.setdefault(cid, layer)
        if not fused:
            return [], corrections
        hits = self._rerank(
            parsed,
            fused,
            first_layer,
            extra,
            corrections,
            idf,
            hidden,
            limit,
            snippet_chars,
            related,
        )
        return hits, corrections

    def _typo(self, word: str) -> bool:
        """Whether `word` may be a typo: not a stopword, not an inflection of a word of the
        knowledge base (`dropping` is not `cropping`), not a word the thesaurus knows
        (`beep` is not `deep`). A word of the knowledge base itself `Vocabulary.correct`
        leaves alone."""
        if word in STOPWORDS or thesaurus.related(word):
            return False
        base = q.base_form(word)
        return not (base and self.vocabulary.known(base))

    def _located(
        self,
        parsed: q.ParsedQuery,
        corrected: list[str],
        corrections: dict[str, str],
        thin: bool,
    ) -> list[tuple[str, str]]:
        """(expression, file word) pairs: what to look for within the sources whose label
        holds the word. Code defines a name without its module's name: `functools.lru_cache`
        is `def lru_cache` in functools.py, and a short query whose words no chunk holds
        together (`ipaddress ip_network`) may name a file with one of them."""
        pairs: list[tuple[str, str]] = []
        if len(corrected) > LOCATED_MAX_TERMS:  # a pasted message: its text is the answer
            return pairs
        for reference in parsed.references:
            parts = [p for p in q.reference_parts(reference) if p]
            words = WORD.findall(parts[-1]) if len(parts) > 1 else []
            if not words:
                continue
            qualifiers = parts[:-1]
            pairs += [
                (q.quote_phrase(" ".join(words)), where)
                for where in qualifiers
                if len(where) >= LOCATED_MIN_CHARS
            ]
        if thin and not pairs and len(corrected) > 1:
            for k, term in enumerate(parsed.terms):
                where = corrections.get(term.text, term.text)
                if term.cjk or len(where) < LOCATED_MIN_CHARS or where in QUERY_NOISE:
                    continue
                pairs.append((q.and_expr(corrected[:k] + corrected[k + 1 :]), where))
        return pairs

    def _related_words(self, parsed: q.ParsedQuery) -> dict[str, tuple[str, ...]]:
        """The related words of a question's rare terms (in at most 1 chunk in
        `RELATED_RARE`): a common word is already found as written, and expanding it
        only adds noise."""
        related = q.related_words(parsed)
        if not related:
            return {}
        most = self.weights.chunks / RELATED_RARE
        return {
            t.text: related[t.text]
            for t in parsed.terms
            if t.text in related and self.weights.frequency(t.fts) <= most
        }

    def _rerank(
        self,
        parsed: q.ParsedQuery,
        fused: dict[int, float],
        first_layer: dict[int, str],
        extra: dict[str, tuple[str, ...]],
        corrections: dict[str, str],
        idf: list[float],
        hidden: frozenset[str],
        limit: int,
        snippet_chars: int,
        related: dict[str, tuple[str, ...]],
    ) -> list[SearchHit]:
        """Order candidates by how well each chunk answers the query (see `ranking`)."""
        ids = list(fused)
        placeholders = ",".join("?" * len(ids))
        rows = {
            r["id"]: r
            for r in self.con.execute(
                "SELECT c.id, c.title, c.content, c.content_type, c.start_line, c.end_line,"
                " s.label, s.file_path, s.indexed_at FROM chunks c"
                f" JOIN sources s ON s.id = c.source_id WHERE c.id IN ({placeholders})",
                ids,
            )
        }
        unseen = frozenset(
            t.text for t in parsed.terms if t.text in related and not self.weights.frequency(t.fts)
        )
        scorer = Scorer(parsed, extra, corrections, idf, related, unseen)
        top = max(fused.values())
        scored: list[tuple[float, int]] = []
        for cid, rrf in fused.items():
            row = rows.get(cid)
            if row is None or row["label"] in hidden:
                continue
            score = scorer.score(
                rrf / top, row["label"], row["title"], row["content"], row["content_type"]
            )
            scored.append((score, cid))
        scored.sort(key=lambda s: (-s[0], s[1]))
        hits = []
        for rank, (score, cid) in enumerate(scored[:limit]):
            row = rows[cid]
            budget = TOP_BYTES if rank == 0 else EXCERPT_BYTES
            hits.append(
                SearchHit(
                    source=row["label"],
                    title=row["title"],
                    content_type=row["content_type"],
                    layer=first_layer[cid],
                    score=round(score, 4),
                    snippet=excerpt(
                        row["content"],
                        scorer.telling,
                        budget,
                        max_chars=snippet_chars,
                        title=row["title"],
                    ),
                    chunk_id=cid,
                    file_path=row["file_path"],
                    start_line=row["start_line"],
                    end_line=row["end_line"],
                    indexed_at=row["indexed_at"],
                )
            )
        return hits
