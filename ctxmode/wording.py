"""Counts as people write them: 1 chunk, 2 chunks, 1,204 files."""


def plural(count: int, singular: str, plural_form: str | None = None) -> str:
    """``count`` with the noun that agrees with it, thousands separated.

    >>> plural(1, "chunk"), plural(0, "chunk"), plural(2, "match", "matches")
    ('1 chunk', '0 chunks', '2 matches')
    """
    noun = singular if count == 1 else (plural_form or singular + "s")
    return f"{count:,} {noun}"
