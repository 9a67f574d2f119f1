"""Stop when sure in the runner: the seeded order, commits in order, the stop, its record, resume."""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from typing import Any

import pytest

import hrbench as hb
from hrbench.errors import ConfigError
from hrbench.models import OpenAIClient, Pricing
from hrbench.runner import ReplayClient
from hrbench.runner._stopping import StopRecord
from hrbench.stats import StopWhenSure
from hrbench.store import Store

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from hrbench.testing import LoopbackServer  # noqa: E402

pytestmark = pytest.mark.timeout(120)

N_CLUSTERS = 40
PRICING = Pricing(overrides={"loopback-1": {"input": 1.0, "cached_input": 1.0, "output": 1.0}})


def _reference(n_clusters: int = N_CLUSTERS, per: int = 2) -> hb.Reference:
    ids = [f"q{i}" for i in range(n_clusters * per)]
    return hb.Reference(
        {i: i for i in ids},
        labels={i: f"L{i}" for i in ids},
        cluster={i: f"c{int(i[1:]) // per:02d}" for i in ids},
    )


async def _right(item: str, ctx: Any) -> Any:
    return (await ctx.acall(f"[[reply:L{item}]] {item} #{ctx.draw_index}", seed=ctx.draw_index)).text


async def _wrong(item: str, ctx: Any) -> Any:
    return (await ctx.acall(f"[[reply:nope]] {item} #{ctx.draw_index}", seed=ctx.draw_index)).text


ARMS = [hb.Arm("good", _right), hb.Arm("bad", _wrong)]


@pytest.fixture(scope="module")
def srv() -> Iterator[LoopbackServer]:
    with LoopbackServer() as server:
        server.set(latency_s=0.02)  # replies take a while: clusters are in flight at the stop
        yield server


def _client(srv: LoopbackServer) -> OpenAIClient:
    return OpenAIClient("loopback-1", base_url=srv.base_url, api_key_env=None, trust_env=False)


def _run(client: Any, stop: Any, **kw: Any) -> hb.Bench:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return hb.benchmark(
            ARMS, _reference(), runs=5, client=client, stop=stop, concurrency=24, pricing=PRICING, **kw
        )


def test_a_clear_winner_stops_early_with_the_cancelled_clusters_kept_unreportable_and_paid(
    srv: LoopbackServer,
) -> None:
    bench = _run(_client(srv), StopWhenSure(seed=7))
    rec = bench.stop
    assert isinstance(rec, StopRecord)
    assert rec.reason == "decided" and rec.winner == "good"
    assert 2 <= rec.clusters < N_CLUSTERS and rec.of == N_CLUSTERS
    full = N_CLUSTERS * 2 * 2 * 5
    assert rec.full_rows == full and len(bench.rows) == rec.rows < full
    # the committed clusters are the first of the order, whole: every item, arm and run
    committed = set(rec.order[: rec.clusters])
    shown = [r for r in bench.rows if r.reportable]
    assert {r.cluster for r in shown} == committed and len(shown) == rec.clusters * 2 * 2 * 5
    # the clusters in flight at the stop: their finished rows kept, not reportable, and paid
    hidden = [r for r in bench.rows if not r.reportable]
    assert hidden and len(hidden) == rec.unreported_rows
    assert not {r.cluster for r in hidden} & committed
    assert rec.unreported_usd == pytest.approx(sum(r.usd or 0.0 for r in hidden)) and rec.unreported_usd > 0
    assert bench.governor["usd"] >= sum(r.usd or 0.0 for r in bench.rows) - 1e-9
    pair = rec.pairs[0]
    assert (pair["a"], pair["b"], pair["decided"]) == ("good", "bad", "good")
    assert rec.e_values == {("good", "bad"): pair["e_value"]}
    assert pair["e_value"] >= 1 / 0.05 and pair["p_anytime"] <= 0.05
    assert rec.order == StopWhenSure(seed=7).cluster_order([f"c{i:02d}" for i in range(N_CLUSTERS)])
    # the summary counts the reportable rows only: the committed clusters' runs
    runs = {s["arm"]: s["runs"] for s in bench.summary()}
    assert runs == {"good": rec.clusters * 2 * 5, "bad": rec.clusters * 2 * 5}
    # the report's share of runs says it counts the cancelled clusters' paid runs too
    assert f"{len(hidden)} of them in clusters cancelled at the stop, paid and not reported" in str(
        hb.report(bench)
    )


