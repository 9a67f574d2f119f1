"""Issue 18, point 3: cost at list price, whatever the cache or a recording served."""

from __future__ import annotations

import pytest

import hrbench as hb
from hrbench.stats import report, report_payload
from tests.unit.test_benchmark import CAPITALS, seed_reference

PRICING = hb.Pricing(overrides={"m": {"input": 1.0, "output": 2.0}})  # USD per million tokens


def _client() -> hb.MockClient:
    def reply(messages, params):
        country = messages[0]["content"].rsplit(" ", 1)[-1]
        n = 1 + len(country)  # a reply's tokens differ by item, so a mix-up would show
        return hb.Result(text=CAPITALS[country], usage=hb.Usage(tokens_in=10 * n, tokens_out=n), model="m")

    return hb.MockClient(reply, model="m")


ARMS = [
    hb.Arm("ask", lambda item, ctx: ctx.call(f"Capital of {item}").text),
    hb.Arm(
        "twice",
        lambda item, ctx: [ctx.call(f"{q} {item}") for q in ("Capital of", "Name the capital of")][-1].text,
    ),
]


def _run(store: hb.Store, **kw) -> hb.Bench:
    return hb.benchmark(ARMS, seed_reference(), runs=5, client=_client(), pricing=PRICING, store=store, **kw)


def test_a_rerun_from_the_cache_pays_0_at_the_first_runs_list_price(tmp_path) -> None:
    store = hb.Store(tmp_path / "state.db")
    first = _run(store, cache=hb.Cache(store))
    again = _run(store, cache=hb.Cache(store))
    paid = {s["arm"]: s["usd"] for s in first.summary()}
    assert all(v > 0 for v in paid.values())
    assert {s["arm"]: s["usd_list"] for s in first.summary()} == pytest.approx(paid)
    assert {s["arm"]: s["usd"] for s in again.summary()} == {"ask": 0.0, "twice": 0.0}
    assert {s["arm"]: s["usd_list"] for s in again.summary()} == pytest.approx(paid)
    assert all(st.source == "cache" for t in again.traces.values() for st in t)
    # the report, from the bench and as the daemon builds it from the stored rows and traces
    store.rows_put(again.id, list(enumerate(again.rows)), again.traces)
    for rep in (report(again), report(store.rows_get(again.id), traces=store.traces_get(again.id))):
        assert [(a.usd, a.usd_list) for a in rep.arms] == [
            (0.0, pytest.approx(paid[a.arm])) for a in rep.arms
        ]
    payload = report_payload(store.rows_get(again.id), traces=store.traces_get(again.id))
    assert [a["usd_list"] for a in payload["arms"]] == pytest.approx([paid["ask"], paid["twice"]])
    assert "usd_list" in payload["text"] and "usd list" in payload["markdown"]
    # the printout shows both columns only when they differ
    assert "usd_list" not in str(first) and "usd_list" in str(again)
    ask_line = next(ln for ln in str(again).splitlines() if ln.startswith(" ask "))
    assert ask_line.split()[-2:] == ["0.0000", f"{paid['ask']:.4f}"]


def test_a_recording_replay_keeps_the_list_price(tmp_path) -> None:
    store = hb.Store(tmp_path / "state.db")
    first = _run(store, record="r1")
    replayed = hb.benchmark(
        ARMS, seed_reference(), runs=5, client=hb.ReplayClient(store, "r1"), pricing=PRICING, store=store
    )
    want = {s["arm"]: s["usd"] for s in first.summary()}
    got = {s["arm"]: (s["usd"], s["usd_list"]) for s in replayed.summary()}
    assert got == {arm: (0.0, pytest.approx(usd)) for arm, usd in want.items()}


def test_a_reply_with_no_price_makes_the_list_price_na(tmp_path) -> None:
    store = hb.Store(tmp_path / "state.db")
    free = hb.MockClient(lambda m, p: "Paris", model="unpriced-model")
    ref = hb.Reference({"q1": "France"}, labels=["Paris"])
    kw = dict(runs=5, client=free, store=store, cache=hb.Cache(store))
    (s,) = hb.benchmark(ARMS[0], ref, **kw).summary()
    assert s["usd"] is None and s["usd_list"] is None
    (s,) = hb.benchmark(ARMS[0], ref, **kw).summary()
    assert s["usd"] == 0.0 and s["usd_list"] is None  # nothing paid; the list price is unknown
