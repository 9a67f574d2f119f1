"""power() from a pilot: compare()'s test on benchmarks resampled from the pilot's own clusters.

A skewed pilot (arm a a little better on most clusters, much worse on one) is small enough that
every benchmark the resampling can draw is enumerated: the exact power is then the share of
those (weighted by their chance) that compare()'s test rejects, and power() must match it within
its Monte Carlo error, where the logit-normal model of stated components cannot.
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest

from hrbench.errors import IntervalMethodWarning
from hrbench.stats import PilotClustersWarning, compare, design_df, difference_interval, power, report
from hrbench.stats._power_resample import (
    Cells,
    _binomial,
    _draw_runs,
    _flips,
    pilot_cells,
    resampled_power,
    spread_kept,
)
from hrbench.stats._power_sim import _rows_df
from hrbench.stats._table import _table

RUNS = 5
# per pilot cluster, per item: (arm a's right runs, arm b's right runs) out of 5; the last
# cluster is the one where arm a is much worse (a skewed difference)
GOOD = [(5, 3), (4, 2), (3, 2)]
BAD = [(0, 5), (1, 5), (0, 4)]
PILOT = [GOOD, [(5, 4), (4, 2), (4, 1)], [(5, 2), (3, 2), (2, 1)]] * 3 + [BAD]
PILOT_30 = PILOT * 3
"""The same clusters, each three times: power() resamples a pilot of 30 clusters or more, and
resampling it draws from the same distribution as resampling PILOT (each pattern a tenth)."""


def pilot_rows(clusters: list[list[tuple[int, int]]], runs: int = RUNS) -> dict:
    """Row columns of two arms ``a`` and ``b`` from right-run counts per cluster and item."""
    cols: dict[str, list] = {k: [] for k in ("cluster", "item", "arm", "run", "correct")}
    for c, items in enumerate(clusters):
        for i, counts in enumerate(items):
            for arm, right in zip("ab", counts, strict=True):
                for r in range(runs):
                    cols["cluster"].append(f"c{c}")
                    cols["item"].append(f"c{c}-q{i}")
                    cols["arm"].append(arm)
                    cols["run"].append(r + 1)
                    cols["correct"].append(r < right)
    n = len(cols["item"])
    return {**cols, "failure_kind": [None] * n, "usd": [0.0] * n, "reportable": [True] * n}


def pilot_diff(clusters: list[list[tuple[int, int]]]) -> float:
    """The pilot's own difference a - b over its items (per run, proportion units)."""
    return float(np.mean([(a - b) / RUNS for items in clusters for a, b in items]))


def exact_power(clusters: list[list[tuple[int, int]]], g: int, alpha: float = 0.05) -> float:
    """compare()'s power over every benchmark of ``g`` whole clusters drawn with replacement from ``clusters``.

    Each multiset of clusters is one benchmark, with its multinomial chance; the test is
    difference_interval's own (not the vectorised one power() runs).
    """
    c = len(clusters)
    total = 0.0
    for pick in itertools.combinations_with_replacement(range(c), g):
        counts = np.bincount(pick, minlength=c)
        chance = math.factorial(g) / math.prod(math.factorial(int(k)) for k in counts) / c**g
        items = [clusters[k] for k in pick]
        ya = np.array([a / RUNS for cl in items for a, _ in cl])
        yb = np.array([b / RUNS for cl in items for _, b in cl])
        cl = np.repeat(np.arange(g), [len(x) for x in items])
        iv = difference_interval(ya, yb, cl, g, 1 - alpha, float(ya.size * RUNS))
        total += chance * (iv.p_value is not None and iv.p_value < alpha)
    return total


MC_ERROR = math.sqrt(0.25 / 4000)  # of a simulated power (4,000 benchmarks)


@pytest.mark.parametrize("g", [4, 5])
def test_a_skewed_pilot_resampled_gives_the_exact_power_and_the_normal_model_does_not(g):
    rows = pilot_rows(PILOT)
    diff = pilot_diff(PILOT)  # the pilot's own difference: no run changed, a plain cluster bootstrap
    plan = power(diff, bench=pilot_rows(PILOT_30), n_items=3 * g)
    exact = exact_power(PILOT, g)
    resampled = resampled_power(cells_of(rows), np.full(g, 3), RUNS, 0.05, diff)
    print(g, "clusters: exact", exact, "resampled", resampled)
    assert plan.n_clusters == g and "the pilot's clusters resampled" in plan.source
    assert abs(resampled - exact) < 3 * MC_ERROR
    # the same pilot's components, stated: the logit-normal model, blind to the skew
    normal = power(
        diff,
        var_within=plan.var_within,
        var_between=plan.var_between,
        var_cluster=plan.var_cluster,
        runs=RUNS,
        items_per_cluster=3,
        n_items=3 * g,
        accuracy=float(np.mean([(a + b) / 2 / RUNS for items in PILOT for a, b in items])),
    )
    print(g, "clusters: normal model", normal.achieved)
    assert "arms at" in normal.source and abs(normal.achieved - exact) > 0.1


def test_a_symmetric_pilot_resampled_gives_the_exact_power_too():
    mirrored = [GOOD] * 4 + [[(b, a) for a, b in GOOD]] * 2 + [[(4, 4), (2, 1), (5, 5)]] * 3
    resampled = resampled_power(
        cells_of(pilot_rows(mirrored)), np.full(5, 3), RUNS, 0.05, pilot_diff(mirrored)
    )
    assert abs(resampled - exact_power(mirrored, 5)) < 3 * MC_ERROR


def test_power_moves_the_arms_apart_less_by_the_bootstraps_deflation_of_the_spread():
    # k clusters drawn with replacement vary (k - 1) / k as much as new clusters would (Davison &
    # Hinkley §3.8); power() resamples at diff * sqrt((k - 1) / k), giving real benchmarks' noncentrality
    rows, diff = pilot_rows(PILOT_30), pilot_diff(PILOT)
    cells, sizes = cells_of(rows), np.full(5, 3)
    assert spread_kept(cells, sizes) == pytest.approx(29 / 30)
    plan = power(diff, bench=rows, n_items=15)
    assert plan.achieved == resampled_power(cells, sizes, RUNS, 0.05, diff * math.sqrt(29 / 30))
    assert plan.achieved != resampled_power(cells, sizes, RUNS, 0.05, diff)
    # a plan cluster larger than all pilot clusters but one draws from that one: nothing of its spread is kept
    uneven = Cells(*(x[:15] for x in cells[:4]), np.array([0, 3, 6]), np.array([3, 3, 9]))
    assert spread_kept(uneven, np.array([3, 3])) == pytest.approx(2 / 3)
    assert spread_kept(uneven, np.array([9, 3])) == pytest.approx((9 * 0 + 1 * 2 / 3) / 10)


def cells_of(rows: dict) -> Cells:
    """The paired items of arms a and b of a pilot's rows, as power() resamples them."""
    cells = pilot_cells(_table(rows), "a", "b")
    assert cells is not None
    return cells


def test_a_resampled_plan_is_seeded_and_solves_for_items():
    rows = pilot_rows(PILOT_30)
    plan = power(0.3, bench=rows)
    assert plan == power(0.3, bench=rows)  # the same on every call
    assert "22 clusters" in plan.source and "resampled" in plan.source and plan.achieved >= 0.8
    assert power(0.3, bench=rows, n_items=plan.n_items - 1).achieved < 0.8  # the fewest items that reach it


def test_runs_are_changed_so_that_the_arms_are_diff_apart_about_their_mean():
    qa, qb = _flips(0.6, 0.6, 0.1)  # a up by 0.05, b down by 0.05
    assert qa == pytest.approx(0.05 / 0.4) and qb == pytest.approx(-0.05 / 0.6)
    assert _flips(0.7, 0.5, 0.2) == pytest.approx((0.0, 0.0), abs=1e-12)
    assert _flips(0.98, 0.5, -0.9) is None  # b would have to rise 0.69 from 0.5
    assert _flips(0.99, 0.01, 0.99) is not None and _flips(0.99, 0.5, 0.99) is None
    rng = np.random.default_rng(1)
    right, runs = np.full(200_000, 3), np.full(200_000, 5)
    up = _draw_runs(right, runs, 5, 0.25, rng)  # each of 2 wrong runs right with chance 0.25
    assert up.mean() == pytest.approx(3 + 2 * 0.25, abs=0.01) and up.max() <= 5
    down = _draw_runs(right, runs, 5, -0.5, rng)
    assert down.mean() == pytest.approx(1.5, abs=0.01) and down.min() >= 0
    fewer = _draw_runs(right, runs, 2, 0.0, rng)  # 2 of the 5 runs without replacement
    assert np.bincount(fewer, minlength=3) / fewer.size == pytest.approx([0.1, 0.6, 0.3], abs=0.005)


def test_the_binomial_by_inversion_is_binomial():
    rng = np.random.default_rng(2)
    trials = np.repeat(np.arange(6), 100_000)
    got = _binomial(trials, 0.3, 5, rng)
    for n in range(6):
        freq = np.bincount(got[trials == n], minlength=6)[: n + 1] / 100_000
        want = [math.comb(n, j) * 0.3**j * 0.7 ** (n - j) for j in range(n + 1)]
        assert freq == pytest.approx(want, abs=0.005)
        assert got[trials == n].max() <= n


