"""Cost at list price, whatever the cache or a recording served."""

from __future__ import annotations

import pytest

import hrbench as hb
from hrbench.records import Row, usd_text
from hrbench.stats import report, report_payload
from tests._benches import cost_row
from tests.unit.runner.test_benchmark import CAPITALS, seed_reference

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
    assert all(st.source == "cache" for t in again.traces.values() for st in t if st.kind == "request")
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
    assert ask_line.split()[-2:] == ["0.0000", usd_text(paid["ask"])]


def test_a_report_compares_an_arm_the_cache_served_by_list_price(tmp_path) -> None:
    """usd/run and acc/usd of an arm served wholly from the cache are those of the run that paid."""
    store = hb.Store(tmp_path / "state.db")
    first = _run(store, cache=hb.Cache(store))
    again = _run(store, cache=hb.Cache(store))
    store.rows_put(again.id, list(enumerate(again.rows)), again.traces)
    stored = report(store.rows_get(again.id), traces=store.traces_get(again.id))
    costs = ("usd_per_run", "usd_per_run_low", "usd_per_run_high", "accuracy_per_usd")
    costs += ("accuracy_per_usd_low", "accuracy_per_usd_high")
    was = report(first)
    for rep in (report(again), stored):
        for a, b in zip(was.arms, rep.arms, strict=True):
            assert a.usd is not None and a.usd > 0 and b.usd == 0.0  # what was paid, beside
            assert b.usd_per_run is not None and b.usd_per_run > 0 and b.accuracy_per_usd is not None
            for k in costs:
                assert getattr(b, k) == pytest.approx(getattr(a, k)), k
        text = str(rep)
        assert "usd/run and acc/usd use that list price" in text
        for a in rep.arms:
            assert usd_text(a.usd_per_run) in cost_row(text, a.arm)
    assert report(again).to_markdown().count(usd_text(was.arms[0].usd_per_run)) == 1


def test_cheap_arms_print_apart() -> None:
    """Two arms at $3.7e-06 and $4.1e-06 per run: four decimals printed both as 0.0000."""
    rows = [
        Row(cluster=f"c{i // 2}", item=f"q{i}", arm=arm, run=r, split="test", correct=(i + r) % 3 != 0,
            outcome=None, failure_kind=None if (i + r) % 3 else "wrong", usd=usd)
        for i in range(6) for r in range(5) for arm, usd in (("cheap", 3.7e-06), ("dearer", 4.1e-06))
    ]  # fmt: skip
    rep = report(rows)
    assert [a.usd_per_run for a in rep.arms] == pytest.approx([3.7e-06, 4.1e-06])
    text = str(rep)
    cheap, dearer = cost_row(text, "cheap"), cost_row(text, "dearer")
    assert cheap[3:6] == ["0.000111", "-", "3.7e-06"] and dearer[3:6] == ["0.000123", "-", "4.1e-06"]
    assert cheap[6:8] == ["[3.7e-06,", "3.7e-06]"]  # every run cost the same: no spread
    md = rep.to_markdown()
    assert "| 0.000111 | - | 3.7e-06 |" in md and "| 0.000123 | - | 4.1e-06 |" in md
    assert "at what was paid (no traces" in text  # a list of rows has no traces: no list price


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
