"""A damaged knowledge base heals itself at the first read or write that meets the damage:
moved aside, a new file started, the file-backed sources indexed again, said once. And a
full disk is a clear "disk full", with nothing stored lost. Real files, real damage."""

import re
import sqlite3
from pathlib import Path

import pytest

from ctxmode import db
from ctxmode.errors import DiskFullError
from ctxmode.store import ContentStore

from .support import (
    fill,
    garbage_in_the_middle,
    garbage_over,
    is_damaged,
    set_aside_copies,
    write_docs,
)

DOCS = 60


@pytest.fixture
def docs(tmp_path: Path) -> list[Path]:
    return write_docs(tmp_path / "project", DOCS)


@pytest.fixture
def kb(tmp_path: Path, docs: list[Path]) -> Path:
    """A closed knowledge base: every doc (a few hundred chunks) and one pasted text."""
    path = tmp_path / "data" / "kb.db"
    with ContentStore(path) as store:
        for doc in docs:
            store.index_file(doc, doc.name)
        store.index_text("# Notes\n\nthe walrus pasted this\n", "notes")
        assert store.chunk_count() > 300
    return path


def _labels(store: ContentStore) -> list[str]:
    return [s.label for s in store.sources()]


def _hits(store: ContentStore, query: str) -> list[str]:
    return [h.source for h in store.search(query).hits]


def test_garbage_in_the_middle_heals_at_the_first_failing_search(kb, docs):
    damaged = garbage_in_the_middle(kb)
    assert is_damaged(kb)
    notices: list[str] = []
    with ContentStore(kb, notify=notices.append) as store:
        assert _hits(store, "marker3x2") == ["doc03.md"]
        for query in ("alpha12", "omega", "marker59x7"):
            store.search(query)
        [notice] = notices
        [aside] = set_aside_copies(kb)
        assert re.fullmatch(r"kb\.db\.corrupt-\d{13}", aside.name)
        assert aside.read_bytes() == damaged  # set aside as it was, not deleted
        assert store.recovered_from == aside
        # what SQLite said, wherever in the file it met the damage
        assert re.search(r"damaged \((database disk image is malformed|vtable constructor)", notice)
        assert str(aside) in notice
        assert f"{DOCS} of {DOCS} file-backed source(s) indexed again" in notice
        assert "1 source(s) of indexed text" in notice  # the pasted notes: no file
        assert _labels(store) == sorted(d.name for d in docs)
        assert _hits(store, "marker59x7") == ["doc59.md"]
        store.index_text("# Later\n\nthe narwhal arrived\n", "later")
        assert _hits(store, "narwhal") == ["later"]
    assert not is_damaged(kb)
    again: list[str] = []
    with ContentStore(kb, notify=again.append) as store:
        assert _hits(store, "narwhal") == ["later"]
    assert again == []
    assert len(set_aside_copies(kb)) == 1


def test_a_write_that_meets_the_damage_heals_and_lands_in_the_new_file(kb, docs):
    garbage_over(kb, "chunks")
    notices: list[str] = []
    with ContentStore(kb, notify=notices.append) as store:
        report = store.index_text("# Fresh\n\nthe capybara writes\n", "fresh")
        assert report.chunks == 1
        assert len(notices) == 1
        assert _hits(store, "capybara") == ["fresh"]
        assert _labels(store) == sorted([*(d.name for d in docs), "fresh"])
    assert len(set_aside_copies(kb)) == 1


def test_damage_met_when_opening_heals_too(kb, docs):
    # The open counts the sources through this index; the table itself stays readable.
    garbage_over(kb, "sqlite_autoindex_sources_1")
    notices: list[str] = []
    with ContentStore(kb, notify=notices.append) as store:
        assert len(notices) == 1
        assert f"{DOCS} of {DOCS} file-backed source(s) indexed again" in notices[0]
        assert _hits(store, "marker10x1") == ["doc10.md"]
    assert len(notices) == 1


def test_an_unreadable_list_of_sources_still_gives_a_working_store(kb):
    garbage_over(kb, "sources")
    notices: list[str] = []
    with ContentStore(kb, notify=notices.append) as store:
        assert store.sources() == []
        store.index_text("# New\n\nthe okapi\n", "new")
        assert _hits(store, "okapi") == ["new"]
    [notice] = notices
    assert "its list of sources could not be read" in notice


def test_files_deleted_or_denied_since_are_left_out_of_the_rebuild(kb, docs):
    docs[0].unlink()
    denied = docs[1]
    garbage_over(kb, "chunks")
    notices: list[str] = []
    with ContentStore(kb, deny=lambda p: p == str(denied), notify=notices.append) as store:
        store.search("marker5x5")
        assert docs[0].name not in _labels(store)
        assert denied.name not in _labels(store)
        assert len(_labels(store)) == DOCS - 2
    [notice] = notices
    assert f"{DOCS - 2} of {DOCS} file-backed source(s) indexed again" in notice
    assert "1 left out (file gone or unreadable)" in notice
    assert "1 left out (denied by a Read rule)" in notice


def test_without_a_callback_the_notice_is_kept_once_for_the_caller(kb):
    garbage_over(kb, "chunks")
    with ContentStore(kb) as store:
        store.search("marker1x1")
        [notice] = store.take_notices()
        assert notice.startswith("the knowledge base was damaged")
        store.search("marker1x1")
        assert store.take_notices() == []


