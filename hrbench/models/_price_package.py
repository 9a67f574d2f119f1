"""Model prices from genai-prices, a maintained and versioned price package, and where a price came from.

The default price table (:class:`~hrbench.models.Pricing` with no ``table`` and no
``HRBENCH_PRICES``) looks a model up in the data genai-prices ships (never fetched: the package
can update itself over the network, which hrbench never asks it to), and falls back to the table
shipped with hrbench (``hrbench/data/prices.json``, pinned: a test holds it equal to the package
for the models both list) for a model the package does not know.

Per provider, the package gives the cache rates: cache reads (``cached_input``) and cache writes
(5 minutes and 1 hour, Anthropic's; a provider without a cache-write price bills written
prompt tokens as ordinary input). A price with tiers (genai-prices' ``TieredPrices``: every
token of a request billed at a dearer rate once its prompt passes a size, as Anthropic and Google
bill long contexts) keeps them: :attr:`PriceInfo.tiers`, each tier's rates chosen by the package's
own rule (``genai_prices.types.calc_unit_price``).
"""

from __future__ import annotations

import datetime
import functools
import math
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import metadata
from typing import Any

__all__ = [
    "PACKAGE",
    "PriceInfo",
    "TierInfo",
    "find_model",
    "names_model",
    "package_names",
    "package_price",
    "package_rates",
    "package_version",
    "tier_starts",
]

PACKAGE = "genai-prices"
"""The price package's distribution name."""


@dataclass(frozen=True)
class TierInfo:
    """The rates of a request whose prompt has more than ``above`` tokens (USD per million tokens).

    Every token of such a request is billed at these rates, not only those past ``above``.
    """

    above: int
    input: float
    cached_input: float
    output: float
    cache_write_5m: float
    cache_write_1h: float


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
        note: what to know about the price (how its tiers apply), or ``None``.
        tiers: the rates above each prompt size, in ascending ``above`` (long-context prices).
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
    tiers: tuple[TierInfo, ...] = ()


def package_version() -> str | None:
    """The installed genai-prices version, or ``None`` when it is not installed."""
    try:
        return metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:
        return None


TIERS_NOTE = "every token of a request whose prompt has more than a tier's `above` tokens is billed at that tier's rates"
"""What :attr:`PriceInfo.note` says of a price with tiers."""

_KEYS = ("input", "output", "cache_read", "cache_write", "cache_write_1h")
"""The package's token prices hrbench bills (``<key>_mtok``)."""


def _rate_at(value: Any, tokens_in: int) -> float | None:
    """A package rate (a ``Decimal`` or ``TieredPrices``) for a prompt of ``tokens_in`` tokens, as a float.

    The tier is chosen by the package's own rule (``calc_unit_price``); a value it cannot
    read is NaN, which the price table's check refuses, naming the model and the rate.
    """
    if value is None:
        return None
    from genai_prices.types import calc_unit_price

    try:
        return float(calc_unit_price(value, 1_000_000, tokens_in, 1_000_000))
    except (TypeError, ValueError, ArithmeticError, AttributeError):
        return math.nan


def package_rates(prices: Any, tokens_in: int) -> tuple[float, float, float, float, float] | None:
    """``(input, cache read, output, 5-minute write, 1-hour write)`` at ``tokens_in``, or ``None``.

    ``prices``: a genai-prices ``ModelPrice`` (USD per million tokens). A rate the package leaves
    out is billed as the package bills it: cache reads and writes as input, 1-hour writes as
    5-minute ones.

    Example:
        >>> from decimal import Decimal
        >>> from genai_prices.types import ModelPrice
        >>> package_rates(ModelPrice(input_mtok=Decimal("1"), output_mtok=Decimal("2")), 0)
        (1.0, 1.0, 2.0, 1.0, 1.0)
    """
    got = {k: _rate_at(getattr(prices, f"{k}_mtok", None), tokens_in) for k in _KEYS}
    inp, out = got["input"], got["output"]
    if inp is None or out is None:
        return None
    read, w5, w1 = got["cache_read"], got["cache_write"], got["cache_write_1h"]
    w5 = inp if w5 is None else w5  # no cache-write price: written tokens billed as input
    return inp, inp if read is None else read, out, w5, w5 if w1 is None else w1


def tier_starts(prices: Any) -> list[int]:
    """The prompt sizes (tokens) where a rate of ``prices`` (a genai-prices ``ModelPrice``) changes tier, ascending.

    Example:
        >>> from decimal import Decimal
        >>> from genai_prices.types import ModelPrice, TieredPrices, Tier
        >>> tiered = TieredPrices(base=Decimal("1"), tiers=[Tier(start=200_000, price=Decimal("2"))])
        >>> tier_starts(ModelPrice(input_mtok=tiered, output_mtok=Decimal("2")))
        [200000]
    """
    found: set[int] = set()
    for k in _KEYS:
        for tier in getattr(getattr(prices, f"{k}_mtok", None), "tiers", None) or ():
            found.add(int(tier.start))
    return sorted(found)


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


def _snapshot(bundled: bool) -> Any:
    """genai-prices' data in force (a snapshot set by its updater or a user), or its bundled data."""
    import importlib

    data_snapshot = importlib.import_module("genai_prices.data_snapshot")
    bundled_data = getattr(data_snapshot, "_bundled_snapshot", None)
    return bundled_data() if bundled and bundled_data is not None else data_snapshot.get_snapshot()


