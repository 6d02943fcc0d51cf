"""ContentStore: indexing, replacing, searching and reopening a real SQLite knowledge base."""

import os
import re
import sqlite3
from pathlib import Path

import pytest

from ctxmode.errors import InputError, NotFoundError, StoreError
from ctxmode.store import ContentStore, SearchResult
from ctxmode.store.schema import MIGRATIONS

FIXTURES = Path(__file__).parent / "fixtures" / "code"


def _sources(store):
    return [s.label for s in store.sources()]


def _hit_sources(result):
    return [h.source for h in result.hits]


# --------------------------------------------------------------------------- indexing


def test_indexing_text_reports_chunks_and_records_one_source(store):
    report = store.index_text("# A\n\nalpha\n\n# B\n\n```\ncode\n```\n", "notes.md")
    assert (report.label, report.chunks, report.code_chunks) == ("notes.md", 2, 1)
    [info] = store.sources()
    assert (info.label, info.chunks, info.code_chunks, info.kind) == ("notes.md", 2, 1, "markdown")
    assert info.file_path is None
    assert store.chunk_count() == 2


def test_reindexing_a_label_replaces_its_content(store):
    store.index_text("# Old\n\nthe zebra crossed\n", "build-output")
    store.index_text("# New\n\nthe giraffe stood\n", "build-output")
    assert _sources(store) == ["build-output"]
    assert store.search("zebra").hits == []
    assert [h.title for h in store.search("giraffe").hits] == ["New"]
    assert store.chunk_count() == 1
    # the full-text index itself forgot the old words (no stale rows left to match)
    stale = store.connection.execute(
        "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'zebra'"
    ).fetchone()[0]
    assert stale == 0


def test_reindexing_many_times_keeps_one_source_row_and_current_content(store):
    for i in range(10):
        store.index_text(f"# Run\n\nresult token{i}\n", "loop")
    assert _sources(store) == ["loop"]
    assert store.search("token9").hits
    # Only the current text is found (a typo-tolerant match may point at token9).
    assert not [h for h in store.search("token3").hits if "token3" in h.snippet]
    assert store.chunk_count() == 1


def test_a_reindex_that_fails_midway_leaves_the_old_content_intact(store):
    store.index_text("# Old\n\nthe marmot original\n", "label")
    # A per-connection trigger makes the second chunk insert fail inside the transaction.
    store.connection.execute(
        "CREATE TEMP TRIGGER poison BEFORE INSERT ON chunks"
        " WHEN new.content LIKE '%poison%' BEGIN SELECT RAISE(ABORT, 'poisoned'); END"
    )
    with pytest.raises(StoreError, match="poisoned"):  # SQLite's error, worded as the store's
        store.index_text("# New\n\nfresh giraffe\n\n# Two\n\npoison pill\n", "label")
    assert not store.connection.in_transaction
    assert _hit_sources(store.search("marmot")) == ["label"]
    assert store.search("giraffe").hits == []
    assert [(s.label, s.chunks) for s in store.sources()] == [("label", 1)]
    store.index_text("# New\n\nfresh giraffe\n", "label")
    assert _hit_sources(store.search("giraffe")) == ["label"]


def test_different_labels_are_kept_separately(store):
    store.index_text("# Doc\n\nshared walrus fact\n", "first")
    store.index_text("# Doc\n\nshared walrus fact\n", "second")
    assert _sources(store) == ["first", "second"]
    assert sorted(_hit_sources(store.search("walrus"))) == ["first", "second"]


def test_deleting_a_source_removes_its_chunks(store):
    store.index_text("# Doc\n\npelican notes\n", "birds")
    store.index_text("# Doc\n\npenguin notes\n", "more-birds")
    assert store.delete_source("birds") is True
    assert store.delete_source("birds") is False
    assert store.search("pelican").hits == []
    assert _hit_sources(store.search("penguin")) == ["more-birds"]


def test_whitespace_only_text_records_a_source_with_no_chunks(store):
    report = store.index_text("  \n\t\n", "empty")
    assert report.chunks == 0
    assert [(s.label, s.chunks) for s in store.sources()] == [("empty", 0)]


