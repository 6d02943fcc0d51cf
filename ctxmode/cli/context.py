"""Opening the current project's knowledge base for a command."""

from pathlib import Path

from ctxmode import paths
from ctxmode.cli import output
from ctxmode.store import ContentStore


def open_store(project: Path | None) -> tuple[ContentStore, paths.ProjectPaths]:
    where = paths.project_paths(project)
    store = ContentStore(where.adopt_legacy_content_db())
    if store.recovered_from is not None:
        output.warn(
            f"the knowledge base was damaged; it was moved to {store.recovered_from} "
            "and a new one started"
        )
    return store, where
