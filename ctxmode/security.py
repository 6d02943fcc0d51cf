"""The host's permission rules, applied to what ctxmode is asked to run or read.

Agents reach the shell and the file system through ctxmode (``ctx_execute``,
``ctx_batch_execute``, ``ctx_execute_file``, ``ctx_index``), so the host's own
``permissions.deny`` rules would be one tool name away from useless. This module reads
those rules and answers, for a command, a piece of code or a file path: deny, ask, allow
or no decision. It is a core module: standard library only, no printing, and the
``check_*`` functions never raise.

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

Decisions follow the host (Claude Code): deny, then ask, then allow, whichever file a
rule came from. A deny anywhere beats an allow anywhere, so a project-local deny
overrides a global allow. No matching rule gives `Decision.NONE`: the caller carries on
as if there were no policy.

Commands are split the way a shell runs them (`split_command`): on ``&&``, ``||``, ``;``,
``|``, ``|&``, a lone ``&``, newlines, subshell parentheses and braces; ``$(...)``,
backticks, ``<(...)`` and here-documents fed to a shell are commands of their own;
quotes, escapes and comments are respected. A deny or ask rule is tried on several
readings of each segment: as written, unquoted, and without redirections, leading
``VAR=value`` assignments and wrappers (``sudo``, ``env``, ``timeout``, ``nohup``,
``xargs`` ...). Scripts handed to ``sh -c``, ``eval``, ``python -c``, ``node -e`` and
``find -exec`` are checked too. An allow rule must match every segment as written, so
``Bash(git:*)`` does not allow ``git status && rm -rf x``. Code in other languages is
scanned for shell escapes (``os.system``, ``subprocess.run([...])``, ``child_process``,
backticks, ``exec.Command`` ...), each checked as a command.

File paths (``Read(...)`` rules) are compared as absolute paths, in their lexical form
(``..`` resolved against the project) and their real form (symlinks followed), against
globs anchored as Claude Code documents them (``//abs``, ``~/in-home``, ``/from-root``,
``relative`` to the project). A rule naming a directory covers everything inside it.

Fail-open vs fail-closed: by default a broken settings file is skipped, and an internal
error (a bug of ours) falls back to a crude parser-free deny check of the raw text, then
to `Decision.NONE`, with the error in `Verdict.reason`: ctxmode never blocks work
because of its own fault, yet odd input cannot switch a deny rule off. With
``CTXMODE_REQUIRE_SECURITY=1`` (or upstream's ``CONTEXT_MODE_REQUIRE_SECURITY=1``) both
cases deny, with a message naming the bypass.
"""

import json
import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from functools import cache, lru_cache
from pathlib import Path
from typing import Literal, NamedTuple

from ctxmode.errors import PolicyDeniedError

REQUIRE_ENV_VARS = ("CTXMODE_REQUIRE_SECURITY", "CONTEXT_MODE_REQUIRE_SECURITY")
PLATFORM_ENV_VARS = ("CTXMODE_PLATFORM", "CONTEXT_MODE_PLATFORM")
MAX_SETTINGS_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 12
SHELL_LANGUAGES = frozenset({"shell", "bash", "sh", "zsh", "dash", "ksh"})

Surface = Literal["hook", "server"]


class Decision(str, Enum):
    """What the policy says about a request."""

    DENY = "deny"
    ASK = "ask"
    ALLOW = "allow"
    NONE = "none"


class Scope(str, Enum):
    """Which settings file a rule came from, most authoritative first."""

    MANAGED = "managed"
    LOCAL = "local"
    PROJECT = "project"
    GLOBAL = "global"
    PLATFORM = "platform"
    USER = "user"


class SourceStatus(str, Enum):
    """What happened when a settings file was read."""

    LOADED = "loaded"
    MISSING = "missing"
    INVALID = "invalid"
    UNREADABLE = "unreadable"


class Subject(str, Enum):
    """What was checked; it selects the wording of the deny message."""

    COMMAND = "command"
    SHELL_CODE = "shell_code"
    EMBEDDED = "embedded"
    PATH = "path"


@dataclass(frozen=True)
class Rule:
    """One permission rule and where it came from.

    ``specifier`` is the text inside the parentheses, ``None`` for a bare tool name
    (``Bash`` alone matches every command, ``Read`` every path).
    """

    raw: str
    tool: str
    specifier: str | None
    kind: Decision
    source: Path
    scope: Scope
    position: int

    @property
    def origin(self) -> str:
        """``<scope> settings <file> permissions.<list>[<index>]``."""
        where = f"permissions.{self.kind.value}[{self.position}]"
        return f"{self.scope.value} settings {self.source} {where}"


@dataclass(frozen=True)
class SettingsSource:
    """One settings file that was looked at, and what came of it."""

    path: Path
    scope: Scope
    status: SourceStatus
    rule_count: int = 0
    error: str | None = None


@dataclass(frozen=True)
class Policy:
    """The rules in force for one project, in precedence order, with their origins."""

    project_dir: Path
    rules: tuple[Rule, ...] = ()
    sources: tuple[SettingsSource, ...] = ()
    warnings: tuple[str, ...] = ()
    fail_closed: bool = False
    case_insensitive_commands: bool = sys.platform == "win32"
    case_insensitive_paths: bool = sys.platform in ("win32", "darwin")

    @property
    def has_rules(self) -> bool:
        """At least one settings file yielded a rule."""
        return bool(self.rules)

    @property
    def broken(self) -> bool:
        """Some settings file exists but could not be used."""
        bad = (SourceStatus.INVALID, SourceStatus.UNREADABLE)
        return any(s.status in bad for s in self.sources)

    @property
    def fail_closed_engaged(self) -> bool:
        """Fail-closed was asked for and the settings are broken: every check denies."""
        return self.fail_closed and self.broken

    def rules_for(self, tool: str) -> tuple[Rule, ...]:
        """The rules naming ``tool`` (``"Bash"``, ``"Read"``), in precedence order."""
        return tuple(r for r in self.rules if r.tool == tool)


@dataclass(frozen=True)
class Verdict:
    """The answer to one check.

    ``segment`` is the part of the input the deciding rule matched (a command segment, a
    segment of an embedded command, or a resolved path) and ``matched_as`` the reading of
    it that matched (``rm -rf /`` for ``sudo timeout 5 rm -rf /``). ``embedded`` is the
    whole command found in non-shell code. ``reason`` explains verdicts without a rule
    (fail-closed, internal error).
    """

    decision: Decision
    subject: Subject
    rule: Rule | None = None
    segment: str | None = None
    matched_as: str | None = None
    embedded: str | None = None
    reason: str | None = None

    @property
    def denied(self) -> bool:
        return self.decision is Decision.DENY

    @property
    def message(self) -> str | None:
        """The hook-surface deny message (`deny_message`), ``None`` unless denied."""
        return deny_message(self) if self.denied else None


@dataclass(frozen=True)
class RuleMatch:
    """A rule that was considered, and the segments or paths it matched (maybe none)."""

    rule: Rule
    matched: tuple[str, ...] = ()


