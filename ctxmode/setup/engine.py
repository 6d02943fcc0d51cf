"""Setup and uninstall: every file is read and planned first, then all are written (or,
with a dry run, none). A file that cannot be parsed stops everything before any write."""

import hashlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxmode.errors import EnvironmentProblem
from ctxmode.setup import jsonfile, record, targets
from ctxmode.setup.command import Command, resolve, tokens
from ctxmode.setup.errors import (
    PluginInstalledError,
    SettingsFileError,
    SetupConflictError,
    SetupWriteError,
)
from ctxmode.setup.model import (
    FileChange,
    JsonTarget,
    PlainFileTarget,
    Scope,
    ServerEntry,
    SetupResult,
    Target,
    TomlTarget,
)
from ctxmode.setup.tomlops import TomlEdit


@dataclass
class _Edit:
    path: Path
    before: str | None
    after: str | None
    file_record: dict[str, Any] | None = None
    entries: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _read(path: Path) -> str | None:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError as exc:
        raise SettingsFileError(f"{path} is a directory, not a settings file.") from exc
    except OSError as exc:
        raise SettingsFileError(f"cannot read {path}: {exc.strerror or exc}.") from exc
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SettingsFileError(f"{path} is not UTF-8 text; nothing was changed.") from exc


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _missing_dirs(path: Path) -> list[str]:
    missing = []
    for parent in path.parents:
        if parent.exists():
            break
        missing.append(str(parent))
    return missing


def _file_record(
    base: dict[str, Any], target: Target, prior: dict[str, Any] | None, before: str | None
) -> dict[str, Any]:
    prior = prior or {}
    dirs = set(prior.get("created_dirs") or _missing_dirs(target.path))
    return {
        **base,
        "created_file": bool(prior.get("created_file")) or before is None,
        "created_dirs": sorted(dirs, key=len, reverse=True),
    }


# --- setup ----------------------------------------------------------------------------------


def _setup_json(
    target: JsonTarget, prior: dict[str, Any] | None, platform: str, known: frozenset[str]
) -> _Edit:
    before = _read(target.path)
    style = jsonfile.parse(target.path, before)
    data, base, entries, warnings = jsonfile.apply_setup(target, style.data, prior, platform, known)
    unchanged = before is not None and jsonfile.same(data, style.data)
    after = before if unchanged else jsonfile.render(target.path, style, data)
    rec = _file_record(base, target, prior, before)
    blank = (prior or {}).get("blank_text")
    if blank is None and before is not None and not before.strip():
        blank = before  # a blank file has no style to splice into; uninstall puts it back
    if isinstance(blank, str):
        rec["blank_text"] = blank
    return _Edit(target.path, before, after, rec, entries, warnings)


def _setup_toml(
    target: TomlTarget, prior: dict[str, Any] | None, platform: str, known: frozenset[str]
) -> _Edit:
    before = _read(target.path)
    edit = TomlEdit(target.path, before)
    prior = prior or {}
    warnings: list[str] = []
    entries: list[dict[str, Any]] = []
    if target.hooks:
        edit.set_hooks(target.hooks, platform, known)
        entries.extend(
            {"kind": "hook", "event": h.event, "matcher": h.matcher, "command": h.command}
            for h in target.hooks
        )
    servers: list[dict[str, Any]] = []
    for server in target.servers:
        warning = edit.set_server(server, known)
        if warning:
            warnings.append(warning)
            continue
        servers.append(
            {"container": list(server.container), "name": server.name, "value": server.value}
        )
        entries.append(
            {
                "kind": "server",
                "key": ".".join((*server.container, server.name)),
                "value": server.value,
            }
        )
    prior_settings = {tuple(s["path"]): s for s in prior.get("settings", [])}
    settings: list[dict[str, Any]] = []
    for setting in target.settings:
        rec, warning = edit.set_setting(setting, prior_settings.get(setting.path))
        if warning:
            warnings.append(warning)
        if rec is not None:
            settings.append(rec)
            entries.append(
                {"kind": "setting", "key": ".".join(setting.path), "value": setting.value}
            )
    after = edit.text() if edit.dirty else before
    base = {
        "path": str(target.path),
        "format": "toml",
        "servers": servers,
        "settings": settings,
        "hooks": [
            {"event": h.event, "matcher": h.matcher, "command": h.command, "item": h.item}
            for h in target.hooks
        ],
    }
    return _Edit(
        target.path, before, after, _file_record(base, target, prior, before), entries, warnings
    )