def test_a_file_another_process_already_healed_is_used_as_it_is(kb):
    """Two processes meet the same damage: the first moves the file aside; the second
    must not move the first one's new file, only switch to it."""
    late = ContentStore(kb)  # opened before the damage: still holds the old file
    try:
        garbage_over(kb, "chunks")
        with ContentStore(kb) as first:
            first.search("marker2x2")
            assert len(first.take_notices()) == 1
        late.index_text("# Late\n\nthe tapir wrote late\n", "late")
        assert late.take_notices() == []
        assert len(set_aside_copies(kb)) == 1
        assert _hits(late, "tapir") == ["late"]
    finally:
        late.close()
    with ContentStore(kb) as store:
        assert _hits(store, "tapir") == ["late"]
        assert _hits(store, "marker2x2") == ["doc02.md"]


def test_an_in_memory_store_is_never_healed(tmp_path):
    with ContentStore(":memory:") as store:
        store.index_text("# A\n\nb\n", "a")
        assert store.recovered_from is None


# ---------------------------------------------------------------------------- disk full


def test_a_full_disk_is_a_clear_error_and_nothing_stored_is_lost(small_disk):
    path = small_disk / "kb.db"
    with ContentStore(path) as store:
        store.index_text("# Kept\n\nthe ibex was here first\n", "kept")
        store.catch_up()  # as a server does when idle
        filler = fill(small_disk)
        with pytest.raises(DiskFullError) as caught:
            store.index_text("big output line\n" * 200_000, "execute:shell")
        message = str(caught.value)
        assert message.startswith("disk full: cannot write the knowledge base")
        assert "no transaction is active" not in message
        assert caught.value.code == "disk_full"
        assert _hits(store, "ibex") == ["kept"]
        assert "execute:shell" not in _labels(store)
        filler.unlink()
        store.index_text("big output line\n" * 20_000, "execute:shell")
        assert _labels(store) == ["execute:shell", "kept"]
    assert set_aside_copies(path) == []


def test_what_is_stored_as_the_disk_fills_is_searchable_once_there_is_room(small_disk):
    """Chunks are stored at once and made searchable in a batch: when the disk fills in
    between, a search says so (once) and finds them as soon as there is room."""
    path = small_disk / "kb.db"
    notices: list[str] = []
    with ContentStore(path, notify=notices.append) as store:
        store.index_text("# Kept\n\nthe ibex was here first\n", "kept")
        store.catch_up()
        store.index_text("# Later\n\nthe oryx came later\n" * 200, "later")
        filler = fill(small_disk)
        assert _hits(store, "ibex") == ["kept"]
        assert _hits(store, "oryx") == []
        [notice] = notices
        assert notice.startswith("disk full: cannot write the knowledge base")
        assert notice.endswith("stored but not searchable until there is room")
        assert _hits(store, "oryx") == [] and len(notices) == 1  # told once
        filler.unlink()
        assert set(_hits(store, "oryx")) == {"later"}
    assert set_aside_copies(path) == []


def test_a_disk_too_full_to_open_for_writing_still_serves_searches(small_disk):
    path = small_disk / "kb.db"
    with ContentStore(path) as store:
        store.index_text("# Kept\n\nthe ibex was here first\n", "kept")
    filler = fill(small_disk)  # the closed file has no -shm now, and none can grow
    notices: list[str] = []
    with ContentStore(path, notify=notices.append) as store:
        assert _hits(store, "ibex") == ["kept"]
        [notice] = notices
        assert notice.startswith("disk full: cannot write the knowledge base")
        assert notice.endswith("until then the knowledge base is open for reading only")
        with pytest.raises(DiskFullError, match=r"^disk full: cannot write the knowledge base"):
            store.index_text("# New\n\nthe oryx\n", "new")
        assert _hits(store, "ibex") == ["kept"]
        assert len(notices) == 1
        filler.unlink()
        store.index_text("# New\n\nthe oryx\n", "new")  # room again: written
        assert _hits(store, "oryx") == ["new"]
    with ContentStore(path) as store:
        assert _labels(store) == ["kept", "new"]


def test_a_knowledge_base_that_cannot_be_created_on_a_full_disk_says_disk_full(small_disk):
    fill(small_disk)
    with pytest.raises(DiskFullError, match=r"^disk full: cannot write the knowledge base"):
        ContentStore(small_disk / "new.db")


def test_a_failed_write_reports_its_own_error_not_the_rollback_sqlite_already_did(tmp_path):
    """SQLite rolls back by itself after some failures (a full disk); the rollback that
    follows must not replace the real error with "no transaction is active"."""
    con = db.connect(tmp_path / "t.db")
    try:
        con.execute("CREATE TABLE t(x)")
        with pytest.raises(sqlite3.IntegrityError, match="the real cause"):
            with db.write_transaction(con):
                con.execute("INSERT INTO t VALUES (1)")
                con.execute("ROLLBACK")  # what SQLite does itself on SQLITE_FULL
                raise sqlite3.IntegrityError("the real cause")
        assert not con.in_transaction
        assert con.execute("SELECT count(*) FROM t").fetchone()[0] == 0
    finally:
        con.close()


def test_merging_the_index_on_a_full_disk_is_skipped_and_loses_nothing(small_disk):
    path = small_disk / "kb.db"
    with ContentStore(path) as store:
        for i in range(10):  # one segment each, until FTS5 merges some
            store.index_text(f"# Note {i}\n\nthe ibex number {i} was here\n", f"note{i}")
            store.catch_up()
        filler = fill(small_disk)
        assert store.merge_index() is False
        assert len(store.search("ibex", limit=50).hits) == 10
        filler.unlink()
        assert store.merge_index() is True
        assert len(store.search("ibex", limit=50).hits) == 10
    assert set_aside_copies(path) == []
