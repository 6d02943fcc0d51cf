"""The one savings formula: without = sandboxed + returned, with = max(1, returned),
kept out = 1 - with / without; nothing measured means no percentage at all."""

import itertools

import pytest

from ctxmode.stats.model import Usage, fmt_bytes, savings, tokens


def test_nothing_measured_is_the_empty_state_not_100_percent():
    assert savings(0, 0) is None


def test_only_returned_bytes_means_nothing_kept_out():
    result = savings(0, 5000)
    assert result is not None
    assert (result.without, result.with_, result.kept_out, result.percent) == (5000, 5000, 0, 0.0)
    assert result.multiplier == 1.0


def test_100_percent_is_shown_only_when_nothing_was_returned():
    result = savings(589_050, 156)
    assert result is not None and result.percent == 99.9  # 99.97 would round to 100.0
    assert result.times == "3777x"
    assert savings(1000, 400).times == "3.5x"


def test_only_sandboxed_bytes_is_100_percent():
    result = savings(2_898_000, 0)
    assert result is not None
    assert result.with_ == 1  # max(1, returned): never a division by zero
    assert result.percent == 100.0


def test_mixed_matches_the_reference_session():
    # A real report: 2,898 KB kept in the sandbox, 140 KB returned -> 95.4 %, about 22x.
    result = savings(2898 * 1024, 140 * 1024)
    assert result is not None
    assert result.percent == 95.4
    assert round(result.multiplier) == 22


def test_negative_inputs_count_as_zero():
    assert savings(-5, -7) is None
    result = savings(-5, 10)
    assert result is not None and result.kept_out == 0


@pytest.mark.parametrize(
    ("sandboxed", "returned"),
    list(itertools.product([0, 1, 2, 3, 999, 10**6, 10**12], [0, 1, 2, 7, 1000, 10**9])),
)
def test_a_part_never_exceeds_its_whole(sandboxed, returned):
    result = savings(sandboxed, returned)
    if sandboxed + returned == 0:
        assert result is None
        return
    assert result is not None
    assert 0 <= result.with_ <= result.without
    assert 0 <= result.kept_out <= result.without
    assert 0.0 <= result.ratio <= 1.0 and 0.0 <= result.percent <= 100.0
    assert result.multiplier >= 1.0


def test_tokens_are_bytes_over_four():
    assert tokens(4000) == 1000 and tokens(-1) == 0


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (0, "0 B"),
        (512, "512 B"),
        (1536, "1.5 KB"),
        (200 * 1024, "200 KB"),
        (int(7.8 * 1024**2), "7.8 MB"),
        (int(1.25 * 1024**3), "1.25 GB"),
        (1024**2 - 1, "1.0 MB"),  # not "1024 KB"
        (int(99.96 * 1024), "100 KB"),  # not "100.0 KB"
    ],
)
def test_byte_formatting(n, text):
    assert fmt_bytes(n) == text


def test_a_recorder_reopens_a_database_deleted_under_it(tmp_path):
    from ctxmode.session.db import SessionDB
    from ctxmode.stats.record import Recorder

    db = tmp_path / "s.db"
    recorder = Recorder(db, tmp_path)
    recorder.record("ctx_execute", Usage(1, 10, 1000), "s1")
    recorder.flush()  # written, as a moment after the call
    for path in tmp_path.glob("s.db*"):
        path.unlink()  # a purge from another process
    recorder.record("ctx_execute", Usage(1, 5, 50), "s1")
    recorder.close()
    with SessionDB(db) as sdb:
        assert sdb.usage() == {"ctx_execute": Usage(1, 5, 50)}  # nothing purged came back
