"""A judge is priced like any client; a replay judge in a spec reads the store it is given."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

import hrbench as hb
from hrbench.specs import build_scorer
from hrbench.testing import LoopbackServer
from tests.unit.models.conftest import FAST

REF = hb.Reference({"q1": "France", "q2": "Peru"}, labels=["Paris", "Lima"])
FIXED = hb.Arm("fixed", lambda item, ctx: {"France": "Paris", "Peru": "Quito"}[item])
ASK = hb.Arm("ask", lambda item, ctx: ctx.call(item).raw_text)


def _judge_spec(srv: LoopbackServer, **extra: Any) -> dict[str, Any]:
    return {
        "kind": "openai",
        "model": "judge-local",
        "base_url": srv.base_url,
        "api_key_env": None,
        "settings": FAST,
        **extra,
    }


def test_a_judges_own_price_in_its_spec_is_honoured(srv: LoopbackServer) -> None:
    srv.set(reply_fn=lambda prompt, seed, call: "CORRECT")
    judge = build_scorer("judge", {"client": _judge_spec(srv, price={"input": 1000.0, "output": 2000.0})})
    gov = hb.Governor(max_usd=10.0)
    bench = hb.benchmark(FIXED, REF, runs=5, scorer=judge, governor=gov)
    assert all(r.failure_kind is None for r in bench.rows)  # no unpriced refusal
    judged = [
        s for steps in bench.traces.values() for s in steps if s.kind == "request" and s.source == "live"
    ]
    assert len(judged) == len(srv.requests) == 10
    for s in judged:  # priced at the judge's own price, not the table's (it has none)
        assert s.usd == pytest.approx((s.usage.tokens_in * 1000.0 + s.usage.tokens_out * 2000.0) / 1e6)
    assert gov.usd == pytest.approx(sum(s.usd for s in judged))


def test_an_unpriced_judge_under_a_usd_cap_is_refused_before_the_first_call(srv: LoopbackServer) -> None:
    arm_client = hb.OpenAIClient("gpt-4o-mini", base_url=srv.base_url, api_key_env=None, **FAST)
    judge = build_scorer("judge", {"client": _judge_spec(srv)})
    with pytest.raises(hb.ConfigError) as err:
        hb.benchmark(ASK, REF, runs=5, client=arm_client, scorer=judge, governor=hb.Governor(max_usd=1.0))
    said = str(err.value)
    assert said.startswith("scorer_settings.client.model: unpriced_model: the judge's model 'judge-local'")
    assert "judge_scorer(client, pricing=hrbench.Pricing(overrides=" in said and "max_usd cannot help" in said
    assert srv.requests == []  # not one arm call was paid first


def test_an_unpriced_judge_refusal_gives_spec_advice_under_the_daemon(srv: LoopbackServer) -> None:
    from hrbench.runner.runtime import ADVICE

    judge = build_scorer("judge", {"client": _judge_spec(srv)})
    token = ADVICE.set("spec")
    try:
        with pytest.raises(hb.ConfigError, match=r"\[scorer_settings.client\] table: price = ") as err:
            hb.benchmark(FIXED, REF, runs=5, scorer=judge, governor=hb.Governor(max_usd=1.0))
    finally:
        ADVICE.reset(token)
    assert "--max-usd cannot help" in str(err.value) and srv.requests == []


def test_a_judge_billed_as_an_undeclared_dearer_model_stops_naming_the_judge(srv: LoopbackServer) -> None:
    srv.set(reply_fn=lambda prompt, seed, call: "CORRECT", serve_model="gpt-4o")
    client = hb.OpenAIClient("gpt-4o-mini", base_url=srv.base_url, api_key_env=None, **FAST)
    gov = hb.Governor(max_usd=1.0)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        bench = hb.benchmark(FIXED, REF, runs=5, scorer=hb.judge_scorer(client), governor=gov, concurrency=8)
    assert len(srv.requests) == 1 and "the judge does not declare" in (gov.halted or "")
    assert "the judge's client's billed_as=['gpt-4o']" in (gov.halted or "")
    assert sum(r.failure_kind == "budget_stop" for r in bench.rows) == 9
    assert any("the judge does not declare" in str(w.message) for w in got)


def test_a_router_priced_by_its_billed_as_model_runs_under_a_usd_cap(srv: LoopbackServer) -> None:
    srv.set(serve_model="gpt-4o", reply_words=5)  # the router bills the model it routes to
    client = hb.OpenAIClient(
        "router/auto", base_url=srv.base_url, api_key_env=None, billed_as=["gpt-4o"], max_tokens=20, **FAST
    )
    gov = hb.Governor(max_usd=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", hb.NoLabelsWarning)
        bench = hb.benchmark(ASK, REF, runs=5, client=client, governor=gov)
    assert all(r.failure_kind != "budget_stop" for r in bench.rows) and gov.halted is None
    assert len(srv.requests) == 10
    one = srv.bills[0]
    want = hb.Pricing().cost(hb.Usage(tokens_in=one.tokens_in, tokens_out=one.tokens_out), "gpt-4o")
    assert bench.rows[0].usd == pytest.approx(want) and want > 0
    with pytest.raises(hb.ConfigError, match="'router/auto' has no price"):  # billed_as is what prices it
        plain = hb.OpenAIClient("router/auto", base_url=srv.base_url, api_key_env=None, **FAST)
        hb.benchmark(ASK, REF, runs=5, client=plain, governor=gov)


def test_a_replay_judge_in_a_spec_reads_the_store_it_is_given(tmp_path: Any) -> None:
    store = hb.Store(str(tmp_path / "s.sqlite"))
    try:
        judge = build_scorer("judge", {"client": {"kind": "mock", "reply": "CORRECT"}})
        bench = hb.benchmark(FIXED, REF, runs=5, scorer=judge, store=store, record="grades")
        assert {r.item: r.correct for r in bench.rows if r.run == 1} == {"q1": True, "q2": True}
        assert "grades" in store.recordings()
        again = build_scorer("judge", {"client": {"kind": "replay", "recording": "grades"}}, store)
        replayed = hb.benchmark(FIXED, REF, runs=5, scorer=again, store=store)
        assert [r.correct for r in replayed.rows] == [r.correct for r in bench.rows]
    finally:
        store.close()
    with pytest.raises(hb.ConfigError) as err:
        build_scorer("judge", {"client": {"kind": "replay", "recording": "grades"}})
    said = str(err.value)
    assert said.startswith("scorer_settings.client: a replay judge answers from a recording kept in a store")
    assert "`hrb bench`" in said and "store=hrbench.Store(PATH)" in said


@pytest.mark.parametrize(
    ("limit", "said"),
    [("unpriced_model", "HRBENCH_PRICES"), ("reservation_exceeded", "billed_as = [...]")],
)
def test_a_stop_no_higher_limit_can_help_says_what_does(limit: str, said: str) -> None:
    from hrbench.results.browse import budget_note

    note = budget_note("b1", [{"arm": "a", "budget_stop": 9}], 10, {"max_usd": 1.0}, {"usd": 0.2}, [limit])
    assert note is not None and "--max-usd" not in note and "no higher limit helps" in note
    assert said in note and "[scorer_settings.client]" in note
    capped = budget_note(
        "b1", [{"arm": "a", "budget_stop": 9}], 10, {"max_usd": 1.0}, {"usd": 0.99}, ["cost_cap_reached"]
    )
    assert capped is not None and capped.endswith("`hrb bench --resume b1 --max-usd USD`")