@dataclass(frozen=True)
class Explanation:
    """Everything behind one decision, for ``ctxmode policy check``."""

    subject: str
    kind: Subject
    parts: tuple[str, ...]
    verdict: Verdict
    considered: tuple[RuleMatch, ...]
    sources: tuple[SettingsSource, ...]
    warnings: tuple[str, ...] = ()

    @property
    def decided_by(self) -> Rule | None:
        return self.verdict.rule


# --------------------------------------------------------------------------- settings files

_RULE_RE = re.compile(r"\s*([A-Za-z_][\w-]*)\s*(?:\((.*)\))?\s*", re.DOTALL)
_KINDS = (Decision.DENY, Decision.ASK, Decision.ALLOW)

# Config roots of the other platforms (spec 8.1) under the home directory, and the
# variable that replaces the root when set.
_PLATFORM_ROOTS: dict[str, tuple[tuple[str, ...], str | None]] = {
    "gemini-cli": ((".gemini",), "GEMINI_CLI_HOME"),
    "antigravity": ((".gemini",), None),
    "codex": ((".codex",), "CODEX_HOME"),
    "cursor": ((".cursor",), None),
    "vscode-copilot": ((".vscode",), None),
    "jetbrains-copilot": ((".config", "JetBrains"), None),
    "kiro": ((".kiro",), None),
    "opencode": ((".config", "opencode"), None),
    "kilo": ((".config", "kilo"), None),
    "openclaw": ((".openclaw",), None),
    "pi": ((".pi",), None),
    "omp": ((".omp",), None),
    "qwen-code": ((".qwen",), None),
    "zed": ((".config", "zed"), None),
}


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
    """``$CLAUDE_CONFIG_DIR`` (``~`` expanded), or ``~/.claude`` when unset or blank."""
    home = Path.home() if home is None else home
    value = os.environ.get("CLAUDE_CONFIG_DIR", "").strip()
    return _expand_dir(value, home) if value else home / ".claude"


def _platform_dir(platform: str, home: Path) -> Path | None:
    entry = _PLATFORM_ROOTS.get(platform)
    if entry is None:
        return None
    parts, env_var = entry
    value = os.environ.get(env_var, "").strip() if env_var else ""
    if value:
        return _expand_dir(value, home)
    xdg = os.environ.get("XDG_CONFIG_HOME", "").strip()
    if parts[0] == ".config" and xdg:
        return Path(xdg).joinpath(*parts[1:])
    return home.joinpath(*parts)


def _managed_paths() -> list[Path]:
    if sys.platform == "darwin":
        base = Path("/Library/Application Support/ClaudeCode")
    elif sys.platform == "win32":
        base = Path(os.environ.get("ProgramFiles", r"C:\Program Files")) / "ClaudeCode"
    else:
        base = Path("/etc/claude-code")
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
        platform = next((os.environ[v].strip() for v in PLATFORM_ENV_VARS if os.environ.get(v)), "")
    root = _platform_dir(platform, home) if platform != "claude-code" else None
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


def _require_security() -> bool:
    values = (os.environ.get(v, "").strip().lower() for v in REQUIRE_ENV_VARS)
    return any(v in ("1", "true", "yes", "on") for v in values)


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
    strict = _require_security() if fail_closed is None else fail_closed
    project = Path(os.fspath(project_dir))
    rules: list[Rule] = []
    sources: list[SettingsSource] = []
    warnings: list[str] = []
    try:
        project = Path(os.path.abspath(project))
        if platform is not None and platform not in _PLATFORM_ROOTS and platform != "claude-code":
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


# --------------------------------------------------------------------------- shell lexing


class _Word(NamedTuple):
    raw: str
    value: str
    redirect: bool  # a redirection operator, or the target of one


class _Segment(NamedTuple):
    """One simple command: its words as written and unquoted."""

    words: tuple[_Word, ...]

    @property
    def text(self) -> str:
        return " ".join(w.raw for w in self.words)


_LEADING_KEYWORDS = frozenset(
    {"if", "then", "else", "elif", "do", "while", "until", "!", "{", "}", "fi", "done", "esac"}
)
_REDIRECT_OPS = ("<<<", "<<-", "<<", "<>", "<&", "<", ">>", ">&", ">|", ">")
_TARGET_OPS = frozenset({*_REDIRECT_OPS, "&>", "&>>"})
_WORD_END = frozenset(" \t\r\n;&|<>()")
_FLAT_SPLIT = re.compile(r"\$\(|[<>]\(|[`(){}\n\r;&|]")


