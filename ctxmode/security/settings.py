"""Where the permission rules come from, and reading them into a `Policy`.

Where rules come from, most authoritative first (`settings_sources`):

* Claude Code managed settings (``/etc/claude-code/managed-settings.json`` or the macOS
  and Windows equivalents, plus ``managed-settings.d/*.json``);
* ``<project>/.claude/settings.local.json``, then ``<project>/.claude/settings.json``;
* global: an explicit file when the caller names one (Codex passes
  ``$CODEX_HOME/settings.json``); otherwise the detected platform's own
  ``<config dir>/settings.json`` (non-Claude platforms only) and always
  ``<CLAUDE_CONFIG_DIR or ~/.claude>/settings.json``.

Only the ``permissions.deny``, ``permissions.ask`` and ``permissions.allow`` string lists
are read. A missing file is normal; a malformed or unreadable one is skipped and reported
in `Policy.warnings`. Parsed files are cached per process by their ``stat`` signature,
so `load_policy` on every hook call costs a few ``stat`` calls.
"""

import json
import os
import re
import sys
from collections import ChainMap
from collections.abc import Sequence
from pathlib import Path

from ctxmode import settings
from ctxmode.security.model import (
    _KINDS,
    Decision,
    Policy,
    Rule,
    Scope,
    SettingsSource,
    SourceStatus,
)
from ctxmode.typenames import NamedTuple

MAX_SETTINGS_BYTES = 4 * 1024 * 1024


_RULE_RE = re.compile(r"\s*([A-Za-z_][\w-]*)\s*(?:\((.*)\))?\s*", re.DOTALL)


class _Parsed(NamedTuple):
    status: SourceStatus
    entries: tuple[tuple[Decision, int, str], ...]
    error: str | None
    warnings: tuple[str, ...]


_FILE_CACHE: dict[str, tuple[tuple[int, int, int, int], _Parsed]] = {}


def clear_cache() -> None:
    """Forget parsed settings files (they are re-read anyway when their stat changes)."""
    _FILE_CACHE.clear()


def _expand_dir(value: str, home: Path) -> Path:
    """``~``, ``~/x`` and ``~\\x`` against ``home``; anything else made absolute."""
    if value == "~":
        return home
    if value.startswith(("~/", "~\\")):
        return home / value[2:]
    return Path(os.path.abspath(value))


def claude_config_dir(home: Path | None = None) -> Path:
    """Claude Code's config directory (its descriptor's: ``$CLAUDE_CONFIG_DIR`` or
    ``~/.claude``); every platform reads its settings.json."""
    from ctxmode.platforms.claude_code import HOST
    from ctxmode.platforms.host import config_dir

    home = Path.home() if home is None else home
    found = config_dir(HOST, ChainMap({"HOME": str(home)}, os.environ))
    return found if found is not None else home / ".claude"


def _claude_name() -> str:
    from ctxmode.platforms.claude_code import NAME

    return NAME


def _known_platform(platform: str) -> bool:
    from ctxmode.platforms import PLATFORMS

    return platform in PLATFORMS


def _platform_dir(platform: str, home: Path) -> Path | None:
    from ctxmode.platforms import descriptor
    from ctxmode.platforms.host import config_dir

    host = descriptor(platform)
    env = ChainMap({"HOME": str(home)}, os.environ)  # a copy of the environment costs more
    return config_dir(host, env) if host is not None else None


def _managed_base() -> Path:
    if sys.platform == "darwin":
        return Path("/Library/Application Support/ClaudeCode")
    if sys.platform == "win32":
        return Path(os.environ.get("ProgramFiles", r"C:\Program Files")) / "ClaudeCode"
    return Path("/etc/claude-code")


def _managed_paths() -> list[Path]:
    base = _managed_base()
    paths = [base / "managed-settings.json"]
    try:
        paths.extend(sorted((base / "managed-settings.d").glob("*.json")))
    except OSError:
        pass
    return paths


def settings_sources(
    project_dir: Path | str,
    *,
    platform: str | None = None,
    global_settings: Path | None = None,
    managed_settings: Sequence[Path] | None = None,
    home: Path | None = None,
) -> list[tuple[Path, Scope]]:
    """The settings files to read, most authoritative first (see the module docstring).

    ``platform`` defaults to ``$CTXMODE_PLATFORM`` (or ``$CONTEXT_MODE_PLATFORM``);
    ``managed_settings`` replaces the OS managed-settings locations.
    """
    home = Path.home() if home is None else home
    project = Path(project_dir)
    managed = _managed_paths() if managed_settings is None else managed_settings
    out = [(Path(p), Scope.MANAGED) for p in managed]
    out.append((project / ".claude" / "settings.local.json", Scope.LOCAL))
    out.append((project / ".claude" / "settings.json", Scope.PROJECT))
    if global_settings is not None:
        out.append((Path(global_settings), Scope.GLOBAL))
        return out
    if platform is None:
        platform = settings.platform() or ""
    root = _platform_dir(platform, home) if platform != _claude_name() else None
    if root is not None:
        out.append((root / "settings.json", Scope.PLATFORM))
    out.append((claude_config_dir(home) / "settings.json", Scope.USER))
    return out


def _read_settings(path: Path) -> _Parsed:
    try:
        st = path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return _Parsed(SourceStatus.MISSING, (), None, ())
    except OSError as exc:
        return _Parsed(SourceStatus.UNREADABLE, (), f"cannot stat: {exc.strerror or exc}", ())
    key = (st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)
    cached = _FILE_CACHE.get(str(path))
    if cached is not None and cached[0] == key:
        return cached[1]
    parsed = _parse_settings(path, st.st_size)
    _FILE_CACHE[str(path)] = (key, parsed)
    return parsed


