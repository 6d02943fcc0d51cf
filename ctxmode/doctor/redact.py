"""Making the report safe to paste into a public bug report.

Applied once, to every field of every check, by both renderers (`report`), so no check
has to remember it:

* the home directory (``$HOME`` and the account's real one) becomes ``~``;
* the user name becomes ``<user>`` wherever it stands as a word (``/srv/alice/x``,
  ``pytest-of-alice``, ``alice@host``); a generic account name (``node``, ``app``,
  ``runner``, ...) identifies nobody and is only replaced as a path segment or before
  ``@``, so "node 20.1" stays readable; names under three letters likewise;
* on macOS and Windows, where paths are case-insensitive, both match in any case, and a
  Windows home matches with either slash;
* values of environment variables with secret-looking names are masked wherever they
  appear, and so is anything that looks like a credential (`ctxmode.session.redact`).
"""

import os
import re
import sys
from collections.abc import Iterable
from functools import lru_cache

from ctxmode.doctor.model import Check

USER = "<user>"
MASK = "***"
_USER_VARS = ("USER", "LOGNAME", "USERNAME", "LNAME")
_MIN_SECRET_LEN = 6  # shorter values ("1", "true") would mask ordinary text


def _homes() -> list[str]:
    found = {os.path.expanduser("~")}
    try:
        import pwd

        found.add(pwd.getpwuid(os.getuid()).pw_dir)
    except (ImportError, KeyError, AttributeError):
        pass
    real = {os.path.realpath(h) for h in found if h}
    homes = {h.rstrip("/\\") for h in found | real if h}
    # Longest first, so /home/me/sub-home style overlaps resolve to the deepest match.
    return sorted((h for h in homes if h and h not in ("/", "~")), key=len, reverse=True)


def _users() -> list[str]:
    names = {os.environ.get(var, "") for var in _USER_VARS}
    try:
        import pwd

        names.add(pwd.getpwuid(os.getuid()).pw_name)  # the account, whatever $USER says
    except (ImportError, KeyError, AttributeError):
        pass
    return sorted((n for n in names if n.strip()), key=len, reverse=True)


def _a_path(value: str) -> bool:
    """An existing absolute path (``PWD``, ``SSH_AUTH_SOCK``): a location, not a secret."""
    return os.path.isabs(value) and os.path.exists(value)


def _secret_values() -> list[str]:
    from ctxmode.session.redact import is_secret_name

    values = {
        value
        for name, value in os.environ.items()
        if len(value) >= _MIN_SECRET_LEN and is_secret_name(name) and not _a_path(value)
    }
    return sorted(values, key=len, reverse=True)


def _flags() -> int:
    return re.IGNORECASE if sys.platform in ("darwin", "win32") else 0


def _spellings(home: str) -> set[str]:
    """A home as written, and with the other slash (``C:\\Users\\me``, ``C:/Users/me``)."""
    return {home, home.replace("\\", "/")} if "\\" in home else {home}


@lru_cache(maxsize=8)
def _home_pattern(homes: tuple[str, ...], flags: int) -> re.Pattern[str] | None:
    if not homes:
        return None
    spelled = sorted({s for h in homes for s in _spellings(h)}, key=len, reverse=True)
    alternatives = "|".join(re.escape(h) for h in spelled)
    return re.compile(rf"(?:{alternatives})(?=[/\\]|$|[^\w.-])", flags)


GENERIC_ACCOUNTS = frozenset(
    {"root", "node", "app", "user", "admin", "python", "runner", "ubuntu", "debian", "vscode"}
    | {"codespace", "dev", "developer", "ec2-user", "docker", "build", "jenkins", "gitpod"}
)


@lru_cache(maxsize=8)
def _user_pattern(users: tuple[str, ...], flags: int) -> re.Pattern[str] | None:
    parts = []
    for name in users:
        escaped = re.escape(name)
        if len(name) >= 3 and name.lower() not in GENERIC_ACCOUNTS:
            parts.append(rf"(?<![A-Za-z0-9]){escaped}(?![A-Za-z0-9])")
        else:  # only as a whole path segment, or as the user of user@host
            parts.append(rf"(?<=[/\\]){escaped}(?=[/\\]|$)|(?<![\w.-]){escaped}(?=@)")
    return re.compile("|".join(parts), flags) if parts else None


def redact(text: str) -> str:
    """`text` without secrets, the home directory or the user name."""
    from ctxmode.session.redact import redact_text

    if not text:
        return text
    for value in _secret_values():
        text = text.replace(value, MASK)
    text = redact_text(text)
    home = _home_pattern(tuple(_homes()), _flags())
    if home is not None:
        text = home.sub("~", text)
    user = _user_pattern(tuple(_users()), _flags())
    if user is not None:
        text = user.sub(USER, text)
    return text


def redact_checks(checks: Iterable[Check]) -> list[Check]:
    """Every field of every check redacted (the status is a fixed word, kept)."""
    return [
        Check(
            redact(c.name),
            c.status,
            redact(c.detail),
            None if c.fix is None else redact(c.fix),
        )
        for c in checks
    ]
