"""The vocabulary: every distinct word the knowledge base has seen, with a trigram index
over the words (not the content). It answers three questions fast: which known words
contain a fragment (``useeff`` → ``useeffect``), is a word known, and which known word is
a typo closest to.
"""

import sqlite3

from ctxmode.store import query as q
from ctxmode.store.text import common_prefix, edit_distance, max_edits

MAX_EXPANSIONS = 12
CACHE_AFTER = 200  # words in one document before the whole vocabulary is loaded
CACHE_MAX = 500_000  # ... unless it is larger than this
_CORRECTIONS_KEPT = 256


class Vocabulary:
    """Vocabulary lookups on one connection, with the caches that make indexing fast."""

    def __init__(self, con: sqlite3.Connection) -> None:
        self._con = con
        self._words: set[str] | None = None
        self._corrections: dict[str, str | None] = {}

    def unknown(self, words: set[str]) -> set[str]:
        """The words the vocabulary may lack. Probing SQLite word by word costs more than
        the rest of indexing, so a document of many words loads the vocabulary once."""
        if self._words is None and len(words) >= CACHE_AFTER:
            count = self._con.execute("SELECT max(id) FROM vocab").fetchone()[0] or 0
            if count <= CACHE_MAX:
                self._words = {r[0] for r in self._con.execute("SELECT word FROM vocab")}
        if self._words is None:
            return words
        return words - self._words

    def learned(self, words: set[str]) -> None:
        """Record words just committed to the vocabulary."""
        if words:
            self._corrections.clear()
            if self._words is not None:
                self._words.update(words)
                if len(self._words) > CACHE_MAX:  # a log full of ids: memory stays bounded
                    self._words = None

    def expansions(self, fragment: str) -> list[str]:
        """Known words containing `fragment`, shortest first (of the first 400 found).

        SQLite picks the shortest: reading 400 words out to sort them here cost twice as
        much, ~0.4 ms a term on a vocabulary of 280,000 words."""
        rows = self._con.execute(
            "SELECT word FROM vocab WHERE id IN"
            " (SELECT rowid FROM vocab_tri WHERE vocab_tri MATCH ? LIMIT 400)"
            " ORDER BY length(word), word LIMIT ?",
            (q.quote_phrase(fragment), MAX_EXPANSIONS + 1),
        ).fetchall()
        return [r[0] for r in rows if r[0] != fragment][:MAX_EXPANSIONS]

    def known(self, word: str) -> bool:
        row = self._con.execute("SELECT 1 FROM vocab WHERE word = ?", (word,)).fetchone()
        return row is not None

    def correct(self, word: str) -> str | None:
        """The closest known word within the length-based edit budget, or None."""
        word = word.lower().strip()
        if len(word) < 3:
            return None
        if word not in self._corrections:
            if len(self._corrections) > _CORRECTIONS_KEPT:
                self._corrections.clear()
            self._corrections[word] = None if self.known(word) else self._closest(word)
        return self._corrections[word]

    def _candidates(self, word: str, budget: int) -> set[str]:
        grams = {word[i : i + 3] for i in range(len(word) - 2)}
        found: set[str] = set()
        if grams:
            expr = " OR ".join(q.quote_phrase(g) for g in grams)
            found.update(
                r[0]
                for r in self._con.execute(
                    "SELECT word FROM vocab_tri WHERE vocab_tri MATCH ? ORDER BY rank LIMIT 300",
                    (expr,),
                )
            )
        if len(word) <= 5:  # short words may share no trigram with their typo
            found.update(
                r[0]
                for r in self._con.execute(
                    "SELECT word FROM vocab WHERE length(word) BETWEEN ? AND ? LIMIT 5000",
                    (len(word) - budget, len(word) + budget),
                )
            )
        return found

    def _closest(self, word: str) -> str | None:
        budget = max_edits(word)
        best: tuple[int, int, int, str] | None = None
        for cand in self._candidates(word, budget):
            if abs(len(cand) - len(word)) > budget:
                continue
            dist = edit_distance(word, cand, budget)
            if dist <= budget:
                # Ties: the candidate agreeing longest from the start, then the closer length.
                key = (dist, -common_prefix(word, cand), abs(len(cand) - len(word)), cand)
                if best is None or key < best:
                    best = key
        return best[3] if best else None
