"""Stale file-backed sources: modified, deleted, touched, changed behind a kept mtime, denied."""

import os

import pytest

from ctxmode.store import ContentStore

SECOND = 1_000_000_000


def _hits(store, query, **kw):
    return [h.source for h in store.search(query, **kw).hits]


def _row(store, label):
    return store.connection.execute(
        "SELECT file_mtime_ns, file_size, content_hash, indexed_at FROM sources WHERE label = ?",
        (label,),
    ).fetchone()


def _chunk_ids(store, label):
    return [
        r[0]
        for r in store.connection.execute(
            "SELECT c.id FROM chunks c JOIN sources s ON s.id = c.source_id"
            " WHERE s.label = ? ORDER BY c.id",
            (label,),
        )
    ]


def _set_mtime(path, mtime_ns):
    os.utime(path, ns=(mtime_ns, mtime_ns))


@pytest.fixture
def doc(tmp_path):
    path = tmp_path / "notes.md"
    path.write_text("# Notes\n\nthe marmot sleeps in winter\n")
    _set_mtime(path, 1_700_000_000 * SECOND)
    return path


@pytest.fixture
def indexed(store, doc):
    store.index_file(doc)
    return str(doc)


def test_modified_file_is_reindexed_on_the_next_search(store, doc, indexed):
    doc.write_text("# Notes\n\nthe wombat digs burrows all year round\n")
    _set_mtime(doc, 1_700_000_100 * SECOND)
    result = store.search("wombat")
    assert [h.source for h in result.hits] == [indexed]
    assert result.refresh.refreshed == [indexed]
    assert _hits(store, "marmot") == []
    assert [s.label for s in store.sources()] == [indexed]


def test_same_size_edit_with_a_new_mtime_is_reindexed(store, doc, indexed):
    old_size = doc.stat().st_size
    doc.write_text("# Notes\n\nthe badger sleeps in winter\n")
    assert doc.stat().st_size == old_size
    _set_mtime(doc, 1_700_000_100 * SECOND)
    assert store.refresh().refreshed == [indexed]
    assert _hits(store, "badger") == [indexed]
    assert _hits(store, "marmot") == []


def test_refreshed_source_keeps_its_label_and_kind(store, tmp_path):
    path = tmp_path / "run.log"
    path.write_text("# not a heading in plain text\nfirst otter line\n")
    store.index_file(path, label="build", kind="plain")
    path.write_text("# still plain\nsecond heron line, longer than before\n")
    _set_mtime(path, path.stat().st_mtime_ns + SECOND)
    assert store.refresh().refreshed == ["build"]
    [info] = store.sources()
    assert (info.label, info.kind, info.file_path) == ("build", "plain", str(path))
    assert [h.title for h in store.search("heron").hits] == ["Output"]


def test_deleted_file_is_dropped_and_reported(store, doc, indexed):
    store.index_text("# Other\n\nmarmot facts from a pasted note\n", "pasted")
    doc.unlink()
    result = store.search("marmot")
    assert [h.source for h in result.hits] == ["pasted"]
    assert result.refresh.dropped == [indexed]
    assert [s.label for s in store.sources()] == ["pasted"]
    assert store.search("marmot").refresh.dropped == []


def test_touched_but_unchanged_file_is_not_reindexed_only_its_mtime_recorded(store, doc, indexed):
    before = _row(store, indexed)
    ids = _chunk_ids(store, indexed)
    touched = before["file_mtime_ns"] + 5 * SECOND
    _set_mtime(doc, touched)
    report = store.refresh()
    assert report.refreshed == [] and report.dropped == [] and report.failed == []
    after = _row(store, indexed)
    assert after["file_mtime_ns"] == touched
    assert after["indexed_at"] == before["indexed_at"]
    assert after["content_hash"] == before["content_hash"]
    assert _chunk_ids(store, indexed) == ids


def test_after_a_touch_the_fast_path_trusts_the_recorded_mtime(store, doc, indexed):
    touched = _row(store, indexed)["file_mtime_ns"] + 5 * SECOND
    _set_mtime(doc, touched)
    store.refresh()
    # A same-size edit that keeps the touched mtime is invisible to the fast path,
    # which shows the second refresh did not hash the file again.
    doc.write_text("# Notes\n\nthe beaver sleeps in winter\n")
    _set_mtime(doc, touched)
    assert store.refresh().refreshed == []
    assert _hits(store, "beaver") == []
    assert store.refresh(rehash=True).refreshed == [indexed]
    assert _hits(store, "beaver") == [indexed]


