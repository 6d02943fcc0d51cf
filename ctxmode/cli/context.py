"""Opening the current project's knowledge base for a command."""

from pathlib import Path

from ctxmode import paths
from ctxmode.cli import output
from ctxmode.store import ContentStore


def open_store(project: Path | None) -> tuple[ContentStore, paths.ProjectPaths]:
    """The project's knowledge base; files its Read rules deny are never re-read."""
    from ctxmode.security import load_policy, path_deny_check

    where = paths.project_paths(project)
    deny = path_deny_check(load_policy(where.project_dir), where.project_dir)
    store = ContentStore(where.adopt_legacy_content_db(), deny=deny)
    if store.recovered_from is not None:
        output.warn(
            f"the knowledge base was damaged; it was moved to {store.recovered_from} "
            "and a new one started"
        )
    return store, where