def test_text_with_a_lone_surrogate_is_indexed_and_the_rest_stays_searchable(store):
    # JSON input may carry "\\udc80" (e.g. a client that cut an emoji in half).
    store.index_text("# Output\n\nbuild \udc80 finished with okapi warnings\n", "build")
    assert _hit_sources(store.search("okapi")) == ["build"]


def test_indexing_an_empty_file_reads_it_and_records_its_path(store, tmp_path):
    path = tmp_path / "empty.md"
    path.write_text("")
    report = store.index_file(path)
    assert report.chunks == 0
    assert report.label == str(path)
    assert store.sources()[0].file_path == str(path)


def test_indexing_a_file_labels_it_by_absolute_path_and_chunks_by_extension(
    store, tmp_path, monkeypatch
):
    (tmp_path / "app.py").write_text("def main():\n    return 1\n")
    monkeypatch.chdir(tmp_path)
    report = store.index_file("app.py")
    assert report.label == str(tmp_path / "app.py")
    assert store.sources()[0].kind == "python"
    hit = store.search("main").hits[0]
    assert hit.file_path == str(tmp_path / "app.py")
    assert (hit.start_line, hit.end_line) == (1, 2)


@pytest.mark.parametrize(
    ("target", "error"),
    [("/dev/null", InputError), ("dir", InputError), ("missing.txt", NotFoundError)],
)
def test_indexing_a_non_regular_or_missing_path_is_refused(store, tmp_path, target, error):
    (tmp_path / "dir").mkdir()
    path = target if target.startswith("/") else tmp_path / target
    with pytest.raises(error):
        store.index_file(path)
    assert store.sources() == []


def test_indexing_a_binary_file_is_refused(store, tmp_path):
    path = tmp_path / "image.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    with pytest.raises(InputError):
        store.index_file(path)
    assert store.sources() == []


# --------------------------------------------------------------------------- search layers


def test_stemming_matches_word_variants(store):
    store.index_text("# Pool\n\nThe server keeps connections open.\n", "doc")
    result = store.search("connecting")
    assert [h.title for h in result.hits] == ["Pool"]
    assert result.hits[0].layer == "all-terms"


def test_title_match_outranks_body_only_match(store):
    store.index_text("# Notes\n\nWe talked about the deployment briefly.\n", "a-body")
    store.index_text("# Deployment\n\nSteps to ship the service.\n", "b-title")
    assert _hit_sources(store.search("deployment")) == ["b-title", "a-body"]


@pytest.mark.parametrize(
    ("query", "word"),
    [("useEff", "useEffect"), ("authenticat", "authentication"), ("ConfigLoa", "ConfigLoader")],
)
def test_partial_words_find_the_full_word_through_the_substring_layer(store, query, word):
    store.index_text(f"# Hooks\n\nCall {word} once per render.\n", "doc")
    store.index_text("# Other\n\nNothing relevant here at all.\n", "noise")
    result = store.search(query)
    assert _hit_sources(result) == ["doc"]
    assert result.hits[0].layer == "substring"
    assert result.corrections == {}


def test_substring_expansions_are_the_shortest_known_words_holding_the_fragment(store):
    from ctxmode.store.vocab import MAX_EXPANSIONS, Vocabulary

    words = [f"load{'x' * n}er" for n in range(MAX_EXPANSIONS + 5)][::-1]
    store.index_text("# Words\n\n" + " ".join([*words, "load", "reload", "unrelated"]), "w")
    store.catch_up()  # the vocabulary is written with the full-text index
    found = Vocabulary(store.connection).expansions("load")
    # shortest first, ties in order; "load" itself is no expansion of it
    assert found == ["loader", "reload", *sorted(words, key=len)[1 : MAX_EXPANSIONS - 1]]


def test_stopwords_are_not_expanded_to_the_longer_words_holding_them(store):
    store.index_text("# Phones\n\nBuild for android, theme it.\n", "android")
    store.index_text("# Notes\n\nThis and the rest.\n", "notes")
    assert _hit_sources(store.search("and the")) == ["notes"]


