"""What the kept-out context was worth, by the one formula of `ctxmode.stats.model`:

    kept-out bytes -> tokens (bytes / 4, an estimate) -> dollars at the input price of the
    model in use

The model in use is the one the host reports reading the most tokens with (input, cache
read and cache creation: the `model_usage` rows turn-end hooks record); its price comes
from `ctxmode.stats.prices`. No model recorded, or one the table does not name: tokens
only, never a guessed price.
"""

from typing import NamedTuple

from ctxmode.session.hostusage import TokenUsage
from ctxmode.stats.model import tokens
from ctxmode.stats.prices import Price, Table, dollars, lookup


class Worth(NamedTuple):
    tokens: int  # kept-out tokens, an estimate
    model: str | None  # the model in use; None when the host reported none
    price: Price | None  # its price; None for a model the table does not name
    dollars: float | None  # the kept-out tokens at its input price


def model_in_use(models: dict[str, TokenUsage]) -> str | None:
    """The model that read the most tokens (ties: the name first in order)."""
    ranked = sorted(models.items(), key=lambda kv: (-kv[1].prompt_side, kv[0]))
    return ranked[0][0] if ranked and ranked[0][1].prompt_side > 0 else None


def worth(kept_out_bytes: int, models: dict[str, TokenUsage], prices: Table) -> Worth:
    kept = tokens(kept_out_bytes)
    model = model_in_use(models)
    price = lookup(model, prices) if model else None
    value = dollars(kept, price.input) if price is not None else None
    return Worth(kept, model, price, value)


def cost(usage: TokenUsage, price: Price | None) -> float | None:
    """What the host's reported tokens cost at `price`; None when a rate they need is
    unknown."""
    if price is None:
        return None
    total = dollars(usage.input, price.input)
    for count, rate in (
        (usage.output, price.output),
        (usage.cache_read, price.cache_read),
        (usage.cache_creation, price.cache_write),
    ):
        if count and rate is None:
            return None
        total += dollars(count, rate or 0.0)
    return total
