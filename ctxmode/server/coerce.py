"""Lenient argument coercion: hosts and models often send `"5"`, `"true"` or a JSON array
as a string. Only unambiguous forms are converted; anything else is left for validation to
reject with a clear message (as in upstream)."""

import json
import math
from typing import Any

from ctxmode.errors import UsageError


def as_array(value: Any) -> Any:
    """A JSON-array string becomes that array; another non-empty string a one-item list."""
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return value
        if text.startswith("["):
            try:
                parsed = json.loads(text)
            except ValueError:
                return [value]
            return parsed if isinstance(parsed, list) else [value]
        return [value]
    return value


def as_bool(value: Any) -> Any:
    """Only the strings "true" and "false" (any case, trimmed) become booleans."""
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return value


def as_number(value: Any) -> Any:
    """Numeric strings become numbers."""
    if isinstance(value, str):
        text = value.strip()
        try:
            return int(text)
        except ValueError:
            try:
                return float(text)
            except ValueError:
                return value
    return value


def commands(value: Any) -> Any:
    """ctx_batch_execute commands: plain strings become {label: cmd_<n>, command: str}."""
    value = as_array(value)
    if not isinstance(value, list):
        return value
    return [
        {"label": f"cmd_{i}", "command": item} if isinstance(item, str) else item
        for i, item in enumerate(value, 1)
    ]


# ---------------------------------------------------------------------------- validation


def string(args: dict[str, Any], name: str, *, required: bool = False) -> str | None:
    value = args.get(name)
    if value is None or (isinstance(value, str) and not value and not required):
        if required:
            raise UsageError(f"{name} is required")
        return None
    if not isinstance(value, str):
        raise UsageError(f"{name} must be a string")
    if required and not value.strip():
        raise UsageError(f"{name} must not be empty")
    return value


PATH_MAX_BYTES = 4096  # Linux's PATH_MAX; macOS and Windows allow less
NAME_MAX_BYTES = 255  # one name, on every common file system


def path(args: dict[str, Any], name: str, *, required: bool = False) -> str | None:
    """A file or directory path: a string without NUL bytes (no file system takes one) and
    no longer than a file system takes."""
    value = string(args, name, required=required)
    if value is None:
        return None
    if "\0" in value:
        raise UsageError(f"{name} contains a NUL byte")
    encoded = value.encode("utf-8", "surrogatepass")
    if len(encoded) > PATH_MAX_BYTES or any(
        len(part) > NAME_MAX_BYTES for part in encoded.split(b"/")
    ):
        raise UsageError(
            f"{name} is too long for a file system ({len(encoded):,} bytes; a path holds at"
            f" most {PATH_MAX_BYTES:,}, one name in it {NAME_MAX_BYTES})"
        )
    return value


def number(
    args: dict[str, Any], name: str, *, low: float | None = None, high: float | None = None
) -> float | None:
    value = as_number(args.get(name))
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UsageError(f"{name} must be a number")
    if not math.isfinite(value):  # "inf", "nan", 1e400
        raise UsageError(f"{name} must be a finite number")
    if (low is not None and value < low) or (high is not None and value > high):
        bounds = f"between {low:g} and {high:g}" if high is not None else f"at least {low:g}"
        raise UsageError(f"{name} must be {bounds}")
    return float(value)


def boolean(args: dict[str, Any], name: str, default: bool = False) -> bool:
    value = as_bool(args.get(name, default))
    if not isinstance(value, bool):
        raise UsageError(f"{name} must be true or false")
    return value


def strings(args: dict[str, Any], name: str) -> list[str] | None:
    value = as_array(args.get(name))
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"{name} must be an array of strings")
    return value
