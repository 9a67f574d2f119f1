"""Prices from genai-prices' bundled data, the shipped table as the pinned fallback (no network)."""

from __future__ import annotations

import json
import sys
from importlib import resources

import pytest

from hrbench.models import Pricing, package_price
from hrbench.models import _price_package as price_package
from hrbench.models._price_package import package_version
from hrbench.models._pricing import CACHE_WRITE_1H, CACHE_WRITE_5M

SHIPPED = json.loads(resources.files("hrbench").joinpath("data/prices.json").read_text("utf-8"))
FREE = {"mock", "replay"}  # hrbench's own clients: never in a provider's price list


def _provider(model: str) -> str:
    return "anthropic" if model.startswith("claude") else "openai"


@pytest.mark.parametrize("model", sorted(set(SHIPPED["models"]) - FREE))
def test_the_shipped_table_agrees_with_the_package_for_every_model_both_list(model: str) -> None:
    want = SHIPPED["models"][model]
    got = package_price(model, _provider(model))
    assert got is not None, f"{model}: genai-prices {package_version()} no longer lists it"
    assert (got.input, got.cached_input, got.output) == (want["input"], want["cached_input"], want["output"])
    if got.provider == "anthropic":  # the shipped rule for cache writes is Anthropic's
        assert (got.cache_write_5m, got.cache_write_1h) == pytest.approx(
            (want["input"] * CACHE_WRITE_5M, want["input"] * CACHE_WRITE_1H)
        )
    shipped = Pricing(table=SHIPPED).price(model)
    assert [(above, t.input, t.cached_input, t.output) for above, t in shipped.tiers] == [
        (t.above, t.input, t.cached_input, t.output) for t in got.tiers
    ]  # long-context tiers too


def test_the_package_is_the_declared_version_and_its_data_is_bundled() -> None:
    version = package_version()
    assert version is not None and tuple(int(x) for x in version.split(".")[:2]) >= (0, 2)
    assert package_price("gpt-4o-mini", "openai").source.startswith(f"genai-prices {version} (https://")


def test_cache_rates_are_per_provider() -> None:
    claude = package_price("claude-haiku-4-5", "anthropic")
    assert (claude.cached_input, claude.cache_write_5m, claude.cache_write_1h) == (0.1, 1.25, 2.0)
    gpt = package_price("gpt-4.1", "openai")  # OpenAI lists no cache-write price: billed as input
    assert (gpt.cached_input, gpt.cache_write_5m, gpt.cache_write_1h) == (0.5, 2.0, 2.0)


def test_the_default_table_asks_the_package_first_then_the_shipped_table() -> None:
    default = Pricing()
    assert default.package
    # a dated model the package lists at its own (older, dearer) price; the table's prefix rule
    # would have priced it as gpt-4o
    assert default.price("gpt-4o-2024-05-13").input == 5.0
    assert Pricing(table=SHIPPED).price("gpt-4o-2024-05-13").input == 2.5
    assert default.price("gpt-3.5-turbo").output == 1.5  # not in the shipped table at all
    assert default.price("openai/gpt-4o-mini").input == 0.15  # a provider prefix
    assert default.price("mock").input == 0.0 and default.price("loopback-1") is None
    info = default.describe("mock")
    assert info.source.startswith("hrbench's shipped table") and info.date == SHIPPED["checked"]


def test_an_override_and_hrbench_prices_win_over_the_package(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    over = Pricing(overrides={"gpt-4o": {"input": 9.0, "cached_input": 9.0, "output": 9.0}})
    assert over.price("gpt-4o").input == 9.0 and over.describe("gpt-4o").source.startswith("an override")
    assert over.with_overrides({"x": {"input": 1.0, "output": 1.0}}).price("gpt-4o-mini").input == 0.15
    path = tmp_path / "prices.json"  # type: ignore[operator]
    path.write_text(
        json.dumps({"checked": "2030-01-01", "models": {"gpt-4o": {"input": 7.0, "output": 7.0}}})
    )
    monkeypatch.setenv("HRBENCH_PRICES", str(path))
    named = Pricing()
    assert (
        not named.package and named.price("gpt-4o").input == 7.0 and named.price("claude-haiku-4-5") is None
    )
    assert named.describe("gpt-4o").source == f"HRBENCH_PRICES ({path})"


def test_without_the_package_the_shipped_table_prices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "genai_prices.data_snapshot", None)  # import fails
    price_package.package_price.cache_clear()
    try:
        table = Pricing()
        assert table.price("gpt-4o-2024-05-13").input == 2.5  # the shipped prefix rule
        assert table.describe("gpt-4o").source.startswith("hrbench's shipped table")
    finally:
        price_package.package_price.cache_clear()