def _literals(match: Any) -> Iterator[str]:
    """The names a genai-prices match clause lists (equals, starts-with, contains, ends-with), walked through and/or."""
    for key in ("equals", "starts_with", "contains", "ends_with"):
        value = getattr(match, key, None)
        if isinstance(value, str):
            yield value.strip("-@./")
    for key in ("or_", "and_"):
        for clause in getattr(match, key, None) or ():
            yield from _literals(clause)


def _patterns(match: Any) -> Iterator[str]:
    """The regular expressions of a match clause anchored at both ends (a whole name's pattern)."""
    regex = getattr(match, "regex", None)
    if isinstance(regex, str) and regex.startswith("^") and regex.endswith("$"):
        yield regex
    for key in ("or_", "and_"):
        for clause in getattr(match, key, None) or ():
            yield from _patterns(clause)


def names_model(model: str, info: Any) -> bool:
    """Whether ``model`` is the package's model ``info`` by a name the package lists for it.

    Its id, a name its match logic lists, or a dated snapshot or release of one
    (:func:`~hrbench.models._model_names.is_snapshot_of`), or a name matching one of its whole-name
    patterns. A name that only starts with a listed one (``gpt-4o-mni``) is not: it is another
    model or a typo, and has no price.
    """
    from hrbench.models._model_names import is_snapshot_of

    if any(is_snapshot_of(model, name) for name in (info.id, *_literals(info.match)) if name):
        return True
    return any(re.fullmatch(regex, model.lower()) for regex in _patterns(info.match))


def find_model(snapshot: Any, model: str, provider: str | None) -> tuple[Any, Any] | None:
    """genai-prices' ``(provider, model)`` for ``model``, or ``None`` when it lists none by that name.

    The package matches by prefix and pattern too; a match counts only when ``model`` is
    one of the names it lists for the model or a dated snapshot of one (:func:`names_model`).

    Example:
        >>> from genai_prices.data_snapshot import get_snapshot
        >>> find_model(get_snapshot(), "gpt-4o-2024-08-06", None)[1].id
        'gpt-4o'
        >>> find_model(get_snapshot(), "gpt-4o-mni", None) is None
        True
    """
    try:
        prov, info = snapshot.find_provider_model(model, None, provider, None)
    except LookupError:
        return None
    return (prov, info) if names_model(model, info) else None


@functools.lru_cache(maxsize=1)
def package_names() -> frozenset[str]:
    """Every model id and exact alias genai-prices' data list (what a misspelt name is matched against)."""
    try:
        snapshot = _snapshot(False)
    except ImportError:
        return frozenset()
    names: set[str] = set()
    for prov in snapshot.providers:
        for info in prov.models:
            names.add(info.id)
            names.update(_equals(info.match))
    return frozenset(names)


def _equals(match: Any) -> Iterator[str]:
    """The exact names of a match clause."""
    if isinstance(value := getattr(match, "equals", None), str):
        yield value
    for key in ("or_", "and_"):
        for clause in getattr(match, key, None) or ():
            yield from _equals(clause)


@functools.lru_cache(maxsize=4096)
def package_price(model: str, provider: str | None = None, bundled: bool = False) -> PriceInfo | None:
    """The price genai-prices' data give ``model``, or ``None`` (unknown, or no package).

    Args:
        model: a model name as a request names it (``gpt-4o-mini``, ``openai/gpt-4o``).
        provider: the provider's id in the package (``openai``, ``anthropic``), to choose
            between providers that list the same model; ``None`` lets the package choose.
        bundled: the data bundled with the installed package, even when a newer snapshot was
            set in this process (the reference a price of 0 is checked against).

    Returns:
        A :class:`PriceInfo` (``source`` names the package version and the provider's price
        page), or ``None`` when the package is not installed, does not know the model, or lists
        no input or output token price for it. Its rates are as the package lists them,
        unchecked (:class:`~hrbench.models.Pricing` checks them).

    Example:
        >>> info = package_price("claude-sonnet-4-5", "anthropic")
        >>> info.input, info.cached_input, info.cache_write_5m, info.cache_write_1h, info.output
        (3.0, 0.3, 3.75, 6.0, 15.0)
        >>> [(t.above, t.input, t.output) for t in info.tiers]
        [(200000, 6.0, 22.5)]
        >>> package_price("no-such-model-anywhere") is None
        True
        >>> package_price("claude-sonnet-4-5-typo") is None  # the package's prefix match is not a name
        True
    """
    try:
        snapshot = _snapshot(bundled)
    except ImportError:
        return None
    found = find_model(snapshot, model, provider)
    if found is None:
        return None
    prov, info = found
    prices, since = _active(info.prices, datetime.date.today())
    base = package_rates(prices, 0)
    if base is None:
        return None
    tiers = []
    for start in tier_starts(prices):
        at = package_rates(prices, start + 1)
        if at is not None:
            tiers.append(TierInfo(start, *at))
    page = prov.pricing_urls[0] if prov.pricing_urls else None
    source = f"{PACKAGE} {package_version()}" + (f" ({page})" if page else "")
    inp, read, out, w5, w1 = base
    return PriceInfo(
        model=model,
        input=inp,
        cached_input=read,
        output=out,
        cache_write_5m=w5,
        cache_write_1h=w1,
        priced_as=info.id,
        provider=prov.id,
        source=source,
        date=since,
        note=TIERS_NOTE if tiers else None,
        tiers=tuple(tiers),
    )
