"""The library warns once that a client's model has no price (seed 002: its USD is NA), unless a price is given."""

from __future__ import annotations

import warnings

import pytest

import hrbench as hb
from hrbench.testing import LoopbackServer

REF = hb.Reference(items={"q1": "Say x. [[reply:x]]", "q2": "Say y. [[reply:y]]"}, labels=["x", "y"])
ARM = hb.Arm("ask", lambda item, ctx: ctx.call(item).text)


def test_an_unpriced_model_is_warned_once() -> None:
    with (
        LoopbackServer() as srv,
        pytest.warns(hb.UnpricedModelWarning, match="'loopback-nop' has no price") as got,
    ):
        bench = hb.benchmark(ARM, REF, runs=5, client=hb.OpenAIClient("loopback-nop", srv.base_url, None))
    assert sum(isinstance(w.message, hb.UnpricedModelWarning) for w in got) == 1
    assert all(r.usd is None for r in bench.rows)


def test_a_priced_model_is_not_warned() -> None:
    pricing = hb.Pricing(overrides={"loopback-nop": {"input": 1.0, "output": 2.0}})
    with LoopbackServer() as srv, warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        hb.benchmark(
            ARM, REF, runs=5, client=hb.OpenAIClient("loopback-nop", srv.base_url, None), pricing=pricing
        )
    assert not [w for w in got if isinstance(w.message, hb.UnpricedModelWarning)]