def test_typo_is_corrected_and_reported_through_the_fuzzy_layer(store):
    store.index_text("# Login\n\nauthentication uses signed tokens\n", "auth")
    result = store.search("autentication")
    assert _hit_sources(result) == ["auth"]
    assert result.hits[0].layer == "fuzzy"
    assert result.corrections == {"autentication": "authentication"}


def test_fuzzy_correction_leaves_known_words_and_gibberish_alone(store):
    store.index_text("# Login\n\nauthentication uses signed tokens\n", "auth")
    assert store.fuzzy_correct("authentication") is None
    assert store.fuzzy_correct("qzxvkwpj") is None
    assert store.fuzzy_correct("ab") is None
    assert store.fuzzy_correct("autentication") == "authentication"
    assert store.search("qzxvkwpj").hits == []


def test_fuzzy_correction_learns_words_indexed_later(store):
    store.index_text("# A\n\nplain words only\n", "a")
    assert store.fuzzy_correct("kubernetse") is None
    store.index_text("# B\n\nkubernetes cluster\n", "b")
    assert store.fuzzy_correct("kubernetse") == "kubernetes"


def test_results_are_deduplicated_by_chunk(store):
    store.index_text(
        "# Cache\n\ncache invalidation cache eviction cachebuster\n\n# Other\n\ncache\n", "doc"
    )
    result = store.search("cache eviction cach", limit=20)
    ids = [h.chunk_id for h in result.hits]
    assert len(ids) == len(set(ids)) == 2


def test_chunks_sharing_a_title_in_one_source_are_all_returned(store):
    store.index_text("# Usage\n\nalpaca first form\n\n# Usage\n\nalpaca second form\n", "doc")
    hits = store.search("alpaca", limit=10).hits
    assert [(h.source, h.title) for h in hits] == [("doc", "Usage"), ("doc", "Usage")]
    # The heading the title shows is not repeated in the snippet.
    assert {h.snippet for h in hits} == {"alpaca first form", "alpaca second form"}


def test_exact_word_match_outranks_a_longer_word_that_contains_it(store):
    store.index_text("# One\n\nthe authorization header is checked\n", "longer")
    store.index_text("# One\n\nthe auth header is checked\n", "exact")
    assert _hit_sources(store.search("auth")) == ["exact", "longer"]


# --------------------------------------------------------------------------- ranking


def test_chunk_with_all_query_terms_ranks_above_chunks_with_some(store):
    store.index_text("# Birds\n\nmigration of birds in autumn\n", "some-1")
    store.index_text("# Pool\n\ndatabase connection pool sizing\n", "some-2")
    store.index_text("# Plan\n\nthe database migration rollback plan\n", "all")
    store.index_text("# Undo\n\nrollback of a database change\n", "some-3")
    result = store.search("database migration rollback", limit=10)
    assert result.hits[0].source == "all"
    assert sorted(_hit_sources(result)) == ["all", "some-1", "some-2", "some-3"]


def test_adjacent_terms_rank_above_the_same_terms_far_apart(store):
    filler = " ".join(f"filler{i}" for i in range(80))
    store.index_text(f"# Notes\n\nretry happens first. {filler} then the budget\n", "far")
    store.index_text(f"# Notes\n\nretry budget is set here. {filler} done\n", "near")
    assert _hit_sources(store.search("retry budget")) == ["near", "far"]


def test_reranking_never_drops_matches_below_the_limit(store):
    for i in range(8):
        store.index_text(f"# Item {i}\n\nwidget number {i} and more text {'x' * i}\n", f"src{i}")
    assert len(store.search("widget", limit=5).hits) == 5
    assert len(store.search("widget", limit=20).hits) == 8


def test_stopwords_do_not_change_the_ranking(store):
    store.index_text("# Alpha\n\nthe kestrel hunts over the field\n", "a")
    store.index_text("# Beta\n\nkestrel\n", "b")
    plain = _hit_sources(store.search("kestrel field"))
    padded = _hit_sources(store.search("the kestrel and the field"))
    assert plain == padded


# --------------------------------------------------------------------------- filters