class _Lexer:
    """One pass over shell text; appends the segments it finds, nested ones too, to ``out``.

    Not a shell parser: it knows just enough syntax to find every place where a command
    starts. With ``emit=False`` (arithmetic) its own words are not commands, but the
    substitutions inside are.
    """

    def __init__(self, text: str, out: list[_Segment], depth: int, emit: bool = True) -> None:
        self.s = text
        self.n = len(text)
        self.out = out
        self.depth = depth
        self.emit = emit
        self.words: list[_Word] = []
        self.raw: list[str] = []
        self.val: list[str] = []
        self.started = False
        self.redirect = False
        self.expect_target = False
        self.heredocs: list[tuple[str, bool, bool]] = []
        self.line_start = len(out)

    # -- building words and segments

    def add(self, raw: str, value: str | None = None) -> None:
        self.raw.append(raw)
        self.val.append(raw if value is None else value)
        self.started = True

    def end_word(self) -> None:
        if not self.started:
            return
        value = "".join(self.val)
        redirect = self.redirect or self.expect_target
        self.expect_target = self.redirect and value.lstrip("0123456789") in _TARGET_OPS
        self.words.append(_Word("".join(self.raw), value, redirect))
        self.raw, self.val = [], []
        self.started = self.redirect = False

    def end_segment(self) -> None:
        self.end_word()
        self.expect_target = False
        words, self.words = self.words, []
        i = 0
        while i < len(words) and words[i].raw in _LEADING_KEYWORDS:
            i += 1
        if i < len(words) and self.emit:
            self.out.append(_Segment(tuple(words[i:])))

    def nested(self, text: str, emit: bool = True) -> None:
        if not text.strip():
            return
        if self.depth >= MAX_DEPTH:
            # Defense in depth: past this nesting, split on every operator and bracket,
            # quotes or not, so a deep command is over-split rather than unread.
            for piece in _FLAT_SPLIT.split(text):
                words = tuple(_Word(w, w, False) for w in piece.split())
                if words and self.emit:
                    self.out.append(_Segment(words))
            return
        _Lexer(text, self.out, self.depth + 1, emit).run()

    # -- skipping over quoted and nested text

    def closing_paren(self, open_at: int) -> int:
        """Index of the ``)`` closing the ``(`` at ``open_at``, or -1.

        Iterative, with an explicit stack of open parentheses and double quotes, so no
        nesting depth can exhaust the interpreter's recursion limit.
        """
        s, n, i = self.s, self.n, open_at
        stack: list[str] = []
        while i < n:
            c = s[i]
            if c == "\\":
                i += 2
                continue
            if c == "`":
                j = self.closing_backtick(i)
                i = n if j < 0 else j + 1
                continue
            if stack and stack[-1] == '"':
                if c == '"':
                    stack.pop()
                elif s.startswith("$(", i):
                    stack.append("(")
                    i += 1
            elif c == "'":
                j = s.find("'", i + 1)
                i = n if j < 0 else j
            elif c == '"':
                stack.append('"')
            elif c == "(":
                stack.append("(")
            elif c == ")":
                if stack:
                    stack.pop()
                if not stack:
                    return i
            i += 1
        return -1

    def closing_backtick(self, at: int) -> int:
        """Index of the backtick closing the one at ``at``, or -1."""
        i = at + 1
        while i < self.n:
            if self.s[i] == "\\":
                i += 2
            elif self.s[i] == "`":
                return i
            else:
                i += 1
        return -1

    def substitution(self, at: int) -> int:
        """``$(``, ``$((``, ``<(`` or ``>(`` at ``at``: check the inside; index past the end."""
        arithmetic = self.s.startswith("$((", at)
        close = self.closing_paren(at + 1)
        end = self.n if close < 0 else close
        inner = self.s[at + 2 : end]
        if arithmetic and inner.startswith("(") and inner.endswith(")"):
            inner = inner[1:-1]
        self.nested(inner, emit=not arithmetic)
        return self.n if close < 0 else close + 1

    def backtick(self, at: int) -> int:
        close = self.closing_backtick(at)
        inner = self.s[at + 1 : self.n if close < 0 else close]
        self.nested(inner.replace("\\`", "`").replace("\\\\", "\\"))
        return self.n if close < 0 else close + 1

    def dquoted(self, i: int, value: list[str] | None, heredoc: bool = False) -> int:
        """Scan double-quoted text (or a here-document body) from ``i``.

        Substitutions inside are checked as commands. Returns the index past the closing
        quote, or the end of the text.
        """
        s = self.s
        while i < self.n:
            c = s[i]
            if c == "\\" and i + 1 < self.n:
                nxt = s[i + 1]
                if nxt != "\n" and value is not None:
                    value.append(nxt if nxt in '"\\$`' else c + nxt)
                i += 2
                continue
            if c == '"' and not heredoc:
                return i + 1
            if s.startswith("$(", i):
                j = self.substitution(i)
            elif c == "`":
                j = self.backtick(i)
            else:
                j = i + 1
            if value is not None:
                value.append(s[i:j])
            i = j
        return self.n

    # -- the main loop

    def run(self) -> None:
        s, n = self.s, self.n
        i = 0
        while i < n:
            c = s[i]
            nxt = s[i + 1] if i + 1 < n else ""
            if c == "\\":
                if nxt == "\n":
                    i += 2  # line continuation
                else:
                    self.add(c + nxt, nxt or c)
                    i += 2
            elif c == "'":
                j = s.find("'", i + 1)
                end = n if j < 0 else j + 1
                self.add(s[i:end], s[i + 1 : n if j < 0 else j])
                i = end
            elif c == '"':
                value: list[str] = []
                j = self.dquoted(i + 1, value)
                self.add(s[i:j], "".join(value))
                i = j
            elif c == "`":
                j = self.backtick(i)
                self.add(s[i:j])
                i = j
            elif nxt == "(" and c in "$<>":
                j = self.substitution(i)
                self.add(s[i:j])
                i = j
            elif c == "#" and not self.started:
                j = s.find("\n", i)
                i = n if j < 0 else j
            elif c in "\r\n":
                self.end_segment()
                i = self.heredoc_bodies(i + 1)
                self.line_start = len(self.out)
            elif c in " \t":
                self.end_word()
                i += 1
            elif c in ";()":
                self.end_segment()
                i += 1
            elif c == "&" and nxt == ">":
                self.end_word()
                self.redirect = True
                op = "&>>" if s.startswith("&>>", i) else "&>"
                self.add(op)
                i += len(op)
            elif c == "&":
                self.end_segment()
                i += 2 if nxt == "&" else 1
            elif c == "|" and self.redirect and "".join(self.val).endswith(">"):
                self.add(c)  # >| (clobber)
                i += 1
            elif c == "|":
                self.end_segment()
                i += 2 if nxt in ("|", "&") else 1
            elif c in "<>":
                i = self.redirection(i)
            else:
                self.add(c)
                i += 1
        self.end_segment()

    def redirection(self, i: int) -> int:
        word = "".join(self.val)
        if self.started and not (word.isdigit() or (word.startswith("{") and word.endswith("}"))):
            self.end_word()
        self.redirect = True
        op = next(o for o in _REDIRECT_OPS if self.s.startswith(o, i))
        self.add(op)
        i += len(op)
        if op in ("<<", "<<-"):
            while i < self.n and self.s[i] in " \t":
                i += 1
            start = i
            while i < self.n and self.s[i] not in _WORD_END:
                if self.s[i] in "'\"":
                    j = self.s.find(self.s[i], i + 1)
                    i = self.n if j < 0 else j + 1
                else:
                    i += 1
            delim_raw = self.s[start:i]
            quoted = any(q in delim_raw for q in "'\"\\")
            delim = delim_raw.replace("'", "").replace('"', "").replace("\\", "")
            self.add(delim_raw)
            self.heredocs.append((delim, op == "<<-", quoted))
        return i

    def heredoc_bodies(self, i: int) -> int:
        """Consume the here-documents announced on the line that just ended."""
        pending, self.heredocs = self.heredocs, []
        feeds_shell: bool | None = None
        for delim, strip_tabs, quoted in pending:
            lines: list[str] = []
            while i < self.n:
                j = self.s.find("\n", i)
                line = self.s[i : self.n if j < 0 else j]
                i = self.n if j < 0 else j + 1
                if (line.lstrip("\t") if strip_tabs else line).rstrip("\r") == delim:
                    break
                lines.append(line)
            if not lines:
                continue
            body = "\n".join(lines)
            if feeds_shell is None:
                feeds_shell = _feeds_shell(self.out[self.line_start :])
            if feeds_shell:
                self.nested(body)
            elif not quoted:
                _Lexer(body, self.out, self.depth + 1).dquoted(0, None, heredoc=True)
        return i


def _feeds_shell(segments: Sequence[_Segment]) -> bool:
    """Does one of these commands run a shell that would read a script on stdin?"""
    return any(
        words and os.path.basename(words[0]) in _SHELLS
        for seg in segments
        for words in _peeled(_command_words(seg))
    )


def _lex(command: str, depth: int = 0) -> list[_Segment]:
    out: list[_Segment] = []
    _Lexer(command, out, depth).run()
    return out


def split_command(command: str) -> tuple[str, ...]:
    """The simple commands a shell would run for ``command``, as written.

    Includes the commands inside ``$(...)``, backticks, process substitutions and here-
    documents fed to a shell; leading keywords (``if``, ``then``, ``do``, ``!``, ``{``)
    are dropped. ``echo hello && sudo rm -rf /`` gives ``("echo hello", "sudo rm -rf /")``.
    """
    return tuple(seg.text for seg in _lex(command))


# --------------------------------------------------------------------------- segment readings

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "busybox"})
_SHELL_OPTION_ARGS = frozenset({"-o", "+o", "-O", "+O"})


