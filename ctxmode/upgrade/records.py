"""The platforms `ctxmode setup` registered, and setting one up again."""

from pathlib import Path
from typing import NamedTuple

from ctxmode import paths
from ctxmode.errors import CtxError


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


class Resetup(NamedTuple):
    platform: str
    scope: str
    project: str | None
    changed: bool
    problem: str | None = None
    warnings: tuple[str, ...] = ()


def resetup(rec: SetupRecord) -> Resetup:
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