def _invalid(error: str) -> _Parsed:
    return _Parsed(SourceStatus.INVALID, (), error, ())


def _parse_settings(path: Path, size: int) -> _Parsed:
    # Defense in depth: an oversized file is not parsed on every hook call.
    if size > MAX_SETTINGS_BYTES:
        return _invalid(f"larger than {MAX_SETTINGS_BYTES} bytes")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        return _invalid("not UTF-8 text")
    except OSError as exc:
        return _Parsed(SourceStatus.UNREADABLE, (), f"cannot read: {exc.strerror or exc}", ())
    if not text.strip():
        return _Parsed(SourceStatus.LOADED, (), None, ())
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return _invalid(f"malformed JSON ({exc.msg}, line {exc.lineno} column {exc.colno})")
    except RecursionError:
        return _invalid("JSON nested too deeply")
    if not isinstance(data, dict):
        return _invalid("top level is not a JSON object")
    permissions = data.get("permissions")
    if permissions is None:
        return _Parsed(SourceStatus.LOADED, (), None, ())
    if not isinstance(permissions, dict):
        return _invalid('"permissions" is not an object')
    entries: list[tuple[Decision, int, str]] = []
    warnings: list[str] = []
    for kind in _KINDS:
        items = permissions.get(kind.value)
        if items is None:
            continue
        if not isinstance(items, list):
            warnings.append(f'{path}: "permissions.{kind.value}" is not a list; ignored')
            continue
        for i, item in enumerate(items):
            if isinstance(item, str):
                entries.append((kind, i, item))
            else:
                warnings.append(f"{path}: permissions.{kind.value}[{i}] is not a string; ignored")
    return _Parsed(SourceStatus.LOADED, tuple(entries), None, tuple(warnings))


def _parse_rule(raw: str, kind: Decision, position: int, path: Path, scope: Scope) -> Rule | str:
    """A `Rule`, or a warning saying why ``raw`` is not one."""
    where = f"{path}: permissions.{kind.value}[{position}] {raw!r}"
    m = _RULE_RE.fullmatch(raw)
    if m is None:
        return f"{where} is not Tool or Tool(specifier); ignored"
    tool, spec = m.group(1), m.group(2)
    if spec is not None and not spec.strip():
        return f"{where} has an empty specifier; ignored"
    specifier = None if spec is None else spec.strip()
    return Rule(raw.strip(), tool, specifier, kind, path, scope, position)


def load_policy(
    project_dir: Path | str,
    *,
    platform: str | None = None,
    global_settings: Path | None = None,
    managed_settings: Sequence[Path] | None = None,
    fail_closed: bool | None = None,
) -> Policy:
    """Read every file of `settings_sources` into one `Policy`. Never raises.

    ``fail_closed`` defaults to whether ``$CTXMODE_REQUIRE_SECURITY`` (or upstream's
    ``$CONTEXT_MODE_REQUIRE_SECURITY``) is set to 1. If the sources themselves cannot be
    worked out (no home directory, a vanished working directory), the policy has no rules
    and counts as broken, so fail-closed mode denies.
    """
    strict = settings.require_security() if fail_closed is None else fail_closed
    project = Path(os.fspath(project_dir))
    rules: list[Rule] = []
    sources: list[SettingsSource] = []
    warnings: list[str] = []
    try:
        project = Path(os.path.abspath(project))
        if platform is not None and not _known_platform(platform):
            warnings.append(f"unknown platform {platform!r}: only Claude Code settings are read")
        found = settings_sources(
            project,
            platform=platform,
            global_settings=global_settings,
            managed_settings=managed_settings,
        )
    except (OSError, RuntimeError, ValueError) as exc:
        error = f"cannot locate the settings files: {exc}"
        broken = SettingsSource(project, Scope.PROJECT, SourceStatus.UNREADABLE, 0, error)
        return Policy(project, (), (broken,), (error,), strict)
    for path, scope in found:
        parsed = _read_settings(path)
        count = 0
        for kind, position, raw in parsed.entries:
            rule = _parse_rule(raw, kind, position, path, scope)
            if isinstance(rule, Rule):
                rules.append(rule)
                count += 1
            else:
                warnings.append(rule)
        warnings.extend(parsed.warnings)
        if parsed.error is not None:
            warnings.append(f"{path}: {parsed.error}; skipped")
        sources.append(SettingsSource(path, scope, parsed.status, count, parsed.error))
    return Policy(project, tuple(rules), tuple(sources), tuple(warnings), strict)


def _stamp(path: Path) -> tuple[int, int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)


class PolicyCache:
    """`load_policy` for a long-lived process (the server): read again only when a file
    it was read from, or the managed-settings folder, changed; a stat of each per call
    instead of locating and reading them all (a quarter of a small run's overhead)."""

    def __init__(self, project_dir: Path | str) -> None:
        self._project_dir = project_dir
        self._policy: Policy | None = None
        self._stamps: tuple[object, ...] = ()
        import threading  # not at module level: the hooks never cache

        self._lock = threading.Lock()

    def _watched(self, policy: Policy) -> list[Path]:
        return [s.path for s in policy.sources] + [_managed_base() / "managed-settings.d"]

    def get(self) -> Policy:
        with self._lock:
            if self._policy is not None:
                if tuple(map(_stamp, self._watched(self._policy))) == self._stamps:
                    return self._policy
            policy = load_policy(self._project_dir)
            self._stamps = tuple(map(_stamp, self._watched(policy)))
            self._policy = policy
            return policy
