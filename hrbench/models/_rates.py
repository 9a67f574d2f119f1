"""One model's rates in USD per million tokens (:class:`Price`, with its tiers), read and checked.

A price entry is a model's line in a price table (``hrbench/data/prices.json``, the file
``HRBENCH_PRICES`` names), an override (``Pricing(overrides=...)``, a spec's ``price`` and
``prices``), or the string ``"free"``. :func:`read_entry` reads one and refuses, before any
call, a price that is not a finite number >= 0, naming ``prices.<model>.<part>`` and the
value; :func:`refuse_zero` refuses a rate of 0 where another source prices the model (a
model is free only when the user says so). The rules are in ``docs/guides/prices.md``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from hrbench.errors import ConfigError

__all__ = [
    "CACHE_WRITE_1H",
    "CACHE_WRITE_5M",
    "FREE",
    "PARTS",
    "Price",
    "check_rates",
    "read_entry",
    "refuse_zero",
]

CACHE_WRITE_5M = 1.25
"""A 5-minute prompt-cache write's price, in multiples of the input rate (Anthropic's)."""

CACHE_WRITE_1H = 2.0
"""A 1-hour prompt-cache write's price, in multiples of the input rate (Anthropic's)."""

FREE = "free"
"""The price entry that declares a model free: every rate 0, and no other source can refuse it."""

PARTS = ("input", "cached_input", "output", "cache_write_5m", "cache_write_1h")
"""The rates of a :class:`Price`, in the order errors and ``hrb prices`` name them."""

FREE_HOW = (
    'price = "free" in the spec\'s client (prices = {{"{m}" = "free"}} for another model), '
    '"{m}": "free" in the HRBENCH_PRICES file, or hrbench.Pricing(free={{"{m}"}}) in Python'
)
"""How to declare model ``{m}`` free, as an error says it."""


@dataclass(frozen=True)
class Price:
    """USD per million tokens of one model, with the rates of its prompt-size tiers.

    ``cache_write_5m`` and ``cache_write_1h``: prompt tokens written to the provider's prompt
    cache for 5 minutes or 1 hour (Anthropic reports them apart); ``None`` means
    :data:`CACHE_WRITE_5M` and :data:`CACHE_WRITE_1H` times ``input`` (1.25x and 2x, as
    Anthropic bills them). Cache reads are ``cached_input``.

    ``tiers``: ``(above, price)`` pairs in ascending ``above``: a request whose prompt
    (``tokens_in``, cache reads and writes included) has more than ``above`` tokens pays every
    token of the request at that tier's rates (genai-prices' ``TieredPrices``, the providers'
    long-context rule: Anthropic and Google above 200,000 prompt tokens; case H4-13).

    Example:
        >>> p = Price(input=3.0, cached_input=0.3, output=15.0,
        ...           tiers=((200_000, Price(input=6.0, cached_input=0.6, output=22.5)),))
        >>> p.write_5m, p.write_1h, p.at(200_000).input, p.at(200_001).input
        (3.75, 6.0, 3.0, 6.0)
    """

    input: float
    cached_input: float
    output: float
    cache_write_5m: float | None = None
    cache_write_1h: float | None = None
    tiers: tuple[tuple[int, Price], ...] = field(default=())

    @property
    def write_5m(self) -> float:
        """USD per million prompt tokens written to the prompt cache for 5 minutes."""
        return self.input * CACHE_WRITE_5M if self.cache_write_5m is None else self.cache_write_5m

    @property
    def write_1h(self) -> float:
        """USD per million prompt tokens written to the prompt cache for 1 hour."""
        return self.input * CACHE_WRITE_1H if self.cache_write_1h is None else self.cache_write_1h

    def at(self, tokens_in: int) -> Price:
        """The rates a request with ``tokens_in`` prompt tokens pays: its highest tier passed, else the base.

        genai-prices' rule (``calc_unit_price``): a tier applies when the prompt's tokens are
        more than its start.
        """
        for above, tier in reversed(self.tiers):
            if tokens_in > above:
                return tier
        return self

    def reachable(self, tokens_in_max: int) -> list[Price]:
        """The rates a request of at most ``tokens_in_max`` prompt tokens may pay (for its worst case).

        Example:
            >>> p = Price(1.0, 1.0, 2.0, tiers=((200_000, Price(2.0, 2.0, 3.0)),))
            >>> [r.input for r in p.reachable(150_000)], [r.input for r in p.reachable(250_000)]
            ([1.0], [1.0, 2.0])
        """
        if not self.tiers:  # most prices: one rate for every prompt
            return [self]
        return [self, *(tier for above, tier in self.tiers if tokens_in_max > above)]

    def parts(self) -> Iterator[tuple[str, float]]:
        """Every rate given, by its name in an error (``input``, ``tiers[0].output``).

        Example:
            >>> [n for n, _ in Price(1.0, 0.5, 2.0, tiers=((9, Price(2.0, 1.0, 4.0)),)).parts()]
            ['input', 'cached_input', 'output', 'tiers[0].input', 'tiers[0].cached_input', 'tiers[0].output']
        """
        for part in PARTS:
            value = getattr(self, part)
            if value is not None:
                yield part, value
        for i, (_, tier) in enumerate(self.tiers):
            for part, value in tier.parts():
                yield f"tiers[{i}].{part}", value

    @property
    def free(self) -> bool:
        """Whether every rate, of every tier, is 0."""
        return not any(value for _, value in self.parts())


ZERO = Price(0.0, 0.0, 0.0, 0.0, 0.0)
"""A free model's price."""


