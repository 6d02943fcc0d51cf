"""Term weights (ctxmode.store.weights): inverse document frequency over the chunks."""

from ctxmode.store.weights import TermWeights


def test_rare_terms_weigh_more_and_new_text_is_counted(store):
    for i in range(10):
        store.index_text(f"# Part {i}\n\ncommon words only, part {i}\n", f"doc{i}.md")
    store.index_text("# Rare\n\ncommon words and a platypus\n", "rare.md")
    store.catch_up()  # what a search does first
    weights = TermWeights(store.connection)
    common, rare, absent = weights.idf(['"common"', '"platypus"', '"nowhere"'])
    assert absent > rare > common > 0
    store.index_text("# More\n\nanother platypus here\n", "more.md")
    store.catch_up()
    assert weights.idf(['"platypus"'])[0] < rare  # the cache follows the database


def test_an_expression_fts5_cannot_parse_counts_as_absent(store):
    store.index_text("# A\n\nsome text\n", "a.md")
    assert TermWeights(store.connection).frequency('"unclosed') == 0


def test_counting_stops_at_common_words(store, monkeypatch):
    monkeypatch.setattr("ctxmode.store.weights.COMMON_MIN", 3)
    for i in range(8):
        store.index_text(f"# Part {i}\n\nubiquitous word, part {i}\n", f"doc{i}.md")
    store.catch_up()
    weights = TermWeights(store.connection)
    weights.idf(['"ubiquitous"'])  # reads the chunk count
    assert weights.frequency('"ubiquitous"') == 3
