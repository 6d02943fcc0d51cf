"""Per host agent and scope: are ctxmode's hooks and MCP server registered, and complete?

Answered with `ctxmode.setup` itself, in dry-run mode, so doctor and setup can never
disagree about what "set up" means and no file is ever written:

* ``uninstall(dry_run=True)`` lists the entries of ctxmode's that the host's files hold
  (found by content, as uninstall finds them);
* the platform's plan lists the entries setup writes; the difference is what is missing;
* ``setup(dry_run=True)`` changing nothing means the files are exactly as setup leaves
  them (flags such as ``hooksConfig.enabled`` included).

A platform with neither an ownership record nor any ctxmode entry is not set up and is not
reported on its own line.
"""

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxmode.doctor.model import Check, fail, ok, warn
from ctxmode.doctor.where import project_option

if TYPE_CHECKING:  # the setup package loads only when this check runs
    from ctxmode.setup.model import FileChange, PlatformPlan

Key = tuple[str, ...]


def _shown(path: Path, project: Path | None) -> str:
    if project is not None and path.is_relative_to(project):
        return str(path.relative_to(project))
    return str(path)


def _present(changes: Iterable["FileChange"]) -> tuple[set[Key], list[str]]:
    """Keys of the ctxmode entries the files hold, and the hook commands found."""
    found: set[Key] = set()
    commands: list[str] = []
    for change in changes:
        path = str(change.path)
        for entry in change.entries:
            kind = entry.get("kind")
            if kind == "hook":
                found.add(("hook", path, entry["event"], str(entry.get("matcher"))))
                commands.append(str(entry["command"]))
            elif kind == "server":
                found.add(("server", path, entry["key"]))
            elif kind == "file":
                found.add(("file", path))
    return found, commands


def _missing(plan: "PlatformPlan", found: set[Key], project: Path | None) -> list[tuple[str, str]]:
    """What setup would add, as (file shown, note): hook events, MCP server, plugin file."""
    from ctxmode.setup.model import JsonTarget, PlainFileTarget, TomlTarget

    notes: list[tuple[str, str]] = []
    for target in plan.targets:
        path = str(target.path)
        shown = _shown(target.path, project)
        if isinstance(target, JsonTarget | TomlTarget):
            events = [
                h.event
                for h in target.hooks
                if ("hook", path, h.event, str(h.matcher)) not in found
            ]
            if events:
                notes.append(
                    (shown, f"hooks missing in {shown}: {', '.join(dict.fromkeys(events))}")
                )
        if isinstance(target, JsonTarget | TomlTarget):
            for server in target.servers:
                key = ".".join((*server.container, server.name))
                if ("server", path, key) not in found:
                    notes.append((shown, f"MCP server {key} missing in {shown}"))
        elif isinstance(target, PlainFileTarget) and ("file", path) not in found:
            notes.append((shown, f"plugin file {shown} missing or edited"))
    return notes


def _executable(recorded: dict[str, Any] | None, commands: list[str]) -> str:
    """The ctxmode executable the host runs: the recorded one, else the one in the hooks."""
    from ctxmode.setup.command import NAME, tokens

    if recorded and isinstance(recorded.get("command"), str):
        return str(recorded["command"])
    for command in commands:
        words = tokens(command)
        if words:
            return words[0]
    return NAME


def _gone(executable: str) -> bool:
    """An absolute executable that is no longer there (names are left to PATH warnings)."""
    if "/" not in executable and os.sep not in executable:
        return False
    return not (os.path.isfile(executable) and os.access(executable, os.X_OK))


def _advice(executable: str) -> set[str]:
    """Warnings setup gives about a project-scope ``--command`` whatever the files hold
    (an absolute path works only on this machine): advice, not a problem of this setup."""
    from ctxmode.errors import CtxError
    from ctxmode.setup.command import resolve

    try:
        shared = resolve(executable, shared=True)[1]
        alone = resolve(executable, shared=False)[1]
    except CtxError:
        return set()
    return set(shared) - set(alone)


def _rerun(
    platform: str, project: Path | None, executable: str, missing: list[tuple[str, str]]
) -> tuple[list[str], list[str]]:
    """Problems (missing entries, files setup would still change, setup refusing) and
    setup's warnings (PATH, foreign or duplicate entries, double hooks), from a dry run.

    Raises:
        SettingsFileError: a settings file cannot be parsed (uninstall leaves such a file
            alone when nothing in it is ctxmode's; setup cannot).
    """
    from ctxmode.errors import CtxError
    from ctxmode.setup import engine
    from ctxmode.setup.errors import SettingsFileError

    problems = [note for _, note in missing]
    try:
        planned = engine.setup(platform, project=project, command=executable, dry_run=True)
    except SettingsFileError:
        raise
    except CtxError as exc:
        return [*problems, str(exc)], []
    noted = {shown for shown, _ in missing}
    for change in planned.changes:
        shown = _shown(change.path, project)
        if change.action != "unchanged" and shown not in noted:
            problems.append(f"{shown} differs from what setup writes")
    advice = _advice(executable)
    return problems, [w for w in planned.warnings if w not in advice]