def _options(text: str) -> frozenset[str]:
    return frozenset(text.split())


# wrapper -> (options that take a value, positional arguments before the command)
_WRAPPERS: dict[str, tuple[frozenset[str], int]] = {
    "sudo": (
        _options(
            "-u -g -C -D -h -p -r -t -U -T --user --group --chdir --prompt --role --type"
            " --other-user --host --close-from --command-timeout"
        ),
        0,
    ),
    "doas": (_options("-u -C"), 0),
    "env": (_options("-u -C -S --unset --chdir --split-string"), 0),
    "nice": (_options("-n --adjustment"), 0),
    "nohup": (frozenset(), 0),
    "timeout": (_options("-s -k --signal --kill-after"), 1),
    "time": (_options("-f -o --format --output"), 0),
    "command": (frozenset(), 0),
    "builtin": (frozenset(), 0),
    "exec": (_options("-a"), 0),
    "stdbuf": (_options("-i -o -e --input --output --error"), 0),
    "ionice": (_options("-c -n -p -P -u --class --classdata"), 0),
    "watch": (_options("-n --interval"), 0),
    "unbuffer": (frozenset(), 0),
    "xargs": (
        _options(
            "-I -L -n -P -s -d -E -a --arg-file --delimiter --max-args --max-procs"
            " --max-chars --replace --eof --max-lines --process-slot-var"
        ),
        0,
    ),
}
# interpreter -> (language, options whose value is a program)
_INTERPRETERS: dict[str, tuple[str, frozenset[str]]] = {
    "python": ("python", _options("-c")),
    "node": ("javascript", _options("-e --eval -p --print")),
    "bun": ("javascript", _options("-e --eval -p --print")),
    "deno": ("javascript", _options("eval")),
    "ruby": ("ruby", _options("-e")),
    "perl": ("perl", _options("-e -E")),
    "php": ("php", _options("-r")),
}
_FIND_EXEC = _options("-exec -execdir -ok -okdir -x --exec -X --exec-batch")
_ENV_SPLIT = _options("-S --split-string")


def _command_words(seg: _Segment) -> list[str]:
    """Unquoted words without redirections and leading ``VAR=value`` assignments."""
    words = [w.value for w in seg.words if not w.redirect]
    i = 0
    while i < len(words) - 1 and _ASSIGNMENT.match(words[i]):
        i += 1
    return words[i:]


def _peel(words: list[str]) -> list[str] | None:
    """``sudo -u x rm -rf /`` -> ``rm -rf /``; ``None`` when the command is no wrapper."""
    name = os.path.basename(words[0])
    spec = _WRAPPERS.get(name)
    if spec is None or (name == "command" and words[1:2] in (["-v"], ["-V"])):
        return None
    with_value, positional = spec
    i = 1
    while i < len(words):
        w = words[i]
        if w == "--":
            i += 1
            break
        if w.startswith("-") and len(w) > 1:
            i += 2 if w in with_value else 1
        elif name == "env" and _ASSIGNMENT.match(w):
            i += 1
        elif positional:
            positional -= 1
            i += 1
        else:
            break
    return words[i:] or None


def _peeled(words: list[str]) -> list[list[str]]:
    """``words`` and each command left after peeling one more wrapper off it."""
    out = [words] if words else []
    while out and len(out) <= 8:
        inner = _peel(out[-1])
        if inner is None:
            break
        out.append(inner)
    return out


def _readings(seg: _Segment) -> tuple[str, ...]:
    """Every text a deny or ask rule is tried on, for one segment."""
    seen = dict.fromkeys([seg.text, " ".join(w.value for w in seg.words)])
    for words in _peeled(_command_words(seg)):
        seen[" ".join(words)] = None
        if "/" in words[0]:
            seen[" ".join([os.path.basename(words[0]), *words[1:]])] = None
    return tuple(t for t in seen if t)


def _inner_scripts(seg: _Segment) -> list[tuple[str, str]]:
    """(language, code) this segment runs: ``sh -c``, ``eval``, ``python -c``, ``-exec`` ..."""
    found: list[tuple[str, str]] = []
    for words in _peeled(_command_words(seg)):
        name, args = os.path.basename(words[0]), words[1:]
        if name in _SHELLS or name in ("su", "runuser"):
            found.extend(("shell", code) for code in _shell_c_scripts(name, args))
        elif name == "eval" and args:
            found.append(("shell", " ".join(args)))
        elif name == "env":
            found.extend(("shell", v) for v in _option_values(args, _ENV_SPLIT))
        elif name == "watch":
            inner = _peel(words)
            found.extend([("shell", " ".join(inner))] if inner else [])
        elif name in ("find", "fd"):
            found.extend(("shell", code) for code in _find_exec(args))
        else:
            spec = _INTERPRETERS.get(re.sub(r"[\d.]+$", "", name))
            if spec is not None:
                language, options = spec
                found.extend((language, v) for v in _option_values(args, options))
    return found


