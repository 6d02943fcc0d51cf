"""The languages the executor runs: how each runtime is found, and how a script becomes argv.

Detection is lazy and memoised per process: a language's runtime is looked up the first
time that language runs (``shutil.which`` only; no probe process unless a candidate must
prove it works). Scripts are written to ``script.<ext>`` in the run's temp directory.
"""

import os
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ctxmode.errors import RuntimeMissingError, UsageError

LANGUAGES = (
    "javascript",
    "typescript",
    "python",
    "shell",
    "ruby",
    "go",
    "rust",
    "php",
    "perl",
    "r",
    "elixir",
    "csharp",
)
ALIASES = {
    "js": "javascript",
    "node": "javascript",
    "ts": "typescript",
    "py": "python",
    "python3": "python",
    "sh": "shell",
    "bash": "shell",
    "rb": "ruby",
    "golang": "go",
    "rs": "rust",
    "pl": "perl",
    "cs": "csharp",
    "c#": "csharp",
    "exs": "elixir",
}
EXTENSIONS = {
    "javascript": "js",
    "typescript": "ts",
    "python": "py",
    "shell": "sh",
    "ruby": "rb",
    "go": "go",
    "rust": "rs",
    "php": "php",
    "perl": "pl",
    "r": "R",
    "elixir": "exs",
    "csharp": "csx",
}
INSTALL_HINTS = {
    "javascript": "install Node.js (https://nodejs.org) or Bun (https://bun.sh)",
    "typescript": "install bun (recommended), or tsx (npm i -g tsx), or ts-node",
    "python": "install Python 3 (python3 on PATH)",
    "shell": "install bash",
    "ruby": "install Ruby (ruby on PATH)",
    "go": "install Go (https://go.dev/dl)",
    "rust": "install rustc via https://rustup.rs",
    "php": "install PHP (php on PATH)",
    "perl": "install Perl (perl on PATH)",
    "r": "install R (Rscript on PATH)",
    "elixir": "install Elixir (elixir on PATH)",
    "csharp": "install dotnet-script: dotnet tool install -g dotnet-script",
}


def normalize_language(name: str) -> str:
    """The canonical language name for `name` (case-insensitive, common aliases).

    Raises:
        UsageError: not a language the executor knows.
    """
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    if key not in LANGUAGES:
        raise UsageError(f"unknown language {name!r}; choose one of: {', '.join(LANGUAGES)}")
    return key


@dataclass(frozen=True)
class Runtime:
    """A found runtime: what runs a script file (``argv + [script]``), and its kind."""

    language: str
    argv: tuple[str, ...]
    name: str  # e.g. "node", "bun", "python3 (.venv)"
    compiled: bool = False  # rust: compile first, then run the binary


def _which(*names: str) -> str | None:
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    return None


def project_python(project_dir: Path | None) -> str | None:
    """The interpreter of the project's own environment (.venv, venv, or an active one)."""
    bindir = "Scripts" if os.name == "nt" else "bin"
    exe = "python.exe" if os.name == "nt" else "python"
    candidates = []
    if project_dir is not None:
        candidates += [project_dir / ".venv" / bindir / exe, project_dir / "venv" / bindir / exe]
    active = os.environ.get("VIRTUAL_ENV")
    if active:
        candidates.append(Path(active) / bindir / exe)
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def _bun() -> str | None:
    return _which("bun") or next(
        (str(p) for p in (Path.home() / ".bun" / "bin" / "bun",) if p.is_file()), None
    )


def _detect_javascript() -> Runtime | None:
    bun = _bun()
    if bun:
        return Runtime("javascript", (bun, "run"), "bun")
    node = _which("node", "nodejs")
    return Runtime("javascript", (node,), "node") if node else None


def _detect_typescript() -> Runtime | None:
    bun = _bun()
    if bun:
        return Runtime("typescript", (bun, "run"), "bun")
    tsx = _which("tsx")
    if tsx:
        return Runtime("typescript", (tsx,), "tsx")
    ts_node = _which("ts-node")
    return Runtime("typescript", (ts_node,), "ts-node") if ts_node else None


def _detect_shell() -> Runtime | None:
    # Never the user's login shell: rc files and zsh/fish syntax make runs unpredictable.
    shell = _which("bash") or _which("sh")
    return Runtime("shell", (shell,), Path(shell).name) if shell else None


def _detect_r() -> Runtime | None:
    found = _which("Rscript")
    return Runtime("r", (found,), "Rscript") if found else None


def _simple(language: str, command: str, *prefix: str) -> Callable[[], Runtime | None]:
    def detect() -> Runtime | None:
        found = _which(command)
        return Runtime(language, (found, *prefix), command) if found else None

    return detect


_DETECTORS: dict[str, Callable[[], Runtime | None]] = {
    "javascript": _detect_javascript,
    "typescript": _detect_typescript,
    "shell": _detect_shell,
    "ruby": _simple("ruby", "ruby"),
    "go": _simple("go", "go", "run"),
    "php": _simple("php", "php"),
    "perl": _simple("perl", "perl"),
    "r": _detect_r,
    "elixir": _simple("elixir", "elixir"),
    "csharp": _simple("csharp", "dotnet-script"),
}


@cache
def _detect(language: str) -> Runtime | None:
    if language == "rust":
        rustc = _which("rustc")
        return Runtime("rust", (rustc,), "rustc", compiled=True) if rustc else None
    return _DETECTORS[language]()


def _python_runtime(project_dir: Path | None) -> Runtime:
    own = project_python(project_dir)
    if own:
        return Runtime("python", (own,), f"python ({Path(own).parent.parent.name})")
    return Runtime("python", (sys.executable,), "python (ctxmode's)")


def find_runtime(language: str, project_dir: Path | None = None) -> Runtime:
    """The runtime for `language`.

    Raises:
        RuntimeMissingError: nothing that runs `language` is installed; the message names
            what was looked for and how to install it.
    """
    if language == "python":
        return _python_runtime(project_dir)
    runtime = _detect(language)
    if runtime is None:
        looked = {
            "javascript": "bun, node",
            "typescript": "bun, tsx, ts-node",
            "shell": "bash, sh",
            "rust": "rustc",
            "r": "Rscript",
            "csharp": "dotnet-script",
            "go": "go",
        }.get(language, language)
        raise RuntimeMissingError(
            f"runtime not installed for {language} (looked for: {looked} on PATH); "
            f"{INSTALL_HINTS[language]}"
        )
    return runtime


def available_languages(project_dir: Path | None = None) -> list[str]:
    """Languages whose runtime is present (python always is)."""
    out = []
    for language in LANGUAGES:
        try:
            find_runtime(language, project_dir)
        except RuntimeMissingError:
            continue
        out.append(language)
    return out
