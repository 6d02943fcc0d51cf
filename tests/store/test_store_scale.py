"""Searching many file-backed sources: only the hits' files and a bounded window are checked,
a deleted or changed file is still never served, and re-indexing an unchanged tree reads no
file (size and mtime first, the content hash only when they differ)."""

import os

import pytest

from ctxmode.store import ContentStore
from ctxmode.store import store as store_module
from ctxmode.store.indexer import index_paths

SECOND = 1_000_000_000
PAST = 1_700_000_000 * SECOND
FILES = 60
BATCH = 5


class CountingStore(ContentStore):
    """Counts the sources a call checks against their files."""

    checked = 0

    def _check(self, rows, report, **kw):
        rows = list(rows)
        self.checked += len(rows)
        super()._check(rows, report, **kw)


@pytest.fixture
def small_batch(monkeypatch):
    monkeypatch.setattr(store_module, "SWEEP_BATCH", BATCH)
    monkeypatch.setattr(store_module, "FOLDER_BUDGET", BATCH)


@pytest.fixture
def reads(monkeypatch):
    """The paths the store reads (opens for their content)."""
    seen = []
    real = store_module.read_text_file

    def counting(path, *args, **kwargs):
        seen.append(str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(store_module, "read_text_file", counting)
    return seen


def _tree(root, n=FILES):
    root.mkdir()
    paths = []
    for i in range(n):
        path = root / f"note{i:03d}.md"
        path.write_text(f"# Note {i}\n\nthe common report number {i} word{i}x\n", "utf-8")
        os.utime(path, ns=(PAST, PAST))  # older than a timestamp tick: mtimes are trusted
        paths.append(path)
    return paths


@pytest.fixture
def many(tmp_path, small_batch):
    paths = _tree(tmp_path / "tree")
    with CountingStore(tmp_path / "kb.db") as store:
        for path in paths:
            store.index_file(path)
        store.checked = 0
        yield store, paths


def _rewrite(path, text, mtime=PAST + 10 * SECOND):
    path.write_text(text, "utf-8")
    os.utime(path, ns=(mtime, mtime))


def test_a_search_checks_its_hits_and_a_bounded_window_not_every_source(many):
    store, paths = many
    result = store.search("word7x")
    assert [h.source for h in result.hits] == [str(paths[7])]
    assert store.checked <= BATCH + 1


def test_a_deleted_file_among_many_is_never_served(many):
    store, paths = many
    paths[7].unlink()
    result = store.search("word7x")
    # (a typo-tolerant match may offer word0x of another file: word7x is gone with it)
    assert str(paths[7]) not in [h.source for h in result.hits]
    assert result.refresh.dropped == [str(paths[7])]
    assert str(paths[7]) not in [s.label for s in store.sources()]
    assert store.checked <= 2 * BATCH + 1  # the window, the hit, its folder's budget


def test_a_deleted_file_has_its_folder_checked_so_its_deleted_neighbours_go_at_once(
    many, monkeypatch
):
    store, paths = many
    monkeypatch.setattr(store_module, "FOLDER_BUDGET", FILES)
    for path in paths[: FILES // 2]:
        path.unlink()
    result = store.search("common report", limit=5)
    assert sorted(result.refresh.dropped) == sorted(str(p) for p in paths[: FILES // 2])
    assert len(result.hits) == 5
    assert all(os.path.exists(h.file_path) for h in result.hits)


def test_deleted_files_are_never_served_even_when_they_fill_every_round(many, monkeypatch):
    store, paths = many
    monkeypatch.setattr(store_module, "FOLDER_BUDGET", 0)
    monkeypatch.setattr(store_module, "STALE_ROUNDS", 1)
    for path in paths[: FILES // 2]:
        path.unlink()
    served = []
    for _ in range(FILES // 2):
        result = store.search("common report", limit=5)
        assert all(os.path.exists(h.file_path) for h in result.hits)
        served.append(len(result.hits))
    assert served[-1] == 5  # fewer hits while deleted files are found, never stale ones


def test_a_changed_file_among_many_is_served_with_its_new_content(many):
    store, paths = many
    _rewrite(paths[7], "# Note 7\n\nword7x now says the mango ripened, a longer text\n")
    result = store.search("word7x")
    assert [h.source for h in result.hits] == [str(paths[7])]
    assert "mango" in result.hits[0].snippet and "report" not in result.hits[0].snippet
    assert result.refresh.refreshed == [str(paths[7])]


def test_a_file_changed_behind_other_hits_is_replaced_not_served(many):
    store, paths = many
    _rewrite(paths[3], "# Note 3\n\nnothing in common any more\n")
    result = store.search("report", limit=FILES)
    assert str(paths[3]) not in {h.source for h in result.hits}
    assert len(result.hits) == FILES - 1
    assert str(paths[3]) in result.refresh.refreshed


def test_new_words_of_a_changed_file_are_found_once_the_window_reaches_it(many):
    store, paths = many
    _rewrite(paths[42], "# Note 42\n\nthe wombat moved in, a much longer line of text\n")
    found = [bool(store.search("wombat").hits) for _ in range(FILES // BATCH + 1)]
    assert any(found)  # every source is checked within FILES / BATCH searches
    assert store.search("wombat").hits[0].source == str(paths[42])


def test_an_explicit_refresh_checks_every_source(many):
    store, paths = many
    _rewrite(paths[42], "# Note 42\n\nthe wombat moved in, a much longer line of text\n")
    report = store.refresh()
    assert report.refreshed == [str(paths[42])]
    assert store.checked == FILES
    assert [h.source for h in store.search("wombat", refresh=False).hits] == [str(paths[42])]


def test_a_small_store_is_swept_whole_by_every_search(tmp_path):
    paths = _tree(tmp_path / "tree", n=3)
    with CountingStore(tmp_path / "kb.db") as store:
        for path in paths:
            store.index_file(path)
        _rewrite(paths[2], "# Note 2\n\nthe wombat moved in, a much longer line of text\n")
        assert [h.source for h in store.search("wombat").hits] == [str(paths[2])]


# --------------------------------------------------------------------------- re-indexing


def test_reindexing_an_unchanged_tree_reads_no_file(tmp_path, reads):
    root = tmp_path / "tree"
    _tree(root)
    with ContentStore(tmp_path / "kb.db") as store:
        first = index_paths(store, [str(root)], project=tmp_path, cwd=tmp_path)
        assert len(reads) == FILES and not any(r.unchanged for r in first.indexed)
        ids = [r.source_id for r in first.indexed]
        reads.clear()
        again = index_paths(store, [str(root)], project=tmp_path, cwd=tmp_path)
        assert reads == []
        assert [r.unchanged for r in again.indexed] == [True] * FILES
        assert [r.source_id for r in again.indexed] == ids
        assert [(r.chunks, r.bytes) for r in again.indexed] == [
            (r.chunks, r.bytes) for r in first.indexed
        ]


def test_an_edit_that_keeps_size_and_mtime_is_not_seen_without_a_rehash(tmp_path, reads):
    # The proof that a re-index trusts size and mtime: content changed behind them stays
    # as indexed (an explicit `refresh(rehash=True)`, `ctxmode index --refresh`, sees it).
    [path] = _tree(tmp_path / "tree", n=1)
    with ContentStore(tmp_path / "kb.db") as store:
        store.index_file(path)
        path.write_text(path.read_text("utf-8").replace("common", "zebras"), "utf-8")
        os.utime(path, ns=(PAST, PAST))
        reads.clear()
        assert store.index_file(path).unchanged
        assert reads == []
        assert store.search("zebras").hits == []
        assert store.refresh(rehash=True).refreshed == [str(path)]
        assert store.search("zebras").hits[0].source == str(path)


def test_a_touched_file_is_hashed_once_and_kept(tmp_path, reads):
    [path] = _tree(tmp_path / "tree", n=1)
    with ContentStore(tmp_path / "kb.db") as store:
        before = store.index_file(path)
        os.utime(path, ns=(PAST + SECOND, PAST + SECOND))
        reads.clear()
        report = store.index_file(path)
        assert report.unchanged and report.source_id == before.source_id
        assert reads == [str(path)]  # hashed: same content, only the mtime recorded
        assert store.index_file(path).unchanged
        assert reads == [str(path)]


def test_a_changed_file_is_indexed_again(tmp_path):
    [path] = _tree(tmp_path / "tree", n=1)
    with ContentStore(tmp_path / "kb.db") as store:
        store.index_file(path)
        _rewrite(path, "# Note\n\nthe wombat, a different and longer text\n")
        report = store.index_file(path)
        assert not report.unchanged
        assert store.search("wombat", refresh=False).hits[0].source == str(path)


def test_another_kind_or_file_under_the_label_is_indexed_again(tmp_path):
    a, b = _tree(tmp_path / "tree", n=2)
    with ContentStore(tmp_path / "kb.db") as store:
        store.index_file(a, "doc")
        assert not store.index_file(a, "doc", kind="plain").unchanged
        assert not store.index_file(b, "doc", kind="plain").unchanged
        assert store.index_file(b, "doc", kind="plain").unchanged


def test_an_unchanged_file_indexed_by_another_session_moves_to_it(tmp_path):
    [path] = _tree(tmp_path / "tree", n=1)
    with ContentStore(tmp_path / "kb.db") as store:
        store.index_file(path, session_id="one")
        assert store.index_file(path, session_id="two").unchanged
        assert store.delete_session_sources("one") == 0
        assert store.delete_session_sources("two") == 1


def test_a_file_read_within_a_timestamp_tick_of_its_change_is_hashed_next_time(tmp_path, reads):
    # Changed again within the same tick, a file would keep its mtime: one written just
    # now has no mtime recorded, so the next look hashes it (and records the mtime then).
    path = tmp_path / "fresh.md"
    path.write_text("# Fresh\n\nthe otter\n", "utf-8")
    with ContentStore(tmp_path / "kb.db") as store:
        store.index_file(path)
        row = store.connection.execute("SELECT file_mtime_ns FROM sources").fetchone()
        assert row[0] is None
        path.write_text("# Fresh\n\nthe heron\n", "utf-8")  # same size, maybe same mtime
        reads.clear()
        assert not store.index_file(path).unchanged
        assert reads == [str(path)]
        assert store.search("heron", refresh=False).hits


def test_the_one_file_that_is_too_big_now_is_refused_not_kept(tmp_path):
    from ctxmode.errors import InputError

    [path] = _tree(tmp_path / "tree", n=1)
    with ContentStore(tmp_path / "kb.db") as store:
        store.index_file(path)
        with pytest.raises(InputError):
            store.index_file(path, max_bytes=10)


# --------------------------------------------------------------------------- segments


def _segments(store: ContentStore, table: str) -> int:
    sql = f"SELECT count(DISTINCT segid) FROM {table}_idx"  # noqa: S608 - our table names
    return int(store.connection.execute(sql).fetchone()[0])


def test_a_bulk_index_merges_the_full_text_segments(tmp_path, monkeypatch):
    # every write made searchable at once: a segment each, as many as FTS5 keeps
    monkeypatch.setattr("ctxmode.store.store.PENDING_MAX_BYTES", 1)
    monkeypatch.setattr("ctxmode.store.indexer.MERGE_AFTER_CHUNKS", FILES)
    root = tmp_path / "tree"
    _tree(root)
    with ContentStore(tmp_path / "kb.db") as store:
        for i in range(FILES):  # one write (one segment, until FTS5 merges some) per file
            store.index_text(f"# Extra {i}\n\nspare words number {i}\n", f"extra{i}")
        assert _segments(store, "chunks_fts") > 1
        assert _segments(store, "labels_tri") > 1
        index_paths(store, [str(root)], project=tmp_path, cwd=tmp_path)
        assert _segments(store, "chunks_fts") == 1
        assert _segments(store, "vocab_tri") == 1
        assert _segments(store, "labels_tri") == 1
        assert [h.source for h in store.search("word7x").hits] == ["tree/note007.md"]
        assert store.search("spare", limit=100).hits  # what was there before is kept


def test_a_small_or_unchanged_index_run_leaves_the_segments_alone(tmp_path, monkeypatch):
    # every write made searchable at once: a segment each, as many as FTS5 keeps
    monkeypatch.setattr("ctxmode.store.store.PENDING_MAX_BYTES", 1)
    monkeypatch.setattr("ctxmode.store.indexer.MERGE_AFTER_CHUNKS", FILES + 1)
    root = tmp_path / "tree"
    _tree(root)
    with ContentStore(tmp_path / "kb.db") as store:
        index_paths(store, [str(root)], project=tmp_path, cwd=tmp_path)
        before = _segments(store, "chunks_fts")
        assert before > 1
        monkeypatch.setattr("ctxmode.store.indexer.MERGE_AFTER_CHUNKS", 1)
        index_paths(store, [str(root)], project=tmp_path, cwd=tmp_path)  # all unchanged
        assert _segments(store, "chunks_fts") == before


def test_merging_skips_a_database_another_process_is_writing(tmp_path):
    import sqlite3

    with ContentStore(tmp_path / "kb.db") as store:
        store.index_text("# A\n\nsome words\n", "a")
        other = sqlite3.connect(tmp_path / "kb.db", timeout=0)
        other.execute("BEGIN IMMEDIATE")
        try:
            assert store.merge_index() is False
        finally:
            other.rollback()
            other.close()
        assert store.merge_index() is True
        assert store.search("words").hits


def test_a_tree_is_indexed_in_walk_order_with_progress_counting_up(tmp_path):
    root = tmp_path / "tree"
    _tree(root, n=5)
    calls = []
    with ContentStore(tmp_path / "kb.db") as store:
        run = index_paths(
            store,
            [str(root)],
            project=tmp_path,
            cwd=tmp_path,
            progress=lambda done, total, name: calls.append((done, total, name)),
        )
    names = [f"tree/note{i:03d}.md" for i in range(5)]
    assert calls == [(i + 1, 5, name) for i, name in enumerate(names)]
    assert [r.label for r in run.indexed] == names


def test_a_stopped_run_keeps_what_it_indexed_and_the_next_run_goes_on(tmp_path, reads):
    root = tmp_path / "tree"
    _tree(root, n=10)
    with ContentStore(tmp_path / "kb.db") as store:
        first = index_paths(
            store, [str(root)], project=tmp_path, cwd=tmp_path, stop=lambda: len(reads) >= 4
        )
        assert (len(first.indexed), first.left, first.listing_stopped) == (4, 6, False)
        reads.clear()
        again = index_paths(store, [str(root)], project=tmp_path, cwd=tmp_path)
        assert [r.unchanged for r in again.indexed] == [True] * 4 + [False] * 6
        assert len(reads) == 6 and again.left == 0
        assert store.search("word9x").hits


def test_a_walk_stopped_while_listing_indexes_nothing(tmp_path):
    from ctxmode.store.indexer import STOP_EVERY

    root = tmp_path / "tree"
    _tree(root, n=STOP_EVERY + 1)
    with ContentStore(tmp_path / "kb.db") as store:
        run = index_paths(store, [str(root)], project=tmp_path, cwd=tmp_path, stop=lambda: True)
        assert run.listing_stopped and run.indexed == [] and store.chunk_count() == 0


def test_a_walk_judges_the_file_it_opens_not_only_its_name(tmp_path):
    """A name that passes the check but opens a denied file (a symlink swapped in after
    the check) is skipped, not indexed."""
    root = tmp_path / "tree"
    root.mkdir()
    secret = tmp_path / "secret.env"
    secret.write_text("API_KEY=hunter2\n", encoding="utf-8")
    (root / "notes.md").symlink_to(secret)
    (root / "kept.md").write_text("# Kept\n\nthe walrus\n", encoding="utf-8")

    def deny(path: str) -> bool:  # judges by name only: the symlink's name passes
        return path == str(secret)

    with ContentStore(tmp_path / "kb.db") as store:
        run = index_paths(
            store,
            [str(root)],
            project=tmp_path,
            cwd=tmp_path,
            deny=deny,
        )
        assert [r.label for r in run.indexed] == ["tree/kept.md"]
        assert not store.search("hunter2").hits