def _setup_file(target: PlainFileTarget, prior: dict[str, Any] | None) -> _Edit:
    if not target.content:
        raise EnvironmentProblem(
            f"this ctxmode build lacks the file it would install as {target.path} "
            "(ctxmode/platforms/opencode_plugin.js); reinstall ctxmode."
        )
    before = _read(target.path)
    if before is not None and before != target.content:
        if prior is None or _sha(before) != prior.get("sha256"):
            raise SetupConflictError(
                f"{target.path} exists and is not the file ctxmode installed (its content "
                "differs); nothing was changed. Move it away and run setup again."
            )
    sha = _sha(target.content)
    base = {"path": str(target.path), "format": "file", "sha256": sha}
    return _Edit(
        target.path,
        before,
        target.content,
        _file_record(base, target, prior, before),
        [{"kind": "file", "sha256": sha}],
    )


# --- uninstall ------------------------------------------------------------------------------


def _unreadable(
    path: Path, before: str, rec: dict[str, Any] | None, known: frozenset[str], exc: Exception
) -> _Edit:
    """A file uninstall cannot parse: left alone when nothing in it is ctxmode's.

    Raises:
        SettingsFileError: it mentions ctxmode, so entries may be left behind.
    """
    if any(word in before for word in known | {"ctxmode"}):
        raise exc
    warnings = (
        [f"{path} cannot be parsed and holds nothing of ctxmode's; left as is."] if rec else []
    )
    return _Edit(path, before, before, rec, [], warnings)


def _uninstall_json(
    target: JsonTarget, rec: dict[str, Any] | None, platform: str, known: frozenset[str]
) -> _Edit:
    before = _read(target.path)
    if before is None:
        return _Edit(target.path, None, None)
    try:
        style = jsonfile.parse(target.path, before)
    except SettingsFileError as exc:
        return _unreadable(target.path, before, rec, known, exc)
    data, removed, warnings = jsonfile.apply_uninstall(target, style.data, rec, platform, known)
    owned = bool(rec.get("created_file")) if rec else target.dedicated and bool(removed)
    blank = (rec or {}).get("blank_text")
    if data == {} and owned:
        after = None
    elif jsonfile.same(data, style.data):
        after = before
    elif data == {} and isinstance(blank, str):
        after = blank
    else:
        after = jsonfile.render(target.path, style, data)
    return _Edit(target.path, before, after, rec, removed, warnings)


def _uninstall_toml(
    target: TomlTarget, rec: dict[str, Any] | None, platform: str, known: frozenset[str]
) -> _Edit:
    before = _read(target.path)
    if before is None:
        return _Edit(target.path, None, None)
    try:
        edit = TomlEdit(target.path, before)
    except SettingsFileError as exc:
        return _unreadable(target.path, before, rec, known, exc)
    removed: list[dict[str, Any]] = [
        {"kind": "hook", "event": event, "matcher": matcher, "command": command}
        for event, matcher, command in edit.remove_hooks(platform, known)
    ]
    warnings: list[str] = []
    servers = {(s.container, s.name): s.value for s in target.servers}
    for s in (rec or {}).get("servers", []):
        servers.setdefault((tuple(s["container"]), s["name"]), s["value"])
    for (container, name), value in servers.items():
        gone, warning = edit.remove_server(container, name, known)
        if warning:
            warnings.append(warning)
        if gone:
            removed.append({"kind": "server", "key": ".".join((*container, name)), "value": value})
    removed.extend(  # undo_setting edits the file and says whether it did
        {"kind": "setting", "key": ".".join(setting["path"]), "value": setting["value"]}
        for setting in (rec or {}).get("settings", [])
        if edit.undo_setting(setting)
    )
    after: str | None = edit.text() if edit.dirty else before
    if after is not None and not after.strip() and rec and rec.get("created_file"):
        after = None
    return _Edit(target.path, before, after, rec, removed, warnings)


def _uninstall_file(target: PlainFileTarget, rec: dict[str, Any] | None) -> _Edit:
    before = _read(target.path)
    if before is None:
        return _Edit(target.path, None, None)
    ours = {_sha(target.content)} if target.content else set()
    if rec and rec.get("sha256"):
        ours.add(rec["sha256"])
    if _sha(before) in ours:
        return _Edit(target.path, before, None, rec, [{"kind": "file", "sha256": _sha(before)}])
    warning = (
        f"{target.path} differs from the file ctxmode installed (edited since?); left in place."
        if rec
        else ""
    )
    return _Edit(target.path, before, before, rec, [], [warning] if warning else [])


