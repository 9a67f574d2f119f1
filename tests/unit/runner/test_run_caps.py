"""Per-run caps: each run's own budget, reserved before each request like the benchmark's.

``max_calls_per_run``, ``max_usd_per_run`` and ``max_tokens_per_run``: a run that would pass its
cap is refused that request and ends ``budget_stop`` with its partial trace; the other runs go
on, and the benchmark is not budget stopped. Real loopback server (Inspect's per-sample limits).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import pytest

import hrbench as hb
from hrbench.errors import BudgetRefused, ConfigError
from hrbench.runner._runcaps import RunBudget
from hrbench.testing import LoopbackServer
from tests.unit.models.conftest import FAST

PRICE = (1.0, 4.0)
REF = hb.Reference(
    {"q1": "France", "q2": "Peru", "q3": "Chad", "q4": "Fiji"},
    labels=["Paris", "Lima", "N'Djamena", "Suva"],
    cluster=["a", "a", "b", "b"],
)


@pytest.fixture(scope="module")
def srv() -> Iterator[LoopbackServer]:
    with LoopbackServer() as s:
        s.set(price=PRICE)
        yield s


@pytest.fixture(autouse=True)
def _fresh(srv: LoopbackServer) -> None:
    srv.reset()


def _client(srv: LoopbackServer) -> hb.OpenAIClient:
    return hb.OpenAIClient("loopback-1", base_url=srv.base_url, api_key_env=None, **FAST)


PRICING = hb.Pricing(overrides={"loopback-1": {"input": PRICE[0], "output": PRICE[1]}})


def _five_calls(item: str, ctx: hb.Context) -> str:
    """A multi-call arm: five requests, the last one's text the answer."""
    text = ""
    for k in range(5):
        text = ctx.call(f"[[reply:Paris]] step {k} of {item}", max_tokens=8).text or ""
    return text


SAME = hb.Reference(  # items of one length: every request has the same worst case
    {"q1": "Chad", "q2": "Peru", "q3": "Fiji", "q4": "Iran"},
    labels=["N'Djamena", "Lima", "Suva", "Tehran"],
    cluster=["a", "a", "b", "b"],
)


def _run(
    srv: LoopbackServer, gov: hb.Governor, arm: Any = None, ref: hb.Reference = REF
) -> tuple[hb.Bench, list[str]]:
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        bench = hb.benchmark(
            arm or hb.Arm("five", _five_calls),
            ref,
            runs=5,
            client=_client(srv),
            governor=gov,
            pricing=PRICING,
        )
    return bench, [str(w.message) for w in got if issubclass(w.category, hb.BudgetStoppedWarning)]


def test_a_per_run_call_cap_stops_the_nth_call_of_every_run(srv: LoopbackServer) -> None:
    gov = hb.Governor(max_calls=1000, max_calls_per_run=3)
    bench, said = _run(srv, gov)
    assert len(srv.requests) == 20 * 3  # each run sent its first 3 requests, not the 4th
    assert {r.failure_kind for r in bench.rows} == {"budget_stop"}
    assert {r.correct for r in bench.rows} == {False}
    for r in bench.rows:
        trace = bench.traces[r.ledger_id]
        assert [s.source for s in trace if s.kind == "request"] == ["live", "live", "live", "refused"]
        assert "run_call_cap_reached" in (trace[-1].error or "") and "max_calls_per_run=3" in (
            trace[-1].error or ""
        )
        assert r.usd == pytest.approx(sum(s.usd or 0 for s in trace))  # the partial trace is paid
    assert gov.calls == 60  # the refused 4th calls took nothing from the benchmark's budget
    assert bench.status == "done" and bench.stopped == 0  # the benchmark was not stopped
    assert [s["run_capped"] for s in bench.summary()] == [20]
    (text,) = said
    assert text.startswith(
        "20 run(s) reached their own per-run cap (run_call_cap_reached x 20; max_calls_per_run=3)"
    )


def test_runs_under_their_cap_are_not_stopped(srv: LoopbackServer) -> None:
    bench, said = _run(srv, hb.Governor(max_calls_per_run=5))
    assert {r.failure_kind for r in bench.rows} == {None, "wrong"} and said == []
    assert len(srv.requests) == 100


def test_a_per_run_usd_cap_holds_each_requests_worst_case(srv: LoopbackServer) -> None:
    """Each request's worst case (prompt bound + max_tokens at the output price) is held before it is sent."""
    request = hb.Request(
        messages=[{"role": "user", "content": "[[reply:Paris]] step 0 of Chad"}],
        params={"max_tokens": 8},
        model="loopback-1",
        provider="openai",
    )
    worst, _ = PRICING.reservation(request)
    probe, _ = _run(srv, hb.Governor(), ref=SAME)
    paid = [s.usd or 0.0 for s in probe.traces[probe.rows[0].ledger_id] if s.source == "live"]
    assert worst is not None and len(set(paid)) == 1 and 0.01 * worst < paid[0] < worst
    srv.reset()
    # three requests' cost and most of a fourth's worst case: the 4th is refused before it is sent,
    # though its reply would have cost less than the room left (the worst case is what is held)
    cap = 3 * paid[0] + 0.99 * worst
    bench, said = _run(srv, hb.Governor(max_usd_per_run=cap), ref=SAME)
    assert len(srv.requests) == 20 * 3
    for r in bench.rows:
        trace = bench.traces[r.ledger_id]
        assert r.failure_kind == "budget_stop" and (r.usd or 0) <= cap
        assert "run_cost_cap_reached" in (trace[-1].error or "")
        assert sum(s.source == "live" for s in trace) == 3
    assert said and "max_usd_per_run" in said[0]