@pytest.fixture
def filtered(store):
    store.index_text("# Api\n\n```\nrouter handles tapir\n```\n", "docs/api.md")
    store.index_text("# Api\n\nprose about the tapir\n", "docs/guide.md")
    store.index_text("# Api\n\nanother tapir note\n", "notes/tapir.md")
    store.index_text("# Api\n\nunderscore tapir\n", "a_b")
    store.index_text("# Api\n\npercent tapir\n", "axb")
    return store


def test_source_filter_matches_label_substrings(filtered):
    result = filtered.search("tapir", source="docs/", limit=10)
    assert sorted(_hit_sources(result)) == ["docs/api.md", "docs/guide.md"]


def test_source_filter_treats_like_wildcards_literally(filtered):
    assert _hit_sources(filtered.search("tapir", source="a_b", limit=10)) == ["a_b"]
    assert filtered.search("tapir", source="%", limit=10).hits == []


def test_exact_source_filter_requires_the_whole_label(filtered):
    assert filtered.search("tapir", source="docs", exact_source=True).hits == []
    result = filtered.search("tapir", source="docs/api.md", exact_source=True)
    assert _hit_sources(result) == ["docs/api.md"]


@pytest.fixture(params=["lookup", "filter", "join"])
def scope_plan(request, monkeypatch):
    """Each way a search scoped by label text runs (see `Retrieval._scope_plan`)."""
    from ctxmode.store import retrieval

    if request.param == "filter":
        monkeypatch.setattr(retrieval, "SCOPE_LOOKUPS", 0)
    elif request.param == "join":
        monkeypatch.setattr(retrieval, "LABELS_LOOKED_UP", 0)
    return request.param


def test_every_scope_plan_finds_the_same_labels(filtered, scope_plan):
    def scoped(source, **kw):
        return sorted(_hit_sources(filtered.search("tapir", source=source, limit=10, **kw)))

    assert scoped("docs/") == ["docs/api.md", "docs/guide.md"]
    assert scoped("DOCS/") == ["docs/api.md", "docs/guide.md"]  # as LIKE: any case
    assert scoped("a_b") == ["a_b"]  # `_` is no wildcard
    assert scoped("x") == ["axb"]  # too short for trigrams: the label of each match
    assert scoped("%") == []
    assert scoped('api"') == []  # a quote is text, not FTS5 syntax
    assert scoped("tapir.md") == ["notes/tapir.md"]
    assert scoped("docs", content_type="prose") == ["docs/guide.md"]
    assert _hit_sources(filtered.search("tapir router", source="docs/"))[0] == "docs/api.md"
    assert scoped("docs/api.md", exact_source=True) == ["docs/api.md"]
    assert scoped("docs/", exact_source=True) == []


@pytest.mark.parametrize(
    "scope", ['a" OR "docs', "NEAR(docs api)", "docs*", "{label}: docs", "d" * 100_000]
)
def test_a_scope_written_in_fts5_syntax_or_huge_is_plain_text(filtered, scope_plan, scope):
    assert filtered.search("tapir", source=scope, limit=10).hits == []


def _label_index_agrees(store, gone=()) -> None:
    """Each source's label finds it in the label index; a removed label finds nothing."""
    con = store.connection

    def found(label):
        phrase = '"' + label.replace('"', '""') + '"'
        rows = con.execute("SELECT rowid FROM labels_tri WHERE labels_tri MATCH ?", (phrase,))
        return {r[0] for r in rows}

    for source_id, label in con.execute("SELECT id, label FROM sources").fetchall():
        assert source_id in found(label), label
    for label in gone:
        assert found(label) == set(), label