def _shell_c_scripts(name: str, args: list[str]) -> list[str]:
    if name in ("su", "runuser"):
        out = [a.split("=", 1)[1] for a in args if a.startswith("--command=")]
        return out + [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-c", "--command")]
    has_c = False
    skip_next = False
    for a in args:
        if skip_next:
            skip_next = False
        elif a in _SHELL_OPTION_ARGS:
            skip_next = True
        elif a.startswith("-") and not a.startswith("--") and "c" in a[1:]:
            has_c = True
        elif not a.startswith(("-", "+")):
            return [a] if has_c else []
    return []


def _find_exec(args: list[str]) -> list[str]:
    out: list[str] = []
    for i, a in enumerate(args):
        if a in _FIND_EXEC:
            cmd: list[str] = []
            for b in args[i + 1 :]:
                if b in (";", "+"):
                    break
                cmd.append(b)
            if cmd:
                out.append(" ".join(_quote(w) for w in cmd))
    return out


def _option_values(args: list[str], options: frozenset[str]) -> list[str]:
    out = [args[i + 1] for i, a in enumerate(args[:-1]) if a in options]
    return out + [a.split("=", 1)[1] for a in args if a.split("=", 1)[0] in options and "=" in a]


_SAFE_WORD = re.compile(r"[\w@%+=:,./-]+")
_PLACEHOLDER = "$ARG"


def _quote(word: str) -> str:
    """Shell-quote ``word`` (the non-literal placeholder stays bare)."""
    if word == _PLACEHOLDER or _SAFE_WORD.fullmatch(word):
        return word
    return "'" + word.replace("'", "'\"'\"'") + "'"


class _Part(NamedTuple):
    segment: _Segment
    readings: tuple[str, ...]


def _parts(command: str, depth: int = 0) -> list[_Part]:
    """Every segment of ``command`` with its readings, the scripts it runs included."""
    out: list[_Part] = []
    for seg in _lex(command, depth):
        out.append(_Part(seg, _readings(seg)))
        if depth >= MAX_DEPTH:
            continue
        for language, code in _inner_scripts(seg):
            if language == "shell":
                out.extend(_parts(code, depth + 1))
            else:
                for embedded in extract_shell_commands(language, code):
                    out.extend(_parts(embedded, depth + 1))
    return out


# --------------------------------------------------------------------------- command rules


class _CommandPattern(NamedTuple):
    """A compiled ``Bash(...)`` specifier: ``any``, ``prefix`` or ``glob``."""

    kind: str
    parts: tuple[str, ...]

    def matches(self, text: str) -> bool:
        if self.kind == "any":
            return True
        if self.kind == "prefix":
            prefix = self.parts[0]
            return text == prefix or text.startswith(prefix + " ")
        return _wildcard_match(self.parts, text)


def _wildcard_match(parts: tuple[str, ...], text: str) -> bool:
    """Match a ``*``-only glob (split on ``*``) in linear time: no regex backtracking."""
    if len(parts) == 1:
        return text == parts[0]
    first, last = parts[0], parts[-1]
    pos, end = len(first), len(text) - len(last)
    if end < pos or not text.startswith(first) or not text.endswith(last):
        return False
    for middle in parts[1:-1]:
        found = text.find(middle, pos, end)
        if found < 0:
            return False
        pos = found + len(middle)
    return True


@lru_cache(maxsize=1024)
def _command_pattern(specifier: str | None, fold: bool) -> _CommandPattern:
    if specifier is None:
        return _CommandPattern("any", ())
    spec = " ".join(specifier.split())
    spec = spec.lower() if fold else spec
    if not spec.strip("* "):
        return _CommandPattern("any", ())
    if spec.endswith(":*"):
        return _CommandPattern("prefix", (spec[:-2].rstrip(),))
    if spec.endswith(" *") and spec.count("*") == 1:
        # As in Claude Code, a lone trailing " *" is optional: "ls *" also matches "ls".
        return _CommandPattern("prefix", (spec[:-2],))
    return _CommandPattern("glob", tuple(spec.split("*")))


def _matches_command(rule: Rule, text: str, fold: bool) -> bool:
    return _command_pattern(rule.specifier, fold).matches(text.lower() if fold else text)


_WRITE_OP = re.compile(r"\d*(?:>>?|>\||&>>?|<>)")


def _writes_file(seg: _Segment) -> bool:
    """Does the segment send output into a file (not ``/dev/null``, not a descriptor)?"""
    words = seg.words
    for i, w in enumerate(words):
        m = _WRITE_OP.match(w.value) if w.redirect else None
        if m is None:
            continue
        target = w.value[m.end() :]
        if not target and i + 1 < len(words):
            target = words[i + 1].value
        if target and not target.startswith("&") and target != "/dev/null":
            return True
    return False


def _evaluate_command(
    policy: Policy, command: str, subject: Subject
) -> tuple[Verdict, list[RuleMatch], list[str]]:
    fold = policy.case_insensitive_commands
    parts = _parts(command)
    rules = policy.rules_for("Bash")
    matched: list[list[str]] = [[] for _ in rules]
    first: dict[Decision, tuple[Rule, _Part, str]] = {}
    allowed = [False] * len(parts)
    for pi, part in enumerate(parts):
        text = part.segment.text
        may_allow = not _writes_file(part.segment)
        for ri, rule in enumerate(rules):
            hit: str | None
            if rule.kind is Decision.ALLOW:
                hit = text if may_allow and _matches_command(rule, text, fold) else None
                allowed[pi] = allowed[pi] or hit is not None
            else:
                hit = next((r for r in part.readings if _matches_command(rule, r, fold)), None)
            if hit is not None:
                matched[ri].append(text)
                first.setdefault(rule.kind, (rule, part, hit))
    considered = [
        RuleMatch(r, tuple(dict.fromkeys(m))) for r, m in zip(rules, matched, strict=True)
    ]
    segments = [p.segment.text for p in parts]
    decided: Decision | None = next((k for k in (Decision.DENY, Decision.ASK) if k in first), None)
    if decided is None and parts and all(allowed):
        decided = Decision.ALLOW
    if decided is None:
        return Verdict(Decision.NONE, subject), considered, segments
    rule, part, hit = first[decided]
    return Verdict(decided, subject, rule, part.segment.text, hit), considered, segments


def _fail_closed(policy: Policy, subject: Subject) -> Verdict | None:
    if policy.fail_closed_engaged:
        bad = "; ".join(f"{s.path}: {s.error}" for s in policy.sources if s.error)
        return Verdict(Decision.DENY, subject, reason=f"settings could not be loaded ({bad})")
    return None


_FLAT_FALLBACK = re.compile(r"\$\(|[<>]\(|[`(){}\n\r;&|\"']")


def _flat_deny(policy: Policy, text: str) -> tuple[Rule, str] | None:
    """A parser-free deny check of ``text``, for when the real check failed.

    Splits on every operator, bracket and quote, so a deny rule still fires on a
    command that broke the lexer. It may over-match; it is never the only check.
    """
    fold = policy.case_insensitive_commands
    denies = [r for r in policy.rules_for("Bash") if r.kind is Decision.DENY]
    for piece in _FLAT_FALLBACK.split(text) if denies else ():
        for words in _peeled(piece.split()):
            reading = " ".join(words)
            rule = next((r for r in denies if _matches_command(r, reading, fold)), None)
            if rule is not None:
                return rule, reading
    return None


def _internal_error(
    policy: Policy, subject: Subject, exc: Exception, text: object = None
) -> Verdict:
    """Our own bug: deny rules still apply (crudely), otherwise fail open (spec 6.7)."""
    reason = f"internal error in the policy check: {exc!r}"
    try:
        hit = _flat_deny(policy, text) if isinstance(text, str) else None
    except Exception:  # the fallback must not fail either
        hit = None
    if hit is not None:
        rule, reading = hit
        embedded = reading if subject is Subject.EMBEDDED else None
        return Verdict(Decision.DENY, subject, rule, reading, reading, embedded, reason)
    decision = Decision.DENY if policy.fail_closed else Decision.NONE
    return Verdict(decision, subject, reason=reason)


def check_command(policy: Policy, command: str, *, subject: Subject = Subject.COMMAND) -> Verdict:
    """Decide on a shell command with the ``Bash(...)`` rules. Never raises.

    Deny if a segment, in any reading, matches a deny rule; else ask if one matches an
    ask rule; else allow if every segment as written matches an allow rule; else NONE.
    ``subject=Subject.SHELL_CODE`` only changes the wording of the deny message.
    """
    blocked = _fail_closed(policy, subject)
    if blocked is not None:
        return blocked
    try:
        return _evaluate_command(policy, command, subject)[0]
    except Exception as exc:  # never raise: see _internal_error
        return _internal_error(policy, subject, exc, command)


def explain_command(policy: Policy, command: str) -> Explanation:
    """`check_command`'s verdict with the segments and every Bash rule's matches."""
    verdict = check_command(policy, command)
    try:
        _, considered, segments = _evaluate_command(policy, command, Subject.COMMAND)
    except Exception:  # the verdict already carries the error
        considered, segments = [], []
    return Explanation(
        command,
        Subject.COMMAND,
        tuple(segments),
        verdict,
        tuple(considered),
        policy.sources,
        policy.warnings,
    )


# --------------------------------------------------------------------------- shell escapes in code

_Q_TRIPLE_D = '"""[\\s\\S]*?"""'
_Q_TRIPLE_S = "'''[\\s\\S]*?'''"
_Q_DOUBLE = r'"(?:[^"\\\n]|\\.)*"'
_Q_SINGLE = r"'(?:[^'\\\n]|\\.)*'"
_Q_BACK = r"`(?:[^`\\]|\\.)*`"
_STRING = (
    "([rRbBuUfF]{0,2})(" + "|".join((_Q_TRIPLE_D, _Q_TRIPLE_S, _Q_DOUBLE, _Q_SINGLE, _Q_BACK)) + ")"
)
_BACKTICKS = r"`((?:[^`\\]|\\.)*)`"

# language -> [(regex of a call up to its "(" or its first argument, style)]. Styles:
# "command": the first string argument is a command line; "argv": literal arguments
# form an argv (a lone string is a command line); "argv-1": the same after one argument;
# "bare": like argv, arguments without parentheses up to the end of the statement;
# "join": strings joined with spaces (C#); "rust": Command::new(..).arg(..).args(..);
# "literal": group 1 of the match is the command line (backticks, %x(), qx{}).
_CALLS: dict[str, tuple[tuple[str, str], ...]] = {
    "python": (
        (r"\bos\.(?:system|popen)\s*\(", "command"),
        (
            r"\b(?:run|call|Popen|check_output|check_call|getoutput|getstatusoutput|spawn"
            r"|create_subprocess_shell|create_subprocess_exec)\s*\(",
            "argv",
        ),
    ),
    "javascript": (
        (r"\b(?:exec|execSync)\s*\(", "command"),
        (r"\b(?:execFile|execFileSync|spawn|spawnSync|execa|execaSync)\s*\(", "argv"),
        (r"\bBun\.spawn(?:Sync)?\s*\(", "argv"),
        (r"(?<![\w$])\$\s*" + _BACKTICKS, "literal"),
    ),
    "ruby": (
        (r"(?<![\w.])(?:system|exec|spawn)\s*\(", "argv"),
        (r"(?<![\w.])(?:system|exec|spawn)[ \t]+(?=[\"'])", "bare"),
        (r"\b(?:IO\.popen|Open3\.(?:capture2e?|capture3|popen2e?|popen3))\s*\(", "argv"),
        (_BACKTICKS, "literal"),
        (r"%x\(((?:[^()\\]|\\.)*)\)", "literal"),
        (r"%x\{((?:[^{}\\]|\\.)*)\}", "literal"),
    ),
    "go": (
        (r"\bexec\.Command\s*\(", "argv"),
        (r"\bexec\.CommandContext\s*\(", "argv-1"),
    ),
    "php": (
        (r"(?<![\w>:$])(?:shell_exec|exec|system|passthru|popen)\s*\(", "command"),
        (r"(?<![\w>:$])proc_open\s*\(", "argv"),
        (_BACKTICKS, "literal"),
    ),
    "rust": ((r"\bCommand::new\s*\(", "rust"),),
    "perl": (
        (r"(?<![\w>$])(?:system|exec)\s*\(", "argv"),
        (r"(?<![\w>$])(?:system|exec)[ \t]+(?=[\"'])", "bare"),
        (_BACKTICKS, "literal"),
        (r"\bqx\s*\{((?:[^{}\\]|\\.)*)\}", "literal"),
        (r"\bqx\s*\(((?:[^()\\]|\\.)*)\)", "literal"),
        (r"\bqx\s*/((?:[^/\\]|\\.)*)/", "literal"),
    ),
    "r": ((r"\b(?:system|system2|shell)\s*\(", "argv"),),
    "elixir": (
        (r"\bSystem\.(?:cmd|shell)\s*\(", "argv"),
        (r":os\.cmd\s*\(", "argv"),
    ),
    "csharp": ((r"\b(?:Process\.Start|new\s+ProcessStartInfo)\s*\(", "join"),),
}
_CALLS["typescript"] = _CALLS["javascript"]
_LANGUAGES = {"js": "javascript", "ts": "typescript", "py": "python", "rb": "ruby", "cs": "csharp"}
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0"}


@cache
def _call_patterns(language: str) -> tuple[tuple[re.Pattern[str], str], ...]:
    return tuple((re.compile(p), style) for p, style in _CALLS.get(language, ()))


@lru_cache(maxsize=1)
def _string_re() -> re.Pattern[str]:
    return re.compile(_STRING)


@lru_cache(maxsize=1)
def _array_re() -> re.Pattern[str]:
    return re.compile(r"(&\s*|vec!\s*|c\s*(?=\()|new\s*(?:\w+\s*)?\[\s*\]\s*(?=\{))?([\[({])")


def _unquote(match: re.Match[str]) -> str:
    flags, literal = match.group(1).lower(), match.group(2)
    size = 3 if literal[:3] in ('"""', "'''") else 1
    inner = literal[size:-size]
    if "r" in flags or literal[0] == "`":
        return inner
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), inner, flags=re.S)


