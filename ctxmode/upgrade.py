"""Upgrading ctxmode in place, whichever way it was installed, and what must follow.

Why a command: ctxmode is installed with pipx, uv tool, pip (in a virtualenv, with
--user, or into a system Python) or as an editable checkout, and each needs another
upgrade command. An upgrade is also more than new code: every database under the data
root must reach the new schema, and hook commands in host settings must match the new
version's setup. Only the new code knows its migrations and its setup, so after the
package tool ran, `finish` runs in a new process (``python -m ctxmode upgrade --finish``)
of the freshly installed code.

``CTXMODE_UPGRADE_COMMAND`` (a JSON list) replaces the tool command, for unusual installs
and for tests; ``CTXMODE_PYPI_URL`` replaces the PyPI JSON endpoint (mirrors, tests).
"""

import json
import os
import shlex
import shutil
import sqlite3
import subprocess
import sys
from collections import deque
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TextIO

from ctxmode import __version__, dbfiles, paths
from ctxmode.errors import CtxError, EnvironmentProblem, UsageError

if TYPE_CHECKING:
    from importlib.metadata import Distribution

PACKAGE = "ctxmode"
PYPI_URL = "https://pypi.org/pypi/ctxmode/json"
PYPI_TIMEOUT_S = 3.0
COMMAND_ENV = "CTXMODE_UPGRADE_COMMAND"
PYPI_ENV = "CTXMODE_PYPI_URL"
FINISH_ARGV = ["-m", "ctxmode", "upgrade", "--finish"]


class UpgradeFailed(CtxError):
    """The package tool failed; nothing else was touched."""

    code = "upgrade_failed"


class Install(NamedTuple):
    """How ctxmode is installed and the command that upgrades it (empty: none can)."""

    method: str  # editable | pipx | uv-tool | venv | user | system | unknown
    command: list[str]
    detail: str


class Facts(NamedTuple):
    """What detection looks at; `Facts.current` reads them from the running interpreter."""

    prefix: str
    base_prefix: str
    executable: str
    installed: bool  # a ctxmode distribution was found
    direct_url: dict[str, Any] | None  # its direct_url.json (PEP 610)
    location: str | None  # the directory it is installed into (site-packages)
    user_base: str | None  # pip --user's base directory
    stdlib: str  # where a PEP 668 EXTERNALLY-MANAGED marker would be
    pipx_home: str | None = None
    uv_tool_dir: str | None = None

    @classmethod
    def current(cls) -> "Facts":
        import site
        import sysconfig

        dist = _distribution()
        direct_url: dict[str, Any] | None = None
        location: str | None = None
        if dist is not None:
            try:
                loaded = json.loads(dist.read_text("direct_url.json") or "null")
            except ValueError:
                loaded = None
            direct_url = loaded if isinstance(loaded, dict) else None
            location = str(dist.locate_file(""))
        return cls(
            prefix=sys.prefix,
            base_prefix=sys.base_prefix,
            executable=sys.executable,
            installed=dist is not None,
            direct_url=direct_url,
            location=location,
            user_base=site.getuserbase(),
            stdlib=sysconfig.get_path("stdlib"),
            pipx_home=os.environ.get("PIPX_HOME") or None,
            uv_tool_dir=os.environ.get("UV_TOOL_DIR") or None,
        )


def _distribution() -> "Distribution | None":
    """The installed ctxmode distribution; an installed one (it has an INSTALLER or a
    direct_url.json) wins over a source tree's ``ctxmode.egg-info`` on sys.path."""
    from importlib import metadata

    found = list(metadata.distributions(name=PACKAGE))
    for dist in found:
        if dist.read_text("INSTALLER") is not None or dist.read_text("direct_url.json"):
            return dist
    return found[0] if found else None


def _under(path: Path, parent: Path) -> bool:
    return path == parent or parent in path.parents


def _editable_checkout(direct_url: dict[str, Any] | None) -> Path | None:
    if not direct_url or not (direct_url.get("dir_info") or {}).get("editable"):
        return None
    url = str(direct_url.get("url", ""))
    if not url.startswith("file:"):
        return None
    from urllib.parse import urlparse
    from urllib.request import url2pathname  # also undoes the percent-encoding

    return Path(url2pathname(urlparse(url).path))


def _pip(facts: Facts, *extra: str) -> list[str]:
    return [facts.executable, "-m", "pip", "install", *extra, "--upgrade", PACKAGE]