def test_the_label_index_follows_sources_added_replaced_and_deleted(tmp_path, store):
    doc = tmp_path / "walrus-notes.md"
    doc.write_text("# Walrus\n\nthe walrus basks\n")
    store.index_file(doc, label="walrus-notes.md")
    store.index_text("# Tusk\n\nthe walrus dives\n", "ocean/tusk-log")
    store.index_text("# Tusk\n\nthe walrus naps\n", "ocean/tusk-log")  # replaced
    _label_index_agrees(store)
    assert _hit_sources(store.search("walrus", source="tusk")) == ["ocean/tusk-log"]
    doc.unlink()  # its chunks are dropped at search time
    assert _hit_sources(store.search("walrus", source="walrus-notes")) == []
    _label_index_agrees(store, gone=["walrus-notes.md"])
    assert store.delete_source("ocean/tusk-log")
    _label_index_agrees(store, gone=["walrus-notes.md", "ocean/tusk-log"])
    assert store.search("walrus", source="tusk").hits == []


def test_a_database_without_the_label_index_gets_it_when_migrated(tmp_path):
    path = tmp_path / "kb.db"
    with ContentStore(path) as store:
        store.index_text("# Kept\n\nthe walrus survives\n", "docs/kept.md")
        store.index_text("# Other\n\nthe walrus elsewhere\n", "notes/other.md")
        con = store.connection
        for trigger in ("added", "removed", "changed"):
            con.execute(f"DROP TRIGGER sources_label_{trigger}")
        con.execute("DROP TABLE labels_tri")
        con.execute("PRAGMA user_version = 2")  # as a database of the release before
    with ContentStore(path) as store:
        assert store.connection.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
        _label_index_agrees(store)
        assert _hit_sources(store.search("walrus", source="docs/")) == ["docs/kept.md"]


def test_a_scoped_search_without_the_label_index_checks_labels_instead(store):
    # a database opened for reading only, as it was before the index existed
    store.index_text("# Kept\n\nthe walrus survives\n", "docs/kept.md")
    store.index_text("# Other\n\nthe walrus elsewhere\n", "notes/other.md")
    for trigger in ("added", "removed", "changed"):
        store.connection.execute(f"DROP TRIGGER sources_label_{trigger}")
    store.connection.execute("DROP TABLE labels_tri")
    assert _hit_sources(store.search("walrus", source="docs/")) == ["docs/kept.md"]


def test_content_type_filter_and_source_filter_combine(filtered):
    code = filtered.search("tapir", content_type="code", limit=10)
    assert _hit_sources(code) == ["docs/api.md"]
    prose = filtered.search("tapir", source="docs", content_type="prose", limit=10)
    assert _hit_sources(prose) == ["docs/guide.md"]


# --------------------------------------------------------------------------- odd queries


def test_empty_query_returns_no_results(store):
    store.index_text("# Doc\n\nanything\n", "doc")
    result = store.search("")
    assert isinstance(result, SearchResult)
    assert result.hits == []


def test_query_of_only_stopwords_still_searches(store):
    store.index_text("# Doc\n\nwhat about this one\n", "doc")
    assert _hit_sources(store.search("what about this")) == ["doc"]


HOSTILE = {
    "double quote": '"',
    "unbalanced quote": '"tapir',
    "NOT": "NOT",
    "OR": "OR",
    "AND": "AND",
    "operators only": "AND OR NOT",
    "star": "*",
    "prefix star": "tap*",
    "leading minus": "-foo",
    "colon": "a:b",
    "column filter": "col:term",
    "unbalanced paren": "(unbalanced",
    "near": "NEAR(a b)",
    "caret": "^start",
    "braces": "{a b} [c] ~d",
    "emoji": "\U0001f680 rocket \U0001f389",
    "lone surrogate": "tapir \ud83d",
    "nul": "tap\x00ir",
    "ten kilobytes": " ".join(f"word{i} tapir-{i % 7}" for i in range(800))[:10240],
    "repeated char": "x" * 10240,
    "punctuation only": "!@#$%^&*()_+-=[]{}|;':\",./<>?`~",
    "empty": "",
    "whitespace": " \t\n ",
    "stopwords only": "the and for with this",
    "sql injection": "'; DROP TABLE sources; --",
    "backslashes": "C:\\Users\\me\\tapir",
    "empty reference parts": "a..b ...tapir tapir. x._",
    "like wildcards in a file word": "tap%r zoo_ tapir",
    "long dotted reference": "zoo.tapir.herbivore.large.pig",
}


