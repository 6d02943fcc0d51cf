"""What a model's tokens cost: the bundled price table (``prices.json``) and the user's own.

The table is taken from genai-prices (a maintained, sourced price list) for the Anthropic,
OpenAI and Google models, with its date and the providers' pricing pages; its head says
which. ``CTXMODE_PRICES`` names a JSON file of the same rows (``{"model": {"input": 3.0,
...}}``, US dollars per million tokens) whose models replace or add to it.

A model is found by its exact id (any case), then without a ``provider/`` prefix, then
without a release-date suffix (``claude-sonnet-4-5-20250929``, ``gpt-4.1-2025-04-14``) or
``-latest``. Nothing else: a model the table does not name has no price, and stats show its
tokens without dollars; no price is ever guessed from a similar name.
"""

import functools
import json
import re
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

from ctxmode import settings

_SUFFIX = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2}|latest)$")


class Price(NamedTuple):
    """US dollars per million tokens of one model, and where the figure comes from."""

    model: str  # the table's id
    input: float
    output: float | None
    cache_read: float | None
    cache_write: float | None
    source: str


class Table(NamedTuple):
    prices: dict[str, Price]
    as_of: str
    source: str
    problem: str = ""  # why the user's file was not used


def _number(value: Any) -> float | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and value >= 0
    return float(value) if ok else None


def _rows(models: Any, source: str, pages: dict[str, str]) -> dict[str, Price]:
    found: dict[str, Price] = {}
    for model, row in (models or {}).items() if isinstance(models, dict) else ():
        if not isinstance(row, dict) or _number(row.get("input")) is None:
            continue
        page = pages.get(str(row.get("provider")), "")
        found[str(model).strip().lower()] = Price(
            str(model),
            _number(row.get("input")) or 0.0,
            _number(row.get("output")),
            _number(row.get("cache_read")),
            _number(row.get("cache_write")),
            f"{source}; {page}" if page else source,
        )
    return found


@functools.cache
def _bundled() -> Table:
    data = json.loads(
        (resources.files("ctxmode.stats") / "prices.json").read_text(encoding="utf-8")
    )
    pages = data.get("pages") or {}
    source = str(data.get("source") or "")
    return Table(_rows(data.get("models"), source, pages), str(data.get("as_of")), source)


def table(user_file: str | None = None) -> Table:
    """The bundled table with the user's file (`user_file`, else ``CTXMODE_PRICES``) over it."""
    bundled = _bundled()
    path = user_file if user_file is not None else settings.prices_file()
    if not path:
        return bundled
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return bundled._replace(problem=f"{path}: {exc}")
    models = data.get("models", data) if isinstance(data, dict) else None
    mine = _rows(models, path, {})
    if not mine:
        return bundled._replace(problem=f"{path}: no model with an input price")
    return Table({**bundled.prices, **mine}, bundled.as_of, f"{bundled.source}; {path}")


def lookup(model: str, prices: Table) -> Price | None:
    """The price of `model`, or None when the table does not name it."""
    wanted = model.strip().lower()
    for name in (wanted, wanted.rpartition("/")[2]):
        for candidate in (name, _SUFFIX.sub("", name)):
            if candidate in prices.prices:
                return prices.prices[candidate]
    return None


def dollars(tokens: int, per_million: float) -> float:
    return max(0, tokens) * per_million / 1_000_000


def fmt_dollars(value: float) -> str:
    """``$0.0042``, ``$0.42``, ``$12.30``, ``$1,234``."""
    if value >= 1000:
        return f"${value:,.0f}"
    if value >= 0.1 or value == 0:
        return f"${value:.2f}"
    return f"${value:.2g}" if value >= 0.0001 else "<$0.0001"
