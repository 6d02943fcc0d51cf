"""The interpreter, its SQLite, and the ctxmode installation itself.

Everything here is read from the running process (no subprocess, no network), so these
lines cost nothing and are always present, even when every other check fails.
"""

import json
import platform
import shutil
import sqlite3
import sys
from pathlib import Path

from ctxmode import __version__
from ctxmode.doctor.model import Check, fail, ok, warn

MIN_PYTHON = (3, 10)
SQLITE_FIX = (
    "use a Python whose sqlite3 module has FTS5 and SQLite 3.34 or newer "
    "(python.org builds and most distributions do)"
)


def python() -> list[Check]:
    """Python version and the OS; ctxmode needs 3.10 or newer."""
    version = platform.python_version()
    where = f"{platform.system()} {platform.release()} {platform.machine()}".strip()
    detail = f"{version} ({platform.python_implementation()}) on {where}"
    if sys.version_info[:2] < MIN_PYTHON:
        return [fail("python", detail, "install Python 3.10 or newer and reinstall ctxmode")]
    return [ok("python", detail)]


def sqlite() -> list[Check]:
    """SQLite with FTS5 and the trigram tokenizer: the knowledge base refuses to open
    without either (see `ctxmode.db.require_fts5`), so both are FAIL when missing."""
    from ctxmode.db import fts5_problem

    problem = fts5_problem()
    if problem is None:
        return [ok("sqlite", f"SQLite {sqlite3.sqlite_version}, FTS5 and trigram tokenizer")]
    return [fail("sqlite", problem, SQLITE_FIX)]


def _distribution() -> tuple[str | None, dict[str, object]]:
    """The installed ctxmode's metadata version and its PEP 610 direct_url.json (if any)."""
    from importlib import metadata

    try:
        dist = metadata.distribution("ctxmode")
    except metadata.PackageNotFoundError:
        return None, {}
    try:
        direct = json.loads(dist.read_text("direct_url.json") or "{}")
    except ValueError:
        direct = {}
    return dist.version, direct if isinstance(direct, dict) else {}


def _how(direct: dict[str, object]) -> str:
    dir_info = direct.get("dir_info")
    url = direct.get("url")
    source = ""
    if isinstance(url, str) and url.startswith("file://"):
        from urllib.parse import unquote, urlparse

        source = f" from {unquote(urlparse(url).path)}"
    if isinstance(dir_info, dict) and dir_info.get("editable"):
        return f"editable install{source}"
    if "vcs_info" in direct:
        return f"installed from a repository{source}"
    if source:
        return f"installed{source}"
    return "installed from a package index"


def _tool_env(prefix: str) -> str:
    parts = Path(prefix).parts
    if "pipx" in parts:
        return ", pipx environment"
    if "uv" in parts and "tools" in parts:
        return ", uv tool environment"
    if sys.prefix != sys.base_prefix:
        return ", virtual environment"
    return ""


def install() -> list[Check]:
    """Which ctxmode this is, how it was installed, and whether hosts can find it."""
    version, direct = _distribution()
    how = _how(direct) if version is not None else "not installed as a package (source tree)"
    on_path = shutil.which("ctxmode")
    detail = (
        f"ctxmode {__version__}, {how}{_tool_env(sys.prefix)}; Python {sys.executable}; "
        f"on PATH: {on_path or 'no'}"
    )
    if version is not None and version != __version__:
        return [
            warn(
                "install",
                f"{detail}; package metadata says {version}",
                "reinstall ctxmode so its metadata matches the code",
            )
        ]
    if on_path is None:
        return [
            warn(
                "install",
                detail,
                "put ctxmode on PATH (pipx install ctxmode, or uv tool install ctxmode): "
                "hosts run `ctxmode hook ...` and `ctxmode serve` by name",
            )
        ]
    return [ok("install", detail)]
