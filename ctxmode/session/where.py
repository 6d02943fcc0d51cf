"""Which session, project and database file a hook call belongs to.

The session id is the host's (the platform adapter extracts it); a host that sends none
(Kiro) gets ``pid-<parent pid>``, stable for the life of the agent process that runs the
hooks. The project is the adapter's project directory, else the payload's cwd. The database
is ``<root>/sessions/<project-hash><worktree-suffix>.db``; the worktree suffix costs two git
processes, so hooks cache it per project next to the databases (a directory does not turn
into or out of a linked worktree while it is in use).
"""

import os
from pathlib import Path

from ctxmode import paths, settings
from ctxmode.hookevent import HookEvent
from ctxmode.typenames import Any


def session_id_of(event: HookEvent) -> str:
    """The event's session id, or ``pid-<parent pid>`` when the host sends none."""
    return (event.session_id or "").strip() or f"pid-{os.getppid()}"


def project_of(event: HookEvent) -> Path:
    """The project directory of a hook call (it need not exist)."""
    if event.project_dir is not None and str(event.project_dir):
        return Path(event.project_dir)
    if event.cwd:
        return Path(event.cwd)
    from ctxmode.errors import CtxError

    try:
        return paths.resolve_project()
    except CtxError:
        return Path.cwd()


def worktree_suffix(root: Path, project_dir: Path, *, remember: bool = True) -> str:
    """The project's worktree suffix, from the cache when known; `remember` False never
    writes the cache (purge must not create a file it is about to delete)."""
    if settings.session_suffix() is not None:
        return paths.worktree_suffix(project_dir)  # the override, no git
    if not project_dir.is_dir():
        return ""
    cache = root / "sessions" / f".{paths.project_hash(project_dir)}.suffix"
    try:
        return cache.read_text(encoding="utf-8").strip()
    except OSError:
        pass
    suffix = paths.worktree_suffix(project_dir)
    if not remember:
        return suffix
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_name(f"{cache.name}.{os.getpid()}")
        tmp.write_text(suffix, encoding="utf-8")
        os.replace(tmp, cache)
    except OSError:
        pass
    return suffix


def session_db_path(project_dir: Path, root: Path | None = None, *, remember: bool = True) -> Path:
    """The session database file of a project; `remember` False (reports, dry runs) never
    writes the worktree-suffix cache."""
    root = paths.data_root() if root is None else root
    suffix = worktree_suffix(root, project_dir, remember=remember)
    return paths.ProjectPaths(root, project_dir).session_db(suffix)


def stats_file_for(session_db: Path) -> Path:
    """The stats file kept next to a session database (see `ctxmode.stats.record`)."""
    return session_db.with_name(session_db.name.removesuffix(".db") + ".stats.json")


def read_stats_file(path: Path) -> dict[str, Any]:
    """A stats file's content; empty when it is missing or unreadable (it is a copy of
    the database, so nothing is lost: the next recorded call rewrites it)."""
    import json

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def text_field(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    return value if isinstance(value, str) else ""


def sessions_dir(root: Path | None = None) -> Path:
    return (paths.data_root() if root is None else root) / "sessions"
