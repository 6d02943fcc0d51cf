"""A developer thesaurus: words a question may use for what code or docs call otherwise.

Questions in an agent's or user's own words often share few words with their answer
("throwaway folder" for a temporary directory, "beep" for the terminal bell). Each group
holds general programming vocabulary used interchangeably; a word of a question is
expanded to the other words of its groups (`related`). Unlike `text.SYNONYMS`, which every
query matches at full weight, these expansions apply only to the rare terms of a question
in words (`query.is_question`) that no chunk answers with all of its words
(`retrieval.Retrieval._related_words`), and weigh below the words as written
(`ranking.W_RELATED`), so keyword, identifier, error and typo queries are unaffected and a
chunk using the question's own words still outranks one using only a related word. The
groups live in ``thesaurus.txt`` beside this module (read on the first lookup), written as
general vocabulary, not from the judged questions of ``benchmarks/retrieval_eval.py`` (the
file says how).
"""

import functools
import logging
from pathlib import Path

from ctxmode.store.text import SYNONYMS

_GROUPS = Path(__file__).with_name("thesaurus.txt")

MAX_RELATED = 8  # words a term is expanded to, at most


@functools.cache
def _table() -> dict[str, tuple[str, ...]]:
    table: dict[str, list[str]] = {}
    try:
        text = _GROUPS.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:  # an install without its data: no expansions
        logging.getLogger("ctxmode.store").warning("developer thesaurus not read: %s", exc)
        return {}
    for line in text.splitlines():
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        for word in words:
            known = table.setdefault(word, [])
            known.extend(w for w in words if w != word and w not in known)
    return {
        word: tuple(w for w in others if w not in SYNONYMS.get(word, ()))[:MAX_RELATED]
        for word, others in table.items()
    }


# Inflections looked up by their base form (folders → folder, deleting → delete).
_SUFFIXES = (
    ("ies", "y"),
    ("es", ""),
    ("s", ""),
    ("ing", ""),
    ("ing", "e"),
    ("ed", ""),
    ("ed", "e"),
    ("d", ""),
)


def related(word: str) -> tuple[str, ...]:
    """The words related to `word` (or to its base form), none when it has no group."""
    table = _table()
    found = table.get(word)
    if found is not None:
        return found
    for suffix, base in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            found = table.get(word[: -len(suffix)] + base)
            if found is not None:
                return found
    return ()
