"""``Bash(...)`` rules: deciding on shell commands and on code for the sandbox.

A deny or ask rule decides when it matches any reading of any segment
(`ctxmode.security.readings`). An allow rule must match every segment as written, so
``Bash(git:*)`` does not allow ``git status && rm -rf x``; a segment that writes to a
file is never allowed.

The fail-safe helpers live here too (`ctxmode.security.paths` uses them): a policy in
fail-closed mode with broken settings denies everything (`_fail_closed`), and an
internal error falls back to a crude, parser-free deny check (`_internal_error`).
"""

import re
from functools import lru_cache

from ctxmode.security.code import dynamic_code, extract_shell_commands
from ctxmode.security.model import (
    CHECK_MAX_CHARS,
    Decision,
    Explanation,
    Policy,
    Rule,
    RuleMatch,
    Subject,
    Verdict,
)
from ctxmode.security.readings import _Part, _parts
from ctxmode.security.shell import _Segment
from ctxmode.security.words import _peeled
from ctxmode.typenames import NamedTuple

SHELL_LANGUAGES = frozenset({"shell", "bash", "sh", "zsh", "dash", "ksh"})


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
    """Our own bug: deny rules still apply (crudely), otherwise fail open (as in upstream)."""
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


def too_long(policy: Policy, text: str, tools: tuple[str, ...]) -> Verdict | None:
    """Ask about (deny, when the policy fails closed) a command or code longer than
    `CHECK_MAX_CHARS` while deny or ask rules of `tools` are in force: reading 25 MB of it
    took half a minute and 2 GB, and a check that cannot read it must not allow it. NONE
    (not read) when no such rule is in force; None when it is short enough to read."""
    if len(text) <= CHECK_MAX_CHARS:
        return None
    guarded = [r for t in tools for r in policy.rules_for(t) if r.kind is not Decision.ALLOW]
    if not guarded:  # nothing to enforce: not read either
        return Verdict(Decision.NONE, Subject.UNCHECKED)
    decision = Decision.DENY if policy.fail_closed else Decision.ASK
    why = (
        f"{len(text):,} characters are more than the {CHECK_MAX_CHARS:,} the permission"
        " rules are checked on"
    )
    head = text.strip().split("\n", 1)[0][:60] + "…"
    return Verdict(decision, Subject.UNCHECKED, guarded[0], head, reason=why)


def check_command(policy: Policy, command: str, *, subject: Subject = Subject.COMMAND) -> Verdict:
    """Decide on a shell command with the ``Bash(...)`` rules. Never raises.

    Deny if a segment, in any reading, matches a deny rule; else ask if one matches an
    ask rule; else allow if every segment as written matches an allow rule; else NONE.
    ``subject=Subject.SHELL_CODE`` only changes the wording of the deny message. A command
    too long to read is asked about (`too_long`).
    """
    blocked = _fail_closed(policy, subject)
    if blocked is not None:
        return blocked
    if not policy.rules_for("Bash"):  # nothing to match: the command is not even read
        return Verdict(Decision.NONE, subject)
    over = too_long(policy, command, ("Bash",))
    if over is not None:
        return over
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


def _first_unchecked(language: str, code: str) -> tuple[str, str] | None:
    """(the part, why) of the first thing in ``code`` whose command the text does not show."""
    if language.lower() in SHELL_LANGUAGES:
        parts = _parts(code)
    else:
        why = dynamic_code(language, code)
        if why is not None:
            return f"{language} code", why
        parts = [p for embedded in extract_shell_commands(language, code) for p in _parts(embedded)]
    return next(((p.segment.text, p.unchecked) for p in parts if p.unchecked), None)


def check_unchecked(policy: Policy, language: str, code: str) -> Verdict:
    """Ask about code whose commands cannot be read from its text, while Bash deny or ask
    rules are in force; deny instead when the policy fails closed. Never raises.

    ``$X -rf /`` with ``X`` unknown, ``$(curl ...)`` as a command, a script piped into a
    shell, ``eval`` of a computed string: a deny rule cannot see what they run. Commands
    whose expansions the script spells out are no such case (`check_command` reads them).
    Without Bash deny or ask rules there is nothing to evade, and the answer is NONE.
    """
    subject = Subject.UNCHECKED
    guarded = [r for r in policy.rules_for("Bash") if r.kind is not Decision.ALLOW]
    if not guarded:
        return Verdict(Decision.NONE, subject)
    try:
        found = _first_unchecked(language, code)
    except Exception:  # the Bash rules' own check has run already: nothing more to say
        return Verdict(Decision.NONE, subject)
    if found is None:
        return Verdict(Decision.NONE, subject)
    decision = Decision.DENY if policy.fail_closed else Decision.ASK
    part, why = found
    return Verdict(decision, subject, guarded[0], part, reason=why)