def _split_arguments(code: str, start: int, bare: bool = False) -> tuple[list[str], int]:
    """Top-level argument texts of a call starting at ``start`` (just past its ``(``).

    Stops at the unmatched closing bracket (``bare``: at ``;`` or a newline). Returns
    the argument texts and the index past the end.
    """
    spans: list[str] = []
    depth, i, begin, n = 0, start, start, len(code)
    string_re = _string_re()
    while i < n:
        c = code[i]
        if c in "\"'`":
            m = string_re.match(code, i)
            if m is not None:
                i = m.end()
            else:  # unterminated: the rest of the line (of the code, for a backtick)
                j = -1 if c == "`" else code.find("\n", i)
                i = n if j < 0 else j
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                spans.append(code[begin:i])
                return [s for s in spans if s.strip()], i + 1
            depth -= 1
        elif c == "," and depth == 0:
            spans.append(code[begin:i])
            begin = i + 1
        elif bare and depth == 0 and c in ";\n":
            break
        i += 1
    spans.append(code[begin:i])
    return [s for s in spans if s.strip()], i


_KEYWORD_ARG = re.compile(r"([A-Za-z_]\w*)\s*(?:=(?![=>])|:(?!:))\s*")


def _classify(span: str, depth: int = 0) -> tuple[str, list[str]]:
    """``("str", [value])``, ``("list", values)``, ``("kw", [])`` or ``("expr", [])``."""
    text = span.strip()
    if depth > MAX_DEPTH:
        return "expr", []
    m = _string_re().fullmatch(text)
    if m is not None:
        return "str", [_unquote(m)]
    kw = _KEYWORD_ARG.match(text)
    if kw is not None:
        if kw.group(1) in ("args", "arguments"):
            kind, values = _classify(text[kw.end() :], depth + 1)
            return ("list", values) if kind in ("str", "list") else ("kw", [])
        return "kw", []
    words = re.fullmatch(r"%[wW]([\[({<])(.*)[\])}>]", text, re.S)
    if words is not None:
        return "list", words.group(2).split()
    arr = _array_re().match(text)
    if arr is not None and (arr.group(1) or arr.group(2) == "["):
        inner, end = _split_arguments(text, arr.end())
        if end == len(text):
            values = []
            for element in inner:
                kind, found = _classify(element, depth + 1)
                values.extend(found if kind == "str" else [_PLACEHOLDER] if kind == "expr" else [])
            return "list", values
    if text.startswith("{"):
        return "kw", []
    return "expr", []