@pytest.mark.parametrize("query", list(HOSTILE.values()), ids=list(HOSTILE))
def test_hostile_queries_never_raise_and_return_lists(store, query):
    store.index_text("# Tapir\n\nthe tapir is a large herbivore (NOT a pig)\n", "zoo")
    result = store.search(query)
    assert isinstance(result.hits, list)
    assert all(h.source == "zoo" for h in result.hits)
    assert _sources(store) == ["zoo"]


def test_query_with_fts_syntax_still_finds_the_words(store):
    store.index_text("# Tapir\n\nthe tapir is a large herbivore\n", "zoo")
    for query in ['"tapir', "tapir*", "(tapir", "^tapir", "NEAR(tapir)", "-tapir", "{tapir}"]:
        assert _hit_sources(store.search(query)) == ["zoo"], query


def test_compound_identifiers_with_colons_and_dots_find_the_identifier(store):
    store.index_text("# Cpp\n\nprefer std::vector over raw arrays\n", "cpp")
    store.index_text("# Py\n\ncall os.path.join for paths\n", "py")
    store.index_text("# Noise\n\nthe vector of a path is std\n", "noise")
    assert _hit_sources(store.search("std::vector"))[0] == "cpp"
    assert _hit_sources(store.search("os.path.join"))[0] == "py"


# --------------------------------------------------------------------------- CJK

CJK_DOCS = {
    "zh": (
        "# 配置\n\n数据库连接池的配置方法。我们使用连接池来管理数据库连接。\n",
        "连接",
        "数据库连接池",
    ),
    "ja": ("# 天気\n\n東京の天気予報によると、明日は雨が降るでしょう。\n", "天気", "天気予報"),
    "ko": (
        "# 날씨\n\n서울의 날씨는 오늘 맑습니다. 데이터베이스 연결을 확인하세요.\n",
        "연결",
        "데이터베이스",
    ),
}


@pytest.mark.parametrize("lang", sorted(CJK_DOCS))
def test_cjk_text_is_findable_by_two_character_and_longer_words(store, lang):
    for code, (text, _, _) in CJK_DOCS.items():
        store.index_text(text, code)
    store.index_text("# English\n\nplain latin text only\n", "en")
    _, short, long = CJK_DOCS[lang]
    assert _hit_sources(store.search(short)) == [lang]
    assert _hit_sources(store.search(long)) == [lang]


def test_cjk_word_absent_from_the_text_is_not_found(store):
    store.index_text(CJK_DOCS["zh"][0], "zh")
    assert store.search("天気").hits == []


def test_mixed_cjk_and_latin_text_is_findable_by_either(store):
    store.index_text("# 部署\n\n部署 kubernetes 集群时需要配置 ingress 控制器\n", "mixed")
    store.index_text("# Other\n\nkubernetes without any cjk\n", "latin")
    assert _hit_sources(store.search("集群")) == ["mixed"]
    assert _hit_sources(store.search("ingress 控制器")) == ["mixed"]
    assert _hit_sources(store.search("kubernetes 集群"))[0] == "mixed"


def test_reindexing_cjk_text_removes_the_old_bigrams(store):
    store.index_text(CJK_DOCS["zh"][0], "doc")
    store.index_text("# New\n\n天気予報\n", "doc")
    assert store.search("连接").hits == []
    assert _hit_sources(store.search("天気")) == ["doc"]


# --------------------------------------------------------------------------- code search

FUNCTION_QUERIES = [
    ("sample.py", "expand_environment"),
    ("sample.py", "load_config"),
    ("sample.js", "computeTotal"),
    ("sample.ts", "fetchUserProfile"),
    ("sample.go", "MergeInventories"),
    ("sample.rs", "parse_duration"),
    ("sample.java", "PaymentGateway"),
    ("sample.c", "count_words"),
    ("sample.cpp", "join_strings"),
]


@pytest.mark.parametrize(("fixture", "name"), FUNCTION_QUERIES)
def test_searching_a_definition_name_returns_its_chunk_first(store, fixture, name):
    for path in sorted(FIXTURES.iterdir()):
        store.index_file(path)
    hit = store.search(name).hits[0]
    assert hit.source.endswith(fixture)
    assert re.search(rf"\b{name}\b", hit.title), hit.title
    assert hit.content_type == "code"