def usable(usd: float) -> bool:
    """Whether a rate is a finite number >= 0 (NaN and infinity are not).

    Example:
        >>> [usable(x) for x in (0.0, 2.5, -0.1, float("nan"), float("inf"))]
        [True, True, False, False, False]
    """
    return math.isfinite(usd) and usd >= 0


def check_rates(model: str, price: Price, source: str = "") -> None:
    """Refuse a price with a rate that is not a finite number >= 0, naming the model, the rate and the value.

    Args:
        model: the model's name in the table.
        price: its price.
        source: where it came from, said in the error (``"from genai-prices 0.2.5"``).

    Raises:
        ConfigError: ``prices.<model>.<part>`` (``prices.m.tiers[0].output`` for a tier's rate).

    Example:
        >>> check_rates("m", Price(1.0, 1.0, float("nan")))
        Traceback (most recent call last):
        ...
        hrbench.errors.ConfigError: prices.m.output: expected a finite number of USD per million tokens >= 0 (got nan)
    """
    for part, value in price.parts():
        if not usable(value):
            said = f" ({source})" if source else ""
            raise ConfigError(
                f"prices.{model}.{part}",
                value,
                f"expected a finite number of USD per million tokens >= 0{said}",
            )


def read_entry(model: str, entry: Any) -> Price:
    """A price entry read and checked: ``{"input", "output"[, "cached_input", ...][, "tiers"]}`` or ``"free"``.

    ``cached_input`` defaults to ``input``; ``cache_write_5m`` and ``cache_write_1h`` to 1.25x
    and 2x ``input``. ``tiers`` is a list of entries of the same shape, each with ``above`` (a
    number of prompt tokens), in ascending order.

    Raises:
        ConfigError: an entry that is not one of these shapes, or a rate that is not a finite
            number >= 0, naming ``prices.<model>.<part>`` and the value.

    Example:
        >>> read_entry("m", {"input": 3, "output": 15, "tiers": [{"above": 200000, "input": 6, "output": 22.5}]}).at(250_000).output
        22.5
        >>> read_entry("local", "free").free
        True
    """
    if entry == FREE:
        return ZERO
    price = _entry(f"prices.{model}", entry)
    check_rates(model, price)
    return price


