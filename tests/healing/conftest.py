"""Fixtures of the healing tests (defined in `support`, shared with tests/server)."""

from .support import small_disk

__all__ = ["small_disk"]
