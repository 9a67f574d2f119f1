"""Rows add up to what the provider billed: retried replies, cache writes, runs made again.

A reply with no text (``content: null``) is billed and retried: the governor counted every
attempt but the rows showed only the last one's cost (a third of the bill with three attempts).
Anthropic's prompt-cache writes were priced at the plain input rate (it bills 1.25x for 5-minute
writes, 2x for 1-hour ones). A run made again on resume (its row lost in a crash) was served
from the cache at $0 though the provider billed it before the crash. Each case is checked
against the loopback provider's own bill, to 1e-9. (The daemon SIGKILLed mid-benchmark is in
``tests/server/test_rows_match_the_bill_after_a_kill.py``.)
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest

import hrbench as hb
from hrbench.models import Pricing
from hrbench.runner import kept_ledger
from hrbench.runner._remade import PREPAID_NOTE
from hrbench.store import Store
from hrbench.testing import LoopbackServer
from tests.unit.models.conftest import FAST

PRICE = {"input": 3.0, "cached_input": 0.3, "output": 15.0}  # USD per million tokens
PRICING = Pricing(overrides={"m": PRICE})


def _client(kind: str, srv: LoopbackServer) -> Any:
    cls = hb.OpenAIClient if kind == "openai" else hb.AnthropicClient
    return cls("m", base_url=srv.base_url, api_key_env=None, **FAST)


def _bench(srv: LoopbackServer, kind: str, prompt: str, n: int = 4, **kw: Any) -> hb.Bench:
    ref = hb.Reference({f"i{k}": f"{prompt} q {k}" for k in range(n)}, labels=None)
    arm = hb.Arm("ask", lambda item, ctx: ctx.call(item, max_tokens=300).raw_text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return hb.benchmark(arm, ref, runs=5, client=_client(kind, srv), pricing=PRICING, concurrency=4, **kw)


def _billed(srv: LoopbackServer) -> float:
    return sum(b.usd for b in srv.bills)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
@pytest.mark.parametrize("fault", ["null_content:n=1", "null_content:n=2", "null_content"])
def test_rows_carry_every_billed_attempt_of_a_reply_with_no_text(
    srv: LoopbackServer, kind: str, fault: str
) -> None:
    srv.set(reply_words=40, price=PRICE)
    gov = hb.Governor(max_usd=5.0)
    bench = _bench(srv, kind, f"[[fault:{fault}]]", governor=gov)
    # "n=K": the first K requests of each prompt have no text (retried: 3 attempts at most)
    nulls = {"null_content:n=1": 4, "null_content:n=2": 8, "null_content": 60}[fault]
    retried = {"null_content:n=1": 4, "null_content:n=2": 8, "null_content": 40}[fault]
    assert len(srv.bills) == len(srv.requests) == nulls + (20 if fault != "null_content" else 0)
    rows_usd = sum(r.usd or 0.0 for r in bench.rows)
    assert rows_usd == pytest.approx(_billed(srv), abs=1e-9)
    assert gov.usd == pytest.approx(_billed(srv), abs=1e-9) and gov.unknown is None
    assert sum(r.tokens_in + r.tokens_out for r in bench.rows) == sum(
        b.tokens_in + b.tokens_out for b in srv.bills
    )
    # the trace says where the money went: one attempt step each, with its bill
    steps = [s for t in bench.traces.values() for s in t if s.kind == "attempt"]
    assert len(steps) == retried
    assert all(s.source == "live" and s.usd and s.usage is not None for s in steps)
    assert "reply has no text" in (steps[0].error or "")
    assert hb.trace_cost(bench.trace, PRICING) == pytest.approx(_billed(srv), abs=1e-9)


@pytest.mark.parametrize(
    ("written", "hour"),
    [(30, 0), (30, 30), (30, 10)],
    ids=["5-minute writes", "1-hour writes", "both"],
)
def test_anthropic_cache_writes_are_priced_at_their_own_rates(
    srv: LoopbackServer, written: int, hour: int
) -> None:
    """5-minute writes at 1.25x input, 1-hour writes at 2x, reads at the cached rate (0.1x)."""
    srv.set(
        reply_words=5,
        cached_fraction=0.25,
        cache_creation_tokens=written,
        cache_write_1h_tokens=hour,
        prompt_tokens="bytes",  # prompts long enough to hold the reads and the writes
        price={**PRICE, "cache_write_5m": 3.75, "cache_write_1h": 6.0},
    )
    bench = _bench(
        srv, "anthropic", "a prompt long enough to be cached in part: " * 3, governor=hb.Governor()
    )
    assert sum(r.usd or 0.0 for r in bench.rows) == pytest.approx(_billed(srv), abs=1e-9)
    usage = next(s.usage for t in bench.traces.values() for s in t if s.kind == "request")
    assert usage is not None and usage.tokens_cache_write_1h == hour
    assert usage.tokens_cache_write_5m == written - hour and usage.tokens_cached > 0
    # at the plain input rate it would have been less than the bill
    plain = Pricing(overrides={"m": {**PRICE, "cache_write_5m": 3.0, "cache_write_1h": 3.0}})
    assert plain.cost(usage, "m") < PRICING.cost(usage, "m")


def test_a_worst_case_reservation_covers_a_one_hour_cache_write() -> None:
    """A prompt marked for the cache may be billed at up to 2x input: the governor reserves that."""
    cached = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "hi " * 50, "cache_control": {"type": "ephemeral", "ttl": "1h"}}
            ],
        }
    ]
    plain = [{"role": "user", "content": [{"type": "text", "text": "hi " * 50}]}]
    req = hb.Request(messages=cached, model="m", provider="anthropic", params={"max_tokens": 0})
    usd_cached, tokens = PRICING.reservation(req)
    usd_plain, tokens_plain = PRICING.reservation(
        hb.Request(messages=plain, model="m", provider="anthropic", params={"max_tokens": 0})
    )
    assert usd_plain is not None and usd_cached is not None
    assert usd_cached >= 2 * usd_plain * (tokens / tokens_plain) - 1e-12


@pytest.mark.parametrize("cache", [True, False], ids=["served from the cache", "sent again"])
def test_a_run_made_again_carries_what_was_paid_for_it_before(srv: LoopbackServer, cache: bool) -> None:
    """Rows lost in a crash, made again on resume: the rows still add up to the bill.

    The first start runs every run; then the resume is given only some of its rows (as a
    crash that lost the others' rows would leave it). A run made again whose reply the cache
    serves costs what the provider billed for it before (not $0); one sent again costs both
    bills. A retried reply with no text is among them.
    """
    srv.set(reply_words=20, price=PRICE)
    store = Store(":memory:")
    c = hb.Cache(store) if cache else None
    gov = hb.Governor(max_usd=5.0)
    with kept_ledger(gov, store, "b1"):
        first = _bench(
            srv, "openai", "[[fault:null_content:n=1]]", governor=gov, cache=c, store=store, benchmark_id="b1"
        )
    assert sum(r.usd or 0.0 for r in first.rows) == pytest.approx(_billed(srv), abs=1e-9)
    kept = {(r.arm, r.item, r.run): r for r in first.rows if r.run != 3}  # run 3's rows were lost
    gov2 = hb.Governor(max_usd=5.0)
    with kept_ledger(gov2, store, "b1"):
        again = _bench(
            srv, "openai", "[[fault:null_content:n=1]]", governor=gov2, cache=c, store=store,
            benchmark_id="b1", done=kept, done_traces=first.traces,
        )  # fmt: skip
    made = [r for r in again.rows if r.run == 3]
    assert len(made) == 4 and len(again.rows) == 20
    assert len(srv.bills) == 24 + (0 if cache else 4)  # the resume paid again only without a cache
    assert sum(r.usd or 0.0 for r in again.rows) == pytest.approx(_billed(srv), abs=1e-9)
    # each call's tokens once: a reply served again from the cache is not counted twice
    assert sum(r.tokens_in for r in again.rows) == sum(b.tokens_in for b in srv.bills)
    assert sum(r.tokens_out for r in again.rows) == sum(b.tokens_out for b in srv.bills)
    lost = [s for r in first.rows if r.run == 3 for s in first.traces[r.ledger_id] if s.source == "live"]
    carried = [s for r in made for s in again.traces[r.ledger_id] if s.error == PREPAID_NOTE]
    assert len(carried) == len(lost) >= 4 and all(s.source == "live" and s.usd for s in carried)
    assert sorted(s.response_id or "" for s in carried) == sorted(s.response_id or "" for s in lost)
    # a second resume that keeps every row carries nothing more
    gov3 = hb.Governor(max_usd=5.0)
    with kept_ledger(gov3, store, "b1"):
        third = _bench(
            srv, "openai", "[[fault:null_content:n=1]]", governor=gov3, cache=c, store=store,
            benchmark_id="b1", done={(r.arm, r.item, r.run): r for r in again.rows}, done_traces=again.traces,
        )  # fmt: skip
    assert sum(r.usd or 0.0 for r in third.rows) == pytest.approx(_billed(srv), abs=1e-9)