def _entry(field_name: str, entry: Any, tiers: bool = True) -> Price:
    try:
        w5, w1 = (
            None if entry.get(k) is None else float(entry[k]) for k in ("cache_write_5m", "cache_write_1h")
        )
        base = Price(
            float(entry["input"]),
            float(entry.get("cached_input", entry["input"])),
            float(entry["output"]),
            w5,
            w1,
        )
    except (KeyError, TypeError, ValueError, AttributeError):
        raise ConfigError(
            field_name, entry, 'expected input, cached_input and output USD per million (or "free")'
        ) from None
    listed = entry.get("tiers") if tiers else None
    if listed is None:
        return base
    if not isinstance(listed, list) or not listed:
        raise ConfigError(
            f"{field_name}.tiers", listed, "expected a list of prices, each with `above` tokens"
        )
    read: list[tuple[int, Price]] = []
    for i, tier in enumerate(listed):
        above = tier.get("above") if isinstance(tier, Mapping) else None
        if (
            not isinstance(above, int)
            or isinstance(above, bool)
            or above < 0
            or (read and above <= read[-1][0])
        ):
            raise ConfigError(
                f"{field_name}.tiers[{i}].above",
                above,
                "expected prompt tokens >= 0, each tier above the last",
            )
        read.append((above, _entry(f"{field_name}.tiers[{i}]", tier, tiers=False)))
    return Price(base.input, base.cached_input, base.output, w5, w1, tiers=tuple(read))


def refuse_zero(model: str, price: Price, references: Iterable[tuple[str, Price | None]], whose: str) -> None:
    """Refuse a rate of 0 where another source gives the model a rate above 0.

    A model is free only when the user declares it (:data:`FREE`): a 0 in a table, an override
    or the price package's data is otherwise taken as a mistake or tampering, since it would
    let a USD cap be passed without bound. Each rate of ``price`` (a tier's at its own prompt
    size) is compared with the same rate of each reference at that size.

    Args:
        model: the model's name.
        price: the price checked.
        references: ``(source, price)`` pairs to compare with, e.g. genai-prices' bundled data
            and hrbench's shipped table (``None``: the source does not list the model).
        whose: where ``price`` came from, for the error (``"HRBENCH_PRICES (p.json)"``).

    Raises:
        ConfigError: ``prices.<model>.<part>``, with the reference's rate and how to declare
            the model free.

    Example:
        >>> refuse_zero("gpt-4o", Price(0.0, 0.0, 10.0), [("genai-prices", Price(2.5, 1.25, 10.0))], "an override")
        Traceback (most recent call last):
        ...
        hrbench.errors.ConfigError: prices.gpt-4o.input: a rate of 0 in an override, where genai-prices has 2.5 USD per million tokens ...
    """
    zeros = [
        (i, above, part)
        for i, (above, rates) in enumerate([(-1, price), *price.tiers])
        for part in PARTS
        if _effective(rates, part) == 0
    ]
    if not zeros:  # the references are not asked (the package is read only when needed)
        return
    refs = [(source, ref) for source, ref in references if ref is not None]
    for i, above, part in zeros:
        for source, ref in refs:
            listed = _effective(ref.at(above + 1), part)
            if listed > 0:
                name = part if i == 0 else f"tiers[{i - 1}].{part}"
                raise ConfigError(
                    f"prices.{model}.{name}",
                    0.0,
                    f"a rate of 0 in {whose}, where {source} has {listed:g} USD per million tokens (a 0 "
                    f"set by mistake or tampering lets a USD cap be passed); if the model is free for "
                    f"you, declare it: {FREE_HOW.format(m=model)}",
                )


def _effective(price: Price, part: str) -> float:
    """The rate ``part`` of ``price`` as billed (a cache write's default included)."""
    if part == "cache_write_5m":
        return price.write_5m
    if part == "cache_write_1h":
        return price.write_1h
    return float(getattr(price, part))
