"""Where ctxmode keeps its files, and which project a call belongs to.

Layout under the data root (``CTXMODE_DIR``, upstream's ``CONTEXT_MODE_DIR``, else the
platformdirs user data dir)::

    <root>/content/<project-hash>.db     knowledge base of one project
    <root>/sessions/<project-hash><suffix>.db   session events (worktree-suffixed)
    <root>/logs/                          log files

Nothing here touches the disk at import time.
"""

import os
import sys
from pathlib import Path

from ctxmode import settings
from ctxmode.errors import NotFoundError, UsageError
from ctxmode.typenames import NamedTuple

# Project variables of hosts that are not ctxmode platforms yet (upstream reads them).
_OTHER_HOST_PROJECT_VARS = ("PI_PROJECT_DIR",)


def host_project_env_vars() -> tuple[str, ...]:
    """Project directory variables set by hosts: every platform descriptor's, in platform
    order, then the other hosts' upstream reads."""
    from ctxmode.platforms import descriptors

    names = [v for host in descriptors() for v in host.project_vars]
    return tuple(dict.fromkeys([*names, *_OTHER_HOST_PROJECT_VARS]))


def project_env_vars() -> tuple[str, ...]:
    """Every variable `resolve_project` tries, in order."""
    return (*settings.PROJECT_DIR.names, *host_project_env_vars())


_CASE_INSENSITIVE_FS = sys.platform in ("darwin", "win32")


def _linux_data_dir() -> Path | None:
    """platformdirs' user data dir on Linux, computed without importing it (15 ms that
    every hook process would pay); None when the environment is unusual enough to defer."""
    xdg = settings.xdg_data_home()
    if xdg is not None:
        return Path(xdg) / "ctxmode"
    home = os.environ.get("HOME", "")
    if not os.path.isabs(home):
        return None
    return Path(home) / ".local" / "share" / "ctxmode"


def data_root() -> Path:
    """The storage root: CTXMODE_DIR, CONTEXT_MODE_DIR, else the user data dir."""
    value = settings.data_dir()
    if value is not None:
        return Path(value).expanduser().absolute()
    if sys.platform.startswith("linux"):
        fast = _linux_data_dir()
        if fast is not None:
            return fast
    from platformdirs import user_data_dir

    return Path(user_data_dir("ctxmode", appauthor=False))


def file_kind(mode: int) -> str:
    """What a file that is not a regular one is, for a message ("a socket", ...)."""
    import stat

    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def normalize_path(path: str) -> str:
    """Backslashes to slashes, trailing slashes stripped (roots kept)."""
    text = path.replace("\\", "/")
    while len(text) > 1 and text.endswith("/") and not (len(text) == 3 and text[1] == ":"):
        text = text[:-1]
    return text


def home_relative(path: str, home: str | None = None) -> str:
    """`path` with the home directory shown as ``~`` (for display)."""
    home = normalize_path(os.path.expanduser("~") if home is None else home)
    if home and home != "/" and (path == home or path.startswith(home + "/")):
        return "~" + path[len(home) :]
    return path


def _sha256_hex(text: str) -> str:
    from ctxmode.digest import sha256_hex  # most hook calls never hash a path

    return sha256_hex(text.encode("utf-8"))


def project_hash(project_dir: Path | str) -> str:
    """First 16 hex chars of SHA-256 of the normalised path (case-folded on macOS/Windows)."""
    text = normalize_path(str(project_dir))
    if _CASE_INSENSITIVE_FS:
        text = text.lower()
    return _sha256_hex(text)[:16]


def legacy_project_hash(project_dir: Path | str) -> str:
    """The hash without case folding (identical to `project_hash` on Linux)."""
    text = normalize_path(str(project_dir))
    return _sha256_hex(text)[:16]


def _plugin_path(path: str) -> bool:
    norm = path.replace("\\", "/")
    return "/.claude/plugins/cache/" in norm or "/.claude/plugins/marketplaces/" in norm


def git_root(start: Path) -> Path | None:
    """The nearest folder holding `.git` at or above `start`, below the home folder."""
    home = Path.home().resolve()
    for candidate in (start, *start.parents):
        if candidate == home:
            return None
        if (candidate / ".git").exists():
            return candidate
    return None


