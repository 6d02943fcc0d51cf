"""The interpreter, its SQLite, and the ctxmode installation itself.

Everything here is read from the running process (no subprocess, no network), so these
lines cost nothing and are always present, even when every other check fails.
"""

import platform
import shutil
import sqlite3
import sys
from typing import TYPE_CHECKING

from ctxmode import __version__
from ctxmode.doctor.model import Check, fail, ok, warn

if TYPE_CHECKING:
    from ctxmode.upgrade.install import Facts

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


# The environment `ctxmode.upgrade` detects, as the doctor line names it (user and
# system installs need no words).
ENVIRONMENTS = {
    "pipx": ", pipx environment",
    "uv-tool": ", uv tool environment",
    "venv": ", virtual environment",
}


def _how(facts: "Facts", method: str) -> str:
    """How the installed ctxmode got there; whether it is editable is `detect`'s call."""
    if not facts.installed:
        return "not installed as a package (source tree)"
    direct = facts.direct_url or {}
    url = direct.get("url")
    source = ""
    if isinstance(url, str) and url.startswith("file://"):
        from urllib.parse import unquote, urlparse

        source = f" from {unquote(urlparse(url).path)}"
    if method == "editable":
        return f"editable install{source}"
    if "vcs_info" in direct:
        return f"installed from a repository{source}"
    if source:
        return f"installed{source}"
    return "installed from a package index"


def install() -> list[Check]:
    """Which ctxmode this is, how it was installed, and whether hosts can find it.

    The install method is `ctxmode.upgrade`'s detection, so doctor and `ctxmode upgrade`
    never disagree about it.
    """
    from ctxmode.upgrade.install import Facts, detect, distribution, environment

    facts = Facts.current()
    dist = distribution()  # the one `Facts.current` read: an installed one before an egg-info
    version = dist.version if dist is not None else None
    how = _how(facts, detect(facts).method)
    where = ENVIRONMENTS.get(environment(facts).method, "")
    on_path = shutil.which("ctxmode")
    detail = (
        f"ctxmode {__version__}, {how}{where}; Python {sys.executable}; on PATH: {on_path or 'no'}"
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


def environment() -> list[Check]:
    """One WARN line per ctxmode variable set to a value it cannot use; none when all are
    usable (`ctxmode.settings.problems`)."""
    from ctxmode import settings

    fix = (
        "correct or unset it (see ENVIRONMENT in man ctxmode); meanwhile ctxmode uses the "
        "default, and a command that would act on the value refuses to run"
    )
    return [warn("environment", message, fix) for message in settings.problems()]
