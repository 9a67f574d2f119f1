"""A 250,000-token prompt through a loopback provider: rows, ledger and USD cap at the long-context tier.

Rows and the ledger priced such a reply at the base rate (claude-sonnet-4-5: 0.765 USD where
genai-prices says 1.5225), and the governor reserved at the base rate, so a USD cap was passed
about 2x. The loopback bills every UTF-8 byte of the prompt as a token (the very bound the
governor reserves) and 1,000 output tokens a reply.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from genai_prices import Usage as GenaiUsage
from genai_prices import calc_price

import hrbench as hb
from hrbench.runner import kept_ledger
from hrbench.store import Store
from hrbench.testing import LoopbackServer
from tests.unit.models.conftest import FAST

MODELS = [("anthropic", "claude-sonnet-4-5", "anthropic"), ("openai", "gemini-2.5-pro", "google")]
PROMPT = "a " * 125_000  # 250,000 bytes: past the 200,000-token tier of both models


def _genai_usd(model: str, provider: str, tokens_in: int, tokens_out: int) -> float:
    usage = GenaiUsage(input_tokens=tokens_in, output_tokens=tokens_out)
    return float(calc_price(usage, model, provider_id=provider).total_price)


def _bench(srv: LoopbackServer, kind: str, model: str, items: int, **kw: Any) -> hb.Bench:
    cls = hb.AnthropicClient if kind == "anthropic" else hb.OpenAIClient
    client = cls(model, base_url=srv.base_url, api_key_env=None, **FAST)
    ref = hb.Reference({f"i{k}": f"{PROMPT}{k}" for k in range(items)}, labels=None)
    arm = hb.Arm("ask", lambda item, ctx: ctx.call(item, max_tokens=1000).raw_text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # too few runs, no labels: not what is checked
        return hb.benchmark(arm, ref, runs=1, client=client, concurrency=1, **kw)


@pytest.mark.parametrize(("kind", "model", "provider"), MODELS, ids=[m for _, m, _ in MODELS])
def test_rows_and_the_ledger_bill_a_long_prompt_as_genai_prices_does(
    srv: LoopbackServer, kind: str, model: str, provider: str
) -> None:
    srv.set(prompt_tokens="bytes", reply_words=1000)
    store, gov = Store(":memory:"), hb.Governor(max_usd=50.0)
    with kept_ledger(gov, store, "b1"):
        bench = _bench(srv, kind, model, 2, governor=gov, store=store, benchmark_id="b1")
    assert len(srv.bills) == 2
    for row in bench.rows:
        assert row.tokens_in > 250_000 and row.tokens_out == 1000
        assert row.usd == pytest.approx(_genai_usd(model, provider, row.tokens_in, row.tokens_out), rel=1e-12)
    billed = sum(_genai_usd(model, provider, b.tokens_in, b.tokens_out) for b in srv.bills)
    assert sum(r.usd or 0.0 for r in bench.rows) == pytest.approx(billed, rel=1e-12)
    assert gov.usd == pytest.approx(billed, rel=1e-12)
    kept = hb.Governor(max_usd=50.0)  # the ledger the store keeps, read back
    with kept_ledger(kept, store, "b1"):
        assert kept.usd == pytest.approx(billed, rel=1e-12) and kept.calls == 2


@pytest.mark.parametrize(("kind", "model", "provider"), MODELS, ids=[m for _, m, _ in MODELS])
def test_a_usd_cap_the_base_rate_would_let_pass_is_held_at_the_tier(
    srv: LoopbackServer, kind: str, model: str, provider: str
) -> None:
    """Three long prompts under a cap fitting two at the base rate but only one at the tier's."""
    srv.set(prompt_tokens="bytes", reply_words=1000)
    one = _genai_usd(model, provider, len(PROMPT) + 20, 1000)
    cap = 1.4 * one  # the base rates are about half the tier's: two would fit, then a third refused
    gov = hb.Governor(max_usd=cap)
    bench = _bench(srv, kind, model, 3, governor=gov)
    billed = sum(_genai_usd(model, provider, b.tokens_in, b.tokens_out) for b in srv.bills)
    assert len(srv.bills) == 1, [b.tokens_in for b in srv.bills]
    assert billed <= cap and gov.usd == pytest.approx(billed, rel=1e-12)
    assert sum(1 for r in bench.rows if r.usd) == 1
    refused = [s for s in bench.trace if s.source == "refused"]
    assert len(refused) == 2 and all("cost_cap_reached" in (s.error or "") for s in refused), refused
