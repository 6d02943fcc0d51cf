"""Query parsing, reranking signals and matching in text (ctxmode.store.query), no database."""

import re

import pytest

from ctxmode.store import query as q
from ctxmode.store.text import SYNONYMS

# --------------------------------------------------------------------------- parsing


def _texts(raw: str) -> list[str]:
    return [t.text for t in q.parse_query(raw).terms]


@pytest.mark.parametrize(
    "raw",
    ['NOT "foo" OR bar*', 'a"b', "NEAR(x y)", "col:term", "^start", "{a} [b] ~c", "x' OR '1'='1"],
)
def test_every_term_becomes_one_quoted_fts_phrase(raw):
    terms = q.parse_query(raw).terms
    assert terms
    for term in terms:
        assert re.fullmatch(r'"(?:[^"]|"")*"', term.fts), term.fts
        assert not re.search(r"[*^:(){}\[\]~]", term.fts)


def test_question_scaffolding_is_dropped_from_queries():
    assert _texts("how do I configure the database?") == ["configure", "database"]


def test_a_query_of_only_stopwords_keeps_them():
    assert _texts("the and for") == ["the", "and", "for"]


def test_repeated_words_in_any_case_are_one_term():
    assert _texts("Cache cache CACHE") == ["cache"]


def test_dotted_references_split_into_parts_and_snake_case_stays_whole():
    parsed = q.parse_query("SequenceMatcher.get_opcodes")
    assert [t.text for t in parsed.terms] == ["sequencematcher", "get_opcodes"]
    assert parsed.terms[1].literal == "get_opcodes"
    assert parsed.references == ["sequencematcher.get_opcodes"]
    snake = q.parse_query("get_user_name").terms
    assert [t.text for t in snake] == ["get_user_name"]
    assert snake[0].words == ("get", "user", "name")


def test_cjk_runs_become_bigram_terms():
    terms = q.parse_query("数据库 pool").terms
    assert terms[0].cjk and terms[0].words == ("数据", "据库")
    assert terms[1].text == "pool"


@pytest.mark.parametrize("raw", ["", "   ", "!!! ??? ---", '"', "()", "*"])
def test_queries_without_words_have_no_terms(raw):
    assert q.parse_query(raw).terms == []


# --------------------------------------------------------------------------- rerank signals


def test_adjacent_pairs_counts_terms_within_30_characters():
    needles = [["alpha"], ["beta"]]
    assert q.adjacent_pairs("alpha beta", needles) == 1
    assert q.adjacent_pairs("alpha " + "x" * 40 + " beta", needles) == 0
    assert q.adjacent_pairs("beta alpha", needles) == 0


def test_adjacent_pairs_uses_each_right_occurrence_once():
    needles = [["alpha"], ["beta"]]
    assert q.adjacent_pairs("alpha alpha beta", needles) == 1
    assert q.adjacent_pairs("alpha beta alpha beta", needles) == 2


def test_min_span_is_the_smallest_window_holding_every_term():
    text = "alpha ........ beta .. alpha beta"
    span = q.min_span(text, [["alpha"], ["beta"]])
    assert span == len("alpha beta")
    assert q.min_span(text, [["alpha"], ["gamma"]]) is None


def test_min_span_accepts_any_alternative_of_a_term():
    text = "useeffect ... cleanup"
    assert q.min_span(text, [["useeff", "useeffect"], ["cleanup"]]) == len(text)


def _occurrences(text: str, group: list[str]) -> list[tuple[int, int, str]]:
    """Every (start, end, alternative), overlapping ones too."""
    return [
        (m.start(), m.start() + len(a), a)
        for a in group
        for m in re.finditer(f"(?={re.escape(a)})", text)
    ]