def test_a_per_run_token_cap_stops_a_run_before_it_passes_it(srv: LoopbackServer) -> None:
    bench, _ = _run(srv, hb.Governor(max_tokens_per_run=60))
    for r in bench.rows:
        assert r.failure_kind == "budget_stop" and r.tokens_in + r.tokens_out <= 60
        assert "run_token_cap_reached" in (bench.traces[r.ledger_id][-1].error or "")


def test_the_benchmarks_cap_still_stops_the_benchmark(srv: LoopbackServer) -> None:
    bench, said = _run(srv, hb.Governor(max_calls=7, max_calls_per_run=3))
    assert len(srv.requests) == 7 and bench.status == "budget_stopped"
    assert any("call_cap_reached" in t and "run_" not in t.split(";")[0] for t in said)


def test_a_tool_loop_under_a_per_run_cap_keeps_its_partial_trajectory(srv: LoopbackServer) -> None:
    def lookup(city: str) -> str:
        return "France"

    prompt = '[[tool:lookup:{"city": "Paris"}]] [[tool:lookup:{"city": "Lyon"}]] '
    arm = hb.Arm("agent", lambda item, ctx: hb.tool_loop(ctx, prompt + item, {"lookup": lookup}).text)
    bench, _ = _run(srv, hb.Governor(max_calls_per_run=2), arm)
    for r in bench.rows:
        kinds = [(s.kind, s.source) for s in bench.traces[r.ledger_id]]
        assert kinds == [
            ("request", "live"),
            ("tool", "tool"),
            ("request", "live"),
            ("tool", "tool"),
            ("request", "refused"),
        ]
        assert r.failure_kind == "budget_stop"


def test_a_run_budget_admits_by_both_or_neither() -> None:
    gov = hb.Governor(max_calls=2)
    a, b = RunBudget(gov, {"max_calls_per_run": 5}), RunBudget(gov, {"max_calls_per_run": 5})
    a.settle(a.reserve(), 0.0, 0)
    b.settle(b.reserve(), 0.0, 0)
    with pytest.raises(BudgetRefused) as refused:
        a.reserve()
    assert refused.value.limit == "call_cap_reached" and a.own.calls == 1  # its own hold given back


@pytest.mark.parametrize(
    ("caps", "field"),
    [
        ({"max_calls_per_run": -1}, "max_calls_per_run"),
        ({"max_calls_per_run": 1.5}, "max_calls_per_run"),
        ({"max_usd_per_run": float("nan")}, "max_usd_per_run"),
        ({"max_tokens_per_run": "10"}, "max_tokens_per_run"),
    ],
)
def test_a_bad_per_run_cap_is_refused_naming_it(caps: dict, field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        hb.Governor(**caps)


def test_per_run_caps_are_kept_with_the_limits_and_rebuild_the_governor() -> None:
    gov = hb.Governor(max_calls=10, max_usd_per_run=0.5)
    assert gov.limits == {"max_calls": 10, "max_usd": None, "max_tokens": None, "max_usd_per_run": 0.5}
    assert hb.Governor(**gov.limits).per_run == {"max_usd_per_run": 0.5}
    assert hb.Governor().limits == {"max_calls": None, "max_usd": None, "max_tokens": None}


def test_a_per_run_usd_cap_refuses_an_unpriced_model_before_the_first_call(srv: LoopbackServer) -> None:
    """A USD cap cannot be held with no price: a per-run one as the benchmark's (case R04a)."""
    arm, gov = hb.Arm("five", _five_calls), hb.Governor(max_usd_per_run=0.01)
    with pytest.raises(ConfigError) as refused:
        hb.benchmark(arm, REF, runs=5, client=_client(srv), governor=gov)
    text = str(refused.value)
    assert "unpriced_model: model 'loopback-1' has no price" in text
    assert "(max_usd_per_run=0.01)" in text and "Governor(max_usd_per_run=None)" in text
    assert srv.requests == []


def test_a_per_run_usd_cap_under_the_default_cap_names_itself(srv: LoopbackServer) -> None:
    """The defaults' max_usd is not the caller's: the per-run cap is the one an unpriced model fails."""
    gov = hb.Governor(max_usd=5.0, max_usd_per_run=0.01)
    gov.from_defaults = True
    with pytest.raises(ConfigError, match=r"\(max_usd_per_run=0\.01\)"):
        hb.benchmark(hb.Arm("five", _five_calls), REF, runs=5, client=_client(srv), governor=gov)
    assert srv.requests == []


def test_a_model_met_mid_run_with_no_price_is_refused_naming_the_per_run_cap(srv: LoopbackServer) -> None:
    """A served model the client did not declare, with no price: refused at its request, run budget stopped."""

    def other(item: str, ctx: hb.Context) -> str:
        return ctx.call(f"[[reply:Paris]] {item}", model="loopback-2", max_tokens=8).text or ""

    bench, _ = _run(srv, hb.Governor(max_usd_per_run=0.01), hb.Arm("other", other))
    assert srv.requests == []
    for r in bench.rows:
        assert r.failure_kind == "budget_stop"
        assert "(max_usd_per_run=0.01)" in (bench.traces[r.ledger_id][-1].error or "")
