"""The vocabulary of the policy: decisions, rules, policies, verdicts and explanations.

Every other module of `ctxmode.security` speaks in these types, and a denying verdict's
wording (`deny_message`) lives with them.
"""

import sys
from enum import Enum
from pathlib import Path

from ctxmode import settings
from ctxmode.typenames import Literal, NamedTuple

CHECK_MAX_CHARS = 512 * 1024  # of a command or code read for the permission rules


class Decision(str, Enum):
    """What the policy says about a request."""

    DENY = "deny"
    ASK = "ask"
    ALLOW = "allow"
    NONE = "none"


# The decisions a rule can carry, in precedence order.
_KINDS = (Decision.DENY, Decision.ASK, Decision.ALLOW)


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
    NAMED_PATH = "named_path"  # a file a command or code names, against Read rules
    UNCHECKED = "unchecked"  # what would run cannot be read from the text


class Rule(NamedTuple):
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


class SettingsSource(NamedTuple):
    """One settings file that was looked at, and what came of it."""

    path: Path
    scope: Scope
    status: SourceStatus
    rule_count: int = 0
    error: str | None = None


class Policy(NamedTuple):
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


class Verdict(NamedTuple):
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


class RuleMatch(NamedTuple):
    """A rule that was considered, and the segments or paths it matched (maybe none)."""

    rule: Rule
    matched: tuple[str, ...] = ()


class Explanation(NamedTuple):
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


Surface = Literal["hook", "server"]


def deny_message(
    verdict: Verdict, *, surface: Surface = "hook", batch_label: str | None = None
) -> str:
    """The user-facing text of a deny, in upstream's wording (as in upstream).

    ``surface="hook"``: ``Blocked by security policy: matches deny pattern Bash(sudo *)``
    (``shell code matches ...``, ``batch command "<label>" matches ...``, ``file path
    matches Read deny pattern <glob>``). ``surface="server"``: ``Command blocked by
    security policy: ...`` and ``File access blocked by security policy: path matches
    Read deny pattern <glob>``. A fail-closed verdict names the variable that bypasses it.
    """
    rule = verdict.rule
    if rule is None:
        env = settings.REQUIRE_SECURITY.name
        return (
            f"ctxmode: security policy unavailable ({verdict.reason or 'unknown error'}) and "
            f"{env}=1 — fail-closed engaged. Fix the settings file, or unset {env} "
            "(or set it to 0) to bypass."
        )
    if verdict.subject is Subject.NAMED_PATH:
        where = verdict.segment
        if batch_label is not None and surface == "hook":
            where = f'batch command "{batch_label}": {where}'
        prefix = "File access blocked" if surface == "server" else "Blocked"
        return (
            f"{prefix} by security policy: {verdict.matched_as} (in {where}) matches Read deny "
            f"pattern {rule.raw}"
        )
    if verdict.subject is Subject.UNCHECKED:
        prefix = "Command blocked" if surface == "server" else "Blocked"
        env = settings.REQUIRE_SECURITY.name
        return f"{prefix} by security policy: {unchecked_text(verdict)} ({env}=1)"
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


def unchecked_text(verdict: Verdict) -> str:
    """``"$X -rf /" runs a command named at run time ($X), which no rule can check (deny
    rule Bash(rm:*) is in force)``: the why of a `Subject.UNCHECKED` verdict."""
    rule = verdict.rule.raw if verdict.rule is not None else "a Bash rule"
    kind = verdict.rule.kind.value if verdict.rule is not None else "deny"
    return (
        f'"{verdict.segment}" {verdict.reason}, which no rule can check ({kind} rule {rule} '
        "is in force)"
    )


def ask_message(verdict: Verdict) -> str | None:
    """The host's confirmation text for an ask that no ask rule made, else None."""
    if verdict.decision is Decision.ASK and verdict.subject is Subject.UNCHECKED:
        return f"ctxmode: {unchecked_text(verdict)}; confirm to run it."
    return None
