"""Writing settings files and loading the policy they make, for the security tests."""

import json
from pathlib import Path

from ctxmode.security import Decision, load_policy

DENY, ASK, ALLOW, NONE = Decision.DENY, Decision.ASK, Decision.ALLOW, Decision.NONE


def write_settings(path: Path, *, deny=(), ask=(), allow=(), raw: str | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if raw is None:
        raw = json.dumps(
            {"permissions": {"deny": list(deny), "ask": list(ask), "allow": list(allow)}}
        )
    path.write_text(raw, encoding="utf-8")
    return path


def project_settings(project: Path, **rules) -> Path:
    return write_settings(project / ".claude" / "settings.json", **rules)


def local_settings(project: Path, **rules) -> Path:
    return write_settings(project / ".claude" / "settings.local.json", **rules)


def user_settings(home: Path, **rules) -> Path:
    return write_settings(home / ".claude" / "settings.json", **rules)


def policy_for(project: Path, **kwargs):
    """The project's policy without the machine's real managed-settings files."""
    kwargs.setdefault("managed_settings", [])
    return load_policy(project, **kwargs)


def command_policy(project: Path, *, deny=(), ask=(), allow=()):
    project_settings(project, deny=deny, ask=ask, allow=allow)
    return policy_for(project)
