"""A reply's cost at a price whose every rate is 0 is 0 USD, and remembering that changes no other price."""

from __future__ import annotations

import pytest

from hrbench.models import Pricing
from hrbench.records import Usage
from hrbench.runner import Governor
from hrbench.runner.runtime import Runtime


def test_a_free_models_cost_is_0_and_a_priced_models_is_its_price() -> None:
    pricing = Pricing(
        overrides={"paid-1": {"input": 2.0, "cached_input": 0.5, "output": 8.0}}, free={"local-1"}
    )
    rt = Runtime(None, Governor(), None, None, None, pricing)
    usage = Usage(tokens_in=1000, tokens_cached=200, tokens_out=50)
    for _ in range(2):  # the second answer comes from what the first one learned
        assert rt.cost(usage, "local-1") == 0.0
        assert rt.cost(usage, "paid-1") == pytest.approx((800 * 2.0 + 200 * 0.5 + 50 * 8.0) / 1e6)
        assert rt.cost(usage, "no-such-model") is None
        assert rt.cost(usage, None) is None
    assert rt._zero_rated == {"local-1": True, "paid-1": False, "no-such-model": False}
