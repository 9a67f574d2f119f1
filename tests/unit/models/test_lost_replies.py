"""A request written whole whose reply is lost is booked at its worst case.

A timeout after the write, a connection reset, a garbled HTTP 200 body, a gateway's 504: the
provider may have generated and billed the reply (the loopback's ``late`` and ``garbled``
faults do bill it), so the governor books every such attempt, retries included, at its
reservation as spend *unknown, at most* that much (``lost_calls``), and a USD or token cap
holds against what the provider billed.
"""

from __future__ import annotations

import warnings

import pytest

import hrbench as hb
from hrbench.runner import kept_ledger, unknown_sentence
from hrbench.store import Store
from hrbench.testing import LoopbackServer
from tests._slow import slow
from tests.unit.models.conftest import FAST

pytestmark = [pytest.mark.filterwarnings("ignore::hrbench.errors.NoLabelsWarning"), pytest.mark.timeout(90)]

CLIENTS = {"openai": hb.OpenAIClient, "anthropic": hb.AnthropicClient}
MODEL = {"openai": "gpt-4o-mini", "anthropic": "claude-haiku-4-5"}
CAP = {"openai": 0.001, "anthropic": 0.006}
"""USD caps that hold three to five requests' worst case (300 output tokens) of each model."""
LOST = ["late:hang=5", "garbled", "drop", "504"]
"""Faults after the request was written whole; ``late`` and ``garbled`` bill the whole reply."""


def _price(kind: str) -> tuple[float, float]:
    p = hb.Pricing().price(MODEL[kind])
    assert p is not None
    return p.input, p.output