def _from_record(rec: dict[str, Any]) -> Target:
    path = Path(rec["path"])
    if rec.get("format") == "toml":
        servers = tuple(
            ServerEntry(tuple(s["container"]), s["name"], s["value"])
            for s in rec.get("servers", [])
        )
        return TomlTarget(path, servers=servers)
    if rec.get("format") == "file":
        return PlainFileTarget(path, "")
    return JsonTarget(path, dedicated=bool(rec.get("dedicated")))


# --- writing --------------------------------------------------------------------------------


def _write(path: Path, text: str) -> None:
    real = Path(os.path.realpath(path))
    real.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode: int | None = stat.S_IMODE(real.stat().st_mode)
    except FileNotFoundError:
        mode = None
    tmp = real.with_name(f".{real.name}.ctxmode-{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as handle:
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, real)
    except OSError:
        tmp.unlink(missing_ok=True)
        raise


def _remove_dirs(directories: list[str]) -> None:
    """Remove directories setup created, deepest first, while they are empty."""
    for directory in directories:
        if not os.path.isdir(directory) or os.listdir(directory):
            return
        os.rmdir(directory)


def _commit(edit: _Edit) -> None:
    try:
        if edit.after is None:
            edit.path.unlink()
            _remove_dirs((edit.file_record or {}).get("created_dirs", []))
        else:
            _write(edit.path, edit.after)
    except OSError as exc:
        raise SetupWriteError(f"could not write {edit.path}: {exc.strerror or exc}.") from exc


def _blocker(path: Path) -> str | None:
    """Why `path` could not be written, replaced or deleted, or None when it can.

    Files are replaced through a temporary file beside them, so the directory must be
    writable too; a missing directory needs its nearest existing ancestor writable.
    """
    real = Path(os.path.realpath(path))
    if real.exists() and not os.access(real, os.W_OK):
        return f"{real} is not writable"
    for parent in real.parents:
        if parent.exists():
            if not parent.is_dir():
                return f"{parent} is not a directory"
            if not os.access(parent, os.W_OK | os.X_OK):
                return f"{parent} is not writable"
            return None
    return None


def _check_writable(paths: list[Path]) -> None:
    """Refuse before anything is written (and in a dry run) when a write would fail.

    Raises:
        SetupWriteError: a file or directory is not writable.
    """
    for path in paths:
        reason = _blocker(path)
        if reason:
            raise SetupWriteError(f"cannot write {path}: {reason}. Nothing was changed.")


def _apply(edits: list[_Edit]) -> None:
    """Write every changed file; refuse if one changed on disk since it was read.

    Raises:
        SetupConflictError: a host wrote the file in the meantime.
        SetupWriteError: the file system refused.
    """
    changed = [e for e in edits if e.before != e.after]
    for edit in changed:
        if _read(edit.path) != edit.before:
            raise SetupConflictError(
                f"{edit.path} changed while ctxmode was editing it; nothing was written. "
                "Run the command again."
            )
    for edit in changed:
        _commit(edit)


def _known(prior: dict[str, Any] | None, cmd: Command) -> frozenset[str]:
    exes = {cmd.executable}
    for f in (prior or {}).get("files", []):
        for hook in f.get("hooks", []):
            words = tokens(str(hook.get("command", "")))
            if words:
                exes.add(words[0])
        for server in f.get("servers", []):
            command = server.get("value", {}).get("command")
            if isinstance(command, list) and command:
                command = command[0]
            if isinstance(command, str):
                exes.add(command)
    if prior and isinstance(prior.get("command"), str):
        exes.add(prior["command"])
    return frozenset(exes)


def _changes(edits: list[_Edit]) -> tuple[FileChange, ...]:
    return tuple(FileChange(e.path, e.before, e.after, tuple(e.entries)) for e in edits)


# --- entry points ---------------------------------------------------------------------------


def _refuse_beside_plugin(platform: str, project: Path | None) -> None:
    from ctxmode import platforms

    adapter = platforms.load(platform)
    enabled = getattr(adapter, "enabled_plugin", None)
    found = enabled(project, os.environ) if enabled is not None else None
    if found is not None:
        plugin_id, where = found
        remove = adapter.PLUGIN_REMOVE.format(id=plugin_id)
        raise PluginInstalledError(
            f"the ctxmode plugin ({plugin_id}, enabled in {where}) already registers ctxmode's "
            f"hooks and MCP server with {platform}; setting them up here too would run every "
            f"hook twice. Keep the plugin, or uninstall it first ({remove}) and run setup again."
        )