def _argv_command(args: list[str]) -> str | None:
    """The command line an argv-style call stands for, ``None`` if it is not literal."""
    classified = [_classify(a) for a in args]
    if not classified or classified[0][0] not in ("str", "list"):
        return None
    kind, words = classified[0]
    if kind == "list":
        return " ".join(_quote(w) for w in words) if any(w != _PLACEHOLDER for w in words) else None
    words = list(words)
    rest = classified[1:]
    positional = []
    for item in rest:
        if item[0] == "kw":
            break
        positional.append(item)
    if not positional:
        return words[0]  # a lone string is a command line (shell=True, system("..."))
    for kind, values in positional:
        if kind == "list":
            words.extend(values)
            break
        words.extend(values if kind == "str" else [_PLACEHOLDER])
    return " ".join(_quote(w) for w in words)


_RUST_CHAIN = re.compile(r"\s*\.\s*(args?)\s*\(")


def _rust_command(code: str, end: int, args: list[str]) -> tuple[str | None, int]:
    classified = [_classify(a) for a in args]
    if not classified or classified[0][0] != "str":
        return None, end
    words = list(classified[0][1])
    m = _RUST_CHAIN.match(code, end)
    while m is not None:
        more, end = _split_arguments(code, m.end())
        for kind, values in (_classify(a) for a in more[:1]):
            words.extend(values if kind in ("str", "list") else [_PLACEHOLDER])
        m = _RUST_CHAIN.match(code, end)
    return " ".join(_quote(w) for w in words), end


def _call_command(code: str, match: re.Match[str], style: str) -> tuple[str | None, int]:
    """The command line of one call site, and the index past the call."""
    if style == "literal":
        return match.group(1), match.end()
    args, end = _split_arguments(code, match.end(), bare=style == "bare")
    if style == "rust":
        return _rust_command(code, end, args)
    if style == "command":
        kind, values = _classify(args[0]) if args else ("expr", [])
        return (values[0] if kind == "str" else None), end
    if style == "join":
        strings = [v[0] for k, v in map(_classify, args) if k == "str"]
        return (" ".join(strings) if strings else None), end
    return _argv_command(args[1:] if style == "argv-1" else args), end


class TooComplexError(ValueError):
    """The code would take too long to analyse precisely (see `extract_shell_commands`)."""


def extract_shell_commands(language: str, code: str) -> tuple[str, ...]:
    """The shell commands embedded in ``code`` of a non-shell ``language``, in order.

    A call taking a command line (``os.system("...")``) gives that line; an argv call
    (``subprocess.run(["rm", "-rf", p])``, ``spawn("rm", [...])``, ``exec.Command(...)``)
    gives its words quoted and joined, with ``$ARG`` for a non-literal argument.

    Raises:
        TooComplexError: the call sites overlap so much (thousands of unterminated or
            nested calls) that scanning them would take more than a few passes over the
            code; `check_code` then falls back to its crude check.
    """
    lang = language.lower()
    lang = _LANGUAGES.get(lang, lang)
    found: list[tuple[int, str]] = []
    # Defense in depth: bounded work, so hostile code cannot stall the hook into a timeout.
    budget = 8 * len(code) + 65_536
    for pattern, style in _call_patterns(lang):
        for m in pattern.finditer(code):
            text, end = _call_command(code, m, style)
            budget -= end - m.start()
            if budget < 0:
                raise TooComplexError("too many overlapping call sites to analyse")
            if text and text.strip():
                found.append((m.start(), text))
    found.sort(key=lambda item: item[0])
    return tuple(dict.fromkeys(text for _, text in found))


def check_code(policy: Policy, language: str, code: str) -> Verdict:
    """Decide on code for the sandbox. Never raises.

    Shell code is one command (`check_command`, subject ``SHELL_CODE``). For other
    languages each embedded shell command (`extract_shell_commands`) is checked: the
    first deny decides, else the first ask. They never yield ALLOW: an allow rule for
    the commands says nothing about the rest of the program.
    """
    if language.lower() in SHELL_LANGUAGES:
        return check_command(policy, code, subject=Subject.SHELL_CODE)
    blocked = _fail_closed(policy, Subject.EMBEDDED)
    if blocked is not None:
        return blocked
    try:
        ask: Verdict | None = None
        for embedded in extract_shell_commands(language, code):
            verdict = _evaluate_command(policy, embedded, Subject.EMBEDDED)[0]
            if verdict.decision is Decision.DENY or (verdict.decision is Decision.ASK and not ask):
                verdict = Verdict(
                    verdict.decision,
                    Subject.EMBEDDED,
                    verdict.rule,
                    verdict.segment,
                    verdict.matched_as,
                    embedded,
                )
                if verdict.denied:
                    return verdict
                ask = verdict
        return ask or Verdict(Decision.NONE, Subject.EMBEDDED)
    except Exception as exc:  # never raise: see _internal_error
        return _internal_error(policy, Subject.EMBEDDED, exc, code)


# --------------------------------------------------------------------------- file paths

_DRIVE = re.compile(r"[A-Za-z]:/")


def _is_abs(path: str) -> bool:
    return path.startswith("/") or bool(_DRIVE.match(path))


def _norm(path: str) -> str:
    """Lexical normalisation with ``/`` separators: ``.`` and ``..`` resolved, no symlinks."""
    drive = path[:2] if _DRIVE.match(path) else ""
    rest = os.path.normpath(path[len(drive) :]).replace("\\", "/")
    if rest.startswith("//"):
        rest = "/" + rest.lstrip("/")
    return drive + rest


def _real(path: str) -> str:
    if _DRIVE.match(path) and os.sep == "/":
        return path
    return os.path.realpath(path).replace("\\", "/")


