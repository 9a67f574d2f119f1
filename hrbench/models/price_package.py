"""Model prices from genai-prices, a maintained and versioned price package, and where a price came from.

The default price table (:class:`~hrbench.models.pricing.Pricing` with no ``table`` and no
``HRBENCH_PRICES``) looks a model up in the data genai-prices ships (never fetched: the package
can update itself over the network, which hrbench never asks it to), and falls back to the table
shipped with hrbench (``hrbench/data/prices.json``, pinned: a test holds it equal to the package
for the models both list) for a model the package does not know.

Per provider, the package gives the cache rates: cache reads (``cached_input``) and cache writes
(5 minutes and 1 hour, Anthropic's; a provider without a cache-write price bills written
prompt tokens as ordinary input). A price with tiers (a dearer rate for every token once a
prompt passes a size) is taken at its base rate; :attr:`PriceInfo.note` says so.
"""

from __future__ import annotations

import datetime
import functools
import sys
from dataclasses import dataclass
from importlib import metadata
from typing import Any

__all__ = ["PACKAGE", "PriceInfo", "package_price", "package_version"]

PACKAGE = "genai-prices"
"""The price package's distribution name."""


@dataclass(frozen=True)
class PriceInfo:
    """A model's price with where it came from.

    Attributes:
        model: the name asked for.
        input, cached_input, output: USD per million input, cache-read and output tokens.
        cache_write_5m, cache_write_1h: USD per million prompt tokens written to the provider's
            prompt cache for 5 minutes or 1 hour.
        priced_as: the name the price is listed under (``claude-sonnet-4`` for
            ``claude-sonnet-4-20250514``).
        provider: the provider the price is for (``openai``, ``anthropic``), when known.
        source: where the price is from, e.g. ``"genai-prices 0.2.3 (https://...)"``, or
            ``"hrbench's shipped table"``.
        date: the date the price took effect or was checked (ISO), when known.
        note: what to know about the price (tiers), or ``None``.
    """

    model: str
    input: float
    cached_input: float
    output: float
    cache_write_5m: float
    cache_write_1h: float
    priced_as: str
    provider: str | None
    source: str
    date: str | None
    note: str | None = None


def package_version() -> str | None:
    """The installed genai-prices version, or ``None`` when it is not installed."""
    try:
        return metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:
        return None


def _rate(value: Any) -> tuple[float | None, str | None]:
    """A package rate as a float (a tiered one at its base), and the tiers in words."""
    if value is None:
        return None, None
    tiers = getattr(value, "tiers", None)
    if tiers is not None:
        steps = ", ".join(f"{float(t.price):g} from {t.start:,} prompt tokens" for t in tiers)
        return float(value.base), steps
    return float(value), None


def _active(prices: Any, today: datetime.date) -> tuple[Any, str | None]:
    """The price set in force today, and the date it took effect."""
    if not isinstance(prices, list):
        return prices, None
    chosen, since = None, None
    for cond in prices:  # the last one whose start date has come (the package's rule)
        start = getattr(cond.constraint, "start_date", None)
        if cond.constraint is None or (start is not None and start <= today):
            chosen, since = cond.prices, (start.isoformat() if start is not None else since)
    return (chosen if chosen is not None else prices[0].prices), since


def load_package() -> bool:
    """Import genai-prices and load its bundled data, once; whether the package is installed.

    The first lookup does it otherwise, wherever it runs: a runner calls this in a worker
    thread before its first request (the import reads files, which would hold the event loop).

    Example:
        >>> load_package(), load_package()  # the second call finds it loaded
        (True, True)
    """
    try:
        from genai_prices.data_snapshot import get_snapshot
    except ImportError:
        return False
    get_snapshot()
    return True


def package_loaded() -> bool:
    """Whether genai-prices is already imported in this process (nothing left to read)."""
    return "genai_prices.data_snapshot" in sys.modules


@functools.lru_cache(maxsize=4096)
def package_price(model: str, provider: str | None = None) -> PriceInfo | None:
    """The price genai-prices' bundled data give ``model``, or ``None`` (unknown, or no package).

    Args:
        model: a model name as a request names it (``gpt-4o-mini``, ``openai/gpt-4o``).
        provider: the provider's id in the package (``openai``, ``anthropic``), to choose
            between providers that list the same model; ``None`` lets the package choose.

    Returns:
        A :class:`PriceInfo` (``source`` names the package version and the provider's price
        page), or ``None`` when the package is not installed, does not know the model, or lists
        no input or output token price for it.

    Example:
        >>> info = package_price("claude-sonnet-4-5", "anthropic")
        >>> info.input, info.cached_input, info.cache_write_5m, info.cache_write_1h, info.output
        (3.0, 0.3, 3.75, 6.0, 15.0)
        >>> package_price("no-such-model-anywhere") is None
        True
    """
    try:
        from genai_prices.data_snapshot import get_snapshot
    except ImportError:
        return None
    try:
        prov, info = get_snapshot().find_provider_model(model, None, provider, None)
    except LookupError:
        return None
    prices, since = _active(info.prices, datetime.date.today())
    rates = {
        k: _rate(getattr(prices, f"{k}_mtok", None)) for k in ("input", "output", "cache_read", "cache_write")
    }
    rates["cache_write_1h"] = _rate(getattr(prices, "cache_write_1h_mtok", None))
    inp, out = rates["input"][0], rates["output"][0]
    if inp is None or out is None:
        return None
    read = rates["cache_read"][0]
    write = rates["cache_write"][0]
    write_1h = rates["cache_write_1h"][0]
    w5 = write if write is not None else inp  # no cache-write price: written tokens billed as input
    tiers = [f"{k.replace('_', ' ')}: {t}" for k, (_, t) in rates.items() if t]
    note = f"base rates; dearer tiers ({'; '.join(tiers)})" if tiers else None
    page = prov.pricing_urls[0] if prov.pricing_urls else None
    source = f"{PACKAGE} {package_version()}" + (f" ({page})" if page else "")
    return PriceInfo(
        model=model,
        input=inp,
        cached_input=inp if read is None else read,
        output=out,
        cache_write_5m=w5,
        cache_write_1h=w5 if write_1h is None else write_1h,
        priced_as=info.id,
        provider=prov.id,
        source=source,
        date=since,
        note=note,
    )
