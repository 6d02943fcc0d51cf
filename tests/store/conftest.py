"""Fixtures for the knowledge-store tests: real SQLite files, closed on teardown."""

import pytest

from ctxmode.store import ContentStore


@pytest.fixture
def db_path(tmp_path):
    return tmp_path / "kb.db"


@pytest.fixture
def store(db_path):
    with ContentStore(db_path) as s:
        yield s


@pytest.fixture
def mem_store():
    with ContentStore(":memory:") as s:
        yield s
