"""Excerpt selection (ctxmode.store.excerpt): which lines of a hit the agent is shown."""

from ctxmode.store import query as q
from ctxmode.store.excerpt import EXCERPT_BYTES, Telling, excerpt, head_lines


def _tell(words: str, weight: float = 1.0, extra: tuple[str, ...] = ()) -> Telling:
    own, more = q.term_matchers(q.parse_query(words).terms[0], extra)
    return Telling(weight, own, more)


def _filler(n: int, text: str = "unrelated filler text") -> list[str]:
    return [f"{text} number {i} " + "x" * 40 for i in range(n)]


def test_content_that_fits_is_shown_whole():
    content = "line one\nline two\nline three"
    assert excerpt(content, [_tell("nothing")]) == content


def test_matching_lines_are_kept_and_gaps_marked():
    lines = _filler(200)
    lines[120] = "the NEEDLE lives here"
    out = excerpt("\n".join(lines), [_tell("needle")], budget=400)
    assert "the NEEDLE lives here" in out
    assert out.startswith("unrelated filler text number 0")  # the chunk's head
    assert "\n\u2026\n" in out
    assert out.endswith("\u2026")
    assert len(out.encode("utf-8")) <= 400


def test_the_line_with_the_rare_term_beats_lines_repeating_common_words():
    lines = _filler(60)
    for i in (5, 15, 25, 35):
        lines[i] = "get the file value, get the file value again"
    lines[48] = "Set the title of the console terminal window."
    common = [_tell("file", 0.1), _tell("value", 0.1), _tell("get", 0.1)]
    out = excerpt("\n".join(lines), [*common, _tell("window", 0.7)], budget=200)
    assert "Set the title of the console terminal window." in out


def test_expansion_words_do_not_steer_when_the_term_itself_is_present():
    lines = _filler(80)
    lines[10] = "tempfile.mkdtemp() makes a temporary directory"
    lines[60] = "NamedTemporaryFile wraps tempfile_wrapper_helper"
    term = _tell("tempfile", extra=("tempfile_wrapper_helper",))
    out = excerpt("\n".join(lines), [term], budget=150)
    assert "tempfile.mkdtemp() makes a temporary directory" in out
    assert "tempfile_wrapper_helper" not in out


def test_expansion_words_are_used_where_the_term_is_absent():
    lines = _filler(80)
    lines[60] = "class NamedTemporaryFile: the file is deleted on close"
    term = _tell("namedtemporaryfi", extra=("namedtemporaryfile",))
    out = excerpt("\n".join(lines), [term], budget=150)
    assert "class NamedTemporaryFile" in out


def test_terms_match_camel_and_snake_case_parts_and_inflections():
    lines = _filler(80)
    lines[30] = "    cols, rows = getTerminalSize(fallback)"
    lines[50] = "    the resize was cached by oversize_guard"
    out = excerpt("\n".join(lines), [_tell("terminal", 0.5), _tell("size", 0.5)], budget=150)
    assert "getTerminalSize" in out
    assert "oversize_guard" not in out  # "size" inside a word is not the word
    caching = excerpt("\n".join(lines), [_tell("caching")], budget=150)
    assert "was cached by" in caching


def test_two_terms_written_together_beat_the_same_terms_apart():
    lines = _filler(80)
    lines[10] = "errors in the logging system are mostly ignored"
    lines[50] = "    sys.stderr.write('--- Logging error ---')"
    parsed = q.parse_query("--- Logging error ---")
    first, second = parsed.terms
    tells = [_tell("logging", 0.5), _tell("error", 0.5)]
    pair = q.pair_matcher(first, second)
    assert pair is not None
    out = excerpt("\n".join(lines), [*tells, Telling(0.5, pair, term=False)], budget=120)
    assert "--- Logging error ---" in out


def test_the_budget_is_bytes_and_max_chars_caps_the_text():
    lines = ["\u00e9t\u00e9 \u2603 " * 10 + f"snowman {i}" for i in range(100)]
    content = "\n".join(lines)
    out = excerpt(content, [_tell("snowman")])
    assert len(out.encode("utf-8")) <= EXCERPT_BYTES
    assert len(excerpt(content, [_tell("snowman")], max_chars=120)) <= 120


def test_the_passage_ends_where_its_sentence_ends():
    lines = [f"Filler sentence number {i} says nothing at all." for i in range(60)]
    lines[30] = "The ocelot is a wild cat that lives"
    lines[31] = "in the forests of South America."
    out = excerpt("\n".join(lines), [_tell("ocelot")])
    assert "The ocelot is a wild cat that lives\nin the forests of South America." in out
    assert len(out.encode("utf-8")) <= EXCERPT_BYTES


