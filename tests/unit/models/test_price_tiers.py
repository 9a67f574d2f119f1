"""Long-context tiers priced as genai-prices prices them: the cost of a reply and the worst case reserved.

Anthropic and Google bill every token of a request at a dearer rate once its prompt passes 200,000
tokens. The cost of a reply is checked against genai-prices' own ``calc_price`` (shared cases
H4-13, H4-14, H4-15, and every tiered price the package lists, around each tier's edge); the
reservation of a request whose prompt bound reaches a tier is at that tier's rates.
"""

from __future__ import annotations

import datetime
import re
from decimal import Decimal
from typing import Any

import pytest
from genai_prices import Usage as GenaiUsage
from genai_prices import calc_price, extract_usage
from genai_prices.data_snapshot import get_snapshot
from genai_prices.types import ModelPrice, TieredPrices

from hrbench.models import Pricing
from hrbench.models._anthropic import anthropic_usage
from hrbench.models._openai import openai_usage
from hrbench.records import Request, Usage
from tests.conftest import case

KEYS = ("input_mtok", "output_mtok", "cache_read_mtok", "cache_write_mtok", "cache_write_1h_mtok")


def _genai(u: Usage) -> GenaiUsage:
    """The same usage in genai-prices' terms (its input tokens include cache reads and writes)."""
    writes = u.tokens_cache_write_5m + u.tokens_cache_write_1h
    return GenaiUsage(
        input_tokens=u.tokens_in,
        cache_read_tokens=u.tokens_cached,
        cache_write_tokens=writes,
        cache_write_5m_tokens=u.tokens_cache_write_5m,
        cache_write_1h_tokens=u.tokens_cache_write_1h,
        output_tokens=u.tokens_out,
    )


def test_case_H4_13_a_long_context_reply_is_billed_at_its_tier_as_genai_prices_bills_it() -> None:
    c = case("H4-13")
    usage = Usage(**c["output"]["usage"])
    got = Pricing().cost(usage, c["output"]["model"])
    want = calc_price(_genai(usage), c["output"]["model"], provider_id="google").total_price
    assert float(want) == c["label"]["genai_prices_calc_price"]
    assert got == pytest.approx(c["label"]["usd"], abs=1e-12)  # 0.3125 at the base rates
    assert got == pytest.approx(float(want), abs=1e-12)


def test_case_H4_14_five_minute_and_one_hour_cache_writes_each_at_their_own_rate() -> None:
    c = case("H4-14")
    usage = anthropic_usage(c["output"]["anthropic_usage"])
    got = Pricing().cost(usage, c["output"]["model"])
    body = {"model": c["output"]["model"], "usage": c["output"]["anthropic_usage"]}
    want = extract_usage(body, provider_id="anthropic").calc_price().total_price
    assert float(want) == c["label"]["genai_prices_extract_usage_calc_price"]
    assert got == pytest.approx(c["label"]["usd"], abs=1e-12)
    assert got == pytest.approx(float(want), abs=1e-12)


def test_case_H4_15_reasoning_tokens_inside_completion_tokens_are_billed_once() -> None:
    c = case("H4-15")
    usage = openai_usage(c["output"]["openai_usage"])
    assert (usage.tokens_out, usage.total) == (c["label"]["tokens_out"], c["label"]["total"])
    got = Pricing().cost(usage, c["output"]["model"])
    body = {"model": c["output"]["model"], "usage": c["output"]["openai_usage"]}
    want = extract_usage(body, provider_id="openai", api_flavor="chat").calc_price().total_price
    assert got == pytest.approx(c["label"]["usd"], abs=1e-12)
    assert got == pytest.approx(float(want), abs=1e-12)


def _tiered_models() -> list[tuple[str, str, list[int]]]:
    """Every ``(provider, model, tier starts)`` of genai-prices' data with a tiered token price.

    Left out: prices that hrbench does not bill the way the package does by design (a fee per
    request, prices by time of day), and entries the package itself does not find by their id.
    """
    today = datetime.datetime.now(tz=datetime.UTC)
    found = []
    for prov in get_snapshot().providers:
        for model in prov.models:
            if not model.is_match(model.id):
                continue
            if not isinstance(model.prices, ModelPrice) and any(
                type(c.constraint).__name__ == "TimeOfDateConstraint" for c in model.prices
            ):
                continue
            prices = model.get_prices(today)
            if getattr(prices, "requests_kcount", None) is not None:
                continue
            starts = sorted(
                {
                    t.start
                    for k in KEYS
                    if isinstance(v := getattr(prices, k, None), TieredPrices)
                    for t in v.tiers
                }
            )
            if starts and getattr(prices, "input_mtok", None) is not None and prices.output_mtok is not None:
                found.append((prov.id, model.id, starts))
    return found


TIERED = _tiered_models()


def test_the_package_lists_long_context_tiers() -> None:
    names = {f"{p}/{m}" for p, m, _ in TIERED}
    assert {"anthropic/claude-sonnet-4-5", "google/gemini-2.5-pro"} <= names, sorted(names)[:20]


@pytest.mark.parametrize(("provider", "model", "starts"), TIERED, ids=[f"{p}/{m}" for p, m, _ in TIERED])
def test_every_tiered_price_costs_what_genai_prices_says_around_each_edge(
    provider: str, model: str, starts: list[int]
) -> None:
    table = Pricing()
    for size in sorted({0, 1000, *(s + d for s in starts for d in (-1, 0, 1, 50_000))}):
        if size < 0:
            continue
        usage = Usage(
            tokens_in=size,
            tokens_cached=size // 4,
            tokens_cache_write_5m=size // 8,
            tokens_cache_write_1h=size // 16,
            tokens_out=2_000,
            tokens_reasoning=500,
        )
        want = calc_price(_genai(usage), model, provider_id=provider).total_price
        got = table.cost(usage, f"{provider}/{model}")
        assert got == pytest.approx(float(want), rel=1e-9, abs=1e-12), (size, got, want)