def _span_as_specified(text: str, needles: list[list[str]]) -> int | None:
    """The window scan `min_span` does, written plainly: occurrences by start, the window
    widened to the right until it holds every group, then narrowed from the left."""
    events = sorted(
        (start, end, g)
        for g, group in enumerate(needles)
        for start, end, _ in _occurrences(text, group)
    )
    if {g for _, _, g in events} != set(range(len(needles))):
        return None
    best = None
    for right in range(len(events)):
        for left in range(right + 1):
            window = events[left : right + 1]
            if {g for _, _, g in window} == set(range(len(needles))):
                span = max(e for _, e, _ in window) - events[left][0]
                best = span if best is None else min(best, span)
    return best


def _pairs_as_specified(text: str, needles: list[list[str]], gap: int) -> int:
    total = 0
    for left, right in zip(needles, needles[1:], strict=False):
        rights = sorted(s for s, _, _ in _occurrences(text, right))
        used: set[int] = set()
        for alt in left:
            for _, end, _ in _occurrences(text, [alt]):
                free = [r for r in rights if r not in used and end <= r <= end + gap]
                if free:
                    used.add(free[0])
                    total += 1
    return total


def test_min_span_and_adjacent_pairs_agree_with_their_plain_definitions_on_random_text():
    import random

    rng = random.Random(7)
    words = ["walrus", "walruses", "bask", "basks", "seal", "ice", "x", "wal", "rus"]
    for _ in range(3000):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(0, 40)))
        needles = [rng.sample(words, rng.randint(1, 3)) for _ in range(rng.randint(1, 4))]
        gap = rng.choice([0, 5, 30])
        assert q.min_span(text, needles) == _span_as_specified(text, needles), (text, needles)
        assert q.adjacent_pairs(text, needles, gap) == _pairs_as_specified(text, needles, gap)


def test_min_span_and_adjacent_pairs_on_a_repetitive_log():
    # 2,000 occurrences of each term (a log repeating the same words): positions past a
    # word's first 200 are not read (scanning them cost up to 3 ms a candidate before)
    text = "walrus basks " * 2000
    needles = [["walrus", "walruses"], ["basks", "bask"]]
    assert q.min_span(text, needles) == len("walrus bask")
    assert q.adjacent_pairs(text, needles) == 200


def test_pasted_message_keeps_its_word_runs_as_phrases():
    parsed = q.parse_query(
        "JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 2"
    )
    assert parsed.phrases == ["expecting property name enclosed in double quotes"]
    assert q.parse_query("'a.txt' and 'a.txt' are the same file").phrases == ["are the same file"]


def test_definition_names_come_from_code_titles_only():
    assert q.definition_names("class SequenceMatcher > def get_opcodes") == {
        "sequencematcher",
        "get_opcodes",
    }
    assert q.definition_names("func Client.Do") == {"client.do", "client", "do"}
    assert q.definition_names("Guide > Connection pool") == set()


# --------------------------------------------------------------------------- matching words


def test_a_word_matches_where_a_word_or_an_identifier_part_starts():
    size = q.word_matcher(["size"])
    assert size is not None
    for text in ("get_terminal_size", "getTerminalSize", "HTTPSize", "Size", "sizes"):
        assert size.first(text) is not None, text
    assert size.first("oversize") is None


def test_a_compound_identifier_matches_in_any_case_style():
    name = q.word_matcher(["get_user_name"])
    assert name is not None
    for text in ("getUserName", "get_user_name", "get user name", "GET-USER-NAME"):
        assert name.first(text) is not None, text
    assert name.first("forget_user_name") is None


def test_stems_cover_inflections_without_overreaching():
    assert {"cach"} <= q.stems("cached")
    assert {"director"} <= q.stems("directories")
    assert {"stop"} <= q.stems("stopped")
    assert {"name"} <= q.stems("names") and "nam" not in q.stems("names")
    assert q.stems("class") == {"class"}


def test_question_in_words_is_told_from_code_and_messages():
    assert q.is_question(q.parse_query("make the terminal beep to get the user's attention"))
    assert not q.is_question(q.parse_query("zipfile.BadZipFile: File is not a zip file"))
    assert not q.is_question(q.parse_query("get_terminal_size fallback"))
    assert not q.is_question(q.parse_query("terminal size"))  # too few terms