def test_a_passage_is_contiguous_text_not_lines_picked_apart():
    para = [
        "Retries are configured per client.",
        "The backoff factor multiplies the delay between attempts,",
        "so a factor of 2 doubles it each time.",
        "The maximum delay caps the growth.",
    ]
    lines = [*_filler(30), "", *para, "", *_filler(30, "other text")]
    out = excerpt("\n".join(lines), [_tell("backoff", 0.6), _tell("delay", 0.4)])
    assert "\n".join(para[1:3]) in out
    assert out.count("\u2026") <= 3  # the head, the passage, the rest


def test_a_definition_comes_with_its_help_text():
    lines = [
        *[f"    mentions --verbose in passing, line {i}." for i in range(20)],
        "",
        "--verbose",
        "    Print every request and response, with headers,",
        "    to standard error.",
        "",
        *_filler(30),
    ]
    out = excerpt("\n".join(lines), [_tell("verbose")], budget=300)
    assert "--verbose\n    Print every request and response, with headers,\n" in out
    assert "to standard error." in out


def test_the_paragraph_in_the_query_s_script_is_preferred():
    lines = [
        *_filler(20),
        "",
        "Параметр max_retries задаёт число повторов запроса.",
        "",
        *_filler(20, "more filler"),
        "",
        "The max_retries option sets how many times a request is retried.",
        "",
        *_filler(20, "tail filler"),
    ]
    out = excerpt("\n".join(lines), [_tell("max_retries")], budget=200)
    assert "sets how many times a request is retried" in out


def test_a_heading_the_title_shows_is_not_repeated():
    content = "## Installation\n\n" + "\n".join(_filler(40)) + "\nRun pip install thing."
    out = excerpt(content, [_tell("install")], title="Guide > Installation")
    assert "## Installation" not in out
    assert "Run pip install thing." in out


def test_the_signature_and_docstring_summary_are_context():
    body = [f"    step_{i} = compute(step_{i - 1})" for i in range(1, 60)]
    body[40] = "    bell_sound = b'\\x07'  # rings the bell"
    lines = ["def bell(self) -> None:", '    """Play a bell sound (if supported)."""', *body]
    out = excerpt("\n".join(lines), [_tell("rings")], budget=300)
    assert "rings the bell" in out
    assert out.startswith('def bell(self) -> None:\n    """Play a bell sound')


def test_without_a_match_the_head_is_shown():
    content = "abcdefghij\n" * 100
    out = excerpt(content, [_tell("zzz")], budget=50)
    assert len(out.encode("utf-8")) <= 50
    assert out.endswith("\u2026")
    assert content.startswith(out[:-1])


def test_an_overlong_line_is_windowed_around_its_match():
    line = "a" * 2000 + " MATCH " + "b" * 2000
    out = excerpt(line + "\nsecond line", [_tell("match")], budget=500)
    assert "MATCH" in out
    assert len(out.encode("utf-8")) <= 500


def test_the_word_itself_beats_a_longer_word_it_starts():
    lines = _filler(80)
    lines[10] = "        differing = None"
    lines[50] = "            differing = '%ss differ: %s != %s\\n' % (name, a, b)"
    out = excerpt("\n".join(lines), [_tell("differ")], budget=120)
    assert "differ: %s != %s" in out


def test_a_heading_underline_is_not_taken_for_a_docstring():
    assert head_lines(["Title", "-----", "", "Text under it."]) == [0]
    assert head_lines(["def f():", '    """', "    Summary.", '    """']) == [0, 2]
    assert head_lines(["def f():", "    # why it exists", "    return 1"]) == [0, 1]


def test_a_log_hit_shows_the_matching_record_with_its_trace_not_its_neighbours():
    lines = [
        f"2026-11-03T10:{i % 60:02d}:00.000Z INFO  [api-{i % 8}] req={i:016x} GET /v1/items/{i}"
        for i in range(20)
    ]
    lines[11] = "2026-11-03T10:11:00.000Z ERROR [db-pool] connection refused: host=pg-primary"
    lines.insert(12, "    at Pool.connect (pool.js:42)")
    out = excerpt("\n".join(lines), [_tell("refused"), _tell("pg-primary")], budget=500)
    body = [ln for ln in out.split("\n") if ln != "\u2026"]
    assert body == [lines[11], lines[12]]  # the record and the line under it, nothing else