def test_the_same_seed_with_a_replay_gives_the_same_order_stop_and_e_value(
    srv: LoopbackServer, tmp_path: Any
) -> None:
    store = Store(str(tmp_path / "s.db"))
    first = _run(_client(srv), StopWhenSure(seed=11), store=store, record="rec")
    again = _run(ReplayClient(store, recording="rec"), StopWhenSure(seed=11))
    other = _run(
        ReplayClient(store, recording="rec", strict=False, fallback=_client(srv)), StopWhenSure(seed=12)
    )
    assert first.stop is not None and again.stop is not None and other.stop is not None
    assert again.stop.order == first.stop.order and other.stop.order != first.stop.order
    assert again.stop.clusters == first.stop.clusters
    assert again.stop.pairs[0]["e_value"] == first.stop.pairs[0]["e_value"]
    reported = sorted((r.arm, r.item, r.run, r.correct) for r in first.rows if r.reportable)
    assert sorted((r.arm, r.item, r.run, r.correct) for r in again.rows if r.reportable) == reported


def _half(item: str, ctx: Any) -> str:  # right on two items in three: a difference that takes a while
    return f"L{item}" if int(item[1:]) % 3 else "nope"


def _all(item: str, ctx: Any) -> str:
    return f"L{item}"


def test_a_resume_continues_the_same_order_and_e_process() -> None:
    arms = [hb.Arm("all", _all), hb.Arm("half", _half)]
    ref = _reference(30, 3)

    def run(stop: Any, **kw: Any) -> hb.Bench:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return hb.benchmark(arms, ref, runs=5, stop=stop, **kw)

    whole = run(StopWhenSure(seed=5, method="exact"))
    part = run(StopWhenSure(seed=5, method="exact", max_clusters=2))
    assert part.stop is not None and whole.stop is not None
    assert (part.stop.reason, part.stop.clusters) == ("max_clusters", 2)
    assert whole.stop.clusters > 2  # the first part alone was not enough to decide
    rest = run(part.stop.resume(StopWhenSure(seed=5, method="exact")), done=part.as_done())
    assert rest.stop is not None
    assert rest.stop.order == part.stop.order == whole.stop.order
    assert (rest.stop.reason, rest.stop.clusters) == (whole.stop.reason, whole.stop.clusters)
    assert rest.stop.pairs[0]["e_value"] == pytest.approx(whole.stop.pairs[0]["e_value"])
    assert rest.stop.summary["clusters"] == whole.stop.clusters
    # the resumed benchmark holds the same reportable rows as the uninterrupted one
    key = sorted((r.arm, r.item, r.run, r.correct) for r in whole.rows if r.reportable)
    assert sorted((r.arm, r.item, r.run, r.correct) for r in rest.rows if r.reportable) == key
    # a resume without a rule continues the stored one
    again = run(part.stop.resume(), done=part.as_done())
    assert again.stop is not None and again.stop.clusters == 2 and again.stop.reason == "max_clusters"


def _some(item: str, ctx: Any) -> str:  # right on about 8 items in 10, unevenly over the clusters
    return f"L{item}" if int(item[1:]) * 7919 % 10 < 8 else "nope"


