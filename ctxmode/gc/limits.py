"""gc's budget: the defaults, their environment overrides, and the `Budget` they make."""

import os
from dataclasses import dataclass

from ctxmode.errors import UsageError

DAY = 86_400
MB = 1 << 20
DEFAULT_MAX_AGE_DAYS = 30
DEFAULT_MAX_MB = 500
AGE_ENV = "CTXMODE_GC_MAX_AGE_DAYS"
SIZE_ENV = "CTXMODE_GC_MAX_MB"


@dataclass(frozen=True)
class Budget:
    max_age_days: int
    max_bytes: int


def _env_int(var: str) -> int | None:
    text = os.environ.get(var, "").strip()
    if not text:
        return None
    try:
        value = int(text)
    except ValueError:
        raise UsageError(f"{var}={text!r} is not a whole number") from None
    if value < 1:
        raise UsageError(f"{var}={text!r} must be at least 1")
    return value


def budget(max_age_days: int | None = None, max_mb: int | None = None) -> Budget:
    """The budget: explicit values, else the environment, else the defaults.

    Raises:
        UsageError: an environment override is not a whole number of at least 1.
    """
    age = max_age_days or _env_int(AGE_ENV) or DEFAULT_MAX_AGE_DAYS
    size = max_mb or _env_int(SIZE_ENV) or DEFAULT_MAX_MB
    return Budget(age, size * MB)
