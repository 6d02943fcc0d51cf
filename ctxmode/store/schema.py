"""Schema of the per-project knowledge base, as ordered migrations.

Tables:
    sources     one row per indexed label (a file, a URL, a command's output)
    chunks      the chunk text, title, type and line range; ``chunks.id`` is the FTS rowid.
                ``pending`` marks a chunk stored but not yet in ``chunks_fts`` and the
                vocabulary: the store makes those searchable in batches
                (`ContentStore.catch_up`), always before it searches.
    chunks_fts  contentless FTS5, porter stemming over unicode61; indexes
                ``text.fts_text(title)`` and ``text.fts_text(content)``. Rows are deleted with
                the FTS5 'delete' command and those same re-computed values.
    vocab       every distinct word seen (lower case), with a trigram FTS5 index over the
                words only (``vocab_tri``, filled in bulk by the writer): substring and typo
                matching without trigram-indexing content.
    labels_tri  a trigram FTS5 index over ``sources.label``, kept by triggers: the sources
                whose label holds a piece of text (a search scoped to a file name), found
                without reading every label.
"""

import sqlite3
from collections.abc import Callable

PORTER_TOKENIZE = "porter unicode61 remove_diacritics 2"


def m001_initial(con: sqlite3.Connection) -> None:
    statements = [
        """
        CREATE TABLE sources(
            id INTEGER PRIMARY KEY,
            label TEXT NOT NULL UNIQUE,
            kind TEXT NOT NULL,
            file_path TEXT,
            content_hash TEXT,
            file_mtime_ns INTEGER,
            file_size INTEGER,
            bytes INTEGER NOT NULL DEFAULT 0,
            chunk_count INTEGER NOT NULL DEFAULT 0,
            code_chunk_count INTEGER NOT NULL DEFAULT 0,
            session_id TEXT NOT NULL DEFAULT '',
            indexed_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        )""",
        "CREATE INDEX sources_file_path ON sources(file_path) WHERE file_path IS NOT NULL",
        """
        CREATE TABLE chunks(
            id INTEGER PRIMARY KEY,
            source_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
            ord INTEGER NOT NULL,
            title TEXT NOT NULL,
            content TEXT NOT NULL,
            content_type TEXT NOT NULL,
            start_line INTEGER,
            end_line INTEGER
        )""",
        "CREATE INDEX chunks_source ON chunks(source_id)",
        f"CREATE VIRTUAL TABLE chunks_fts USING fts5(title, body, content='', "
        f"tokenize='{PORTER_TOKENIZE}')",
        "CREATE TABLE vocab(id INTEGER PRIMARY KEY, word TEXT NOT NULL UNIQUE)",
        "CREATE VIRTUAL TABLE vocab_tri USING fts5(word, content='vocab', content_rowid='id', "
        "tokenize='trigram')",
    ]
    for statement in statements:
        con.execute(statement)


def m002_fts_automerge(con: sqlite3.Connection) -> None:
    # Merge FTS segments in bigger, rarer steps: indexing many documents in a row spends
    # much less time merging, for a negligible cost at query time.
    con.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES('automerge', 16)")


def m003_label_index(con: sqlite3.Connection) -> None:
    # A search scoped to the files whose name holds a word joined every chunk matching the
    # rest of the query to its source's label (~20 ms for a common word at 100,000 files).
    statements = [
        "CREATE VIRTUAL TABLE IF NOT EXISTS labels_tri USING fts5(label, content='sources', "
        "content_rowid='id', tokenize='trigram')",
        "CREATE TRIGGER IF NOT EXISTS sources_label_added AFTER INSERT ON sources BEGIN "
        "INSERT INTO labels_tri(rowid, label) VALUES (new.id, new.label); END",
        "CREATE TRIGGER IF NOT EXISTS sources_label_removed AFTER DELETE ON sources BEGIN "
        "INSERT INTO labels_tri(labels_tri, rowid, label) VALUES ('delete', old.id, old.label);"
        " END",
        "CREATE TRIGGER IF NOT EXISTS sources_label_changed AFTER UPDATE OF label ON sources BEGIN "
        "INSERT INTO labels_tri(labels_tri, rowid, label) VALUES ('delete', old.id, old.label);"
        " INSERT INTO labels_tri(rowid, label) VALUES (new.id, new.label); END",
        "INSERT INTO labels_tri(labels_tri) VALUES ('rebuild')",
    ]
    for statement in statements:
        con.execute(statement)


def m004_pending_chunks(con: sqlite3.Connection) -> None:
    # Full-text indexing one document per transaction cost most of a small ctx_index (FTS5
    # writes a segment per commit); stored first and indexed in batches, it costs a fifth.
    columns = {row[1] for row in con.execute("PRAGMA table_info(chunks)")}
    if "pending" not in columns:
        con.execute("ALTER TABLE chunks ADD COLUMN pending INTEGER NOT NULL DEFAULT 0")
    con.execute("CREATE INDEX IF NOT EXISTS chunks_pending ON chunks(id) WHERE pending = 1")


MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [
    m001_initial,
    m002_fts_automerge,
    m003_label_index,
    m004_pending_chunks,
]