def test_an_arm_decided_worse_stops_being_run() -> None:
    arms = [hb.Arm("all", _all), hb.Arm("half", _some), hb.Arm("none", lambda item, ctx: "nope")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bench = hb.benchmark(arms, _reference(30, 3), runs=5, stop=StopWhenSure(seed=1), concurrency=1)
    assert bench.stop is not None
    per_arm = {a.name: sum(r.arm == a.name for r in bench.rows) for a in arms}
    assert per_arm["none"] < per_arm["all"]  # decided worse than both: no longer run
    assert "none" not in bench.stop.active_arms


def test_a_bad_stop_is_refused_before_any_run() -> None:
    with pytest.raises(ConfigError, match="stop"):
        hb.benchmark([hb.Arm("a", _all), hb.Arm("b", _half)], _reference(4, 2), runs=5, stop="rank")
    with pytest.raises(ConfigError, match="pairs"):
        hb.benchmark(
            [hb.Arm("a", _all), hb.Arm("b", _half)],
            _reference(4, 2),
            runs=5,
            stop=StopWhenSure(pairs=[("a", "c")]),
        )


def test_a_record_read_back_from_its_dict_is_the_same() -> None:
    rec = StopRecord(reason="decided", clusters=3, of=9, order=["c1", "c0"], rule={"alpha": 0.05})
    assert StopRecord.from_dict({**rec.to_dict(), "unknown": 1}) == rec
    assert rec.share == pytest.approx(1 / 3)


def test_a_rule_that_cannot_decide_on_so_few_clusters_is_warned_before_it_runs() -> None:
    from hrbench.errors import StopFewClustersWarning, StopUndecidableWarning

    arms = [hb.Arm("all", _all), hb.Arm("half", _half)]
    with (
        pytest.warns(
            StopUndecidableWarning, match=r"at most 6 cluster\(s\) and its exact test needs at least 10"
        ) as got,
        pytest.warns(StopFewClustersWarning),
    ):
        bench = hb.benchmark(arms, _reference(6, 3), runs=5, stop=StopWhenSure(seed=1, method="exact"))
    assert any('method="symmetric"' in str(w.message) for w in got if w.category is StopUndecidableWarning)
    assert bench.stop is not None and bench.stop.reason == "max_clusters" and bench.stop.clusters == 6
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StopFewClustersWarning)
        warnings.simplefilter("error", StopUndecidableWarning)  # 5 clusters are enough for symmetric
        hb.benchmark(arms, _reference(6, 3), runs=5, stop=StopWhenSure(seed=1, method="symmetric"))
        # the default chooses the asymptotic test on so few clusters of one size: it can decide, and does
        auto = hb.benchmark(arms, _reference(6, 3), runs=5, stop=StopWhenSure(seed=1))
    assert auto.stop is not None and auto.stop.summary["method"] == "asymptotic"
    assert auto.stop.reason == "decided" and auto.stop.winner == "all" and auto.stop.clusters < 6
    # a symmetric test warns as the exact one does, when capped
    with pytest.warns(StopUndecidableWarning, match=r"its symmetric test needs at least 5"):
        hb.benchmark(
            arms, _reference(40, 3), runs=5, stop=StopWhenSure(seed=1, method="symmetric", max_clusters=4)
        )


def test_a_stop_rule_on_fewer_clusters_than_its_plan_needs_recommends_the_fixed_design_and_reports_it() -> (
    None
):
    from hrbench.errors import StopFewClustersWarning

    arms = [hb.Arm("all", _all), hb.Arm("half", _half)]
    plan = hb.power(0.1, var_within=0.4, var_between=0.02, runs=5, items_per_cluster=3)
    assert plan.n_clusters > 4
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        bench = hb.benchmark(arms, _reference(4, 3), runs=5, stop=StopWhenSure(seed=1, plan=plan))
    few = [str(w.message) for w in got if w.category is StopFewClustersWarning]
    assert len(few) == 1 and f"has 4 cluster(s) and fewer than the {plan.n_clusters} its plan needs" in few[0]
    assert "run without a stop rule" in few[0]
    assert bench.stop is not None and bench.stop.reason == "max_clusters" and bench.stop.clusters == 4
    # it ran every cluster, a number fixed before it began: the fixed interval and p are shown, labelled
    rep = hb.report(bench)
    c = rep.comparisons[0]
    assert c.p_value is not None and c.ci_low is not None and "ran its most clusters" in (c.note or "")
    assert rep.stop is not None and rep.stop["fixed_valid"] is True
    assert "the fixed design's interval and p over them are shown, to describe, not to decide" in str(rep)
    assert all("conditional on the clusters run" not in (a.note or "") for a in rep.arms)
    # a reference with the clusters the plan needs runs without the warning
    with warnings.catch_warnings():
        warnings.simplefilter("error", StopFewClustersWarning)
        hb.benchmark(arms, _reference(plan.n_clusters, 3), runs=5, stop=StopWhenSure(seed=1, plan=plan))