def resolve_project(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The project directory a call belongs to.

    Order: the explicit ``--project``; host env vars (``CTXMODE_PROJECT_DIR``,
    ``CLAUDE_PROJECT_DIR`` and the other platforms'); else the enclosing git work tree of the
    current directory; else the current directory itself.

    Raises:
        NotFoundError: the explicit directory does not exist.
        UsageError: the result would be the home directory or the filesystem root.
    """
    if explicit is not None:
        path = Path(explicit).expanduser()
        if not path.is_dir():
            raise NotFoundError(f"project directory not found: {explicit}")
        project = path.resolve()
    else:
        found: Path | None = None
        hosts = (os.environ.get(var, "").strip() for var in host_project_env_vars())
        for value in (settings.project_dir(), *hosts):
            if value and not _plugin_path(value) and Path(value).expanduser().is_dir():
                found = Path(value).expanduser().resolve()
                break
        if found is None:
            cwd = Path.cwd().resolve()
            found = git_root(cwd) or cwd
        project = found
    home = Path.home().resolve()
    if project == home or project == Path(project.anchor):
        raise UsageError(
            f"{project} is your home directory or a filesystem root, not a project. "
            "Run ctxmode inside a project directory, or pass --project DIR "
            "(or set CTXMODE_PROJECT_DIR)."
        )
    return project


def worktree_suffix(project_dir: Path) -> str:
    """``__<8 hex>`` for a linked git worktree, else ``""`` (as in upstream).

    ``CTXMODE_SESSION_SUFFIX`` / ``CONTEXT_MODE_SESSION_SUFFIX`` override it (empty disables).
    """
    override = settings.session_suffix()
    if override is not None:
        return f"__{override}" if override else ""
    import subprocess

    try:
        top = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"],
            cwd=project_dir,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=2,
        )
        if top.returncode != 0:
            return ""
    except (OSError, subprocess.SubprocessError):
        return ""
    listed = git_worktrees(project_dir)
    if not listed:
        return ""
    first = listed[0]

    def canon(p: str) -> str:
        text = normalize_path(os.path.realpath(p.strip()))
        return text.lower() if _CASE_INSENSITIVE_FS else text

    current = canon(top.stdout)
    if current == canon(first):
        return ""
    return "__" + _sha256_hex(current)[:8]


def git_worktrees(project_dir: Path) -> list[str]:
    """The worktrees of the git repository holding `project_dir`, the main one first, as
    git lists them; empty outside a repository or when git is missing."""
    import subprocess

    try:
        listing = subprocess.run(
            ["git", "worktree", "list", "--porcelain"],
            cwd=project_dir,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=2,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    if listing.returncode != 0:
        return []
    return [
        line[len("worktree ") :]
        for line in listing.stdout.splitlines()
        if line.startswith("worktree ")
    ]


class ProjectPaths(NamedTuple):
    """Every file ctxmode keeps for one project."""

    root: Path
    project_dir: Path

    @property
    def hash(self) -> str:
        return project_hash(self.project_dir)

    @property
    def content_db(self) -> Path:
        return self.root / "content" / f"{self.hash}.db"

    def adopt_legacy_content_db(self) -> Path:
        """The content DB path, after renaming a legacy-hash file to it (macOS/Windows).

        Older builds hashed the path without case folding. When only that file exists it
        is renamed (with its -wal/-shm) once; when both exist the legacy one is left alone.
        """
        target = self.content_db
        legacy = target.with_name(f"{legacy_project_hash(self.project_dir)}.db")
        if legacy != target and legacy.exists() and not target.exists():
            for suffix in ("", "-wal", "-shm"):
                old = Path(f"{legacy}{suffix}")
                if old.exists():
                    os.replace(old, Path(f"{target}{suffix}"))
        return target

    def session_db(self, suffix: str | None = None) -> Path:
        if suffix is None:
            suffix = worktree_suffix(self.project_dir)
        return self.root / "sessions" / f"{self.hash}{suffix}.db"

    @property
    def logs_dir(self) -> Path:
        return self.root / "logs"


def project_paths(project: str | os.PathLike[str] | None = None) -> ProjectPaths:
    """Resolve the project and the data root together."""
    return ProjectPaths(root=data_root(), project_dir=resolve_project(project))
