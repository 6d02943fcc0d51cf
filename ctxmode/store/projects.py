"""The knowledge bases of the projects under one data root, for a search across projects
(``ctx_search`` with ``project``).

A project's knowledge base is ``content/<hash>.db``, its hash that of its directory
(`ctxmode.paths.project_hash`); the directory itself is read back from the stats file
its server keeps beside its session database (``sessions/<hash>….stats.json``), so a
project whose server never counted a call is named by its hash.
"""

import json
import re
from pathlib import Path

_HASH_DB = re.compile(r"^[0-9a-f]{16}\.db$")


def _project_dirs(root: Path) -> dict[str, str]:
    """Project hash -> directory, from the stats files under `root`."""
    found: dict[str, str] = {}
    try:
        stats = sorted((root / "sessions").glob("*.stats.json"))
    except OSError:
        return found
    for path in stats:
        try:
            data = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError):
            continue
        project = data.get("project_dir") if isinstance(data, dict) else None
        if isinstance(project, str) and project:
            found.setdefault(path.name[:16], project)
    return found


def knowledge_bases(root: Path) -> list[tuple[str, Path]]:
    """(project directory or hash, knowledge base) of every project under `root`."""
    try:
        names = sorted(p.name for p in (root / "content").iterdir())
    except OSError:
        return []
    dirs = _project_dirs(root)
    return [
        (dirs.get(name[:16], name[:16]), root / "content" / name)
        for name in names
        if _HASH_DB.match(name)
    ]
