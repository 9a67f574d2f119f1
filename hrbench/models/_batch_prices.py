"""Prices at a provider's batch rate: what a line of a batch costs, in USD.

OpenAI's Batch API and Anthropic's Message Batches bill a line at half the standard rates
(https://platform.openai.com/docs/guides/batch, "50% cost discount";
https://docs.anthropic.com/en/docs/build-with-claude/batch-processing#pricing, "50% of
standard API prices"), prompt-cache reads and writes included (Anthropic: "the batch discount
and prompt caching discounts stack"). :class:`BatchPricing` prices every model that way:

1. a model the price package (genai-prices) lists with a batch variant is priced at that
   variant (its cache rates and its long-context tiers, as the package gives them);
2. any other model with a price, at :data:`BATCH_DISCOUNT` times its standard rates (every
   part: input, cache reads and writes, output, of every long-context tier);
3. a model with no price has none (the governor refuses it under a USD cap, as always).

A model given its own price (a spec's ``prices``, ``Pricing(overrides=...)``) gives its standard
rates: the batch rate is the discount times them.
"""

from __future__ import annotations

import datetime
from typing import Any

from hrbench.models._price_package import find_model, package_rates, tier_starts
from hrbench.models._pricing import Price, Pricing

__all__ = ["BATCH_DISCOUNT", "BatchPricing", "discounted", "package_batch_price"]

BATCH_DISCOUNT = 0.5
"""A batch line's price as a share of the standard one, where the price package gives no batch
variant (OpenAI and Anthropic both document 50%)."""


class BatchPricing(Pricing):
    """A price table at the batch rate of ``provider``, over the standard table ``base``.

    Args:
        base: the standard prices (the benchmark's :class:`~hrbench.models.Pricing`).
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

    def _lookup(self, model: str) -> Price | None:
        """The batch price of ``model`` (see the module docstring), uncached: :meth:`price` keeps it."""
        standard = self.base.price(model)
        if standard is None:
            return None
        own = self._listed(model, self.base.overrides) is not None
        if self.base.package and not own:
            listed = package_batch_price(model, self.provider)
            if listed is not None:
                return listed
        return discounted(standard, self.discount)

    def with_overrides(self, overrides: Any) -> Pricing:
        """The batch prices over the standard table with ``overrides`` (standard rates) on top."""
        return BatchPricing(self.base.with_overrides(overrides), self.provider, self.discount)


def discounted(price: Price, share: float) -> Price:
    """``price`` with every rate, of every tier, times ``share``.

    Example:
        >>> p = discounted(Price(2.0, 1.0, 6.0, tiers=((200_000, Price(4.0, 2.0, 9.0)),)), 0.5)
        >>> p.input, p.write_5m, p.tiers[0][0], p.tiers[0][1].output
        (1.0, 1.25, 200000, 4.5)
    """
    return Price(
        price.input * share,
        price.cached_input * share,
        price.output * share,
        price.write_5m * share,
        price.write_1h * share,
        tuple((above, discounted(tier, share)) for above, tier in price.tiers),
    )


def package_batch_price(model: str, provider: str | None) -> Price | None:
    """The batch variant genai-prices lists for ``model`` today, with its tiers, or ``None`` (none, or no package).

    A tiered rate (genai-prices' ``TieredPrices``: Anthropic's long-context batch rates above
    200,000 prompt tokens) keeps its tiers, read by the package's own rule as the standard
    prices are (:func:`~hrbench.models.package_price`).

    Example:
        >>> p = package_batch_price("claude-haiku-4-5", "anthropic")
        >>> p.input, p.output, p.cached_input, p.write_5m, p.write_1h
        (0.5, 2.5, 0.05, 0.625, 1.0)
        >>> package_batch_price("gpt-4o-mini", "openai").output
        0.3
        >>> long = package_batch_price("claude-sonnet-4-5", "anthropic")
        >>> long.input, [(above, t.input, t.output) for above, t in long.tiers]
        (1.5, [(200000, 3.0, 11.25)])
    """
    try:
        from genai_prices.data_snapshot import get_snapshot
    except ImportError:
        return None
    found = find_model(get_snapshot(), model, provider)
    if found is None:
        return None
    info = found[1]
    batch = [v for v in (getattr(info, "price_variants", None) or ()) if v.when == {"processing": "batch"}]
    if not batch:
        return None
    prices = info.get_prices(datetime.datetime.now(datetime.UTC), {"processing": "batch"})
    base = package_rates(prices, 0)
    if base is None:
        return None
    tiers = tuple(
        (start, Price(*at))
        for start in tier_starts(prices)
        if (at := package_rates(prices, start + 1)) is not None
    )
    return Price(*base, tiers=tiers)