def setup(
    platform: str,
    *,
    project: Path | None,
    command: str | None = None,
    dry_run: bool = False,
) -> SetupResult:
    """Register ctxmode's hooks and MCP server with `platform` (globally if `project` is None).

    Idempotent: a second run changes nothing. With `dry_run`, nothing is written.

    Raises:
        UsageError: unknown platform, or a bad `--command`.
        EnvironmentProblem: ctxmode is not where the host would look for it.
        SettingsFileError: a settings file cannot be parsed (it is left untouched).
        SetupConflictError: a file ctxmode would write holds someone else's content.
        PluginInstalledError: the host has ctxmode's plugin enabled (it registers the hooks
            and the server itself).
    """
    builder = targets.require(platform)
    _refuse_beside_plugin(platform, project)
    scope = Scope(project)
    cmd, warnings = resolve(command, shared=project is not None)
    plan = builder(scope, cmd)
    rec_path = record.path_for(platform, scope)
    prior, rec_warnings = record.load(rec_path)
    warnings += rec_warnings
    known = _known(prior, cmd)
    prior_files = {f["path"]: f for f in (prior or {}).get("files", [])}
    edits: list[_Edit] = []
    for target in plan.targets:
        old = prior_files.get(str(target.path))
        if isinstance(target, JsonTarget):
            edits.append(_setup_json(target, old, platform, known))
        elif isinstance(target, TomlTarget):
            edits.append(_setup_toml(target, old, platform, known))
        else:
            edits.append(_setup_file(target, old))
    for edit in edits:
        warnings += edit.warnings
    warnings += plan.warnings
    _check_writable([e.path for e in edits if e.before != e.after] + [rec_path])
    if not dry_run:
        shared = record.created_dirs(scope)
        for edit in edits:
            if edit.file_record is not None:
                dirs = set(edit.file_record["created_dirs"])
                dirs.update(str(p) for p in edit.path.parents if str(p) in shared)
                edit.file_record["created_dirs"] = sorted(dirs, key=len, reverse=True)
        _apply(edits)
        planned = {str(e.path) for e in edits}
        files = [e.file_record for e in edits if e.file_record is not None]
        files += [f for path, f in prior_files.items() if path not in planned]
        record.save(rec_path, record.build(platform, scope, cmd.executable, files))
    return SetupResult(
        "setup",
        platform,
        scope,
        cmd.executable,
        dry_run,
        _changes(edits),
        rec_path,
        tuple(dict.fromkeys(warnings)),
        plan.notes,
    )


def uninstall(platform: str, *, project: Path | None, dry_run: bool = False) -> SetupResult:
    """Remove exactly what `setup` registered for `platform`, keeping everything else.

    Entries are found by content (hook command, server command), so this works after the
    host rewrote its files and, less precisely, without an ownership record.

    Raises:
        UsageError: unknown platform.
        SettingsFileError: a settings file cannot be parsed (it is left untouched).
    """
    scope = Scope(project)
    cmd = Command()
    plan = targets.plan(platform, scope, cmd)
    rec_path = record.path_for(platform, scope)
    prior, warnings = record.load(rec_path)
    known = _known(prior, cmd)
    recorded = {f["path"]: f for f in (prior or {}).get("files", [])}
    by_path: dict[str, Target] = {str(t.path): t for t in plan.targets}
    for path, rec in recorded.items():
        by_path.setdefault(path, _from_record(rec))
    edits: list[_Edit] = []
    for target in by_path.values():
        rec = recorded.get(str(target.path))
        if isinstance(target, JsonTarget):
            edits.append(_uninstall_json(target, rec, platform, known))
        elif isinstance(target, TomlTarget):
            edits.append(_uninstall_toml(target, rec, platform, known))
        else:
            edits.append(_uninstall_file(target, rec))
    for edit in edits:
        warnings += edit.warnings
    _check_writable([e.path for e in edits if e.before != e.after])
    if not dry_run:
        _apply(edits)
        record.remove(rec_path)
    notes = (
        ("Restart the host so it stops loading ctxmode.",)
        if any(e.before != e.after for e in edits)
        else ()
    )
    return SetupResult(
        "uninstall",
        platform,
        scope,
        prior.get("command", cmd.executable) if prior else cmd.executable,
        dry_run,
        _changes(edits),
        rec_path,
        tuple(dict.fromkeys(warnings)),
        notes,
    )
