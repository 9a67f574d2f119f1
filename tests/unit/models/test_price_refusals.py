"""A price table that lies is refused before the first request, wherever the price comes from.

genai-prices' data were used as given: a tampered price of $0 let a USD cap be passed, a negative
price was billed as a refund and a NaN one raised only after a paid call. Every source is now
checked where it is loaded: a rate must be a finite number >= 0, and a rate of 0 where the
package's bundled data or hrbench's shipped table prices the model is refused unless the model is
declared free (``"free"``, ``Pricing(free=...)``). The loopback provider counts the requests: 0.
The daemon's side (``hrb bench`` exit 2) is in ``tests/clients/test_cli_prices_refused.py``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import warnings
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from genai_prices import data_snapshot
from genai_prices.types import ModelPrice

import hrbench as hb
from hrbench.errors import ConfigError
from hrbench.models import _price_package as price_package
from hrbench.models import _pricing as pricing
from hrbench.testing import LoopbackServer
from tests.unit.models.conftest import FAST


def _forget() -> None:
    price_package.package_price.cache_clear()
    pricing._DEFAULT = None


@contextlib.contextmanager
def tampered(provider: str, model: str, **rates: Any) -> Iterator[hb.Pricing]:
    """genai-prices' bundled data with ``model``'s rates replaced (as an edited package would have them).

    Yields the default price table, read afresh; everything is put back on exit.
    """
    prov = next(p for p in data_snapshot.get_snapshot().providers if p.id == provider)
    info = next(m for m in prov.models if m.id == model)
    kept = info.prices
    current = kept if isinstance(kept, ModelPrice) else kept[-1].prices
    values = {k: v for k, v in current.__dict__.items() if not k.startswith("_")}
    info.prices = ModelPrice(**{**values, **rates})
    _forget()
    try:
        yield hb.Pricing()
    finally:
        info.prices = kept
        _forget()


@contextlib.contextmanager
def updated_snapshot(provider: str, model: str, **rates: Any) -> Iterator[None]:
    """A snapshot set in this process (as genai-prices' updater sets one) listing ``model`` at ``rates``."""
    prov = next(p for p in data_snapshot.get_snapshot().providers if p.id == provider)
    info = next(m for m in prov.models if m.id == model)
    custom = data_snapshot.DataSnapshot(
        providers=[dataclasses.replace(prov, models=[dataclasses.replace(info, prices=ModelPrice(**rates))])],
        from_auto_update=True,
    )
    data_snapshot.set_custom_snapshot(custom)
    _forget()
    try:
        yield
    finally:
        data_snapshot.set_custom_snapshot(None)
        _forget()


def _run(srv: LoopbackServer, model: str = "gpt-4o-mini", **kw: Any) -> hb.Bench:
    ref = hb.Reference({"q1": "France", "q2": "Peru"}, labels={"q1": "Paris", "q2": "Lima"})
    arm = hb.Arm("ask", lambda item, ctx: ctx.call(f"Capital of {item}?", max_tokens=20).raw_text)
    client = hb.OpenAIClient(model, base_url=srv.base_url, api_key_env=None, **FAST)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return hb.benchmark(arm, ref, runs=2, client=client, **kw)


BAD = [
    (
        Decimal("0"),
        r"a rate of 0 in genai-prices [0-9.]+'s data, where hrbench's shipped table .* has 0\.15 .*\(got 0\.0\)",
    ),
    (
        Decimal("-0.15"),
        r"expected a finite number of USD per million tokens >= 0 .*genai-prices.*\(got -0\.15\)",
    ),
    (Decimal("NaN"), r"expected a finite number of USD per million tokens >= 0 .*genai-prices.*\(got nan\)"),
]


@pytest.mark.parametrize("capped", [True, False], ids=["a USD cap", "no cap"])
@pytest.mark.parametrize(("value", "said"), BAD, ids=["zero", "negative", "NaN"])
def test_a_tampered_package_price_is_refused_before_the_first_request(
    srv: LoopbackServer, value: Decimal, said: str, capped: bool
) -> None:
    srv.set(price={"input": 0.15, "output": 0.6})  # what the provider really bills
    governor = hb.Governor(max_usd=0.0001) if capped else hb.Governor()
    with (
        tampered("openai", "gpt-4o-mini", input_mtok=value),
        pytest.raises(ConfigError, match=rf"^prices\.gpt-4o-mini\.input: {said}"),
    ):
        _run(srv, governor=governor)
    assert srv.requests == []


def test_a_tampered_tier_rate_is_refused_naming_the_tier(srv: LoopbackServer) -> None:
    from genai_prices.types import Tier, TieredPrices

    lying = TieredPrices(Decimal("15"), [Tier(200_000, Decimal("NaN"))])
    with (
        tampered("anthropic", "claude-sonnet-4-5", output_mtok=lying),
        pytest.raises(ConfigError, match=r"^prices\.claude-sonnet-4-5\.tiers\[0\]\.output: .*\(got nan\)"),
    ):
        _run(srv, model="claude-sonnet-4-5")
    assert srv.requests == []


def test_a_price_of_0_in_a_snapshot_set_in_the_process_is_checked_against_the_bundled_data(
    srv: LoopbackServer,
) -> None:
    with (
        updated_snapshot("openai", "gpt-4o-mini", input_mtok=Decimal("0"), output_mtok=Decimal("0")),
        pytest.raises(
            ConfigError,
            match=r"^prices\.gpt-4o-mini\.input: .*where genai-prices [0-9.]+'s bundled data has 0\.15",
        ),
    ):
        _run(srv, governor=hb.Governor(max_usd=0.5))
    assert srv.requests == []


def test_hrb_prices_refuses_a_tampered_price_too() -> None:
    with tampered("openai", "gpt-4o", output_mtok=Decimal("-10")) as table:
        with pytest.raises(ConfigError, match=r"^prices\.gpt-4o\.output: .*\(got -10\.0\)"):
            table.describe("gpt-4o")
        assert table.describe("gpt-4o-mini") is not None  # one model's bad price refuses that model


def _table(tmp_path: Path, models: dict[str, Any]) -> str:
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"models": models}))
    return str(path)