def detect(facts: Facts | None = None) -> Install:
    """How ctxmode is installed, judged from the interpreter's prefixes and PEP 610 data.

    Order matters: an editable checkout is upgraded with git whatever venv holds it;
    pipx and uv tool venvs are virtualenvs their tool must upgrade; then plain pip.
    """
    f = Facts.current() if facts is None else facts
    if not f.installed:
        return Install(
            "unknown",
            [],
            "ctxmode runs from a source tree without being installed; update it the way you got it",
        )
    checkout = _editable_checkout(f.direct_url)
    if checkout is not None:
        detail = f"development install from {checkout}: git pull there, pip is not run"
        if not (checkout / ".git").exists():
            return Install("editable", [], f"{detail}; but it is not a git checkout")
        return Install("editable", ["git", "-C", str(checkout), "pull", "--ff-only"], detail)
    prefix = Path(f.prefix)
    if prefix.parent.name == "venvs" and (
        (f.pipx_home is not None and _under(prefix, Path(f.pipx_home)))
        or any(part in ("pipx", ".pipx") for part in prefix.parts[:-2])
    ):
        return Install("pipx", ["pipx", "upgrade", prefix.name], f"pipx venv {prefix}")
    if (f.uv_tool_dir is not None and prefix.parent == Path(f.uv_tool_dir)) or (
        prefix.parent.name == "tools" and "uv" in prefix.parts[:-2]
    ):
        return Install("uv-tool", ["uv", "tool", "upgrade", prefix.name], f"uv tool {prefix}")
    if f.prefix != f.base_prefix:
        if _uv_venv(prefix):
            command = ["uv", "pip", "install", "--python", f.executable, "--upgrade", PACKAGE]
            return Install("venv", command, f"uv-managed virtualenv {prefix}")
        return Install("venv", _pip(f), f"pip in the virtualenv {prefix}")
    managed = Path(f.stdlib, "EXTERNALLY-MANAGED").exists()
    refusal = (
        f"; this Python is externally managed (PEP 668) and pip refuses to change it: "
        f"install ctxmode with pipx (pipx install {PACKAGE}) or uv (uv tool install {PACKAGE})"
    )
    if f.location and f.user_base and _under(Path(f.location), Path(f.user_base)):
        if managed:
            return Install("user", [], f"pip --user under {f.user_base}{refusal}")
        return Install("user", _pip(f, "--user"), f"pip --user under {f.user_base}")
    if managed:
        return Install("system", [], f"pip into the system Python {f.prefix}{refusal}")
    return Install("system", _pip(f), f"pip into the system Python {f.prefix}")


def _uv_venv(prefix: Path) -> bool:
    """Virtualenvs made by uv have no pip; their pyvenv.cfg names uv."""
    try:
        text = (prefix / "pyvenv.cfg").read_text(encoding="utf-8")
    except OSError:
        return False
    return any(line.split("=")[0].strip() == "uv" for line in text.splitlines())


def current_install() -> Install:
    """`detect` for this interpreter, with ``CTXMODE_UPGRADE_COMMAND`` applied.

    Raises:
        UsageError: the override is not a JSON list of strings.
    """
    found = detect()
    raw = os.environ.get(COMMAND_ENV, "").strip()
    if not raw:
        return found
    try:
        command = json.loads(raw)
    except ValueError:
        command = None
    if not (isinstance(command, list) and command and all(isinstance(w, str) for w in command)):
        raise UsageError(f"{COMMAND_ENV} must be a JSON list of strings, e.g. '[\"pipx\", ...]'")
    return Install(found.method, command, f"{found.detail}; command set by {COMMAND_ENV}")


# --------------------------------------------------------------------------- status


def latest_version(url: str | None = None, timeout: float = PYPI_TIMEOUT_S) -> str | None:
    """The newest version on PyPI, or None when it cannot be told within `timeout`.

    Runs in a daemon thread joined with the timeout: urllib's timeout does not cover
    name resolution, and an offline machine must not wait for it.
    """
    import threading

    url = url or os.environ.get(PYPI_ENV, "").strip() or PYPI_URL
    found: list[str] = []

    def fetch() -> None:
        import urllib.request

        try:
            with urllib.request.urlopen(url, timeout=timeout) as response:
                found.append(str(json.load(response)["info"]["version"]))
        except Exception:  # offline, proxy, 404 (not published), bad JSON: all "unknown"
            return

    thread = threading.Thread(target=fetch, name="ctxmode-pypi", daemon=True)
    thread.start()
    thread.join(timeout + 0.5)
    return found[0] if found else None


def _release(version: str) -> tuple[int, ...] | None:
    import re

    match = re.match(r"v?(\d+(?:\.\d+)*)", version.strip())
    return tuple(int(p) for p in match.group(1).split(".")) if match else None


