"""Text primitives shared by indexing and querying: words, stopwords, CJK bigrams.

The FTS5 tables index the output of `fts_text`, not the raw text: runs of Chinese,
Japanese and Korean characters are rewritten as overlapping bigrams so that 2-character
words are findable (unicode61 would keep a whole CJK run as one token). The rewrite must
stay deterministic: rows of the contentless FTS table are deleted by re-computing it.
"""

import re

STOPWORDS = frozenset(
    """the and for are but not you all can had her was one our out has his how its may new
    now old see way who did get got let say she too use will with this that from they been
    have many some them than each make like just over such take into year your good could
    would about which their there other after should through also more most only very when
    what then these those being does done both same still while where here were much update
    updates updated deps dev tests test add added fix fixed run running using""".split()
)

# Question scaffolding an agent wraps around the words that matter.
QUERY_NOISE = STOPWORDS | frozenset(
    """why which whose whom want need way ways do does is are can should how i me my we us
    an a to of in on at by or be it as if so any""".split()
)

# Words developers use interchangeably in questions; each query word also matches its
# group. Kept small and unambiguous: a wrong synonym costs precision on every query.
_SYNONYM_GROUPS = (
    "folder directory",
    "folders directories",
    "subfolder subdirectory",
    "subfolders subdirectories",
    "delete remove erase unlink",
    "deletes removes",
    "deleting removing",
    "terminate kill",
    "launch spawn",
    "exception error",
    "exceptions errors",
    "arguments args parameters params",
    "argument arg parameter param",
    "configuration config settings",
    "environment env",
    "repository repo",
    "authentication auth",
    "temporary temp tmp",
    "executable binary",
    "concurrently parallel",
    "duplicate copy clone",
    "filename basename",
    "timestamp datetime",
    "licence license",
    "licences licenses",
    "defence defense",
    "grey gray",
)
SYNONYMS: dict[str, tuple[str, ...]] = {
    word: tuple(w for w in group.split() if w != word)
    for group in _SYNONYM_GROUPS
    for word in group.split()
}

# British and American spellings of one word (colourise / colorize, licence / license):
# docs and questions spell them either way, and stemming keeps them apart. Each rule is
# (suffix, its other spelling); a variant that is no word matches nothing.
_SPELLINGS = (
    ("isation", "ization"),
    ("isations", "izations"),
    ("ise", "ize"),
    ("ises", "izes"),
    ("ised", "ized"),
    ("ising", "izing"),
    ("iser", "izer"),
    ("isers", "izers"),
    ("yse", "yze"),
    ("ysed", "yzed"),
    ("ysing", "yzing"),
    ("our", "or"),
    ("ours", "ors"),
    ("oured", "ored"),
    ("ouring", "oring"),
    ("ourful", "orful"),
    ("ourise", "orize"),
    ("ourised", "orized"),
    ("ourize", "orize"),
    ("ourized", "orized"),
    ("ogue", "og"),
    ("ogues", "ogs"),
    ("tre", "ter"),
    ("tres", "ters"),
)
# -or, -og and -er end too many other words (error, dialog, filter) to be spelt back.
_BRITISH_ONLY = frozenset(
    {"our", "ours", "oured", "ouring", "ourful", "ogue", "ogues", "tre", "tres"}
)
_LONGEST_FIRST = sorted(_SPELLINGS, key=lambda rule: -len(rule[0]))
_SPELLING_STEM = 3  # letters before the suffix, at least (rise, wise, pour stay alone)


def spelling_variant(word: str) -> str | None:
    """The other spelling of `word` (British to American, and back for the -ize and -yze
    endings an American may write for a British text), or None."""
    for british, american in _LONGEST_FIRST:
        if word.endswith(british) and len(word) - len(british) >= _SPELLING_STEM:
            return word[: -len(british)] + american
    for british, american in _LONGEST_FIRST:
        if british in _BRITISH_ONLY:
            continue
        if word.endswith(american) and len(word) - len(american) >= _SPELLING_STEM:
            return word[: -len(american)] + british
    return None


_CJK = (
    "\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f"
)
CJK_RUN = re.compile(f"[{_CJK}]+")
_HAS_CJK = re.compile(f"[{_CJK}]")

# A "word" for the vocabulary and for query terms: letters/digits with inner _ or -.
WORD = re.compile(r"[^\W_](?:[\w-]*[^\W_])?")
MIN_VOCAB_LEN = 3
MAX_VOCAB_LEN = 40


def has_cjk(text: str) -> bool:
    return _HAS_CJK.search(text) is not None


def cjk_bigrams(run: str) -> list[str]:
    """Overlapping bigrams of a CJK run; a single character stays itself."""
    if len(run) < 2:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def _bigram_sub(match: re.Match[str]) -> str:
    return " " + " ".join(cjk_bigrams(match.group(0))) + " "


def fts_text(text: str) -> str:
    """The text handed to FTS5 for `text` (CJK runs become bigrams)."""
    if not has_cjk(text):
        return text
    return CJK_RUN.sub(_bigram_sub, text)


_RAW_WORD = re.compile(r"[^\W\d_][\w-]{2,}")
_ASCII_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_-]{2,}")  # the same on ASCII text, 2x faster


def vocabulary(text: str) -> set[str]:
    """Distinct lower-case words worth remembering for substring and typo matching.

    A word starts with a letter (numbers, ids and hashes stay out) and may hold digits,
    ``_`` and ``-`` (snake_case, kebab-case identifiers).
    """
    pattern = _ASCII_WORD if text.isascii() else _RAW_WORD
    words = {w.lower().rstrip("_-") for w in set(pattern.findall(text))}
    cjk = has_cjk(text)
    return {
        w
        for w in words
        if MIN_VOCAB_LEN <= len(w) <= MAX_VOCAB_LEN
        and w not in STOPWORDS
        and not (cjk and has_cjk(w))
    }


def edit_distance(a: str, b: str, limit: int) -> int:
    """Optimal-string-alignment distance (a swap of neighbours is one edit), capped.

    Returns ``limit + 1`` as soon as the distance must exceed `limit`.
    """
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    before: list[int] = []
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        best = i
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                value = min(value, before[j - 2] + 1)
            current[j] = value
            best = min(best, value)
        if best > limit:
            return limit + 1
        before, previous = previous, current
    return previous[-1]


def common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def max_edits(word: str) -> int:
    """Typo budget by length: 1 up to 4 characters, 2 up to 12, else 3."""
    n = len(word)
    return 1 if n <= 4 else 2 if n <= 12 else 3
