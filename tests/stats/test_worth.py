"""What the kept-out context was worth: bytes -> tokens (bytes / 4) -> dollars at the input
price of the model in use; a model without a price shows tokens only. Through the real
report (`ctxmode stats`, its JSON) and status line over a real session database."""

import json
from pathlib import Path

import pytest

from ctxmode import paths
from ctxmode.__main__ import main
from ctxmode.session import modelusage
from ctxmode.session.db import SessionDB, now_iso
from ctxmode.session.hostusage import TokenUsage
from ctxmode.session.where import session_db_path
from ctxmode.stats import statusline
from ctxmode.stats.model import Usage
from ctxmode.stats.prices import lookup, table
from ctxmode.stats.record import Recorder
from ctxmode.stats.worth import cost, model_in_use, worth


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = (tmp_path / "proj").resolve()
    folder.mkdir()
    monkeypatch.setenv("CTXMODE_PROJECT_DIR", str(folder))
    monkeypatch.setenv("CTXMODE_SESSION_SUFFIX", "")
    return folder


def seed(project: Path, models: dict[str, TokenUsage], kept_out: int = 400_000) -> None:
    """A session whose tools kept `kept_out` bytes out and whose host reported `models`."""
    db = session_db_path(project, paths.data_root())
    recorder = Recorder(db, project)
    recorder.record("ctx_execute", Usage(3, 2_000, kept_out), "s1")
    recorder.close()
    with SessionDB(db) as sdb, sdb.transaction() as con:
        modelusage.add(con, "s1", models, now_iso())
    recorder = Recorder(db, project)  # the stats file rebuilt with the tokens
    recorder.record("ctx_search", Usage(1, 0, 0), "s1")
    recorder.close()


def stats_json(capsys: pytest.CaptureFixture[str]) -> dict:
    assert main(["stats", "--session", "s1", "--json"]) == 0
    return json.loads(capsys.readouterr().out)["data"]


def test_kept_out_bytes_are_priced_at_the_input_price_of_the_model_in_use() -> None:
    prices = table()
    models = {
        "claude-haiku-4-5": TokenUsage(50_000, 900, 0, 0, 30),  # fewer tokens read
        "claude-sonnet-4-5-20250929": TokenUsage(1_000, 2_000, 300_000, 8_000, 12),
    }
    assert model_in_use(models) == "claude-sonnet-4-5-20250929"
    found = worth(400_000, models, prices)
    assert found.tokens == 100_000  # 400,000 bytes / 4
    assert found.price is not None and found.price.model == "claude-sonnet-4-5"
    assert found.dollars == pytest.approx(100_000 * found.price.input / 1_000_000)


def test_an_unknown_model_gets_tokens_and_no_price() -> None:
    found = worth(40_000, {"acme-coder-9": TokenUsage(100, 10, 0, 0, 1)}, table())
    assert (found.tokens, found.model, found.price, found.dollars) == (
        10_000,
        "acme-coder-9",
        None,
        None,
    )
    # no price is guessed from a name that only looks like a known one
    assert lookup("claude-sonnet-4-5-custom", table()) is None
    assert lookup("anthropic/claude-sonnet-4-5", table()) is not None
    assert lookup("gpt-4.1-2025-04-14", table()) is not None


def test_no_reported_model_means_no_price() -> None:
    assert worth(40_000, {}, table()).model is None


def test_reported_tokens_cost_each_bucket_at_its_rate() -> None:
    price = lookup("claude-opus-4-5", table())
    assert price is not None and price.cache_read is not None and price.cache_write is not None
    usage = TokenUsage(1_000_000, 100_000, 2_000_000, 10_000, 5)
    expected = (
        price.input + 0.1 * (price.output or 0) + 2 * price.cache_read + 0.01 * price.cache_write
    )
    assert cost(usage, price) == pytest.approx(expected)


def test_user_prices_replace_and_add_models(tmp_path: Path, monkeypatch) -> None:
    mine = tmp_path / "prices.json"
    mine.write_text(
        json.dumps({"acme-coder-9": {"input": 2.0}, "claude-opus-4-5": {"input": 1.0}}),
        encoding="utf-8",
    )
    monkeypatch.setenv("CTXMODE_PRICES", str(mine))
    prices = table()
    assert not prices.problem
    assert worth(4_000_000, {"acme-coder-9": TokenUsage(1, 0, 0, 0, 1)}, prices).dollars == 2.0
    assert lookup("claude-opus-4-5", prices).input == 1.0  # type: ignore[union-attr]
    mine.write_text("{broken", encoding="utf-8")
    assert table().problem and lookup("acme-coder-9", table()) is None


def test_stats_report_names_the_model_and_the_dollars(project, capsys) -> None:
    seed(project, {"claude-opus-4-5": TokenUsage(300, 120, 50_000, 2_000, 4)})
    assert main(["stats", "--session", "s1"]) == 0
    text = capsys.readouterr().out
    price = lookup("claude-opus-4-5", table())
    assert price is not None
    dollars = 100_000 * price.input / 1_000_000
    assert f"~100.0K tokens kept out = ${dollars:.2f} at claude-opus-4-5's input price" in text
    assert "claude-opus-4-5: 4 replies, 300 input, 120 output, 50.0K cache read" in text
    data = stats_json(capsys)
    assert data["session"]["worth"] == {
        "kept_out_tokens_estimate": 100_000,
        "model": "claude-opus-4-5",
        "priced": True,
        "input_usd_per_million": price.input,
        "dollars": round(dollars, 6),
        "price_source": price.source,
        "prices_as_of": table().as_of,
        "models": {
            "claude-opus-4-5": {
                "input": 300,
                "output": 120,
                "cache_read": 50_000,
                "cache_creation": 2_000,
                "replies": 4,
                "cost_usd": round(cost(TokenUsage(300, 120, 50_000, 2_000, 4), price) or 0, 6),
            }
        },
    }


def test_stats_report_of_an_unknown_model_shows_tokens_only(project, capsys) -> None:
    seed(project, {"acme-coder-9": TokenUsage(300, 120, 0, 0, 4)})
    assert main(["stats", "--session", "s1"]) == 0
    text = capsys.readouterr().out
    assert "~100.0K tokens kept out; no price known for acme-coder-9 (tokens only" in text
    worth_lines = [line for line in text.splitlines() if "acme-coder-9" in line]
    assert worth_lines and not any("$" in line for line in worth_lines)
    assert stats_json(capsys)["session"]["worth"]["dollars"] is None


def test_statusline_shows_the_dollars_and_the_model(project) -> None:
    seed(project, {"claude-opus-4-5": TokenUsage(300, 120, 50_000, 2_000, 4)})
    text = statusline.line({"session_id": "s1", "cwd": str(project)})
    assert "at claude-opus-4-5" in text and "≈ $" in text
    seed(project, {"acme-coder-9": TokenUsage(10**9, 0, 0, 0, 1)})  # now the model in use
    text = statusline.line({"session_id": "s1", "cwd": str(project)})
    assert "(acme-coder-9, no price)" in text and "$" not in text
