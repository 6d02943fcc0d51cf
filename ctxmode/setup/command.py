"""The command hosts run: `ctxmode hook <platform> <event>` and `ctxmode serve`.

Hook and server entries name a stable executable, never a versioned or temporary path:
upstream wrote version-cache paths into settings and every upgrade broke them.
"""

import os
import re
import shlex
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ctxmode.errors import EnvironmentProblem, UsageError

NAME = "ctxmode"
_EXE_NAMES = frozenset({"ctxmode", "ctxmode.exe"})
_SAFE = re.compile(r"^[A-Za-z0-9_./:\\@%+=,-]+$")
_VERSION_PART = re.compile(r"^v?\d+\.\d+(\.\d+)?")
INSTALL_HINT = (
    "Install it as a tool so it stays on PATH across upgrades: pipx install ctxmode "
    "(or: uv tool install ctxmode), or pass --command /absolute/path/to/ctxmode."
)


@dataclass(frozen=True)
class Command:
    """The executable written into host settings, by name or absolute path."""

    executable: str = NAME

    def quoted(self) -> str:
        exe = self.executable
        if _SAFE.match(exe):
            return exe
        if sys.platform == "win32":
            return f'"{exe}"'
        return shlex.quote(exe)

    def hook(self, platform: str, event: str) -> str:
        """The shell command of one hook."""
        return f"{self.quoted()} hook {platform} {event}"

    def serve(self) -> list[str]:
        """argv of the MCP server."""
        return [self.executable, "serve"]


def tokens(command: str) -> list[str]:
    """A shell command split into words (backslash paths kept intact)."""
    if "\\" in command:
        return command.split()
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def is_ctxmode(executable: str, known: frozenset[str] = frozenset()) -> bool:
    """Whether a command word runs ctxmode: a recorded executable, or one named ctxmode."""
    if executable in known:
        return True
    return Path(executable.replace("\\", "/")).name.lower() in _EXE_NAMES


def is_our_hook(command: object, platform: str, known: frozenset[str] = frozenset()) -> bool:
    """Whether a hook command is `<ctxmode> hook <platform> <event>`."""
    if not isinstance(command, str):
        return False
    words = tokens(command)
    return len(words) == 4 and words[1:3] == ["hook", platform] and is_ctxmode(words[0], known)


# pip deletes these when the pip process that made them exits: nothing there outlives setup.
_EPHEMERAL = ("pip-build-env-", "pip-ephem-wheel-cache-", "pip-req-build-", "pip-install-")


def _ephemeral(path: str) -> bool:
    return any(p.startswith(_EPHEMERAL) for p in Path(os.path.realpath(path)).parts)


def _volatile(path: str) -> str | None:
    """Why `path` may vanish later (a temp dir or a cache folder), or None."""
    real = os.path.realpath(path)
    tmp = os.path.realpath(tempfile.gettempdir())
    if real.startswith(tmp + os.sep):
        return f"under the temporary directory {tmp}, which is cleaned on reboot or by age"
    parts = Path(real).parts
    for index, part in enumerate(parts):
        if part in (".cache", "Caches", "_npx", "archive-v0"):
            folder = os.path.join(*parts[: index + 1])
            return (
                f"in the cache folder {folder}, which cleaning tools empty (uvx, pipx run and "
                "npx keep their environments in caches; Poetry its virtualenvs)"
            )
    return None


def _vanish_warning(what: str, exe: str, why: str) -> str:
    return (
        f"{what} {exe} is {why}; if it disappears, every ctxmode hook and the MCP server stop "
        "working. Pin a stable executable with --command /absolute/path/to/ctxmode, or "
        "install it as a tool: pipx install ctxmode (or: uv tool install ctxmode)."
    )


def _versioned(path: str) -> bool:
    parts = Path(path).parts
    return "Cellar" in parts or any(_VERSION_PART.match(p) for p in parts)


def resolve(explicit: str | None, *, shared: bool) -> tuple[Command, list[str]]:
    """The command to write, and warnings about it.

    ``shared``: the files go into a project (often committed), where an absolute path only
    works on this machine. A dry run calls this exactly as a real run does, so it fails
    exactly when the real run would.

    Raises:
        UsageError: `--command` is not one executable, or lives in a directory pip deletes
            as soon as it finishes.
        EnvironmentProblem: ctxmode cannot be found where the host would look for it.
    """
    warnings: list[str] = []
    if explicit is None or explicit == NAME:
        found = shutil.which(NAME)
        if found is None:
            raise EnvironmentProblem(
                f"{NAME} is not on PATH, so the host could not run it. {INSTALL_HINT}"
            )
        if _ephemeral(found):
            raise EnvironmentProblem(
                f"{NAME} on PATH ({found}) is in a build directory pip deletes when it "
                f"finishes. {INSTALL_HINT}"
            )
        why = _volatile(found)
        if why:
            warnings.append(_vanish_warning(f"{NAME} on PATH", found, why))
        return Command(), warnings
    text = explicit.strip()
    if not text:
        raise UsageError("--command is empty.")
    if os.sep in text or "/" in text:
        exe = os.path.abspath(os.path.expanduser(text))
        if _ephemeral(exe):
            raise UsageError(
                f"--command {exe} is in a build directory pip deletes when it finishes. "
                f"{INSTALL_HINT}"
            )
        if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
            raise EnvironmentProblem(f"--command {exe} is not an executable file.")
        why = _volatile(exe)
        if why:
            warnings.append(_vanish_warning("--command", exe, why))
        elif _versioned(exe):
            warnings.append(
                f"--command {exe} contains a version in its path; it will break when that "
                "version is removed. Prefer a stable link (for example the one on PATH)."
            )
        if shared:
            warnings.append(
                f"--command {exe} is an absolute path written into project files; it works "
                "only on this machine. Teammates need ctxmode on PATH instead."
            )
        return Command(exe), warnings
    if any(ch.isspace() for ch in text):
        raise UsageError(
            "--command takes one executable (a name on PATH or an absolute path), "
            f"not a command line: {text!r}."
        )
    found = shutil.which(text)
    if found is None:
        raise EnvironmentProblem(
            f"{text} is not on PATH, so the host could not run it. {INSTALL_HINT}"
        )
    why = _volatile(found)
    if why:
        warnings.append(_vanish_warning(f"{text} on PATH", found, why))
    return Command(text), warnings
