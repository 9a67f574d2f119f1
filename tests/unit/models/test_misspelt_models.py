"""A name that only starts with a priced model's name has no price; the name it may mean is suggested.

Rule (``docs/guides/prices.md``): a model is priced by its own name, a name genai-prices lists
for it, or a dated snapshot or release of one (``gpt-4o-2024-08-06`` as ``gpt-4o``); a
misspelling (``gpt-4o-mni``) is not priced as the model it starts with.
"""

from __future__ import annotations

import sys

import pytest

import hrbench as hb
from hrbench.models import Pricing, package_price
from hrbench.models import _price_package as price_package
from hrbench.models._model_names import is_snapshot_of
from hrbench.testing import LoopbackServer

TABLE = {"models": {"gpt-4o": {"input": 2.5, "output": 10.0}, "gpt-4o-mini": {"input": 0.15, "output": 0.6}}}


@pytest.mark.parametrize("model", ["gpt-4o-mni", "gpt-4o-miniature", "openai/gpt-4o-mni"])
def test_a_misspelt_model_has_no_price_in_any_table(model: str) -> None:
    assert Pricing().price(model) is None  # genai-prices first, the shipped table after it
    assert Pricing(table=TABLE).price(model) is None  # a table given
    assert Pricing(overrides={"gpt-4o": {"input": 9.0, "output": 9.0}}).price(model) is None
    assert Pricing().closest(model) == "gpt-4o-mini"
    assert Pricing(table=TABLE).did_you_mean(model) == " (did you mean gpt-4o-mini?)"


def test_without_the_package_the_shipped_table_refuses_a_misspelling_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "genai_prices.data_snapshot", None)  # import fails
    price_package.package_price.cache_clear()
    try:
        assert Pricing().price("gpt-4o-mni") is None
        assert Pricing().price("gpt-4o-2024-08-06").input == 2.5  # a dated snapshot still is gpt-4o
    finally:
        price_package.package_price.cache_clear()


@pytest.mark.parametrize(
    ("model", "priced_as"),
    [
        ("gpt-4o-2024-08-06", "gpt-4o"),  # a listed alias
        ("claude-sonnet-4-20250514", "claude-sonnet-4-0"),  # a dated snapshot
        ("claude-sonnet-4@20250514", "claude-sonnet-4-0"),  # Vertex's dated name
        ("claude-3-5-sonnet-latest", "claude-3-5-sonnet"),
        ("gemini-2.0-flash-001", "gemini-2.0-flash"),
        ("gpt-5.2-20251211", "gpt-5.2"),  # a compact date
    ],
)
def test_dated_snapshots_and_listed_aliases_keep_their_price(model: str, priced_as: str) -> None:
    info = package_price(model)
    assert info is not None and info.priced_as == priced_as


def test_the_packages_own_prefix_match_is_not_a_price() -> None:
    # genai-prices matches claude-sonnet-4-5 by prefix: a longer name is not that model
    assert package_price("claude-sonnet-4-5") is not None
    assert (
        package_price("claude-sonnet-4-5-typo") is None and Pricing().price("claude-sonnet-4-5-typo") is None
    )
    assert Pricing().closest("claude-sonnet-4-5-typo") is not None


@pytest.mark.parametrize(
    ("model", "listed", "same"),
    [
        ("gpt-4o-2024-08-06", "gpt-4o", True),
        ("GPT-4o-20240806", "gpt-4o", True),
        ("gpt-4-0613", "gpt-4", True),
        ("anthropic.claude-x-20241022-v2:0", "anthropic.claude-x", True),
        ("gemini-2.5-pro-preview-06-05", "gemini-2.5-pro", True),
        ("gpt-4o-mini", "gpt-4o", False),
        ("gpt-4o-mni", "gpt-4o", False),
        ("gpt-4o2024", "gpt-4o", False),
        ("claude-opus-4-5", "claude-opus-4", False),  # another model, another price
    ],
)
def test_what_counts_as_a_snapshot(model: str, listed: str, same: bool) -> None:
    assert is_snapshot_of(model, listed) is same


def test_a_benchmark_of_a_misspelt_model_warns_with_the_name_it_may_mean() -> None:
    ref = hb.Reference(items={"q1": "Say x. [[reply:x]]"}, labels=["x"])
    arm = hb.Arm("ask", lambda item, ctx: ctx.call(item).text)
    with LoopbackServer() as srv:
        client = hb.OpenAIClient("gpt-4o-mni", srv.base_url, None)
        with pytest.warns(
            hb.UnpricedModelWarning, match=r"'gpt-4o-mni' has no price \(did you mean gpt-4o-mini\?\)"
        ):
            bench = hb.benchmark(arm, ref, runs=5, client=client)
        assert all(r.usd is None for r in bench.rows)  # not gpt-4o's 2.5/10 USD per million
        with pytest.raises(
            hb.ConfigError, match=r"has no price \(did you mean gpt-4o-mini\?\), so the explicit"
        ):
            hb.benchmark(arm, ref, runs=5, client=client, governor=hb.Governor(max_usd=1.0))
