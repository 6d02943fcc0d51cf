"""gc's budget: the defaults, their environment overrides, and the `Budget` they make."""

from dataclasses import dataclass

from ctxmode import settings

DAY = 86_400
MB = 1 << 20
DEFAULT_MAX_AGE_DAYS = settings.GC_MAX_AGE_DAYS.default
DEFAULT_MAX_MB = settings.GC_MAX_MB.default


@dataclass(frozen=True)
class Budget:
    max_age_days: int
    max_bytes: int


def budget(max_age_days: int | None = None, max_mb: int | None = None) -> Budget:
    """The budget: explicit values, else the environment, else the defaults.

    Raises:
        UsageError: an environment override is not a whole number of at least 1.
    """
    if not max_age_days:
        settings.require_valid(settings.GC_MAX_AGE_DAYS)
    if not max_mb:
        settings.require_valid(settings.GC_MAX_MB)
    age = max_age_days or settings.gc_max_age_days()
    size = max_mb or settings.gc_max_mb()
    return Budget(age, size * MB)