# --------------------------------------------------------------------------- snippets


def test_hits_carry_a_snippet_bounded_by_snippet_chars(store):
    lines = [f"padding line {i} with words" for i in range(300)]
    lines[150] = "the ocelot appears exactly here"
    store.index_text("\n".join(lines), "log.txt", kind="plain")
    hit = store.search("ocelot", snippet_chars=200).hits[0]
    assert "ocelot" in hit.snippet
    assert len(hit.snippet) <= 200


# --------------------------------------------------------------------------- distinctive terms


def test_distinctive_terms_need_at_least_three_chunks(store):
    store.index_text("# A\n\nrare_word here\n\n# B\n\nrare_word there\n", "two")
    assert store.distinctive_terms("two") == []
    assert store.distinctive_terms("no-such-label") == []


def test_distinctive_terms_keep_the_document_frequency_band_without_stopwords(store):
    sections = []
    for i in range(10):
        words = ["common", f"unique{i}"]
        if i < 2:
            words += ["frobnicate_widget", "these", "would"]
        if i < 4:
            words += ["quasar"]
        if i < 6:
            words += ["nebula"]
        sections.append(f"# Section {i}\n\n" + " ".join(words) + "\n")
    store.index_text("\n".join(sections), "doc")
    terms = store.distinctive_terms("doc")
    assert "frobnicate_widget" in terms
    assert "quasar" in terms  # df 4 == ceiling max(3, ceil(0.4 * 10))
    assert "nebula" not in terms  # df 6 is above the band
    assert "common" not in terms  # in every chunk
    assert "unique3" not in terms  # in one chunk only
    assert "these" not in terms and "would" not in terms  # stopwords
    assert terms[0] == "frobnicate_widget"


# --------------------------------------------------------------------------- lifecycle


def test_data_persists_after_close_and_reopen(db_path):
    with ContentStore(db_path) as first:
        first.index_text("# Persist\n\nthe capybara remembers\n", "memo")
    with ContentStore(db_path) as second:
        assert _hit_sources(second.search("capybara")) == ["memo"]
        assert _sources(second) == ["memo"]


def test_closing_checkpoints_the_wal(db_path):
    store = ContentStore(db_path)
    for i in range(20):
        store.index_text(f"# Doc {i}\n\n" + "bulk text for the wal " * 50, f"doc{i}")
    wal = Path(f"{db_path}-wal")
    assert wal.exists() and wal.stat().st_size > 0
    store.close()
    assert not wal.exists() or wal.stat().st_size == 0


def test_closing_twice_is_harmless(db_path):
    store = ContentStore(db_path)
    store.close()
    store.close()


def test_a_corrupt_database_is_set_aside_and_a_fresh_one_created(db_path):
    garbage = b"this is definitely not an sqlite database " * 200
    db_path.write_bytes(garbage)
    with ContentStore(db_path) as store:
        aside = store.recovered_from
        assert aside is not None
        assert aside.parent == db_path.parent
        assert re.fullmatch(r"kb\.db\.corrupt-\d{13}", aside.name), aside.name
        assert aside.read_bytes() == garbage
        store.index_text("# Fresh\n\nworks again\n", "fresh")
        assert _hit_sources(store.search("works")) == ["fresh"]
    with ContentStore(db_path) as reopened:
        assert reopened.recovered_from is None
        assert _sources(reopened) == ["fresh"]


def test_a_healthy_database_is_not_set_aside(db_path):
    with ContentStore(db_path) as store:
        store.index_text("# A\n\nb\n", "a")
    with ContentStore(db_path) as store:
        assert store.recovered_from is None
    assert sorted(p.name for p in db_path.parent.iterdir() if "corrupt" in p.name) == []


def test_a_database_from_a_newer_ctxmode_is_refused_not_overwritten(db_path):
    con = sqlite3.connect(db_path)
    con.execute("PRAGMA user_version = 999")
    con.close()
    with pytest.raises(StoreError, match="newer"):
        ContentStore(db_path)
    con = sqlite3.connect(db_path)
    assert con.execute("PRAGMA user_version").fetchone()[0] == 999
    con.close()