def test_a_price_of_0_in_hrbench_prices_is_refused_unless_declared_free(
    srv: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    zero = _table(tmp_path, {"gpt-4o-mini": {"input": 0.0, "output": 0.0}})
    monkeypatch.setenv("HRBENCH_PRICES", zero)
    _forget()
    with pytest.raises(
        ConfigError,
        match=rf"^prices\.gpt-4o-mini\.input: a rate of 0 in HRBENCH_PRICES \({zero}\), where genai-prices .* "
        r"has 0\.15 .*declare it: .*\"gpt-4o-mini\": \"free\" in the HRBENCH_PRICES file",
    ):
        _run(srv, governor=hb.Governor(max_usd=0.5))
    assert srv.requests == []
    monkeypatch.setenv("HRBENCH_PRICES", _table(tmp_path, {"gpt-4o-mini": "free"}))
    _forget()
    bench = _run(srv, governor=hb.Governor(max_usd=0.5))
    assert len(srv.requests) == 4 and [r.usd for r in bench.rows] == [0.0] * 4
    _forget()


def test_a_price_of_0_in_an_override_is_refused_unless_declared_free() -> None:
    with pytest.raises(ConfigError, match=r"^prices\.gpt-4o\.input: a rate of 0 in an override"):
        hb.Pricing(overrides={"gpt-4o": {"input": 0.0, "output": 0.0}})
    with pytest.raises(ConfigError, match=r"^prices\.claude-haiku-4-5\.cached_input: .* has 0\.1 USD"):
        hb.Pricing(overrides={"claude-haiku-4-5": {"input": 1.0, "cached_input": 0.0, "output": 5.0}})
    with pytest.raises(ConfigError, match=r"^prices\.gpt-4o\.output: .*(got 0\.0)"):  # a judge's own prices
        hb.Pricing().with_overrides({"gpt-4o": {"input": 2.5, "output": 0.0}})
    assert hb.Pricing(free={"gpt-4o"}).price("gpt-4o").free
    assert (
        hb.Pricing(overrides={"gpt-4o": "free"}).cost(hb.Usage(tokens_in=10**6, tokens_out=10**6), "gpt-4o")
        == 0.0
    )
    # a model no source prices, and hrbench's own mock, may cost 0 without a declaration
    assert (
        hb.Pricing(overrides={"my-local-llama": {"input": 0.0, "output": 0.0}}).price("my-local-llama").free
    )
    assert hb.Pricing(overrides={"mock": {"input": 0.0, "output": 0.0}}).price("mock").free


def test_a_model_declared_free_and_priced_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"^free: declared free and priced"):
        hb.Pricing(overrides={"m": {"input": 1.0, "output": 2.0}}, free={"m"})


@pytest.mark.parametrize("entry", [[1, 2], "gratis", {"input": "x", "output": 1}, None])
def test_a_malformed_entry_is_refused_naming_the_model(entry: Any) -> None:
    with pytest.raises(ConfigError, match=r"^prices\.m: expected input, cached_input and output"):
        hb.Pricing(overrides={"m": entry})


@pytest.mark.parametrize("table", [[], {"models": [1]}, {"models": "x"}])
def test_a_table_that_is_not_a_table_of_models_is_refused(table: Any) -> None:
    with pytest.raises(ConfigError, match=r"^prices\.models: expected a table"):
        hb.Pricing(table=table)
