"""The governor: reserve before sending, settle after; caps never passed (case H13a)."""

from __future__ import annotations

import threading

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hrbench as hb
from tests._examples import examples
from tests.conftest import case


def test_case_H13a_concurrent_admission_against_spend_cap() -> None:
    c = case("H13a")
    out, lab = c["output"], c["label"]
    gov = hb.Governor(max_usd=out["spend_cap_usd"])
    gov.usd = out["spent_usd"]
    admitted = [gov.try_reserve(usd=out["estimate_each_usd"]) for _ in range(out["concurrent_requests"])]
    assert sum(a is not None for a in admitted) == lab["admitted"]
    assert sum(a is None for a in admitted) == lab["refused"]
    for a in admitted:
        if a is not None:
            gov.settle(a, out["estimate_each_usd"], 10)
    assert gov.usd <= lab["final_spend_usd_at_most"]


def test_case_H13a_through_the_runner_refused_runs_end_as_budget_stop() -> None:
    c = case("H13a")
    out = c["output"]
    price = {"input": 0.0, "cached_input": 0.0, "output": out["estimate_each_usd"] * 1e6 / 1024}
    pricing = hb.Pricing(overrides={"priced": price})
    gov = hb.Governor(max_usd=out["spend_cap_usd"])
    gov.usd = out["spent_usd"]

    async def slow(messages, params):
        await anyio.sleep(0.05)
        return hb.Result(text="ok", usage=hb.Usage(tokens_in=0, tokens_out=1024), model="priced")

    ref = hb.Reference({f"q{i}": i for i in range(4)}, labels="ok")
    with pytest.warns(
        hb.BudgetStoppedWarning, match="2 run\\(s\\) stopped by the governor \\(cost_cap_reached\\)"
    ):
        with pytest.warns(hb.FewRunsWarning):
            bench = hb.benchmark(
                hb.Arm("a", lambda item, ctx: ctx.call("hi").text),
                ref,
                runs=1,
                client=hb.MockClient(slow, model="priced"),
                governor=gov,
                pricing=pricing,
                concurrency=4,
            )
    kinds = sorted(str(r.failure_kind) for r in bench.rows)
    assert kinds == ["None", "None", c["expected_failure_kind"], c["expected_failure_kind"]]
    assert gov.usd <= c["label"]["final_spend_usd_at_most"]


@settings(max_examples=examples(40), deadline=None)
@given(
    cap=st.floats(min_value=0.0, max_value=2.0),
    costs=st.lists(st.floats(min_value=0.0, max_value=0.5), min_size=1, max_size=60),
)
def test_spend_never_passes_cap_under_threads(cap: float, costs: list[float]) -> None:
    gov = hb.Governor(max_usd=cap)

    def worker(cost: float) -> None:
        r = gov.try_reserve(usd=cost)
        if r is not None:
            gov.settle(r, cost * 0.9, 1)  # the real cost is at most the estimate

    threads = [threading.Thread(target=worker, args=(c,)) for c in costs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert gov.usd <= cap + 1e-9


def test_the_token_cap_counts_the_tokens_held_by_requests_in_flight() -> None:
    gov = hb.Governor(max_tokens=100)
    first = gov.reserve(tokens=60)
    with pytest.raises(hb.BudgetRefused) as err:  # 60 held + 60 > 100, though none is spent yet
        gov.reserve(tokens=60)
    assert err.value.limit == "token_cap_reached"
    gov.settle(first, 0.0, 30)  # the reply used 30 of the 60 it held
    second = gov.reserve(tokens=60)  # 30 spent + 60 = 90
    assert gov.try_reserve(tokens=20) is None  # 30 spent + 60 held + 20 > 100
    gov.settle(second, 0.0, 60)
    assert gov.tokens == 90 and gov.try_reserve(tokens=10) is not None


@pytest.mark.parametrize(
    ("gov", "limit"),
    [
        (hb.Governor(max_calls=0), "call_cap_reached"),
        (hb.Governor(max_usd=0.0), "cost_cap_reached"),
        (hb.Governor(max_tokens=5), "token_cap_reached"),
    ],
)
def test_each_limit_names_itself(gov, limit) -> None:
    with pytest.raises(hb.BudgetRefused) as err:
        gov.reserve(usd=0.01, tokens=10)
    assert err.value.limit == limit


def test_call_cap_across_runs_every_row_exists_and_later_runs_refused_before_sending() -> None:
    sent = []
    client = hb.MockClient(lambda m, p: sent.append(1) or "x")
    ref = hb.Reference({"a": "x", "b": "x"}, labels=["x", None])
    with pytest.warns(hb.BudgetStoppedWarning) as w:
        bench = hb.benchmark(
            hb.Arm("c", lambda item, ctx: ctx.call(item).text),
            ref,
            runs=5,
            client=client,
            governor=hb.Governor(max_calls=3),
            concurrency=1,
        )
    assert len(sent) == 3
    assert len(bench.rows) == 10
    stopped = [r for r in bench.rows if r.failure_kind == "budget_stop"]
    assert len(stopped) == 7
    assert all(r.correct is False for r in stopped if r.item == "a")
    assert all(r.correct is None for r in stopped if r.item == "b")
    msg = str(w[0].message)
    assert "7 run(s) stopped" in msg and "call_cap_reached" in msg and "2 of them count against an arm" in msg
    assert "first: arm 'c', item 'a', run 4" in msg


def test_default_governor_is_400_calls_and_says_so(monkeypatch) -> None:
    monkeypatch.setenv("HRBENCH_MAX_CALLS", "2")
    with pytest.warns(hb.BudgetStoppedWarning, match="limits from the defaults"):
        bench = hb.benchmark(
            hb.Arm("c", lambda item, ctx: ctx.call(item).text),
            hb.Reference({"a": "x"}, labels="x"),
            runs=5,
            client=hb.MockClient(lambda m, p: "x"),
        )
    assert [r.failure_kind for r in bench.rows] == [None, None, "budget_stop", "budget_stop", "budget_stop"]
    monkeypatch.delenv("HRBENCH_MAX_CALLS")
    from hrbench.runner import default_governor

    assert default_governor().max_calls == 400


def test_bad_limits_are_refused() -> None:
    with pytest.raises(hb.ConfigError, match="max_usd"):
        hb.Governor(max_usd=-1)
    with pytest.raises(hb.ConfigError, match="max_calls"):
        hb.Governor(max_calls="10")  # type: ignore[arg-type]


def test_gate_retries_count_calls_but_not_spend() -> None:
    gov = hb.Governor(max_calls=3, max_usd=1.0)
    gate = gov.gate(usd=0.4, tokens=10)
    gate.attempt()
    gate.attempt()  # a retry: the first attempt is settled at no cost
    gate.settle(0.3, 7)
    assert (gov.calls, gov.usd, gov.tokens) == (2, 0.3, 7)
    assert gov.snapshot()["usd"] == 0.3
