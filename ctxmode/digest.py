"""SHA-256 for the hook path: CPython's built-in implementation, which loads in about a
millisecond, rather than hashlib's OpenSSL binding (about four, on every tool call a hook
sees). The digests are the same."""

from collections.abc import Callable

from ctxmode.typenames import Any

_sha256: Callable[[bytes], Any]
try:
    from _sha2 import sha256 as _sha256  # type: ignore[import-not-found,no-redef]  # 3.12+
except ImportError:
    try:
        from _sha256 import sha256 as _sha256  # type: ignore[import-not-found,no-redef]
    except ImportError:  # another Python: the portable one
        from hashlib import sha256 as _sha256


def sha256_hex(data: bytes) -> str:
    return str(_sha256(data).hexdigest())
