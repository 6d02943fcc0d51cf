"""What `ctxmode setup` writes, as data: one target per file, and what came of it."""

import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

Action = Literal["create", "update", "delete", "unchanged"]


@dataclass(frozen=True)
class Scope:
    """Where a setup applies: one project directory, or the user's global settings."""

    project: Path | None

    @property
    def name(self) -> str:
        return "global" if self.project is None else "project"


@dataclass(frozen=True)
class HookEntry:
    """One ctxmode hook: the item appended to ``hooks.<event>`` and how to recognise it.

    ``item`` is a matcher group (``{"matcher", "hooks": [handler]}``) for hosts with Claude's
    nested shape, or the handler itself for hosts with flat lists. ``matcher`` and
    ``command`` identify it; a host that reorders or reformats the file keeps both.
    """

    event: str
    command: str
    matcher: str | None
    item: dict[str, Any]


@dataclass(frozen=True)
class ServerEntry:
    """The MCP server registration: ``<container>.<name> = value``."""

    container: tuple[str, ...]
    name: str
    value: dict[str, Any]


@dataclass(frozen=True)
class Setting:
    """A value the host needs: a feature flag, or part of a file's skeleton.

    ``force``: set it even over the user's own value (the old value is recorded and put
    back by uninstall). Otherwise an existing value is left alone. Uninstall removes what
    setup added, except ``structural`` values (a file format version, an agent's name)
    while other hooks in the file still need them. ``merge``: the value is a list of items
    added to the user's list (created if absent); uninstall takes out only the items setup
    added.
    """

    path: tuple[str, ...]
    value: Any
    force: bool = False
    structural: bool = False
    merge: bool = False


@dataclass(frozen=True)
class JsonTarget:
    """A JSON settings file and the ctxmode entries it should hold.

    ``dedicated``: the file exists only for ctxmode (its name says so), so uninstall may
    delete it once nothing else is left in it, even without an ownership record.
    """

    path: Path
    hooks: tuple[HookEntry, ...] = ()
    servers: tuple[ServerEntry, ...] = ()
    settings: tuple[Setting, ...] = ()
    dedicated: bool = False


@dataclass(frozen=True)
class TomlTarget:
    """A TOML config file (Codex, Kimi Code): the server table, flags and ``[[hooks]]``
    entries (each `HookEntry.item` one array table), edited as text."""

    path: Path
    servers: tuple[ServerEntry, ...] = ()
    settings: tuple[Setting, ...] = ()
    hooks: tuple[HookEntry, ...] = ()


@dataclass(frozen=True)
class PlainFileTarget:
    """A whole file ctxmode ships (the OpenCode plugin shim)."""

    path: Path
    content: str


Target = JsonTarget | TomlTarget | PlainFileTarget


@dataclass(frozen=True)
class PlatformPlan:
    """Every file one platform needs, plus what to tell the user."""

    platform: str
    scope: Scope
    targets: tuple[Target, ...]
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class FileChange:
    """One file's fate: its text before and after (None = absent)."""

    path: Path
    before: str | None
    after: str | None
    entries: tuple[dict[str, Any], ...] = ()

    @property
    def action(self) -> Action:
        if self.before == self.after:
            return "unchanged"
        if self.before is None:
            return "create"
        if self.after is None:
            return "delete"
        return "update"

    def diff(self) -> str:
        """A unified diff of the change ("" when unchanged)."""
        if self.action == "unchanged":
            return ""
        old = (self.before or "").splitlines(keepends=True)
        new = (self.after or "").splitlines(keepends=True)
        for lines in (old, new):
            if lines and not lines[-1].endswith("\n"):
                lines[-1] += "\n\\ No newline at end of file\n"
        name = str(self.path)
        return "".join(
            difflib.unified_diff(
                old,
                new,
                fromfile="/dev/null" if self.before is None else f"a{name}",
                tofile="/dev/null" if self.after is None else f"b{name}",
            )
        )


@dataclass(frozen=True)
class SetupResult:
    """What `setup` or `uninstall` did (or, with dry_run, would do)."""

    operation: Literal["setup", "uninstall"]
    platform: str
    scope: Scope
    command: str
    dry_run: bool
    changes: tuple[FileChange, ...]
    record_path: Path
    warnings: tuple[str, ...] = field(default=())
    notes: tuple[str, ...] = field(default=())

    @property
    def changed(self) -> bool:
        return any(c.action != "unchanged" for c in self.changes)
