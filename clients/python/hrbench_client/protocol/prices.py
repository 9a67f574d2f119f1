"""The daemon's model prices (``hrb prices MODEL``): each price with its source and date."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta, Struct, field

from hrbench_client.protocol._base import _Spec

__all__ = ["ModelPrice", "PriceTier", "PricesParams", "PricesResult"]


class PricesParams(_Spec):
    """Params of ``prices``: the models to price, by the names requests give them."""

    models: Annotated[list[str], Meta(min_length=1, description="model names, e.g. gpt-4o-mini")]


class PriceTier(Struct, kw_only=True):
    """The rates of every token of a request whose prompt has more than ``above`` tokens, USD per million tokens.

    A long-context price (Anthropic's and Google's above 200,000 prompt tokens): once a prompt
    passes ``above``, all its tokens, output included, are billed at these rates.
    """

    above: int
    input: float
    cached_input: float
    output: float
    cache_write_5m: float
    cache_write_1h: float


class ModelPrice(Struct, kw_only=True):
    """One model's price in the daemon's table, USD per million tokens, with where it came from.

    ``cached_input`` is the cache-read rate; ``cache_write_5m`` and ``cache_write_1h`` the rates
    of prompt tokens written to the provider's cache (a provider without a cache-write price
    bills them as input). ``source`` is the price package and its version (with the provider's
    price page), the table hrbench ships, the file ``HRBENCH_PRICES`` names, or an override;
    ``date`` the date the price took effect or was checked, when known. ``tiers``: the rates
    above each prompt size (empty for a price with none).
    """

    model: str
    priced_as: str
    provider: str | None = None
    input: float
    cached_input: float
    output: float
    cache_write_5m: float
    cache_write_1h: float
    source: str
    date: str | None = None
    note: str | None = None
    tiers: list[PriceTier] = field(default_factory=list)


class PricesResult(Struct, kw_only=True):
    """The models priced, in the order asked, and those with no price."""

    prices: list[ModelPrice]
    unpriced: list[str]
    closest: Annotated[
        dict[str, str],
        Meta(
            description="for an unpriced model whose name is close to a priced one (a misspelling), that name: "
            '{"gpt-4o-mni": "gpt-4o-mini"}'
        ),
    ] = field(default_factory=dict)