def _glob_regex(glob: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return "".join(out)


def _literal_dir(abs_glob: str) -> str:
    """The part of an absolute glob before its first wildcard, cut at a ``/``."""
    cut = min((i for i in (abs_glob.find("*"), abs_glob.find("?")) if i >= 0), default=-1)
    if cut < 0:
        return abs_glob
    return abs_glob[: abs_glob.rfind("/", 0, cut)] or "/"


def _anchored_globs(rule: Rule, project: str, home: str) -> list[str]:
    """The absolute globs a ``Read(...)`` rule stands for (``**/x`` stays unanchored)."""
    glob = (rule.specifier or "**").replace("\\", "/")
    if glob.endswith("/"):
        glob += "**"
    if glob.startswith("//"):
        bases = [glob[1:]]
    elif glob == "~" or glob.startswith("~/"):
        bases = [home + glob[1:]]
    elif _DRIVE.match(glob):
        bases = [glob]
    elif glob.startswith("/"):
        # Claude Code: relative to the settings file's root; upstream: absolute. Both.
        in_project = rule.scope in (Scope.LOCAL, Scope.PROJECT)
        root = project if in_project else str(rule.source.parent).replace("\\", "/")
        bases = [glob, root.rstrip("/") + glob]
    else:
        relative = glob[2:] if glob.startswith("./") else glob
        if relative.startswith("**"):
            return [relative]
        bases = [project.rstrip("/") + "/" + relative]
    out: list[str] = []
    for base in map(_norm, bases):
        out.append(base)
        literal = _literal_dir(base)
        real = _real(literal)
        if real != literal:
            out.append(real.rstrip("/") + base[len(literal.rstrip("/")) :])
    return out


@lru_cache(maxsize=2048)
def _path_regex(glob: str, fold: bool) -> re.Pattern[str]:
    drive = glob[:2] if _DRIVE.match(glob) else ""
    body = re.escape(drive) + _glob_regex(glob[len(drive) :])
    return re.compile(body, re.S | (re.I if fold else 0))


def _candidates(path: str, project: str) -> list[str]:
    """``path`` made absolute: lexical (``..`` resolved) and real (symlinks followed)."""
    text = path.strip().replace("\\", "/")
    if text == "~" or text.startswith("~/"):
        text = os.path.expanduser("~").replace("\\", "/") + text[1:]
    absolute = text if _is_abs(text) else project.rstrip("/") + "/" + text
    lexical = _norm(absolute)
    return list(dict.fromkeys([lexical, _real(lexical), _real(absolute)]))


def _with_parents(path: str) -> list[str]:
    """``/a/b/c`` -> ``/a/b/c``, ``/a/b``, ``/a``: a rule on a directory covers its files."""
    out = [path]
    while True:
        parent = path.rsplit("/", 1)[0]
        if not parent or parent == path or parent.endswith(":"):
            return out
        out.append(parent)
        path = parent


def _evaluate_path(
    policy: Policy, path: str, project_dir: Path | str | None
) -> tuple[Verdict, list[RuleMatch], list[str]]:
    def absolute(directory: Path | str) -> str:
        return _norm(os.path.abspath(directory).replace("\\", "/"))

    # Rules are anchored at the project whose settings they come from; the path at the
    # directory the caller resolves relative paths against.
    project = absolute(policy.project_dir)
    base = project if project_dir is None else absolute(project_dir)
    home = os.path.expanduser("~").replace("\\", "/")
    fold = policy.case_insensitive_paths
    forms = _candidates(path, base)
    tested = [p for form in forms for p in _with_parents(form)]
    considered: list[RuleMatch] = []
    first: dict[Decision, tuple[Rule, str]] = {}
    for rule in policy.rules_for("Read"):
        regexes = [_path_regex(g, fold) for g in _anchored_globs(rule, project, home)]
        hits = [p for p in tested if any(rx.fullmatch(p) for rx in regexes)]
        considered.append(RuleMatch(rule, tuple(dict.fromkeys(hits))))
        if hits:
            first.setdefault(rule.kind, (rule, hits[0]))
    for kind in _KINDS:
        if kind in first:
            rule, hit = first[kind]
            return Verdict(kind, Subject.PATH, rule, hit, hit), considered, forms
    return Verdict(Decision.NONE, Subject.PATH), considered, forms


def check_path(
    policy: Policy, path: str | os.PathLike[str], project_dir: Path | str | None = None
) -> Verdict:
    """Decide on reading a file with the ``Read(...)`` rules. Never raises.

    Relative paths resolve against ``project_dir`` (default: the policy's project);
    relative rules stay anchored at the policy's project. The path is tried in its
    lexical form (``..`` resolved) and its real form (symlinks followed), and through its
    parent directories, so neither ``../`` nor a symlink gets past a rule. Deny, then
    ask, then allow, else NONE.
    """
    blocked = _fail_closed(policy, Subject.PATH)
    if blocked is not None:
        return blocked
    try:
        return _evaluate_path(policy, os.fspath(path), project_dir)[0]
    except Exception as exc:  # never raise: see _internal_error
        return _internal_error(policy, Subject.PATH, exc)


def explain_path(
    policy: Policy, path: str | os.PathLike[str], project_dir: Path | str | None = None
) -> Explanation:
    """`check_path`'s verdict with the resolved forms and every Read rule's matches."""
    verdict = check_path(policy, path, project_dir)
    try:
        _, considered, forms = _evaluate_path(policy, os.fspath(path), project_dir)
    except Exception:  # the verdict already carries the error
        considered, forms = [], []
    return Explanation(
        os.fspath(path),
        Subject.PATH,
        tuple(forms),
        verdict,
        tuple(considered),
        policy.sources,
        policy.warnings,
    )


def path_deny_check(policy: Policy, project_dir: Path | str | None = None) -> Callable[[str], bool]:
    """A ``path -> denied?`` function, the shape of `ContentStore`'s ``deny`` argument."""

    def denied(path: str) -> bool:
        return check_path(policy, path, project_dir).denied

    return denied


# --------------------------------------------------------------------------- messages


def deny_message(
    verdict: Verdict, *, surface: Surface = "hook", batch_label: str | None = None
) -> str:
    """The user-facing text of a deny, in upstream's wording (spec 1.0 and 5.4).

    ``surface="hook"``: ``Blocked by security policy: matches deny pattern Bash(sudo *)``
    (``shell code matches ...``, ``batch command "<label>" matches ...``, ``file path
    matches Read deny pattern <glob>``). ``surface="server"``: ``Command blocked by
    security policy: ...`` and ``File access blocked by security policy: path matches
    Read deny pattern <glob>``. A fail-closed verdict names the variable that bypasses it.
    """
    rule = verdict.rule
    if rule is None:
        env = REQUIRE_ENV_VARS[0]
        return (
            f"ctxmode: security policy unavailable ({verdict.reason or 'unknown error'}) and "
            f"{env}=1 — fail-closed engaged. Fix the settings file, or unset {env} "
            "(or set it to 0) to bypass."
        )
    if verdict.subject is Subject.PATH:
        glob = rule.specifier if rule.specifier is not None else rule.raw
        if surface == "server":
            return f"File access blocked by security policy: path matches Read deny pattern {glob}"
        return f"Blocked by security policy: file path matches Read deny pattern {glob}"
    if verdict.subject is Subject.EMBEDDED:
        what = f'embedded shell command "{verdict.embedded}" matches'
    elif batch_label is not None and surface == "hook":
        what = f'batch command "{batch_label}" matches'
    elif verdict.subject is Subject.SHELL_CODE and surface == "hook":
        what = "shell code matches"
    else:
        what = "matches"
    prefix = "Command blocked" if surface == "server" else "Blocked"
    return f"{prefix} by security policy: {what} deny pattern {rule.raw}"


def enforce(
    verdict: Verdict, *, surface: Surface = "server", batch_label: str | None = None
) -> None:
    """Raise when ``verdict`` denies.

    Raises:
        PolicyDeniedError: the decision is DENY; the message is `deny_message`'s.
    """
    if verdict.denied:
        raise PolicyDeniedError(deny_message(verdict, surface=surface, batch_label=batch_label))