def platform_check(platform: str, project: Path | None) -> Check | None:
    """One platform in one scope (``project`` None: the user's global settings)."""
    from ctxmode.errors import CtxError
    from ctxmode.setup import engine, record, targets
    from ctxmode.setup.command import Command
    from ctxmode.setup.errors import SettingsFileError
    from ctxmode.setup.model import Scope

    scope = Scope(project)
    name = f"setup {platform} ({scope.name})"
    fix = f"ctxmode setup {platform}" + (
        " --global" if project is None else project_option(project, "--project")
    )
    recorded, _ = record.load(record.path_for(platform, scope))
    try:
        present = engine.uninstall(platform, project=project, dry_run=True)
    except CtxError as exc:
        if recorded is None:
            return None  # an unreadable file of a host ctxmode was never set up for
        return fail(name, str(exc), f"fix that file, then run {fix}")
    found, commands = _present(present.changes)
    if recorded is None and not found:
        return None
    executable = _executable(recorded, commands)
    plan = targets.plan(platform, scope, Command(executable))
    missing = _missing(plan, found, project)
    gone = _gone(executable)
    try:
        problems, warnings = _rerun(platform, project, executable, missing)
    except SettingsFileError as exc:
        return fail(name, str(exc), f"fix that file, then run {fix}")
    if gone:  # setup's warnings about that executable say the same again
        warnings = [w for w in warnings if executable not in w]
    notes = [n.rstrip(". ") for n in (*problems, *warnings)]
    if gone:
        detail = "; ".join([f"hooks run {executable}, which no longer exists", *notes])
        return fail(name, detail, f"{fix} (add --command PATH if ctxmode is not on PATH)")
    if problems:
        return warn(name, "; ".join(notes), fix)
    files = ", ".join(_shown(t.path, project) for t in plan.targets)
    if warnings:  # complete, but setup has advice (the warnings say what to do)
        return warn(name, "; ".join([f"registered in {files}", *notes]))
    return ok(name, f"{_registered(plan)} registered in {files}")


def _registered(plan: "PlatformPlan") -> str:
    """What setup registers for this host: hooks (or a plugin) and the server, or the
    server alone (hosts that run no hooks: Zed, Antigravity, ...)."""
    from ctxmode.setup.model import PlainFileTarget

    hooked = any(isinstance(t, PlainFileTarget) or getattr(t, "hooks", ()) for t in plan.targets)
    return "hooks and MCP server" if hooked else "MCP server"


def plugin_check(platform: str, project_dir: Path | None) -> Check | None:
    """Whether the host runs ctxmode from its plugin, and whether `ctxmode setup`'s hooks
    are there too (the plugin's then step aside for them); None without the plugin."""
    import sys

    from ctxmode import platforms, settings

    adapter = platforms.load(platform)
    enabled = getattr(adapter, "enabled_plugin", None)
    found = enabled(project_dir, os.environ) if enabled is not None else None
    if found is None:
        return None
    plugin_id, where = found
    name = f"plugin {platform}"
    here = f"; this ctxmode runs from it ({sys.prefix})" if settings.plugin() == platform else ""
    doubled = adapter.setup_hooks(project_dir, os.environ)
    if doubled:
        files = ", ".join(str(p) for p in doubled)
        scope = "--global" if project_dir is None else project_option(project_dir, "--project")
        return warn(
            name,
            f"{plugin_id} is enabled in {where}, and ctxmode setup's hooks are registered too "
            f"({files}): those answer and the plugin's step aside, but the MCP server is "
            f"registered twice{here}",
            f"ctxmode uninstall {platform} {scope}".strip(),
        )
    return ok(
        name, f"{plugin_id} enabled in {where}: the plugin's hooks and MCP server are active{here}"
    )


def platform_checks(project_dir: Path | None) -> list[Check]:
    """Every platform set up for this project or globally, and every host running ctxmode's
    plugin; one line when there is none."""
    from ctxmode.setup.targets import PLATFORMS

    checks = [c for p in PLATFORMS if (c := plugin_check(p, project_dir)) is not None]
    for platform in PLATFORMS:
        for scope in (project_dir, None) if project_dir is not None else (None,):
            check = platform_check(platform, scope)
            if check is not None:
                checks.append(check)
    if not checks:
        where = "for this project or globally" if project_dir is not None else "globally"
        return [
            ok(
                "setup",
                f"no host agent set up {where} "
                "(ctxmode setup <platform> registers the hooks and MCP server)",
            )
        ]
    return checks
