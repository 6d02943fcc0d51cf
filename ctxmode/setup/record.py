"""Ownership records: what `ctxmode setup` wrote, so `uninstall` removes exactly that.

One JSON file per platform and scope under ``<data root>/setup/``:
``<platform>-global.json`` or ``<platform>-<project hash>.json``. Per settings file it keeps
the entries written (hooks by event, matcher and command; servers by key; settings with
the value they replaced), the containers, directories and files setup created, and for
whole files their SHA-256. Entries are matched by content at uninstall time, so a host
that rewrites the file does not break it; the record adds what content cannot tell:
which empty containers and which flag values were ctxmode's doing.
"""

import json
import os
import time
from pathlib import Path
from typing import Any

from ctxmode.paths import data_root, project_hash
from ctxmode.setup.model import Scope

VERSION = 1


def path_for(platform: str, scope: Scope) -> Path:
    name = "global" if scope.project is None else project_hash(scope.project)
    return data_root() / "setup" / f"{platform}-{name}.json"


def created_dirs(scope: Scope) -> set[str]:
    """Directories any platform's setup created in this scope (shared ones like
    ``.github/hooks`` are then removed by whichever uninstall empties them last)."""
    name = "global" if scope.project is None else project_hash(scope.project)
    found: set[str] = set()
    for path in (data_root() / "setup").glob(f"*-{name}.json"):
        data, _ = load(path)
        for f in (data or {}).get("files", []):
            found.update(d for d in f.get("created_dirs", []) if isinstance(d, str))
    return found


def load(path: Path) -> tuple[dict[str, Any] | None, list[str]]:
    """The record at `path` (None if absent), and a warning when it is unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None, []
    except (OSError, ValueError) as exc:
        return None, [f"ignoring unreadable ownership record {path} ({exc})"]
    if not isinstance(data, dict) or not isinstance(data.get("files"), list):
        return None, [f"ignoring malformed ownership record {path}"]
    return data, []


def build(platform: str, scope: Scope, command: str, files: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "ctxmode_setup_record": VERSION,
        "platform": platform,
        "scope": scope.name,
        "project": None if scope.project is None else str(scope.project),
        "command": command,
        "updated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "files": files,
    }


def save(path: Path, record: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def remove(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass
