"""Intervals with few clusters: ties that collapsed an interval, the tests compared, power, and the notes.

The benchmarks an independent simulation found (two clusters with equal totals, cluster totals
that cancel, a constant difference) become tests here; so do 2,000 simulated 2- and 3-cluster
benchmarks (no interval of zero width, no p-value below 1e-12), the exact cluster sign-flip and
clustered t tests the coverage table compares with, power() under an arm x cluster effect, and
what a report says when it gives no interval or when its test rests on its model.
"""

from __future__ import annotations

import math
from dataclasses import replace

import msgspec
import numpy as np
import pytest

import hrbench as hb
from hrbench.errors import ConfigError, NoLabelsWarning
from hrbench.records import Row
from hrbench.results.browse import benchmark_compare, benchmark_view
from hrbench.stats import (
    NoIntervalWarning,
    PilotClustersWarning,
    compare,
    difference_interval,
    power,
    proportion_interval,
    report,
)
from hrbench.stats._intervals import zero_disagreement_bound
from hrbench.store import Store
from hrbench.testing import ARM_X_CLUSTER_SD, Design, check, promised_power, simulate
from hrbench.testing._designs import arm_rows, clustered_t_p, sign_flip_p

# scipy.stats is imported in the tests that use it: about 1 s of CPU each pytest-xdist worker
# would pay at collection, not only the workers that run them


def count_rows(arm: str, counts: dict[tuple[str, str], int], runs: int = 5) -> list[Row]:
    """Rows of one arm from {(cluster, item): correct runs out of ``runs``}."""
    return [
        Row(
            cluster=c,
            item=i,
            arm=arm,
            run=r,
            split="test",
            correct=r <= k,
            outcome=None,
            failure_kind=None if r <= k else "wrong",
        )
        for (c, i), k in counts.items()
        for r in range(1, runs + 1)
    ]


# -- ties: cluster totals that agree exactly ----------------------------------------------------


def test_two_clusters_with_equal_totals_still_give_an_interval():
    # 20 items a cluster, 14 right on every run and 6 on 1 of 5: both cluster means 0.76. The
    # clustered variance is 1e-33 (rounding), and Kish's size was 1e32: the interval [0.76, 0.76]
    per = [5] * 14 + [1] * 6
    counts = {("c0", f"q{i}"): k for i, k in enumerate(per)} | {
        ("c1", f"r{i}"): k for i, k in enumerate(per[::-1])
    }
    a = report(count_rows("a", counts)).arm("a")
    assert a.accuracy == pytest.approx(0.76)
    assert a.ci_low < 0.76 < a.ci_high and a.ci_high - a.ci_low > 0.3
    y = np.array([k / 5 for k in per + per[::-1]])
    g = np.repeat([0, 1], 20)
    iv = proportion_interval(y, g, 2, 0.95, 200.0)
    assert iv.n_eff == 40  # no design effect to estimate: the items (Korn & Graubard's n* = n)
    assert (iv.low, iv.high) == pytest.approx((a.ci_low, a.ci_high))


def test_cluster_totals_that_cancel_give_no_point_interval_and_no_tiny_p():
    # A [0,4,4 | 2,0,0] against B [3,2,4 | 0,0,3] correct runs of 5: each direction's cluster
    # totals tie, and so do the totals of the disagreement: CI [-0.0667, -0.0667], p = 9.9e-17
    a = [0, 4, 4, 2, 0, 0]
    b = [3, 2, 4, 0, 0, 3]
    items = [(f"c{i // 3}", f"q{i}") for i in range(6)]
    rows = count_rows("A", dict(zip(items, a, strict=True))) + count_rows(
        "B", dict(zip(items, b, strict=True))
    )
    c = compare(rows, "A", "B")
    assert c.diff == pytest.approx(-1 / 15)
    assert c.ci_low < c.diff < c.ci_high and c.ci_high - c.ci_low > 0.5
    assert c.p_value > 0.5  # a difference of 1 run in 30 on 2 clusters is no evidence


def test_a_constant_difference_on_three_clusters_is_not_certain():
    # A right on 5 of 5 runs, B on 3 of 5, on 6 items in 3 clusters: a width of 1e-16 and
    # p = 1.4e-32. Three clusters that all agree are as strong as the exact sign-flip test allows
    # (p = 2/8 = 0.25): not certainty
    items = [(f"c{i // 2}", f"q{i}") for i in range(6)]
    rows = count_rows("A", dict.fromkeys(items, 5)) + count_rows("B", dict.fromkeys(items, 3))
    c = compare(rows, "A", "B")
    assert c.diff == pytest.approx(0.4)
    assert c.ci_low < 0.4 < c.ci_high and c.ci_high - c.ci_low > 0.5
    assert 0.2 < c.p_value < 1.0
    assert sign_flip_p(np.full(6, 2.0), np.repeat([0, 1, 2], 2), 3) == 0.25
    assert c.n_clusters_disagree == 3 and "all 3 of 3 cluster(s)" in c.note  # never "only" when all do


@pytest.mark.slow  # 2,000 simulated benchmarks (~14 s); make test-slow
def test_no_zero_width_interval_and_no_tiny_p_in_2000_benchmarks_of_2_and_3_clusters():
    """1,000 benchmarks of 2 clusters of 20 items and 1,000 of 3 clusters of 10, 5 runs each.

    A third each: the arms 0.15 apart, equally good, and differing cluster by cluster (an arm x
    cluster effect of sd 0.3) with no average difference. At 2 clusters 2.4-2.9% of per-arm
    intervals and 9 in 1,000 identical-arm comparisons had collapsed to a point.
    """
    rng = np.random.default_rng(20261201)
    widths, ps = [], []
    for d in (Design("2x20x5", (20,) * 2, 5, 0.7, diff=0.15), Design("3x10x5", (10,) * 3, 5, 0.7, diff=0.15)):
        g, n_g, total = d.cluster, len(d.sizes), float(d.n_items * d.runs)
        for sd, diff, n in ((0.0, d.diff, 334), (0.0, 0.0, 333), (ARM_X_CLUSTER_SD, 0.0, 333)):
            sim = simulate(replace(d, sd_arm_cluster=sd), n, rng, diff=diff)
            for s in range(n):
                iv = proportion_interval(sim.ya[s] if s % 2 else sim.yb[s], g, n_g, 0.95, total)
                widths.append(iv.high - iv.low)
                dv = difference_interval(sim.ya[s], sim.yb[s], g, n_g, 0.95, total)
                widths.append(dv.high - dv.low)
                ps.append(dv.p_value)
    assert len(ps) == 2000
    print("narrowest", min(widths), "smallest p", min(ps))
    assert min(widths) > 0.01
    assert min(ps) >= 1e-12


# -- the tests the coverage table sets beside hrbench's -----------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_sign_flip_p_is_the_exact_permutation_p_value(seed):
    from scipy import stats as sps

    rng = np.random.default_rng(seed)
    n_g = int(rng.integers(2, 9))
    g = np.repeat(np.arange(n_g), 3)
    counts = rng.integers(-3, 4, g.size).astype(float)
    totals = np.bincount(g, weights=counts, minlength=n_g)
    exact = sps.permutation_test(
        (totals,),
        lambda x: abs(np.sum(x)),
        permutation_type="samples",
        n_resamples=np.inf,
        alternative="greater",
    )
    assert sign_flip_p(counts, g, n_g) == pytest.approx(exact.pvalue, abs=1e-12)


def test_sign_flip_cannot_reject_with_5_clusters_and_can_with_6():
    assert sign_flip_p(np.ones(5), np.arange(5), 5) == 2 / 32
    assert sign_flip_p(np.ones(6), np.arange(6), 6) == 2 / 64


def test_clustered_t_p_is_the_t_test_on_cluster_means_when_clusters_are_equal():
    from scipy import stats as sps

    rng = np.random.default_rng(3)
    g = np.repeat(np.arange(7), 4)
    d = rng.normal(0.05, 0.2, g.size)
    means = np.bincount(g, weights=d) / 4
    assert clustered_t_p(d, g, 7) == pytest.approx(sps.ttest_1samp(means, 0.0).pvalue)
    assert clustered_t_p(np.zeros(8), np.arange(8), 8) == 1.0


def test_check_gives_the_three_tests_on_the_same_benchmarks():
    r = check(Design("8x5x5", (5,) * 8, 5, 0.7, diff=0.1), 40, 1)
    for k in ("power", "power_t", "power_sf", "fpr", "fpr_t", "fpr_sf", "few_disagree", "min_p"):
        assert k in r
    assert r["min_p"] > 0


# -- no disagreement at all: an exact bound, and what it means ----------------------------------


@pytest.mark.parametrize(("items", "clusters"), [(9, 9), (9, 3), (10, 2), (30, 10), (100, 100), (60, 12)])
def test_no_disagreement_is_never_wider_than_the_exact_bound(items, clusters):
    y = (np.arange(items) % 3 == 0).astype(float)
    g = np.arange(items) % clusters
    dv = difference_interval(y, y, g, clusters, 0.95, items * 5.0)
    assert dv.p_value == 1.0 and dv.low == -dv.high
    # never wider than the exact bound over clusters, never narrower than it over independent items
    assert dv.high <= zero_disagreement_bound(clusters, 0.95) + 1e-12
    assert dv.high >= 1 - 0.05 ** (1 / items) - 1e-12
    for lower, higher in ((0.8, 0.9), (0.9, 0.95), (0.95, 0.99)):  # still nested
        assert difference_interval(y, y, g, clusters, lower, items * 5.0).high <= (
            difference_interval(y, y, g, clusters, higher, items * 5.0).high
        )


def test_identical_replies_in_two_benchmarks_say_what_their_interval_means():
    """An arm with the same replies in two benchmarks (cache hits) beside one that changed.

    Its interval [-x, x] is not a measured spread: it is how large a difference the items that
    all agreed leave possible, never wider than the exact bound for no disagreement. The page
    (and the report) says so.
    """
    store = Store(":memory:")
    items = [(f"c{i % 3}", f"q{i}") for i in range(9)]
    same = dict(zip(items, [5, 0, 5, 3, 5, 0, 5, 5, 2], strict=True))
    changed = dict(same) | {items[1]: 2, items[3]: 5}
    for bid, ask in (("b1", same), ("b2", changed)):
        store.benchmark_put(bid, {"params": {"runs": 5}, "arms": [{"name": "keep"}, {"name": "ask"}]}, "h")
        rows = count_rows("keep", same) + count_rows("ask", ask)
        store.rows_put(bid, list(enumerate(rows)))
    diffs = {d["arm"]: d for d in benchmark_compare(store, "b1", "b2")["differences"]}
    keep, ask = diffs["keep"], diffs["ask"]
    assert keep["diff"] == 0.0 and keep["ci_low"] == -keep["ci_high"]
    assert keep["ci_high"] <= zero_disagreement_bound(3, 0.95)
    assert keep["note"].startswith("no item scored differently")
    assert (
        "9 items in 3 clusters" in keep["note"]
        and f"+-{zero_disagreement_bound(3, 0.95):.3f}" in keep["note"]
    )
    assert ask["diff"] > 0 and "only 2 of 3 cluster(s)" in ask["note"]
    text = str(report(count_rows("a", same) + count_rows("b", same)))
    assert "a - b: no item scored differently" in " ".join(text.split())


def test_a_p_value_below_the_sign_flip_floor_is_noted_and_one_above_is_not():
    items = [(f"c{i % 12}", f"q{i}") for i in range(36)]
    base = {it: 3 for it in items}
    few = dict(base) | {items[0]: 5, items[1]: 5, items[2]: 5}  # clusters c0, c1, c2 disagree, one way
    mixed = dict(base) | {items[0]: 5, items[1]: 5, items[2]: 1}  # p above the sign-flip floor 2 / 2**3
    many = dict(base) | {items[k]: 5 for k in range(8)}
    for other, k, noted in ((few, 3, True), (mixed, 3, False), (many, 8, True)):  # many: p 0.002 < 2 / 2**8
        c = compare(count_rows("a", other) + count_rows("b", base), "a", "b")
        assert c.n_clusters_disagree == k
        assert c.p_value is not None
        assert (c.note is not None) is noted is (c.p_value < 2 / 2**k)  # said only beside a p it qualifies
        if noted:
            assert c.note.startswith(f"only {k} of 12 cluster(s) hold any item scored differently")
            assert (
                "rests on the t model" in c.note and f"cannot go below p = {2 / 2**k:.3f} with {k}" in c.note
            )


# -- no interval: why, said and warned -----------------------------------------------------------


def test_one_cluster_gives_no_interval_and_says_why():
    counts = {("c", f"q{i}"): k for i, k in enumerate([5, 3, 1, 4])}
    rows = count_rows("a", counts) + count_rows("b", {k: 5 - v for k, v in counts.items()})
    with pytest.warns(NoIntervalWarning) as got:
        rep = report(rows)
    assert [str(w.message) for w in got] == [
        "report: arm 'a', arm 'b': no interval: all 4 items are in one cluster: an interval needs 2 or more "
        "clusters (how clusters vary cannot be estimated from one)",
        "report: a - b: no interval: all 4 items both arms ran are in one cluster: an interval needs 2 or more "
        "clusters (how clusters vary cannot be estimated from one)",
    ]
    a = rep.arm("a")
    assert a.ci_low is None and a.note.startswith("no interval: all 4 items are in one cluster")
    assert "No interval for 'a', 'b': all 4 items are in one cluster" in rep.note
    assert rep.comparisons[0].p_value is None and "one cluster" in rep.comparisons[0].note
    with pytest.warns(NoIntervalWarning, match=r"compare: a - b: no interval: all 4 items both arms ran"):
        compare(rows, "a", "b")
    assert report(rows, warn=False).arm("a").note == a.note  # said, not warned


def test_one_item_gives_no_interval_and_says_why():
    with pytest.warns(NoIntervalWarning, match=r"no interval: one item \(items\)"):
        a = report(count_rows("a", {("c", "q1"): 3})).arm("a")
    assert a.accuracy == 0.6 and a.ci_low is None and "at least 2 items" in a.note


def test_a_benchmark_whose_every_run_errored_shows_no_interval_and_says_why():
    ref = hb.Reference(
        items={f"q{i}": f"Q{i}" for i in range(6)},
        labels=[f"Q{i}" for i in range(6)],
        cluster=[f"c{i % 3}" for i in range(6)],
    )

    def broken(item, ctx):
        raise RuntimeError("the template has a typo")

    with pytest.warns(hb.ArmErrorWarning):
        bench = hb.benchmark([hb.Arm("broken", broken), hb.Arm("other", broken)], ref, runs=5, client=None)
    with pytest.warns(NoIntervalWarning) as got:
        rep = report(bench)
    assert len(got) == 2 and all(
        "has no scored run: every one of its 30 run(s) ended" in str(w.message) for w in got
    )
    a = rep.arm("broken")
    assert a.accuracy == 0.0 and (a.ci_low, a.ci_high) == (None, None)
    assert "arm 'broken' has no scored run: every one of its 30 run(s) ended in an error" in a.note
    c = rep.comparisons[0]
    assert (c.ci_low, c.p_value) == (None, None) and "no scored run" in c.note
    assert (
        "p = 1.000" not in str(rep) and "1.000" not in str(rep).split("Paired differences")[1].splitlines()[1]
    )
    # the page: no interval, and why
    store = Store(":memory:")
    store.benchmark_put("b1", {"params": {"runs": 5}, "arms": [{"name": "broken"}, {"name": "other"}]}, "h")
    store.rows_put("b1", list(enumerate(bench.rows)))
    view = benchmark_view(store, "b1")
    assert all(arm["ci_low"] is None for arm in view["arms"])
    assert "No interval for 'broken': arm 'broken' has no scored run" in view["note"]
    assert "No interval for 'other': arm 'other' has no scored run" in view["note"]
    assert view["differences"][0]["p_value"] is None and "no scored run" in view["differences"][0]["note"]


def test_a_budget_stopped_arm_has_no_scored_run_either():
    rows = [
        msgspec.structs.replace(r, correct=False, failure_kind="budget_stop")
        for r in count_rows("a", {(f"c{i}", f"q{i}"): 0 for i in range(4)})
    ]
    with pytest.warns(NoIntervalWarning, match="was stopped by the budget"):
        assert report(rows).arm("a").ci_low is None


def test_labels_all_missing_warn_no_labels():
    rows = [
        msgspec.structs.replace(r, correct=None, failure_kind=None)
        for r in count_rows("a", {("c0", "q1"): 5, ("c1", "q2"): 2})
    ]
    with pytest.warns(NoLabelsWarning, match="no reportable run is on an item with a label"):
        rep = report(rows)
    assert rep.arm("a").accuracy is None and "no labelled run" in rep.arm("a").note
    ref = hb.Reference(items={"q1": "a", "q2": "b"}, labels=[None, None], cluster=["x", "y"])
    client = hb.MockClient(lambda messages, params: "a")
    with pytest.warns(NoLabelsWarning):
        bench = hb.benchmark(hb.Arm("ask", lambda item, ctx: ctx.call(item).text), ref, runs=5, client=client)
    with pytest.warns(NoLabelsWarning):
        report(bench)


# -- power with an arm x cluster effect ----------------------------------------------------------


@pytest.mark.slow  # 400 simulated benchmarks and a pilot of 1,000 clusters; make test-slow
def test_power_with_an_arm_x_cluster_effect_matches_simulated_compare():
    """5 clusters of 27 items, 5 runs, accuracy 0.60 against 0.45, an arm x cluster effect.

    power() promised 0.80 where compare() rejected in 0.70 of 1,000 simulated benchmarks.
    Here the components are stated (the model's) and estimated from a pilot, and compare() is
    simulated on 400 benchmarks (Monte Carlo error 0.02), the pilot of 1,000 clusters: within 0.03 + 2 of those errors.
    """
    d = Design("5x27x5", (27,) * 5, 5, 0.6, diff=0.15, sd_arm_cluster=ARM_X_CLUSTER_SD)
    stated, pilot = promised_power(d, 7), promised_power(d, 11, pilot=True, clusters=1000)
    sim = simulate(d, 400, np.random.default_rng(5))
    simulated = np.mean(
        [
            difference_interval(a, b, d.cluster, 5, 0.95, 675.0).p_value < 0.05
            for a, b in zip(sim.ya, sim.yb, strict=True)
        ]
    )
    print("stated", stated, "pilot", pilot, "simulated", simulated)
    assert abs(stated - pilot) < 0.03
    for promised in (stated, pilot):
        assert abs(promised - simulated) < 0.03 + 2 * math.sqrt(0.8 * 0.2 / 400)
    # without the arm x cluster component the same numbers promise far more: it is not small
    no_cluster = power(0.15, var_within=0.33, var_between=0.019, runs=5, items_per_cluster=27, n_items=135)
    assert no_cluster.achieved > stated + 0.1


def test_var_cluster_sets_the_design_effect_and_the_runs_trade_off():
    from scipy import stats as sps

    plan = power(0.05, var_within=0.2, var_between=0.04, var_cluster=0.002, runs=5, items_per_cluster=20)
    var = (0.04 + 0.2 / 5) / plan.n_items + 0.002 / plan.n_clusters
    assert plan.design_effect == pytest.approx(var * plan.n_items / (0.04 + 0.2 / 5))
    z = sps.t.ppf(0.975, plan.n_clusters - 1)
    assert plan.achieved == pytest.approx(
        sps.nct.sf(z, plan.n_clusters - 1, 0.05 / math.sqrt(var))
        + sps.nct.cdf(-z, plan.n_clusters - 1, 0.05 / math.sqrt(var))
    )
    # more runs shrink only var_within's share: the floor is set by the items and the clusters
    assert (
        plan.min_items > power(0.05, var_within=0.2, var_between=0.04, runs=5, items_per_cluster=20).min_items
    )
    assert plan.var_cluster == 0.002 and "var_cluster 0.0020" in str(plan)
    with pytest.raises(ConfigError, match="state design_effect or var_cluster, not both"):
        power(0.05, var_within=0.2, var_between=0.04, var_cluster=0.002, design_effect=1.5)


def test_a_one_cluster_pilot_warns_and_plans_conservatively():
    d = Design("pilot", (60,), 5, 0.7, diff=0.05)
    rows = arm_rows(d, np.random.default_rng(2))
    with pytest.warns(PilotClustersWarning, match="the pilot's 60 items are all in one cluster"):
        plan = power(0.05, bench=rows)
    assert plan.design_effect == 60 and plan.items_per_cluster == 60 and "one cluster" in plan.source
    independent = power(0.05, var_within=plan.var_within, var_between=plan.var_between, runs=5)
    assert plan.n_clusters >= independent.n_items  # each cluster counted as one item
    # stating how clusters differ needs no warning
    stated = power(0.05, bench=rows, var_cluster=0.001, items_per_cluster=10)
    assert stated.var_cluster == 0.001 and stated.n_items < plan.n_items


# -- power with few clusters: compare()'s own test, simulated ------------------------------------


def test_the_vectorised_test_power_simulates_is_difference_interval_s():
    """power()'s simulation runs compare()'s test vectorised: the same rejections, benchmark by benchmark."""
    from hrbench.stats._power import _rejects
    from hrbench.testing import DESIGNS, rows_for

    checked = 0
    for design in DESIGNS[:11]:
        for _, d in rows_for(design):
            for diff in (d.diff, 0.0):
                sim = simulate(d, 12, np.random.default_rng(3), diff=diff)
                g, n_g, total = d.cluster, len(d.sizes), float(d.n_items * d.runs)
                got = _rejects(sim.ya - sim.yb, g, n_g, 0.05, total)
                want = [
                    difference_interval(a, b, g, n_g, 0.95, total).p_value < 0.05
                    for a, b in zip(sim.ya, sim.yb, strict=True)
                ]
                assert got.tolist() == want, (design.name, diff)
                checked += got.size
    assert checked == 12 * 2 * 3 * 11  # three nulls a design: equal, axc, skew


def test_the_fitted_arms_hold_the_stated_components():
    from hrbench.stats._power import _fit_logit
    from hrbench.testing import stated_components

    d = Design("3x10x5", (10,) * 3, 5, 0.7, diff=0.15, sd_arm_cluster=ARM_X_CLUSTER_SD)
    c = stated_components(d, 1)
    model = _fit_logit(0.7, 0.55, c["var_within"], c["var_between"], c["var_cluster"])
    refit = stated_components(
        Design(
            "fit",
            (10,) * 3,
            5,
            0.7,
            diff=0.15,
            sd_cluster=0.0,
            sd_item=model.sd_shared,
            sd_arm_item=model.sd_own_item,
            sd_arm_cluster=model.sd_own_cluster,
        ),
        2,
    )
    for k in ("var_within", "var_between", "var_cluster"):
        assert refit[k] == pytest.approx(c[k], rel=0.1, abs=2e-4), k
    assert model.sd_own_cluster > 0.2  # the arm x cluster effect is found on the clusters


@pytest.mark.parametrize(
    ("design", "old"),
    [
        (Design("3x10x5", (10,) * 3, 5, 0.7, diff=0.15), 0.363),
        (Design("10x3x5 @0.97", (3,) * 10, 5, 0.97, diff=0.05, sd_arm_cluster=ARM_X_CLUSTER_SD), 0.342),
    ],
    ids=["3 clusters", "10 clusters at the ceiling"],
)
def test_power_with_few_clusters_is_compare_s_power_not_the_noncentral_t_s(design, old):
    """With the arms' accuracy known and 10 or fewer clusters, power() simulates compare()'s test.

    The noncentral t promised 0.363 (3 clusters of 10 items) and 0.342 (10 of 3 at accuracy
    0.97, an arm x cluster effect) where compare() rejected 0.331 and 0.318. Here compare()'s
    test (vectorised, the test above shows it is the same) runs on 20,000 benchmarks of the
    design itself (Monte Carlo error 0.0035): the promise from the stated components is within
    0.02 of it and closer than the noncentral t's (at 3 clusters that was 0.028 off).
    """
    from hrbench.stats._power import _rejects
    from hrbench.testing import stated_components

    c = stated_components(design, 7)
    m = design.n_items // len(design.sizes)
    kwargs = dict(
        var_within=c["var_within"],
        var_between=c["var_between"],
        var_cluster=c["var_cluster"],
        runs=5,
        items_per_cluster=m,
        n_items=design.n_items,
    )
    plan = power(design.diff, accuracy=design.accuracy - design.diff / 2, **kwargs)
    t_plan = power(design.diff, **kwargs)  # accuracy unknown: the noncentral t
    assert t_plan.achieved == pytest.approx(old, abs=0.005)
    assert "power simulated for" in plan.source and "simulated" not in t_plan.source
    sim = simulate(design, 20000, np.random.default_rng(11))
    total = float(design.n_items * design.runs)
    simulated = np.mean(_rejects(sim.ya - sim.yb, design.cluster, len(design.sizes), 0.05, total))
    print(design.name, "simulated", simulated, "plan", plan.achieved, "noncentral t", t_plan.achieved)
    assert abs(plan.achieved - simulated) < 0.02
    assert abs(plan.achieved - simulated) < abs(t_plan.achieved - simulated)
    if len(design.sizes) == 3:  # the row of bench/coverage.py that failed from stated components
        assert abs(t_plan.achieved - simulated) > 0.025
    assert power(design.diff, accuracy=design.accuracy - design.diff / 2, **kwargs) == plan  # seeded


@pytest.mark.slow  # simulates compare() on thousands of benchmarks (~10 s); make test-slow
def test_power_simulates_only_with_few_clusters_and_a_known_accuracy():
    base = dict(var_within=0.3, var_between=0.02, var_cluster=0.001, runs=5, items_per_cluster=10)
    many = power(0.05, accuracy=0.7, **base)
    assert many.n_clusters > 10 and "simulated" not in many.source
    assert many == power(0.05, **base)  # many clusters: the noncentral t, accuracy or not
    few = power(0.15, accuracy=0.7, **base)
    assert few.n_clusters <= 10 and "power simulated for" in few.source and few.achieved >= 0.8
    t_few = power(0.15, **base)
    rows = {p.runs: p.n_items for p in few.tradeoff}
    assert rows[5] == few.n_items != t_few.n_items  # the table agrees with the headline it sits under
    scale = few.n_items / t_few.n_items  # the other runs: the noncentral t's, scaled alike
    assert rows == {p.runs: math.ceil(p.n_items * scale - 1e-9) for p in t_few.tradeoff} | {5: few.n_items}
    assert few.min_items == math.ceil(t_few.min_items * scale - 1e-9)
    with pytest.raises(ConfigError, match=r"accuracy.*strictly between 0 and 1"):
        power(0.15, accuracy=0.95, **base)
    # a pilot carries its arms' accuracy
    d = Design("pilot", (10,) * 6, 5, 0.7, diff=0.15)
    with pytest.warns(PilotClustersWarning, match="the pilot has 6 clusters"):
        plan = power(0.15, bench=arm_rows(d, np.random.default_rng(4)), n_items=30)
    assert plan.n_clusters == 3 and "power simulated for 3 clusters" in plan.source


def test_a_paired_interval_that_does_not_nest_is_the_midpoint_of_its_hull_and_its_intersection():
    """2 clusters: the raw MOVER limits need not nest as the level changes (the two directions'
    correlation is +1 or -1 by construction). The hull over lower levels alone covered 0.969 of
    2x20x5 benchmarks (over the band) and the intersection with higher levels 0.933; the
    interval is their midpoint, which nests, and is the raw one wherever the raw ones nest."""
    from hrbench.stats import _nesting, design_df
    from hrbench.stats._intervals import _Discordance
    from hrbench.stats._wilson import _ALPHAS, _Bound

    d2 = Design("2x20x5", (20,) * 2, 5, 0.7, diff=0.15)
    sim = simulate(d2, 400, np.random.default_rng(3))
    g, total = d2.cluster, float(d2.n_items * d2.runs)
    moved = 0
    for s in range(400):
        d = sim.ya[s] - sim.yb[s]
        if not np.any(d):
            continue
        parts = _Discordance(
            np.maximum(d, 0.0), np.maximum(-d, 0.0), g, 2, _Bound(design_df(d, g, 2), 1, total)
        )
        lo_g, hi_g = parts.raw(_ALPHAS)
        k = int(np.searchsorted(_ALPHAS, 0.05, side="right"))
        lo, hi = parts.raw(np.array([0.05]))
        hull = (min(lo[0], lo_g[k:].min()), max(hi[0], hi_g[k:].max()))
        inter = (max(lo[0], lo_g[:k].max()), min(hi[0], hi_g[:k].min()))
        iv = difference_interval(sim.ya[s], sim.yb[s], g, 2, 0.95, total)
        assert iv.low == pytest.approx((hull[0] + inter[0]) / 2, abs=1e-12)
        assert iv.high == pytest.approx((hull[1] + inter[1]) / 2, abs=1e-12)
        eps = 1e-12
        assert (
            hull[0] - eps
            <= iv.low
            <= inter[0] + eps
            <= inter[1] + 2 * eps
            <= iv.high + 3 * eps
            <= hull[1] + 4 * eps
        )
        moved += hull != inter
        # the p-value inverts the interval it gives
        if iv.p_value < 1.0:
            at_p = difference_interval(sim.ya[s], sim.yb[s], g, 2, 1 - iv.p_value * 1.001, total)
            assert at_p.low > -1e-9 or at_p.high < 1e-9
    assert moved > 20  # the raw intervals failed to nest on many of them: the rule is exercised
    # where the raw intervals nest (many clusters) the interval is the raw one
    d40 = Design("40x5x5", (5,) * 40, 5, 0.7, diff=0.05)
    many = simulate(d40, 50, np.random.default_rng(4))
    for s in range(50):
        d = many.ya[s] - many.yb[s]
        parts = _Discordance(
            np.maximum(d, 0.0),
            np.maximum(-d, 0.0),
            d40.cluster,
            40,
            _Bound(design_df(d, d40.cluster, 40), 39, 1000.0),
        )
        lo, hi = parts.raw(np.array([0.05]))
        low, high, _ = _nesting.nested(0.05, parts.raw)
        assert (low, high) == pytest.approx((float(lo[0]), float(hi[0])), abs=1e-12)
