"""Raising a deny (`enforce`) with its user-facing wording (`deny_message`, kept with the
`Verdict` it words)."""

from ctxmode.errors import PolicyDeniedError
from ctxmode.security.model import Surface, Verdict, deny_message

__all__ = ["Surface", "deny_message", "enforce"]


def enforce(
    verdict: Verdict, *, surface: Surface = "server", batch_label: str | None = None
) -> None:
    """Raise when ``verdict`` denies.

    Raises:
        PolicyDeniedError: the decision is DENY; the message is `deny_message`'s.
    """
    if verdict.denied:
        raise PolicyDeniedError(deny_message(verdict, surface=surface, batch_label=batch_label))