def test_a_pilot_that_cannot_be_resampled_keeps_the_logit_normal_model():
    # more runs planned than the pilot has
    more = power(0.1, bench=pilot_rows(PILOT), runs=10, n_items=12)
    assert "resampled" not in more.source and "arms at" in more.source
    # a component stated: the pilot is not resampled, the stated value is used
    stated = power(0.1, bench=pilot_rows(PILOT), var_cluster=0.001, n_items=12)
    assert "resampled" not in stated.source and stated.var_cluster == 0.001
    # fewer runs planned than the pilot's: resampled, each item's runs drawn without replacement
    fewer = power(0.1, bench=pilot_rows(PILOT_30), runs=3, n_items=12)
    assert "resampled" in fewer.source


@pytest.mark.parametrize(
    ("clusters", "resampled", "rough"),
    [(5, False, True), (9, False, True), (10, False, False), (29, False, False), (30, True, False)],
)
def test_a_pilot_of_fewer_than_30_clusters_is_not_resampled_and_fewer_than_10_is_rough(
    clusters, resampled, rough
):
    # resampled, the plan's spread is that of the pilot's cluster means alone; from 10 clusters the
    # promised power ranged 0.49-0.97 for a design of power 0.77 (RESAMPLED_PILOT_CLUSTERS)
    pilot = (PILOT * 3)[:clusters]
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        plan = power(0.1, bench=pilot_rows(pilot), n_items=30)
    assert ("the pilot's clusters resampled" in plan.source) is resampled
    said = [str(w.message) for w in got if issubclass(w.category, PilotClustersWarning)]
    assert bool(said) is rough
    if rough:
        assert f"the pilot has {clusters} clusters" in said[0] and "the plan is rough" in said[0]
        assert f", {clusters} clusters: var_cluster rough" in plan.source
    # stated: the pilot's spread between clusters is not used, so nothing is rough
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        power(0.1, bench=pilot_rows(pilot), n_items=30, var_cluster=0.001)
    assert not [w for w in got if issubclass(w.category, PilotClustersWarning)]


def test_the_vectorised_df_is_design_df_row_by_row():
    rng = np.random.default_rng(3)
    sizes = np.array([2, 3, 7, 7, 12, 20, 1])
    g = np.repeat(np.arange(sizes.size), sizes)
    onehot = np.eye(sizes.size)[g]
    d = rng.integers(-5, 6, (300, g.size)) / 5 * (rng.random((300, 1)) < 0.9)
    d[:50] += rng.normal(0, 1, (50, sizes.size))[:, g]  # rows with strong cluster effects too
    want = [design_df(row, g, sizes.size) for row in d]
    assert _rows_df(d, g, onehot).tolist() == want
    assert len(set(want)) > 1


# -- method="bootstrap" with few clusters ---------------------------------------------------------


@pytest.mark.parametrize(("clusters", "warns"), [(10, True), (29, True), (30, False)])
def test_the_bootstrap_with_few_clusters_warns(clusters, warns):
    rows = pilot_rows([GOOD, [(b, a) for a, b in GOOD]] * (clusters // 2) + [GOOD] * (clusters % 2))
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        compare(rows, "a", "b", method="bootstrap", n_boot=200)
        report(rows, method="bootstrap", n_boot=200)
        compare(rows, "a", "b")  # the default method never warns
    said = [str(w.message) for w in got if issubclass(w.category, IntervalMethodWarning)]
    if warns:
        assert len(said) == 2 and f'method="bootstrap" on {clusters} clusters' in said[0]
        assert said[0].startswith("compare:") and said[1].startswith("report:")
    else:
        assert said == []
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        compare(rows, "a", "b", method="bootstrap", n_boot=200, warn=False)
    assert not any(issubclass(w.category, IntervalMethodWarning) for w in got)


@pytest.mark.parametrize(("clusters", "noted"), [(10, True), (30, False)])
def test_a_report_on_the_bootstrap_with_few_clusters_says_so_in_its_text(clusters, noted):
    """The daemon's report (``report_payload``) warns nothing: its text and Markdown carry the caveat."""
    from hrbench.stats import report_payload

    rows = pilot_rows([GOOD, [(b, a) for a, b in GOOD]] * (clusters // 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error", IntervalMethodWarning)  # the payload itself does not warn
        payload = report_payload(rows, method="bootstrap", n_boot=200)
    said = f'method="bootstrap" on {clusters} clusters: with fewer than 30'
    assert (said in payload["text"]) is noted and (said in payload["markdown"]) is noted
    assert said not in report_payload(rows, n_boot=200)["text"]  # the default method: no caveat