def test_only_a_question_in_words_gets_related_words() -> None:
    related = q.related_words(q.parse_query("make the terminal beep at the user"))
    assert "bell" in related["beep"]
    assert q.related_words(q.parse_query("terminal beep")) == {}  # two words: not a question
    assert q.related_words(q.parse_query("console.bell(beep)")) == {}  # code
    # an identifier is never expanded, whatever its parts
    assert "delete_file" not in q.related_words(q.parse_query("why does delete_file stop here"))


def test_related_words_are_found_by_their_base_form() -> None:
    from ctxmode.store.thesaurus import related

    assert "directory" in related("folder") or "dir" in related("folders")
    assert "bell" in related("beeps")
    assert related("zyxwv") == ()


@pytest.mark.parametrize(
    ("word", "other"),
    [
        ("colourised", "colorized"),
        ("behaviour", "behavior"),
        ("capitalise", "capitalize"),
        ("capitalize", "capitalise"),
        ("organisation", "organization"),
        ("analyse", "analyze"),
        ("catalogue", "catalog"),
        ("centre", "center"),
    ],
)
def test_british_and_american_spellings_match_each_other(word, other) -> None:
    (term,) = q.parse_query(word).terms
    assert other in term.synonyms


@pytest.mark.parametrize("word", ["error", "filter", "parameter", "raise", "sequence", "dialog"])
def test_words_with_look_alike_endings_get_no_spelling_variant(word) -> None:
    (term,) = q.parse_query(word).terms
    assert term.synonyms == SYNONYMS.get(word, ())


def test_the_thesaurus_file_holds_groups_of_plain_lowercase_words() -> None:
    from pathlib import Path

    import ctxmode.store.thesaurus as thesaurus

    lines = Path(thesaurus.__file__).with_name("thesaurus.txt").read_text("utf-8").splitlines()
    groups = [line.split() for line in lines if line.strip() and not line.startswith("#")]
    assert len(groups) > 900
    for words in groups:
        assert len(words) >= 2, words
        assert all(re.fullmatch(r"[a-z][a-z0-9]*", w) for w in words), words
    assert "verbose" in thesaurus.related("chatty")
    assert "temperature" in thesaurus.related("hot")


def test_a_missing_thesaurus_file_means_no_related_words_not_a_crash(monkeypatch, tmp_path):
    import ctxmode.store.thesaurus as thesaurus

    monkeypatch.setattr(thesaurus, "_GROUPS", tmp_path / "absent.txt")
    thesaurus._table.cache_clear()
    try:
        assert thesaurus.related("chatty") == ()
        assert q.related_words(q.parse_query("make the output less chatty please")) == {}
    finally:
        thesaurus._table.cache_clear()


def test_a_long_paste_is_searched_with_its_first_and_last_terms() -> None:
    words = [f"w{n}x" for n in range(500)]
    parsed = q.parse_query(" ".join(words))
    half = q.MAX_TERMS // 2
    assert [t.text for t in parsed.terms] == words[:half] + words[-half:]
    dotted = q.parse_query(" ".join(f"m{n}.f{n}" for n in range(500)))
    assert len(dotted.references) == q.MAX_TERMS


def test_an_endless_identifier_or_word_run_is_matched_by_its_first_words() -> None:
    (term,) = q.parse_query("x_" * 5000).terms
    assert term.words == ("x",) * q.MAX_TERM_WORDS
    assert term.fts == q.quote_phrase(" ".join(["x"] * q.MAX_TERM_WORDS))
    (phrase,) = q.parse_query("alpha " * 5000).phrases
    assert phrase.split() == ["alpha"] * q.MAX_PHRASE_WORDS


def test_a_word_longer_than_any_known_word_gets_no_substring_or_typo_lookup() -> None:
    (long,) = q.parse_query("a" * 41).terms
    (fits,) = q.parse_query("a" * 40).terms
    assert not long.expandable and fits.expandable