@pytest.mark.parametrize("keep_rows", [True, False])
def test_the_printout_counts_the_items_and_clusters_reported_and_says_how_many_runs_were_cancelled(
    srv: LoopbackServer, keep_rows: bool
) -> None:
    seen: list[hb.Row] = []
    bench = _run(
        _client(srv),
        StopWhenSure(seed=7),
        keep_rows=keep_rows,
        on_row=lambda seq, row, trace: seen.append(row),
    )
    rows = bench.rows if keep_rows else seen
    assert len(rows) == len(seen)  # the running count (keep_rows=False) saw every row kept ones did
    rec = bench.stop
    assert rec is not None and rec.reason == "decided" and rec.unreported_rows > 0
    shown = [r for r in rows if r.reportable]
    hidden = [r for r in rows if not r.reportable]
    assert len(hidden) == rec.unreported_rows
    head = str(bench).splitlines()[0]
    got = re.fullmatch(
        r"<hr_bench> 2 arm\(s\) x (\d+) item\(s\) in (\d+) cluster\(s\) x 5 run\(s\); split test; "
        r"scorer exact_normalised; (\d+) more run\(s\) of clusters cancelled at the stop are kept, not reported",
        head,
    )
    assert got is not None, head
    n_items, n_clusters, n_cancelled = map(int, got.groups())
    assert n_items == len({r.item for r in shown}) == rec.clusters * 2
    assert n_clusters == len({r.cluster for r in shown}) == rec.clusters
    assert n_cancelled == len(hidden)
    # the table's runs are the reported items' runs: items x runs per arm
    assert all(s["runs"] == n_items * 5 for s in bench.summary())


def test_a_cluster_whose_last_runs_the_budget_stopped_is_never_committed_to_the_test() -> None:
    """A budget stop keeps its cluster out of the sequential test, even when it ends the cluster.

    One cluster is 2 items x 2 arms x 5 runs = 20 calls, run one cell (an item and an arm, its
    5 runs) at a time. With 77 calls, 3 clusters are whole and the 4th stops in its last cell:
    its cells are all done, 3 of its runs budget-stopped (counted wrong), so only the guard on
    budget-stopped rows keeps it from entering the test.
    """

    async def ask(item: str, ctx: Any) -> Any:
        return (await ctx.acall(f"{item} #{ctx.draw_index}", seed=ctx.draw_index)).text

    arms = [hb.Arm("one", ask), hb.Arm("two", ask)]
    client = hb.MockClient(lambda messages, params: "L" + messages[-1]["content"].split()[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bench = hb.benchmark(
            arms,
            _reference(10, 2),
            runs=5,
            client=client,
            stop=StopWhenSure(seed=3),
            concurrency=1,
            governor=hb.Governor(max_calls=77),
        )
    rec = bench.stop
    assert rec is not None and rec.reason == "budget"
    stopped = [r for r in bench.rows if r.failure_kind == "budget_stop"]
    assert len(stopped) == 3 and {r.cluster for r in stopped} == {rec.order[3]}
    assert rec.clusters == 3 and rec.summary["clusters"] == 3  # the 4th never entered the test
    assert {r.cluster for r in bench.rows if r.reportable} == set(rec.order[:3])
    assert not any(r.reportable for r in bench.rows if r.cluster == rec.order[3])
    assert {s["arm"]: s["runs"] for s in bench.summary()} == {"one": 30, "two": 30}


def _uneven_reference() -> hb.Reference:
    """20 clusters, ten of 1 item and ten of 30: Kish's effective number of them is 10.7 of 20."""
    sizes = [1] * 10 + [30] * 10
    cluster = {f"q{c * 30 + j}": f"c{c:02d}" for c, n in enumerate(sizes) for j in range(n)}
    return hb.Reference({i: i for i in cluster}, labels={i: f"L{i}" for i in cluster}, cluster=cluster)


def test_auto_never_runs_the_asymptotic_stop_on_unequal_clusters_and_asking_for_it_there_warns() -> None:
    from hrbench.errors import StopMethodWarning

    arms = [hb.Arm("all", _all), hb.Arm("half", _half)]
    ref = _uneven_reference()
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        auto = hb.benchmark(arms, ref, runs=5, stop=StopWhenSure(seed=1, max_clusters=8))
    assert not [w for w in got if w.category is StopMethodWarning]
    assert auto.stop is not None and auto.stop.summary["method"] == "symmetric"
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        asked = hb.benchmark(
            arms, ref, runs=5, stop=StopWhenSure(seed=1, max_clusters=8, method="asymptotic")
        )
    said = [str(w.message) for w in got if w.category is StopMethodWarning]
    assert len(said) == 1 and 'method="asymptotic" leans on clusters of similar size' in said[0], said
    assert [w.filename for w in got if w.category is StopMethodWarning] == [__file__]  # the caller's line
    assert asked.stop is not None and asked.stop.summary["method"] == "asymptotic"
    # on clusters of one size the same request is within its validity: no warning
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        hb.benchmark(
            arms, _reference(20, 3), runs=5, stop=StopWhenSure(seed=1, max_clusters=8, method="asymptotic")
        )
    assert not [w for w in got if w.category is StopMethodWarning]