def newer(latest: str | None, installed: str = __version__) -> bool | None:
    """Whether `latest` is a newer release than `installed` (None: cannot tell)."""
    a, b = _release(latest or ""), _release(installed)
    if a is None or b is None:
        return None
    width = max(len(a), len(b))
    return a + (0,) * (width - len(a)) > b + (0,) * (width - len(b))


class DbStatus(NamedTuple):
    path: Path
    kind: str  # content | session
    version: int | None  # None: unreadable
    current: int  # the schema version this ctxmode writes
    problem: str | None = None

    @property
    def state(self) -> str:
        if self.version is None:
            return "unreadable"
        if self.version < self.current:
            return "behind"
        return "newer" if self.version > self.current else "current"


def _schemas() -> dict[str, int]:
    from ctxmode.session.schema import MIGRATIONS as SESSION
    from ctxmode.store.schema import MIGRATIONS as CONTENT

    return {"content": len(CONTENT), "session": len(SESSION)}


def _database_files(root: Path) -> list[tuple[str, Path]]:
    found = []
    for kind, folder in (("content", "content"), ("session", "sessions")):
        directory = root / folder
        if directory.is_dir():
            found += [(kind, p) for p in sorted(directory.glob("*.db")) if p.is_file()]
    return found


def database_status(root: Path | None = None) -> list[DbStatus]:
    """The schema version of every database under the root, read without writing."""
    root = paths.data_root() if root is None else root
    current = _schemas()
    result = []
    for kind, path in _database_files(root):
        try:
            con = dbfiles.open_readonly(path)
            try:
                version = int(con.execute("PRAGMA user_version").fetchone()[0])
                con.execute("SELECT count(*) FROM sqlite_master").fetchone()
            finally:
                con.close()
        except sqlite3.Error as exc:
            result.append(DbStatus(path, kind, None, current[kind], str(exc)))
            continue
        result.append(DbStatus(path, kind, version, current[kind]))
    return result


class SetupRecord(NamedTuple):
    platform: str
    scope: str  # global | project
    project: str | None
    command: str
    path: Path


def setup_records(root: Path | None = None) -> tuple[list[SetupRecord], list[str]]:
    """The platforms `ctxmode setup` registered, from its ownership records; and warnings
    about records that cannot be read."""
    from ctxmode.setup import record

    root = paths.data_root() if root is None else root
    folder = root / "setup"
    found: list[SetupRecord] = []
    warnings: list[str] = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        if path.name.startswith("."):
            continue  # an interrupted write
        data, problems = record.load(path)
        warnings += problems
        if data is None:
            continue
        platform, scope = data.get("platform"), data.get("scope")
        if not isinstance(platform, str) or scope not in ("global", "project"):
            warnings.append(f"ignoring malformed ownership record {path}")
            continue
        project = data.get("project") if scope == "project" else None
        command = data.get("command")
        found.append(
            SetupRecord(
                platform,
                scope,
                str(project) if project else None,
                command if isinstance(command, str) and command else "ctxmode",
                path,
            )
        )
    return found, warnings


# --------------------------------------------------------------------------- upgrading


def run_command(install: Install, out: TextIO) -> None:
    """Run the package tool, streaming its output to `out` as it comes.

    Raises:
        EnvironmentProblem: there is no command for this install.
        UpgradeFailed: the tool is missing or exited non-zero (its last lines say why).
    """
    command = install.command
    if not command:
        raise EnvironmentProblem(f"ctxmode cannot upgrade itself here: {install.detail}")
    try:
        proc = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            encoding="utf-8",
            errors="replace",
        )
    except OSError as exc:
        raise UpgradeFailed(f"cannot run {command[0]}: {exc.strerror or exc}") from exc
    tail: deque[str] = deque(maxlen=10)
    assert proc.stdout is not None
    with proc.stdout:
        for line in proc.stdout:
            out.write(line)
            out.flush()
            if line.strip():
                tail.append(line.rstrip())
    code = proc.wait()
    if code != 0:
        said = "\n".join(tail) or "(no output)"
        raise UpgradeFailed(
            f"the upgrade command failed (exit {code}): {shlex.join(command)}\n{said}\n"
            "Nothing else was changed."
        )


def run_finish(json_output: bool) -> tuple[int, str, str]:
    """Run the post-upgrade step in a new process of the freshly installed code.

    Returns its exit status, stdout and stderr.
    """
    argv = [sys.executable, *FINISH_ARGV, *(["--json"] if json_output else [])]
    proc = subprocess.run(
        argv,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
    )
    return proc.returncode, proc.stdout, proc.stderr


# --------------------------------------------------------------------------- finishing


class Migrated(NamedTuple):
    path: Path
    kind: str
    before: int | None
    after: int | None
    problem: str | None = None


