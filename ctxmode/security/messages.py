"""The user-facing wording of a deny, and raising it (`enforce`)."""

from typing import Literal

from ctxmode import settings
from ctxmode.errors import PolicyDeniedError
from ctxmode.security.model import Subject, Verdict

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