def _bench(
    srv: LoopbackServer, kind: str, fault: str, gov: hb.Governor, n: int = 8, timeout_s: float = 0.5
) -> hb.Bench:
    client = CLIENTS[kind](
        MODEL[kind], base_url=srv.base_url, api_key_env=None, **{**FAST, "timeout_s": timeout_s}
    )
    ref = hb.Reference({f"i{k}": f"[[fault:{fault}]] q {k}" for k in range(n)}, labels=None)
    arm = hb.Arm("ask", lambda item, ctx: ctx.call(item, max_tokens=300).raw_text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return hb.benchmark(arm, ref, runs=5, client=client, governor=gov, concurrency=8)


@pytest.mark.parametrize("kind", sorted(CLIENTS))
@pytest.mark.parametrize("fault", LOST)
def test_lost_replies_are_booked_at_their_worst_case_and_the_cap_holds(
    srv: LoopbackServer, kind: str, fault: str
) -> None:
    srv.set(reply_words=300, price=_price(kind))  # the provider bills every reply it generates
    gov = hb.Governor(max_usd=CAP[kind])
    bench = _bench(srv, kind, fault, gov)
    billed = sum(b.usd for b in srv.bills)
    received = len(srv.requests)
    assert received >= 1
    assert billed <= gov.usd <= CAP[kind] + 1e-12  # never under the bill, never past the cap
    assert gov.unknown is not None and gov.unknown["lost_calls"] == received == gov.calls
    assert gov.usd == pytest.approx(gov.unknown["lost_usd"])
    assert "budget_stop" in {r.failure_kind for r in bench.rows}  # the cap stopped the rest
    assert "reply lost after sending: unknown, at most" in (unknown_sentence(gov.unknown) or "")


@pytest.mark.parametrize("fault", ["late:hang=5", "garbled"])
def test_a_token_cap_holds_too(srv: LoopbackServer, fault: str) -> None:
    srv.set(reply_words=300)
    gov = hb.Governor(max_tokens=2_000)
    _bench(srv, "openai", fault, gov)
    billed = sum(b.tokens_in + b.tokens_out for b in srv.bills)
    assert len(srv.bills) >= 1 and billed <= gov.tokens <= 2_000


@pytest.mark.parametrize(
    ("fault", "timeout_s"),
    # only the injected fault loses a reply: a reply held 60 s is past a 5 s timeout, and a
    # garbled or dropped reply fails at once, so no timeout of theirs can fire (a 0.5 s timeout
    # also cut short some of the 300-word replies on a loaded machine: an extra attempt each)
    [(f"late:hang={slow(60):g}:n=1", slow(5.0)), ("garbled:n=1", slow(60.0)), ("drop:n=1", slow(60.0))],
    ids=["late:hang:n=1", "garbled:n=1", "drop:n=1"],
)
def test_a_retried_attempt_written_whole_is_booked_as_well(
    srv: LoopbackServer, fault: str, timeout_s: float
) -> None:
    """The first attempt's reply is lost, the retry is answered: both are spend."""
    srv.set(reply_words=300, price=_price("openai"))
    gov = hb.Governor(max_usd=1.0)
    bench = _bench(srv, "openai", fault, gov, n=4, timeout_s=timeout_s)
    assert {r.failure_kind for r in bench.rows} == {None}  # each run answered by its retry
    faulted = [r for r in srv.requests if r.fault != "ok"]  # the attempts the server made fail
    assert len(faulted) == 4 and {r.prompt for r in faulted} == {f"[[fault:{fault}]] q {k}" for k in range(4)}
    assert len(srv.requests) == 4 * 5 + len(faulted)  # one lost attempt per prompt ("n=1"), then a retry each
    lost = gov.unknown or {}
    assert lost.get("lost_calls") == len(faulted) and gov.calls == len(srv.requests)
    answered = sum(r.usd or 0.0 for r in bench.rows)
    assert gov.usd == pytest.approx(answered + lost["lost_usd"])
    assert gov.usd >= sum(b.usd for b in srv.bills) - 1e-12


def test_a_null_content_reply_retried_is_booked_at_its_reported_cost(srv: LoopbackServer) -> None:
    """A 200 with no text reports its usage: the retried attempt is spend known, not unknown."""
    srv.set(reply_words=50, price=_price("openai"))
    gov = hb.Governor(max_usd=1.0)
    _bench(srv, "openai", "null_content:n=1", gov, n=3)
    assert gov.unknown is None  # known costs
    assert gov.usd == pytest.approx(sum(b.usd for b in srv.bills))
    assert gov.calls == len(srv.requests) == 3 * 5 + 3


def test_lost_spend_is_kept_in_the_ledger_and_restored() -> None:
    store = Store(":memory:")
    gov = hb.Governor(max_usd=1.0)
    with kept_ledger(gov, store, "b"):
        gov.settle(gov.reserve(0.25, 40), 0.0, 0, lost=True)
        gov.settle(gov.reserve(0.25, 40), 0.01, 12)
    led = store.ledger_get("b")
    assert led is not None
    assert (led["calls"], led["usd"], led["tokens"]) == (2, pytest.approx(0.26), 52)
    assert (led["unknown_calls"], led["lost_calls"], led["lost_usd"]) == (1, 1, 0.25)
    again = hb.Governor(max_usd=1.0)
    with kept_ledger(again, store, "b"):
        assert again.usd == pytest.approx(0.26)
        assert unknown_sentence(again.unknown) == (
            "reply lost after sending: unknown, at most 0.2500 USD / 1 calls (counted as spent)"
        )


@pytest.mark.parametrize(("model", "bounded"), [("gpt-4o-mini", True), ("my-local-llama", False)])
def test_with_no_usd_cap_a_lost_reply_is_still_bounded_when_priced(
    srv: LoopbackServer, model: str, bounded: bool
) -> None:
    """With no USD cap, a priced request still reserves its worst case."""
    srv.set(reply_words=300, price=_price("openai"))
    gov = hb.Governor(max_calls=1000)
    client = hb.OpenAIClient(model, base_url=srv.base_url, api_key_env=None, **{**FAST, "timeout_s": 0.5})
    ref = hb.Reference({f"i{k}": f"[[fault:garbled]] q {k}" for k in range(3)}, labels=None)
    arm = hb.Arm("ask", lambda item, ctx: ctx.call(item, max_tokens=300).raw_text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hb.benchmark(arm, ref, runs=1, client=client, governor=gov, concurrency=3)
    lost = gov.unknown or {}
    assert lost.get("lost_calls") == len(srv.requests) == 9  # three attempts each
    if bounded:
        assert gov.usd >= sum(b.usd for b in srv.bills) > 0 and not lost.get("unpriced_calls")
        assert "reply lost after sending: unknown, at most" in (unknown_sentence(lost) or "")
    else:
        assert lost.get("lost_unpriced") == 9
        assert "reply lost after sending: unknown USD" in (unknown_sentence(lost) or "")