def _request(prompt_bytes: int, model: str, max_tokens: int = 1000, provider: str = "anthropic") -> Request:
    return Request(
        messages=[{"role": "user", "content": "x" * prompt_bytes}],
        model=model,
        params={"max_tokens": max_tokens},
        provider=provider,
    )


@pytest.mark.parametrize(
    ("model", "base", "tier"),
    [("claude-sonnet-4-5", (3.0, 15.0), (6.0, 22.5)), ("gemini-2.5-pro", (1.25, 10.0), (2.5, 15.0))],
)
def test_a_request_that_can_reach_the_upper_tier_is_reserved_at_it(
    model: str, base: tuple[float, float], tier: tuple[float, float]
) -> None:
    table = Pricing()
    from hrbench.models._tokens import prompt_bound

    for prompt_bytes, rates in [(150_000, base), (199_000, base), (250_000, tier)]:
        req = _request(prompt_bytes, model)
        bound, how = prompt_bound(req.messages, model)
        assert how == "bytes"
        usd, tokens = table.reservation(req)
        assert tokens == bound + 1000
        assert usd == pytest.approx((bound * rates[0] + 1000 * rates[1]) / 1e6, rel=1e-12), prompt_bytes
    # a 250k-token prompt with 1,000 output tokens: 1.5225 USD, the base rates said 0.765
    assert Pricing().cost(Usage(tokens_in=250_000, tokens_out=1000), "claude-sonnet-4-5") == pytest.approx(
        1.5225
    )


def test_a_tier_given_in_a_table_or_override_is_billed_and_reserved_too() -> None:
    entry: dict[str, Any] = {
        "input": 1.0,
        "output": 2.0,
        "tiers": [{"above": 100, "input": 10.0, "output": 20.0}],
    }
    table = Pricing(overrides={"m": entry})
    assert table.cost(Usage(tokens_in=100, tokens_out=10), "m") == pytest.approx((100 * 1.0 + 10 * 2.0) / 1e6)
    assert table.cost(Usage(tokens_in=101, tokens_out=10), "m") == pytest.approx(
        (101 * 10.0 + 10 * 20.0) / 1e6
    )
    usd, _ = table.reservation(_request(200, "m", max_tokens=5, provider="openai"))
    assert usd is not None and usd > (200 * 10.0) / 1e6
    info = table.describe("m")
    assert info is not None and [(t.above, t.input, t.output) for t in info.tiers] == [(100, 10.0, 20.0)]


@pytest.mark.parametrize(
    ("tiers", "field"),
    [
        ([{"above": -1, "input": 1.0, "output": 1.0}], "prices.m.tiers[0].above"),
        (
            [{"above": 5, "input": 1.0, "output": 1.0}, {"above": 5, "input": 2.0, "output": 2.0}],
            "prices.m.tiers[1].above",
        ),
        ([{"above": 5, "input": 1.0}], "prices.m.tiers[0]"),
        ([{"above": 5, "input": float("nan"), "output": 1.0}], "prices.m.tiers[0].input"),
        ([{"above": 5, "input": 1.0, "output": -2.0}], "prices.m.tiers[0].output"),
        ("many", "prices.m.tiers"),
    ],
)
def test_a_malformed_tier_is_refused_naming_it(tiers: Any, field: str) -> None:
    from hrbench.errors import ConfigError

    with pytest.raises(ConfigError, match="^" + re.escape(field)):
        Pricing(overrides={"m": {"input": 1.0, "output": 1.0, "tiers": tiers}})


def test_a_package_rate_it_cannot_read_is_refused_not_raised_as_an_internal_error() -> None:
    from hrbench.errors import ConfigError
    from tests.unit.models.test_price_refusals import tampered

    with tampered("anthropic", "claude-sonnet-4-5", output_mtok=TieredPrices(Decimal("15"), [])) as t:
        assert t.price("claude-sonnet-4-5").output == 15.0  # no tiers: the base
    with (
        tampered("anthropic", "claude-sonnet-4-5", output_mtok="fifteen") as t,  # type: ignore[arg-type]
        pytest.raises(ConfigError, match=r"^prices\.claude-sonnet-4-5\.output: .* \(got nan\)"),
    ):
        t.price("claude-sonnet-4-5")


def test_a_reservation_over_billed_as_models_is_the_dearest_of_each_part_or_none_with_one_unpriced() -> None:
    """The worst case over the models a reply may be billed as: no USD when one has no price (its
    tokens still bounded), else the dearest input and the dearest output rate, a tier's included."""
    table = Pricing(
        overrides={
            "cheap": {"input": 1.0, "output": 8.0},
            "dear": {"input": 3.0, "output": 2.0, "tiers": [{"above": 100, "input": 5.0, "output": 9.0}]},
        }
    )
    short, long = _request(20, "cheap", max_tokens=10), _request(200, "cheap", max_tokens=10)
    _, tokens = table.reservation(short)
    assert table.reservation(short, ["no-such-model", "dear"]) == (None, tokens)
    assert table.reservation(short, ["dear", "no-such-model"]) == (None, tokens)
    usd, _ = table.reservation(short, ["dear"])
    assert usd == pytest.approx(((tokens - 10) * 3.0 + 10 * 8.0) / 1e6)
    usd, long_tokens = table.reservation(long, ["dear"])
    assert usd == pytest.approx(((long_tokens - 10) * 5.0 + 10 * 9.0) / 1e6)
