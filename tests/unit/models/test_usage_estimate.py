"""A reply with no usage block is estimated from above, never under.

Not at 4 characters a token: a 207-character CJK reply would be booked as 52 tokens, where a
byte-level tokenizer can bill one token per UTF-8 byte (~620). The estimate
for budgets (governor, ledger, USD charged) is the README's worst-case rule, one token per
UTF-8 byte, at most the output limit sent; provenance stays ``"estimated"`` and
:class:`~hrbench.UsageEstimatedWarning` is still warned.
"""

from __future__ import annotations

import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hrbench as hb
from hrbench.models._tokens import prompt_bound, usage_of
from hrbench.records import Request
from hrbench.testing import LoopbackServer
from tests._examples import examples
from tests.unit.models.conftest import FAST

CJK = "漢字かな交じり文です。" * 18 + "日本語の文です。改"  # 207 characters, 3 bytes each
MODEL = "my-local-llama"  # no tokenizer shipped: estimated
PRICING = hb.Pricing(overrides={MODEL: {"input": 1.0, "output": 2.0}})


def test_a_cjk_reply_without_usage_is_booked_at_its_utf8_bytes(srv: LoopbackServer) -> None:
    assert len(CJK) == 207
    srv.set(omit_usage=True, reply_fn=lambda prompt, seed, call: CJK)
    client = hb.OpenAIClient(MODEL, base_url=srv.base_url, api_key_env=None, **FAST)
    gov = hb.Governor(max_usd=1.0)
    arm = hb.Arm("ask", lambda item, ctx: ctx.call(item, max_tokens=2000).raw_text)
    ref = hb.Reference({"q": "日本の首都は?"}, labels=None)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        bench = hb.benchmark(arm, ref, runs=2, client=client, governor=gov, pricing=PRICING)
    assert any(issubclass(w.category, hb.UsageEstimatedWarning) for w in got)
    (step,) = [s for s in bench.traces[bench.rows[0].ledger_id] if s.kind == "request"]
    assert step.usage is not None and step.usage.provenance == "estimated"
    assert step.usage.tokens_out == len(CJK.encode()) == 621  # not 52
    assert step.usage.tokens_in >= len("日本の首都は?".encode())
    assert {r.usd_provenance for r in bench.rows} == {"estimated"}
    per_run = PRICING.cost(step.usage, MODEL)
    assert per_run is not None and bench.rows[0].usd == pytest.approx(per_run)
    assert gov.usd == pytest.approx(2 * per_run) and gov.tokens == 2 * step.usage.total
    assert gov.halted is None  # the estimate never passes the reservation


def test_the_estimate_is_capped_at_the_output_limit_so_it_never_passes_the_reservation(
    srv: LoopbackServer,
) -> None:
    srv.set(omit_usage=True, reply_fn=lambda prompt, seed, call: CJK, honour_max_tokens=False)
    client = hb.OpenAIClient(MODEL, base_url=srv.base_url, api_key_env=None, **FAST)
    gov = hb.Governor(max_tokens=100_000)
    arm = hb.Arm("ask", lambda item, ctx: ctx.call(item, max_tokens=50).raw_text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bench = hb.benchmark(arm, hb.Reference({"q": "x"}, labels=None), runs=2, client=client, governor=gov)
    assert gov.halted is None and {r.tokens_out for r in bench.rows} == {50}


TEXT = st.text(st.characters(codec="utf-8"), max_size=200)


@settings(max_examples=examples(200), deadline=None)
@given(prompt=TEXT, reply=TEXT, limit=st.one_of(st.none(), st.integers(0, 4000)))
def test_the_estimate_never_under_counts_a_byte_tokenizer_nor_passes_the_reservation(
    prompt: str, reply: str, limit: int | None
) -> None:
    messages = [{"role": "user", "content": prompt}]
    usage = usage_of(messages, reply, MODEL, limit)
    assert usage.provenance == "estimated"
    out_bytes = len(reply.encode())
    assert usage.tokens_out == (out_bytes if limit is None else min(out_bytes, limit))
    assert usage.tokens_in >= len(prompt.encode())  # a byte-level tokenizer bills at most this
    params = {} if limit is None else {"max_tokens": limit}
    usd, tokens = PRICING.reservation(Request(messages=messages, model=MODEL, params=params))
    assert usage.tokens_in == prompt_bound(messages, MODEL)[0]
    if limit is not None:  # with an output limit sent, never more than the reservation
        assert usage.total <= tokens and (PRICING.cost(usage, MODEL) or 0.0) <= (usd or 0.0) + 1e-15