def test_a_store_path_that_is_a_directory_is_a_store_error(tmp_path):
    with pytest.raises(StoreError):
        ContentStore(tmp_path)


def test_an_in_memory_store_indexes_and_searches(mem_store):
    mem_store.index_text("# Mem\n\nephemeral axolotl\n", "m")
    assert _hit_sources(mem_store.search("axolotl")) == ["m"]


def test_stores_open_in_a_fresh_subdirectory(tmp_path):
    path = tmp_path / "deep" / "er" / "kb.db"
    with ContentStore(path) as store:
        store.index_text("# A\n\nb\n", "a")
    assert path.is_file()
    assert os.path.getsize(path) > 0


def test_a_database_of_an_older_schema_is_migrated_in_place(tmp_path):
    path = tmp_path / "kb.db"
    with ContentStore(path) as store:
        store.index_text("# Kept\n\nthe walrus survives migrations\n", "kept")
        store.connection.execute("PRAGMA user_version = 1")
    with ContentStore(path) as store:
        version = store.connection.execute("PRAGMA user_version").fetchone()[0]
        assert version == len(MIGRATIONS)
        assert [h.source for h in store.search("walrus").hits] == ["kept"]


def test_a_query_of_many_unknown_words_has_only_its_first_few_corrected(store):
    # about 6 ms a correction: a pasted blob of ids and hashes is no list of typos
    from ctxmode.store.retrieval import CORRECT_MAX

    words = [f"kubernetes{chr(97 + i)}xyzzy" for i in range(CORRECT_MAX + 4)]
    store.index_text("# Words\n\n" + " ".join(words) + "\n", "words")
    typos = [w.replace("xyzzy", "xyzy") for w in words]  # one letter dropped from each
    result = store.search(" ".join(typos))
    assert result.corrections == dict(zip(typos[:CORRECT_MAX], words[:CORRECT_MAX], strict=True))


def test_a_large_file_is_indexed_a_piece_at_a_time_as_if_whole(store, tmp_path, monkeypatch):
    """Over `PIECE_BYTES` a file is read, hashed and chunked a piece at a time (bounded
    memory): every line is found, numbered in the file, and the same text again is
    recognised as unchanged."""
    monkeypatch.setattr("ctxmode.store.store.PIECE_BYTES", 4096)
    lines = [
        f"2026-12-07 worker-{i % 7} handled request number {i} in {i % 97} ms" for i in range(2000)
    ]
    lines[1234] = "2026-12-07 worker-3 ERROR zebrafish exploded in the pipeline"
    log = tmp_path / "app.log"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = store.index_file(log, "app.log", max_bytes=1 << 20)
    assert report.chunks > 10 and report.bytes == log.stat().st_size
    [hit] = store.search("zebrafish").hits
    assert hit.start_line <= 1235 <= hit.end_line  # numbered in the file, not in its piece
    assert "zebrafish exploded" in hit.snippet
    assert store.search("request number 1999").hits
    os.utime(log, ns=(1, 1))  # same text, another mtime: hashed, not indexed again
    again = store.index_file(log, "app.log", max_bytes=1 << 20)
    assert again.unchanged and again.chunks == report.chunks


def test_a_search_does_not_wait_for_another_writer_to_catch_up(tmp_path):
    """Catching up is a write: while another process holds the database, a search goes on
    with what is searchable, and the next search finds the rest."""
    import sqlite3

    path = tmp_path / "kb.db"
    with ContentStore(path) as store:
        store.index_text("# Kept\n\nthe walrus\n", "kept")
        store.catch_up()
        store.index_text("# Later\n\nthe narwhal\n", "later")  # stored, not yet searchable
        other = sqlite3.connect(path, timeout=0)
        other.execute("BEGIN IMMEDIATE")
        try:
            assert [h.source for h in store.search("walrus").hits] == ["kept"]
        finally:
            other.rollback()
            other.close()
        assert [h.source for h in store.search("narwhal").hits] == ["later"]
