"""Prices at a provider's batch rate: what a line of a batch costs, in USD.

OpenAI's Batch API and Anthropic's Message Batches bill a line at half the standard rates
(https://platform.openai.com/docs/guides/batch, "50% cost discount";
https://docs.anthropic.com/en/docs/build-with-claude/batch-processing#pricing, "50% of
standard API prices"), prompt-cache reads and writes included (Anthropic: "the batch discount
and prompt caching discounts stack"). :class:`BatchPricing` prices every model that way:

1. a model the price package (genai-prices) lists with a batch variant is priced at that
   variant (its cache and long-context tiers' base rates, as the package gives them);
2. any other model with a price, at :data:`BATCH_DISCOUNT` times its standard rates (every
   part: input, cache reads and writes, output);
3. a model with no price has none (the governor refuses it under a USD cap, as always).

A model given its own price (a spec's ``prices``, ``Pricing(overrides=...)``) gives its standard
rates: the batch rate is the discount times them.
"""

from __future__ import annotations

import datetime
from typing import Any

from hrbench.models.pricing import Price, Pricing

__all__ = ["BATCH_DISCOUNT", "BatchPricing", "package_batch_price"]

BATCH_DISCOUNT = 0.5
"""A batch line's price as a share of the standard one, where the price package gives no batch
variant (OpenAI and Anthropic both document 50%)."""


class BatchPricing(Pricing):
    """A price table at the batch rate of ``provider``, over the standard table ``base``.

    Args:
        base: the standard prices (the benchmark's :class:`~hrbench.models.pricing.Pricing`).
        provider: ``"openai"`` or ``"anthropic"`` (whose batch variants the package is asked for).
        discount: the batch price as a share of the standard one, for a model the package gives
            no batch variant (0 to 1).

    Raises:
        ValueError: ``discount`` outside 0 to 1.

    Example:
        >>> base = Pricing(overrides={"m": {"input": 1.0, "cached_input": 0.5, "output": 4.0}})
        >>> p = BatchPricing(base, "openai").price("m")
        >>> p.input, p.cached_input, p.output
        (0.5, 0.25, 2.0)
        >>> BatchPricing(base, "openai").price("no-such-model") is None
        True
    """

    def __init__(self, base: Pricing, provider: str, discount: float = BATCH_DISCOUNT) -> None:
        if not 0.0 <= float(discount) <= 1.0:
            raise ValueError(f"a batch discount is a share of the standard price, 0 to 1 (got {discount!r})")
        self.__dict__.update(base.__dict__)  # the same table, sources and overrides
        self._priced = {}
        self.base = base
        self.provider = provider
        self.discount = float(discount)
        self.source = f"{base.source}, at the {provider} batch rate"

    def price(self, model: str | None) -> Price | None:
        """The batch price of ``model`` (see the module docstring), or ``None`` when it has none."""
        if not model:
            return None
        try:
            return self._priced[model]
        except KeyError:
            found = self._priced[model] = self._batch_price(model)
            return found

    def _batch_price(self, model: str) -> Price | None:
        standard = self.base.price(model)
        if standard is None:
            return None
        own = self._listed(model, self.base.overrides) is not None
        if self.base.package and not own:
            listed = package_batch_price(model, self.provider)
            if listed is not None:
                return listed
        d = self.discount
        return Price(
            standard.input * d,
            standard.cached_input * d,
            standard.output * d,
            standard.write_5m * d,
            standard.write_1h * d,
        )

    def with_overrides(self, overrides: Any) -> Pricing:
        """The batch prices over the standard table with ``overrides`` (standard rates) on top."""
        return BatchPricing(self.base.with_overrides(overrides), self.provider, self.discount)


def package_batch_price(model: str, provider: str | None) -> Price | None:
    """The batch variant genai-prices lists for ``model`` today, or ``None`` (none, or no package).

    Example:
        >>> p = package_batch_price("claude-haiku-4-5", "anthropic")
        >>> p.input, p.output, p.cached_input, p.write_5m, p.write_1h
        (0.5, 2.5, 0.05, 0.625, 1.0)
        >>> package_batch_price("gpt-4o-mini", "openai").output
        0.3
    """
    try:
        from genai_prices.data_snapshot import get_snapshot
    except ImportError:
        return None
    try:
        _prov, info = get_snapshot().find_provider_model(model, None, provider, None)
    except LookupError:
        return None
    batch = [v for v in (getattr(info, "price_variants", None) or ()) if v.when == {"processing": "batch"}]
    if not batch:
        return None
    now = datetime.datetime.now(datetime.UTC)
    prices = info.get_prices(now, {"processing": "batch"})
    rates = {k: _rate(getattr(prices, k, None)) for k in _PARTS}
    inp, out = rates["input_mtok"], rates["output_mtok"]
    if inp is None or out is None:
        return None
    read, write = rates["cache_read_mtok"], rates["cache_write_mtok"]
    w5 = inp if write is None else write
    w1 = rates["cache_write_1h_mtok"]
    return Price(inp, inp if read is None else read, out, w5, w5 if w1 is None else w1)


_PARTS = ("input_mtok", "output_mtok", "cache_read_mtok", "cache_write_mtok", "cache_write_1h_mtok")


def _rate(value: Any) -> float | None:
    """A package rate as a float: a tiered one at its base rate (its dearer tiers left out)."""
    if value is None:
        return None
    base = getattr(value, "base", None)
    return float(base if base is not None else value)
