"""The knowledge base: chunking, indexing and search over SQLite FTS5."""

from ctxmode.store.retrieval import SearchHit
from ctxmode.store.store import (
    ContentStore,
    IndexReport,
    RefreshReport,
    SearchResult,
    SourceInfo,
)

__all__ = [
    "ContentStore",
    "IndexReport",
    "RefreshReport",
    "SearchHit",
    "SearchResult",
    "SourceInfo",
]
