"""Fix hints that work where the user runs them.

A fix like ``ctxmode setup cursor`` acts on the project of the current directory; when
doctor examined another one (``--project``), the hint must name it.
"""

from pathlib import Path


def _default_project() -> Path | None:
    from ctxmode.errors import CtxError
    from ctxmode.paths import resolve_project

    try:
        return resolve_project()
    except CtxError:
        return None


def project_option(project_dir: Path | None, flag: str) -> str:
    """`` FLAG DIR`` when `project_dir` is not the one commands pick by default, else ""."""
    if project_dir is None or project_dir == _default_project():
        return ""
    return f" {flag} {project_dir}"
