"""Opening the current project's knowledge base for a command."""

from pathlib import Path

from ctxmode import paths
from ctxmode.cli import output
from ctxmode.store import ContentStore


def open_store(project: Path | None) -> tuple[ContentStore, paths.ProjectPaths]:
    """The project's knowledge base; files its Read rules deny are never re-read.

    A damaged file heals itself when opened or at any later call (see `ContentStore`);
    the one notice of it is a warning on stderr.
    """
    from ctxmode.security import load_policy, path_deny_check

    where = paths.project_paths(project)
    deny = path_deny_check(load_policy(where.project_dir), where.project_dir)
    store = ContentStore(where.adopt_legacy_content_db(), deny=deny, notify=output.warn)
    return store, where
