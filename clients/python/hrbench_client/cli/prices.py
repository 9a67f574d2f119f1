"""``hrb prices MODEL...``: the daemon's price of each model, with its tiers, source and date."""

from __future__ import annotations

from hrbench_client.cli._common import _client, _err, _out
from hrbench_client.cli.exit_codes import EXIT_OK, EXIT_USAGE

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from hrbench_client.protocol import ModelPrice

__all__ = ["cmd_prices", "price_text"]

UNPRICED = (
    "no price for {model!r} in the daemon's table{hint}: give one in the spec's client, "
    "[client.price] input = USD_PER_M, output = USD_PER_M (or HRBENCH_PRICES=prices.json for the daemon)"
)
"""What ``hrb prices`` says on stderr of a model with no price (exit 2)."""


def price_text(m: ModelPrice) -> str:
    """One model's price as ``hrb prices --text`` prints it.

    Example:
        >>> from hrbench_client.protocol import ModelPrice
        >>> m = ModelPrice(model="m", priced_as="m", input=1.0, cached_input=0.5, output=2.0,
        ...                cache_write_5m=1.25, cache_write_1h=2.0, source="a table", date="2025-08-01")
        >>> print(price_text(m))
        m: input 1, cache read 0.5, cache write 1.25 (5 min) / 2 (1 h), output 2 USD per million tokens
          source: a table; date: 2025-08-01
        >>> from hrbench_client.protocol import PriceTier
        >>> t = PriceTier(above=200000, input=2.0, cached_input=1.0, output=4.0, cache_write_5m=2.5, cache_write_1h=4.0)
        >>> print(price_text(ModelPrice(model="m", priced_as="m", input=1.0, cached_input=0.5, output=2.0,
        ...                             cache_write_5m=1.25, cache_write_1h=2.0, source="a table", tiers=[t])))
        m: input 1, cache read 0.5, cache write 1.25 (5 min) / 2 (1 h), output 2 USD per million tokens
          source: a table; date: not recorded (the source version pins it)
          above 200,000 prompt tokens: input 2, cache read 1, cache write 2.5 (5 min) / 4 (1 h), output 4
    """
    name = m.model if m.priced_as == m.model else f"{m.model} (as {m.priced_as})"
    lines = [
        f"{name}: input {m.input:g}, cache read {m.cached_input:g}, cache write {m.cache_write_5m:g} (5 min) / "
        f"{m.cache_write_1h:g} (1 h), output {m.output:g} USD per million tokens",
        f"  source: {m.source}; date: {m.date or 'not recorded (the source version pins it)'}"
        + (f"; provider: {m.provider}" if m.provider else ""),
    ]
    for t in m.tiers:
        lines.append(
            f"  above {t.above:,} prompt tokens: input {t.input:g}, cache read {t.cached_input:g}, cache write "
            f"{t.cache_write_5m:g} (5 min) / {t.cache_write_1h:g} (1 h), output {t.output:g}"
        )
    if m.note:
        lines.append(f"  note: {m.note}")
    return "\n".join(lines)


def cmd_prices(args: argparse.Namespace) -> int:
    """Run ``hrb prices``: exit 0 when every model has a price, 2 when one has none."""
    from hrbench_client import protocol as p

    with _client(args) as hb:
        res = hb.call("prices", p.PricesParams(models=list(args.models)), p.PricesResult)
    for m in res.prices:
        if args.text:
            print(price_text(m))
        else:
            _out(m)
    for model in res.unpriced:
        near = res.closest.get(model)
        _err(UNPRICED.format(model=model, hint=f" (did you mean {near}?)" if near else ""))
    return EXIT_USAGE if res.unpriced else EXIT_OK