def test_content_changed_with_mtime_kept_is_caught_only_by_rehash(store, doc, indexed):
    original = _row(store, indexed)["file_mtime_ns"]
    size = doc.stat().st_size
    doc.write_text("# Notes\n\nthe beaver sleeps in winter\n")
    assert doc.stat().st_size == size
    _set_mtime(doc, original)
    assert store.refresh().refreshed == []
    assert _hits(store, "marmot") == [indexed]
    report = store.refresh(rehash=True)
    assert report.refreshed == [indexed]
    assert _hits(store, "beaver") == [indexed]
    assert _hits(store, "marmot") == []


def test_rehash_of_an_unchanged_file_reindexes_nothing(store, doc, indexed):
    ids = _chunk_ids(store, indexed)
    assert store.refresh(rehash=True).refreshed == []
    assert _chunk_ids(store, indexed) == ids


def test_denied_file_is_never_reread_nor_served_and_is_reported(tmp_path, doc):
    asked = []

    def deny(path):
        asked.append(path)
        return path == str(doc)

    with ContentStore(tmp_path / "kb.db", deny=deny) as store:
        store.index_file(doc)
        store.index_text("# Pasted\n\nmarmot text without a file\n", "pasted")
        doc.write_text("# Notes\n\nthe secret wombat credentials\n")
        _set_mtime(doc, 1_700_000_500 * SECOND)
        result = store.search("marmot")
        assert result.refresh.denied == [str(doc)]
        assert result.refresh.refreshed == []
        assert [h.source for h in result.hits] == ["pasted"]
        assert _hits(store, "wombat") == []
        assert asked and set(asked) == {str(doc)}
    with ContentStore(tmp_path / "kb.db") as store:  # the rule is lifted: it is back
        assert "marmot" not in store.search("wombat").hits[0].snippet


def test_denied_file_that_disappeared_is_left_alone_not_dropped(tmp_path, doc):
    with ContentStore(tmp_path / "kb.db", deny=lambda p: True) as store:
        store.index_file(doc)
        doc.unlink()
        report = store.refresh()
        assert report.denied == [str(doc)]
        assert report.dropped == []
        assert _hits(store, "marmot") == []
        assert [s.label for s in store.sources()] == [str(doc)]


def test_text_sources_never_refresh_even_when_labelled_with_a_file_path(store, doc):
    store.index_text("# Pasted\n\nthe marmot pasted copy\n", str(doc))
    doc.write_text("# Notes\n\nthe wombat replaced it\n")
    _set_mtime(doc, 1_700_000_100 * SECOND)
    doc.unlink()
    result = store.search("marmot")
    assert [h.source for h in result.hits] == [str(doc)]
    assert result.refresh.refreshed == [] and result.refresh.dropped == []


def test_refresh_can_be_limited_to_some_labels(store, tmp_path):
    paths = []
    for name in ("a.md", "b.md"):
        path = tmp_path / name
        path.write_text(f"# {name}\n\nfirst version\n")
        _set_mtime(path, 1_700_000_000 * SECOND)
        store.index_file(path)
        paths.append(path)
    for path in paths:
        path.write_text(f"# {path.name}\n\nsecond and longer version\n")
    report = store.refresh(labels=[str(paths[1])])
    assert report.refreshed == [str(paths[1])]
    assert store.refresh().refreshed == [str(paths[0])]


def test_search_without_refresh_leaves_stale_sources_alone(store, doc, indexed):
    doc.unlink()
    result = store.search("marmot", refresh=False)
    assert [h.source for h in result.hits] == [indexed]
    assert result.refresh.dropped == []


def test_file_that_turned_binary_keeps_its_cached_copy_and_is_reported_failed(store, doc, indexed):
    doc.write_bytes(b"\x00\x01\x02binary now\x00" * 50)
    result = store.search("marmot")
    assert result.refresh.failed == [indexed]
    assert [h.source for h in result.hits] == [indexed]


def test_file_replaced_by_a_directory_keeps_its_cached_copy(store, doc, indexed):
    doc.unlink()
    doc.mkdir()
    result = store.search("marmot")
    assert result.refresh.failed == [indexed]
    assert [h.source for h in result.hits] == [indexed]
