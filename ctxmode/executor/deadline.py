"""The time a call has: one point on the monotonic clock, shared by the run and the work after it.

A run's timeout covers the whole call: starting the run, reading its output, and indexing
what it printed. The run itself stops at the deadline; what comes after it (indexing,
searching) gets what is left, but never less than `AFTER_RUN_S`, so a run that used all of
its time still gets its output shaped and a bounded part of it indexed.
"""

import time
from dataclasses import dataclass

AFTER_RUN_S = 0.5


@dataclass(frozen=True)
class Deadline:
    at: float  # a `time.monotonic()` value

    @classmethod
    def after(cls, seconds: float) -> "Deadline":
        return cls(time.monotonic() + seconds)

    def remaining(self) -> float:
        """Seconds left (0 once it has passed)."""
        return max(0.0, self.at - time.monotonic())

    def for_after_run(self) -> float:
        """Seconds the work after a run may take: what is left, at least `AFTER_RUN_S`."""
        return max(self.remaining(), AFTER_RUN_S)
