"""`ctxmode.digest`: the hook path's SHA-256 gives hashlib's digests."""

import hashlib

import pytest

from ctxmode.digest import sha256_hex


@pytest.mark.parametrize("data", [b"", b"session-1", "é/項目".encode(), bytes(range(256)) * 100])
def test_the_digest_is_hashlibs(data):
    assert sha256_hex(data) == hashlib.sha256(data).hexdigest()