class Resetup(NamedTuple):
    platform: str
    scope: str
    project: str | None
    changed: bool
    problem: str | None = None
    warnings: tuple[str, ...] = ()


class Finished(NamedTuple):
    databases: list[Migrated]
    setups: list[Resetup]
    warnings: list[str]

    @property
    def problems(self) -> int:
        return sum(1 for m in self.databases if m.problem) + sum(
            1 for s in self.setups if s.problem
        )


def _migrate(status: DbStatus) -> Migrated:
    """Open a database the way ctxmode does, which migrates it; report, never delete."""
    path, kind = status.path, status.kind
    if status.version is None:
        return Migrated(path, kind, None, None, f"cannot be opened: {status.problem}; left alone")
    if status.version >= status.current:
        problem = "written by a newer ctxmode; left alone" if status.state == "newer" else None
        return Migrated(path, kind, status.version, status.version, problem)
    try:
        with dbfiles.keep_mtime(path):  # a migration is not use (see gc)
            if kind == "content":
                from ctxmode.store import ContentStore

                with ContentStore(path) as store:
                    moved = store.recovered_from
                    after = int(store.connection.execute("PRAGMA user_version").fetchone()[0])
            else:
                from ctxmode.session.db import SessionDB

                with SessionDB(path) as sdb:
                    moved = sdb.recovered_from
                    after = int(sdb.connection.execute("PRAGMA user_version").fetchone()[0])
    except (CtxError, sqlite3.Error, OSError) as exc:
        return Migrated(path, kind, status.version, None, str(exc))
    problem = None if moved is None else f"was damaged: moved to {moved}, a new one started"
    return Migrated(path, kind, status.version, after, problem)


def _resetup(rec: SetupRecord) -> Resetup:
    """`ctxmode setup <platform> [--project DIR]` again, with the recorded command."""
    from ctxmode.setup import setup

    project = Path(rec.project) if rec.project else None
    if rec.scope == "project" and (project is None or not project.is_dir()):
        return Resetup(
            rec.platform, rec.scope, rec.project, False, "the project directory is gone; skipped"
        )
    command = None if rec.command == "ctxmode" else rec.command
    try:
        result = setup(rec.platform, project=project, command=command)
    except (CtxError, OSError) as exc:
        return Resetup(rec.platform, rec.scope, rec.project, False, str(exc))
    return Resetup(rec.platform, rec.scope, rec.project, result.changed, None, result.warnings)


def finish(root: Path | None = None) -> Finished:
    """What the new code does after an upgrade: migrate every database under the root,
    then re-run setup for every platform and scope an ownership record names."""
    root = paths.data_root() if root is None else root
    databases = [_migrate(s) for s in database_status(root)]
    records, warnings = setup_records(root)
    return Finished(databases, [_resetup(r) for r in records], warnings)


# --------------------------------------------------------------------------- agents


def _ctxmode_command() -> str:
    """How an agent's shell should call ctxmode: ``ctxmode`` when it is on PATH, else the
    absolute path of this installation's executable, else ``python -m ctxmode``."""
    if shutil.which(PACKAGE):
        return PACKAGE
    candidates: Iterable[Path] = (
        Path(sys.argv[0]).absolute() if sys.argv and sys.argv[0] else Path(),
        Path(sys.prefix) / "bin" / PACKAGE,
        Path(sys.prefix) / "Scripts" / f"{PACKAGE}.exe",
    )
    for candidate in candidates:
        if candidate.name.startswith(PACKAGE) and candidate.is_file():
            return shlex.quote(str(candidate))
    return f"{shlex.quote(sys.executable)} -m {PACKAGE}"


def agent_instructions() -> str:
    """What an agent is told when asked to upgrade ctxmode: the command to run with its
    shell tool (this function upgrades nothing), and to restart afterwards."""
    install = current_install()
    command = f"{_ctxmode_command()} upgrade --yes"
    tool = shlex.join(install.command) if install.command else "none"
    lines = [
        "To upgrade ctxmode, run this command with your shell tool:",
        "",
        f"    {command}",
        "",
        f"Installed version: {__version__}. Install method: {install.method} ({install.detail}).",
        f"It runs the package tool ({tool}), then migrates ctxmode's databases and re-runs "
        "setup for every platform set up, in a new process of the upgraded code.",
    ]
    if not install.command:
        lines.append("This install cannot be upgraded by ctxmode: tell the user the above.")
    lines += [
        "",
        "When it has finished, restart the agent afterwards so the new MCP server starts: "
        "the running server keeps the old code until then.",
    ]
    return "\n".join(lines)
