"""Tests of hrbench.stats: hand-computed values, a by-hand sandwich, bootstrap, power, coverage."""

from __future__ import annotations

import json
import math
import re

import msgspec
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hrbench as hb
from hrbench.errors import ConfigError, IntervalMethodWarning, TooFewRunsError
from hrbench.records import Row
from hrbench.stats import (
    ArmReport,
    Comparison,
    Report,
    compare,
    compare_all,
    design_df,
    difference_interval,
    power,
    proportion_interval,
    report,
    report_payload,
)
from hrbench.testing import Design, check, simulate
from tests._examples import examples
from tests.conftest import load_cases

# scipy.stats is imported in the tests that use it: about 1 s of CPU each pytest-xdist worker
# would pay at collection, not only the workers that run them


def rows_from(table: dict[tuple[str, str], list[int | None]], arm: str = "a", **extra) -> list[Row]:
    """Rows from {(cluster, item): [score per run]} for one arm."""
    out = []
    for (cluster, item), scores in table.items():
        for r, s in enumerate(scores, start=1):
            ok = None if s is None else bool(s)
            out.append(
                Row(
                    cluster=cluster,
                    item=item,
                    arm=arm,
                    run=r,
                    split="test",
                    correct=ok,
                    outcome=None,
                    failure_kind=None if ok in (True, None) else "wrong",
                    draw_index=r,
                    **extra,
                )
            )
    return out


# 3 clusters, 5 items, 5 runs. Item means 0.8, 0.4, 0.0, 1.0, 0.2; accuracy 0.48.
HAND = {
    ("A", "q1"): [1, 1, 1, 1, 0],
    ("A", "q2"): [1, 1, 0, 0, 0],
    ("B", "q3"): [0, 0, 0, 0, 0],
    ("C", "q4"): [1, 1, 1, 1, 1],
    ("C", "q5"): [1, 0, 0, 0, 0],
}


HAND_Y = [0.8, 0.4, 0.0, 1.0, 0.2]  # HAND's item means
HAND_SE = math.sqrt(0.48 / 25)  # CR2; see test_hand_computed_accuracy_se_df_interval


def wilson_t(
    p: float, n: float, df: int, level: float = 0.95, trials: float | None = None, df_max: int | None = None
) -> tuple[float, float]:
    """Wilson's score interval for p out of n trials, with the t quantile on df (textbook form).

    Given ``trials`` (the runs behind p) and ``df_max`` (clusters - 1), the interval is read off
    a grid of candidate p0 (steps of 1e-6) by Neyman's construction, each p0 given one p-value
    at every level: the one-sided score test's ``P1`` on df when it is below ``alpha_c(p0)``,
    the level up to which no data could give a limit beyond p0 (Wilson's for trials of trials,
    t on df_max), else the equal-tailed ``P2 = 2 P1``; mirrored at 0.
    """
    from scipy import stats as sps

    def wilson(z: float) -> tuple[float, float]:
        root = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
        return (
            (p + z * z / (2 * n) - root) / (1 + z * z / n),
            (p + z * z / (2 * n) + root) / (1 + z * z / n),
        )

    lo2, hi2 = wilson(sps.t.ppf(0.5 + level / 2, df))
    if trials is None:
        return lo2, hi2
    alpha = 1 - level
    p0 = np.linspace(0.0, 1.0, 1_000_001)[1:-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        p2 = 2 * sps.t.sf(np.abs(p - p0) / np.sqrt(p0 * (1 - p0) / n), df)
        above = 2 * sps.t.sf(np.sqrt(trials * (1 - p0) / p0), df_max)  # alpha_c for p0 above p
        below = 2 * sps.t.sf(np.sqrt(trials * p0 / (1 - p0)), df_max)
    pv = np.where(p2 / 2 < np.where(p0 > p, above, below), p2 / 2, p2)
    ok = p0[(pv >= alpha) | (p0 == p)]
    lo = 0.0 if p0[0] in ok and pv[0] >= alpha else float(ok.min())
    hi = 1.0 if p0[-1] in ok and pv[-1] >= alpha else float(ok.max())
    return lo, hi


def cr2_by_hand(y: np.ndarray, clusters: list[str]) -> float:
    """CR2 (Bell-McCaffrey) standard error of mean(y) by matrix algebra: A_c = (I - H_cc)^(-1/2)."""
    n = y.size
    X = np.ones((n, 1))
    H = X @ np.linalg.inv(X.T @ X) @ X.T
    e = y - y.mean()
    meat = 0.0
    for c in sorted(set(clusters)):
        idx = [k for k, cc in enumerate(clusters) if cc == c]
        w, V = np.linalg.eigh(np.eye(len(idx)) - H[np.ix_(idx, idx)])
        A = V @ np.diag(w**-0.5) @ V.T
        u = X[idx].T @ A @ e[idx]
        meat += float(u @ u)
    return math.sqrt(meat) / n


def cr2_cov_by_hand(u: np.ndarray, v: np.ndarray, clusters: list[str]) -> float:
    """CR2 covariance of mean(u) and mean(v), by matrix algebra."""
    n = u.size
    H = np.full((n, n), 1.0 / n)
    out = 0.0
    for c in sorted(set(clusters)):
        idx = [k for k, cc in enumerate(clusters) if cc == c]
        w, V = np.linalg.eigh(np.eye(len(idx)) - H[np.ix_(idx, idx)])
        A = V @ np.diag(w**-0.5) @ V.T
        out += float(np.sum(A @ (u - u.mean())[idx]) * np.sum(A @ (v - v.mean())[idx]))
    return out / (n * n)


def icc_by_hand(y: np.ndarray, clusters: list[str]) -> float:
    """One-way ANOVA intra-cluster correlation (Donner 1986's estimator for unequal sizes), in [0, .99]."""
    groups = [y[[k for k, c in enumerate(clusters) if c == cc]] for cc in sorted(set(clusters))]
    n, G = y.size, len(groups)
    msb = sum(len(x) * (x.mean() - y.mean()) ** 2 for x in groups) / (G - 1)
    msw = sum(((x - x.mean()) ** 2).sum() for x in groups) / (n - G) if n > G else 0.0
    n0 = (n - sum(len(x) ** 2 for x in groups) / n) / (G - 1)
    denom = msb + (n0 - 1) * msw
    return min(max((msb - msw) / denom, 0.0), 0.99) if denom > 0 else 0.0


def design_df_by_hand(y, clusters: list[str]) -> int:
    """Bell-McCaffrey df of the CR2 variance of mean(y), by n x n matrix algebra, rounded down.

    The CR2 variance is y' M y with M = (I - H) B B' (I - H) / n**2, B's column c holding
    A_c 1_c on cluster c's items; under Omega = (1 - rho) I + rho (same cluster), its
    Satterthwaite df is tr(M Omega)**2 / tr(M Omega M Omega).
    """
    y = np.asarray(y, dtype=float)
    n = y.size
    names = sorted(set(clusters))
    H = np.full((n, n), 1.0 / n)
    B = np.zeros((n, len(names)))
    same = np.array([[ci == cj for cj in clusters] for ci in clusters], dtype=float)
    for j, c in enumerate(names):
        idx = [k for k, cc in enumerate(clusters) if cc == c]
        w, V = np.linalg.eigh(np.eye(len(idx)) - H[np.ix_(idx, idx)])
        B[idx, j] = V @ np.diag(w**-0.5) @ V.T @ np.ones(len(idx))
    R = np.eye(n) - H
    M = R @ B @ B.T @ R / n**2
    rho = icc_by_hand(y, clusters)
    MO = M @ ((1 - rho) * np.eye(n) + rho * same)
    df = np.trace(MO) ** 2 / np.trace(MO @ MO)
    return int(min(max(math.floor(df + 1e-9), 1), len(names) - 1))


def mover_by_hand(ya, yb, clusters, level=0.95, trials=None):
    """Paired MOVER interval over the two directions of disagreement, each Wilson on its n_eff.

    Each rate's Wilson interval has equal tails (MOVER reads a limit's distance as that rate's
    spread at the level); ``trials`` (the run pairs behind the items) only lifts the items' cap
    on the effective sizes.
    """
    d = np.asarray(ya) - np.asarray(yb)
    a, b = np.maximum(d, 0), np.maximum(-d, 0)
    df = design_df_by_hand(d, clusters)

    def n_eff(x):
        m, var = x.mean(), cr2_cov_by_hand(x, x, clusters)
        return m * (1 - m) / var if var > 0 and 0 < m < 1 else None

    pooled = n_eff(a + b) or d.size
    na, nb = n_eff(a) or pooled, n_eff(b) or pooled
    va, vb = cr2_cov_by_hand(a, a, clusters), cr2_cov_by_hand(b, b, clusters)
    r = cr2_cov_by_hand(a, b, clusters) / math.sqrt(va * vb) if va > 0 and vb > 0 else 0.0
    A, B = a.mean(), b.mean()
    if trials is None:
        na, nb = min(na, d.size), min(nb, d.size)
    (la, ua), (lb, ub) = wilson_t(A, na, df, level), wilson_t(B, nb, df, level)
    la, ua, lb, ub = min(la, A), max(ua, A), min(lb, B), max(ub, B)
    lo = A - B - math.sqrt((A - la) ** 2 + (ub - B) ** 2 - 2 * r * (A - la) * (ub - B))
    hi = A - B + math.sqrt((ua - A) ** 2 + (B - lb) ** 2 - 2 * r * (ua - A) * (B - lb))
    return max(-1.0, lo), min(1.0, hi)


def test_hand_computed_accuracy_se_df_interval():
    a = report(rows_from(HAND)).arm("a")
    assert a.accuracy == pytest.approx(0.48)
    # residuals .32 -.08 | -.48 | .52 -.28 -> cluster sums .24, -.48, .24 in clusters of 2, 1, 2
    # CR2: se^2 = (.24^2 / (1 - 2/5) + .48^2 / (1 - 1/5) + .24^2 / (1 - 2/5)) / 25 = .48 / 25
    assert a.se == pytest.approx(math.sqrt(0.48 / 25))
    y = np.array([0.8, 0.4, 0.0, 1.0, 0.2])
    assert a.se == pytest.approx(cr2_by_hand(y, ["A", "A", "B", "C", "C"]))
    # unequal clusters (2, 1, 2): the CR2 variance has Bell-McCaffrey df 1.8 (ICC 0), rounded down
    assert design_df_by_hand(y, ["A", "A", "B", "C", "C"]) == 1
    assert (a.n_items, a.n_clusters, a.df, a.runs, a.n_runs) == (5, 3, 1, 5, 25)
    # Wilson on the effective sample size .48 * .52 / .0192 = 13, t on 1 df; 25 runs, 3 clusters:
    # no data could give a lower limit above 25 / (25 + t(.975, 2)**2) = .575, so the upper limit
    # (.93 equal-tailed) is the one-sided 95% one, .86
    assert (a.ci_low, a.ci_high) == pytest.approx(
        wilson_t(0.48, 0.48 * 0.52 / (0.48 / 25), 1, trials=25, df_max=2), abs=2e-6
    )
    assert a.ci_high == pytest.approx(wilson_t(0.48, 13, 1, level=0.9)[1])
    assert a.ci_high < wilson_t(0.48, 13, 1)[1]
    assert 0 < a.ci_low < 0.48 < a.ci_high < 1
    assert a.few_clusters
    # within-item sample variances (ddof 1): .2 .3 0 0 .2 -> mean .14
    assert a.var_within == pytest.approx(0.14)
    # var(item means, ddof 1) = .688 / 4 = .172; minus mean(s2 / K) = .028 -> .144
    assert a.var_between == pytest.approx(0.144)
    assert (a.failures, a.wrong, a.error, a.unlabelled_runs) == (13, 13, 0, 0)


def test_one_cluster_per_item_is_the_ordinary_standard_error():
    table = {(f"c{i}", f"q{i}"): v for i, ((_, _), v) in enumerate(HAND.items())}
    a = report(rows_from(table)).arm("a")
    y = np.array([0.8, 0.4, 0.0, 1.0, 0.2])
    assert a.se == pytest.approx(y.std(ddof=1) / math.sqrt(5))  # CR2 with clusters of one
    assert a.df == 4
    assert (a.ci_low, a.ci_high) == pytest.approx(
        wilson_t(0.48, 0.48 * 0.52 / a.se**2, 4, trials=25, df_max=4), abs=2e-6
    )


def test_level_changes_the_interval():
    rows = rows_from(HAND)
    a90, a99 = report(rows, level=0.9).arm("a"), report(rows, level=0.99).arm("a")
    assert a90.se == a99.se
    assert a99.ci_high - a99.ci_low > a90.ci_high - a90.ci_low
    assert (a90.ci_low, a90.ci_high) == pytest.approx(
        wilson_t(0.48, 13.0, 1, level=0.9, trials=25, df_max=2), abs=2e-6
    )  # df: clusters 2, 1, 2


def test_seed_example_accuracy_and_counts():
    # seed 002's example: 4 items in 2 clusters, q3 always wrong -> 0.750, 20 runs, 5 wrong
    table = {("a", "q1"): [1] * 5, ("a", "q2"): [1] * 5, ("b", "q3"): [0] * 5, ("b", "q4"): [1] * 5}
    rep = report(rows_from(table))
    a = rep.arms[0]
    assert (a.accuracy, a.n_runs, a.failures, a.n_clusters, a.df) == (0.75, 20, 5, 2, 1)


def test_unlabelled_and_dev_rows_are_left_out():
    rows = rows_from(HAND)
    rows += rows_from({("D", "q6"): [None] * 5})
    rows += [
        msgspec.structs.replace(r, split="dev", reportable=False, item="d" + r.item) for r in rows_from(HAND)
    ]
    a = report(rows).arm("a")
    assert a.accuracy == pytest.approx(0.48)
    assert (a.n_items, a.n_clusters, a.unlabelled_runs) == (5, 3, 5)
    assert a.dev_accuracy == pytest.approx(0.48)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_cluster_se_matches_a_by_hand_cr2_sandwich(seed):
    rng = np.random.default_rng(seed)
    print("seed", seed)
    table = {}
    for c in range(int(rng.integers(4, 9))):
        for i in range(int(rng.integers(1, 6))):  # unequal clusters
            table[(f"c{c}", f"c{c}q{i}")] = list(rng.integers(0, 2, size=5))
    rows = rows_from(table)
    a = report(rows).arm("a")
    y = np.array([np.mean(v) for v in table.values()])
    assert a.accuracy == pytest.approx(y.mean())
    assert a.se == pytest.approx(cr2_by_hand(y, [c for c, _ in table]))
    assert a.df == design_df_by_hand(y, [c for c, _ in table])
    if 0 < y.mean() < 1:
        assert (a.ci_low, a.ci_high) == pytest.approx(
            wilson_t(
                y.mean(),
                y.mean() * (1 - y.mean()) / a.se**2,
                design_df_by_hand(y, [c for c, _ in table]),
                trials=5 * y.size,
                df_max=a.n_clusters - 1,
            ),
            abs=2e-6,
        )


@pytest.mark.parametrize("seed", range(8))
def test_design_df_is_clusters_minus_one_when_equal_and_bell_mccaffrey_when_not(seed):
    """Unequal clusters get the Bell-McCaffrey df (by n x n algebra here), never more than G - 1."""
    rng = np.random.default_rng(seed)
    print("seed", seed)
    n_g = int(rng.integers(3, 12))
    equal = np.repeat(np.arange(n_g), int(rng.integers(1, 6)))
    sizes = rng.integers(1, 12, size=n_g)
    unequal = np.repeat(np.arange(n_g), sizes)
    for g in (equal, unequal):
        y = rng.integers(0, 6, size=g.size) / 5
        df = design_df(y, g, n_g)
        assert df == design_df_by_hand(y, [str(c) for c in g])
        assert 1 <= df <= n_g - 1
    assert design_df(rng.random(equal.size), equal, n_g) == n_g - 1
    lopsided = np.repeat(np.arange(n_g), [1] * (n_g - 1) + [40])  # one big cluster dominates the variance
    assert design_df(rng.random(lopsided.size), lopsided, n_g) < n_g - 1


def test_bootstrap_is_reproducible_under_a_seed():
    rng = np.random.default_rng(7)
    table = {(f"c{i // 3}", f"q{i}"): list(rng.integers(0, 2, size=5)) for i in range(60)}
    rows = rows_from(table)
    with pytest.warns(IntervalMethodWarning, match='method="bootstrap" on 20 clusters'):
        b1 = report(rows, method="bootstrap", seed=11, n_boot=500).arm("a")
        b2 = report(rows, method="bootstrap", seed=11, n_boot=500).arm("a")
        b3 = report(rows, method="bootstrap", seed=12, n_boot=500).arm("a")
    assert (b1.se, b1.ci_low, b1.ci_high) == (b2.se, b2.ci_low, b2.ci_high)
    assert (b1.se, b1.ci_low) != (b3.se, b3.ci_low)
    cl = report(rows).arm("a")
    assert b1.accuracy == cl.accuracy
    assert b1.se == pytest.approx(cl.se, rel=0.15)  # bootstrap SE near the clustered one


def test_too_few_runs_raises_unless_descriptive():
    table = {k: v[:3] for k, v in HAND.items()}
    rows = rows_from(table)
    with pytest.raises(TooFewRunsError, match=r"descriptive=True \(hrb report --descriptive\)"):
        report(rows)
    with pytest.raises(TooFewRunsError):
        compare(rows + rows_from(table, arm="b"), "a", "b")
    with pytest.raises(TooFewRunsError):
        compare_all(rows + rows_from(table, arm="b"))
    with pytest.raises(TooFewRunsError):
        report_payload(rows)


# One greedy prediction per item (runs=1): the first run of HAND for arm a, the second for b.
# a: 1 1 | 0 | 1 1 -> 0.8; b: 1 1 | 0 | 1 0 -> 0.6; differences 0 0 | 0 | 0 1 -> 0.2.
ONE_A = {k: v[:1] for k, v in HAND.items()}
ONE_B = {k: v[1:2] for k, v in HAND.items()}


def test_descriptive_one_run_still_has_intervals_over_items():
    rows = rows_from(ONE_A) + rows_from(ONE_B, arm="b")
    rep = report(rows, descriptive=True)
    a = rep.arm("a")
    assert rep.descriptive and rep.runs == 1
    # residuals .2 .2 | -.8 | .2 .2 -> cluster sums .4 -.8 .4 in clusters of 2, 1, 2 (CR2)
    se_a = math.sqrt((0.16 / 0.6 + 0.64 / 0.8 + 0.16 / 0.6) / 25)
    assert (a.accuracy, a.se) == pytest.approx((0.8, se_a))
    assert a.df == design_df_by_hand(np.array([1, 1, 0, 1, 1]), list("AABCC")) == 1
    assert (a.ci_low, a.ci_high) == pytest.approx(
        wilson_t(0.8, 0.16 / se_a**2, 1, trials=5, df_max=2), abs=2e-6
    )
    assert (a.var_within, a.var_between) == (None, None)  # one run: not estimable
    # paired: residuals -.2 -.2 | -.2 | -.2 .8 -> cluster sums -.4 -.2 .6 (CR2)
    (c,) = rep.comparisons
    se = math.sqrt((0.16 / 0.6 + 0.04 / 0.8 + 0.36 / 0.6) / 25)
    assert (c.diff, c.se) == pytest.approx((0.2, se))
    assert (c.ci_low, c.ci_high) == pytest.approx(
        mover_by_hand([1, 1, 0, 1, 1], [1, 1, 0, 1, 0], list("AABCC"), trials=5), abs=2e-6
    )
    assert c.ci_low < 0 < c.ci_high and 0.05 < c.p_value < 1
    # the p-value inverts the interval: at level 1 - p its near end touches 0
    edge = compare(rows, "a", "b", level=1 - c.p_value, descriptive=True)
    assert edge.ci_low == pytest.approx(0.0, abs=1e-9)
    assert c.p_holm == pytest.approx(c.p_value) and c.descriptive
    single = compare(rows, "a", "b", descriptive=True)
    assert single.descriptive and single.se == pytest.approx(se)
    # the same numbers as a non-descriptive report of the same item scores with 5 runs each
    five = report(rows_from({k: v * 5 for k, v in ONE_A.items()}))
    assert (five.arm("a").se, five.arm("a").ci_low) == pytest.approx((a.se, a.ci_low))


def test_descriptive_with_a_few_runs_keeps_the_variance_components():
    rows = rows_from({k: v[:3] for k, v in HAND.items()})
    a = report(rows, descriptive=True).arm("a")
    assert a.accuracy == pytest.approx((1 + 2 / 3 + 0 + 1 + 1 / 3) / 5)
    assert a.se is not None and a.ci_low is not None and a.ci_high is not None
    # within-item sample variances of 1 1 1 | 1 1 0 | 0 0 0 | 1 1 1 | 1 0 0: 0 1/3 0 0 1/3
    assert a.var_within == pytest.approx(2 / 15)


def test_a_descriptive_report_says_so_in_every_output():
    rows = rows_from(ONE_A) + rows_from(ONE_B, arm="b")
    rep = report(rows, descriptive=True)
    label = "Descriptive: fewer than 5 runs per item (1 here)"
    text = str(rep)
    assert "DESCRIPTIVE" in text.splitlines()[0] and "intervals over items only" in text.splitlines()[0]
    assert label in " ".join(text.split())  # the note, wrapped
    assert "run-to-run spread is not measured" in rep.note and "sampling of items" in rep.note
    d = json.loads(rep.to_json())
    assert d["descriptive"] is True and d["note"].startswith(label)
    assert all(c["descriptive"] for c in d["comparisons"])
    assert rep.to_dict()["descriptive"] is True and rep.to_dict()["note"] == rep.note
    for table in ("arms", "comparisons"):
        frame = rep.to_pandas(table)
        assert frame.attrs["descriptive"] is True and bool(frame["descriptive"].all())
        assert frame.attrs["note"].startswith(label)
    payload = report_payload(rows, descriptive=True)
    assert payload["descriptive"] is True and payload["note"].startswith(label)
    assert "DESCRIPTIVE" in payload["text"]
    pair = report_payload(rows, descriptive=True, compare_pair=("b", "a"))
    assert pair["comparisons"][0]["descriptive"] is True


def test_descriptive_changes_nothing_with_five_runs():
    rows = rows_from(HAND) + rows_from(HAND, arm="b")
    plain, desc = report(rows), report(rows, descriptive=True)
    assert desc == plain and not desc.descriptive
    assert "Descriptive" not in str(desc) and "DESCRIPTIVE" not in str(desc)
    assert not compare(rows, "a", "b", descriptive=True).descriptive


def test_intervals_stay_in_the_parameter_space_and_lean_away_from_the_boundary():
    # 3 clusters: accuracies 0.95 and 0.05; a t interval with 2 df would leave [0, 1]
    from scipy import stats as sps

    table = {("A", "q1"): [1] * 5, ("A", "q2"): [1] * 5, ("B", "q3"): [1, 1, 1, 1, 0], ("C", "q4"): [1] * 5}
    good = rows_from(table)
    bad = rows_from({k: [0] * 5 if k[1] != "q3" else [1, 0, 0, 0, 0] for k in table}, arm="b")
    rep = report(good + bad)
    a, b = rep.arm("a"), rep.arm("b")
    assert a.accuracy + sps.t.ppf(0.975, 2) * a.se > 1
    assert 0 < a.ci_low < a.accuracy < a.ci_high < 1  # Wilson: inside, not clipped onto 1
    assert a.ci_high - a.accuracy < a.accuracy - a.ci_low  # longer toward the middle
    assert (b.ci_low, b.ci_high) == pytest.approx((1 - a.ci_high, 1 - a.ci_low))  # mirror image
    (c,) = rep.comparisons
    assert c.diff == pytest.approx(0.9)  # 0.95 - 0.05
    assert -1.0 <= c.ci_low < c.diff < c.ci_high <= 1.0
    with pytest.warns(IntervalMethodWarning):  # 3 clusters
        boot = report(good + bad, method="bootstrap", n_boot=200)
    for arm in boot.arms:
        assert 0.0 <= arm.ci_low <= arm.ci_high <= 1.0
    assert -1.0 <= boot.comparisons[0].ci_low <= boot.comparisons[0].ci_high <= 1.0


@pytest.mark.parametrize(("n_clusters", "few"), [(2, True), (9, True), (10, False), (30, False)])
def test_few_clusters_flag(n_clusters, few):
    table = {(f"c{i}", f"q{i}"): [(i + r) % 2 for r in range(5)] for i in range(n_clusters)}
    rep = report(rows_from(table))
    assert rep.arm("a").few_clusters is few
    assert ("few clusters (fewer than 10)" in str(rep)) is few
    assert (f"{n_clusters}!" in str(rep)) is few
    assert rep.to_pandas()["few_clusters"].tolist() == [few]


def correlated_arms(seed: int = 3, n_items: int = 200, runs: int = 5) -> list[Row]:
    """Two arms sharing item difficulty; arm b is about 0.1 better on average."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_items):
        p = rng.beta(0.5, 0.5)
        for arm, shift in (("a", 0.0), ("b", 0.1)):
            for r in range(1, runs + 1):
                ok = bool(rng.random() < min(1.0, p + shift))
                rows.append(
                    Row(
                        cluster=f"c{i // 4}",
                        item=f"q{i}",
                        arm=arm,
                        run=r,
                        split="test",
                        correct=ok,
                        outcome=None,
                        failure_kind=None if ok else "wrong",
                        usd=0.001 if arm == "a" else 0.003,
                    )
                )
    return rows


def item_means(rows: list[Row], arm: str) -> np.ndarray:
    by: dict[str, list[float]] = {}
    for r in rows:
        if r.arm == arm:
            by.setdefault(r.item, []).append(float(r.correct))
    return np.array([np.mean(v) for v in by.values()])


def test_paired_comparison_is_tighter_than_separate_intervals():
    from scipy import stats as sps

    rows = correlated_arms()
    rep = report(rows)
    a, b = rep.arm("a"), rep.arm("b")
    c = compare(rows, "b", "a")
    assert c.n_items == 200 and c.n_clusters == 50 and c.df == 49
    assert c.diff == pytest.approx(b.accuracy - a.accuracy)
    assert c.se < 0.5 * c.se_unpaired
    assert c.se_unpaired == pytest.approx(math.hypot(a.se, b.se))
    # the separate intervals overlap, the paired one excludes 0
    assert a.ci_high > b.ci_low
    assert c.ci_low > 0 and c.p_value < 0.01
    assert (c.ci_high - c.ci_low) < 0.75 * min(a.ci_high - a.ci_low, b.ci_high - b.ci_low)
    # away from the boundary the MOVER interval is close to the clustered t interval
    half = sps.t.ppf(0.975, 49) * c.se
    assert (c.ci_low, c.ci_high) == pytest.approx((c.diff - half, c.diff + half), abs=0.1 * half)
    ya, yb, cl = item_means(rows, "b"), item_means(rows, "a"), [f"c{i // 4}" for i in range(200)]
    assert (c.ci_low, c.ci_high) == pytest.approx(mover_by_hand(ya, yb, cl, trials=1000), abs=2e-6)
    cb = compare(rows, "b", "a", method="bootstrap", seed=1)
    assert cb.diff == c.diff and cb.se == pytest.approx(c.se, rel=0.15)


def test_paired_difference_by_hand():
    a = rows_from(HAND, arm="a")
    b_table = dict(HAND)
    b_table[("B", "q3")] = [1, 1, 1, 0, 0]  # q3: 0.0 -> 0.6
    b = rows_from(b_table, arm="b")
    c = compare(a + b, "b", "a")
    # differences 0 0 .6 0 0: mean .12; residuals -.12 -.12 | .48 | -.12 -.12
    # cluster sums -.24 .48 -.24 in clusters of 2, 1, 2 (CR2)
    assert c.diff == pytest.approx(0.12)
    assert c.se == pytest.approx(math.sqrt((0.24**2 / 0.6 + 0.48**2 / 0.8 + 0.24**2 / 0.6) / 25))
    ya = [0.8, 0.4, 0.6, 1.0, 0.2]
    assert (c.ci_low, c.ci_high) == pytest.approx(
        mover_by_hand(ya, [0.8, 0.4, 0.0, 1.0, 0.2], list("AABCC"), trials=25), abs=2e-6
    )
    edge = compare(a + b, "b", "a", level=1 - c.p_value)
    assert edge.ci_low == pytest.approx(0.0, abs=1e-9)


def test_identical_arms_give_zero_with_an_interval_that_has_width():
    from scipy import stats as sps

    rows = rows_from(HAND, arm="a") + rows_from(HAND, arm="b")
    c = compare(rows, "a", "b")
    assert (c.diff, c.se, c.p_value) == (0.0, 0.0, 1.0)
    # never disagreed on 5 items in 3 clusters: Wilson's bound for 0 of 5 with t on 1 df (clusters
    # 2, 1, 2) both ways is 0.970, wider than the exact bound for no disagreement in 3 clusters:
    # at most 1 - 0.05 ** (1 / 3) of clusters could disagree, and so the arms by at most that
    assert c.df == 1
    z2 = sps.t.ppf(0.975, 1) ** 2
    assert mover_by_hand(HAND_Y, HAND_Y, list("AABCC"), trials=25) == pytest.approx(
        (-z2 / (5 + z2), z2 / (5 + z2))
    )
    bound = 1 - 0.05 ** (1 / 3)
    assert z2 / (5 + z2) > bound
    assert (c.ci_low, c.ci_high) == pytest.approx((-bound, bound))
    assert c.note.startswith("no item scored differently")


def test_compare_only_uses_items_both_arms_ran():
    a = rows_from(HAND, arm="a")
    b = rows_from({k: v for k, v in HAND.items() if k[1] != "q4"}, arm="b")
    c = compare(a + b, "a", "b")
    assert c.n_items == 4 and c.diff == 0.0
    assert c.accuracy_a == pytest.approx((0.8 + 0.4 + 0.0 + 0.2) / 4)


def test_compare_refuses_an_arm_against_itself():
    rows = rows_from(HAND, arm="a")
    with pytest.raises(ConfigError, match=r"arm_b: compare needs two different arms .*got 'a'"):
        compare(rows, "a", "a")


def test_compare_all_holm():
    rows = correlated_arms()
    rows += [msgspec.structs.replace(r, arm="c") for r in rows if r.arm == "a"]
    comps = compare_all(rows)
    assert [(c.arm_a, c.arm_b) for c in comps] == [("a", "b"), ("a", "c"), ("b", "c")]
    p = [c.p_value for c in comps]
    order = np.argsort(p)
    m = 3
    expect = np.minimum(1, np.maximum.accumulate([(m - k) * p[j] for k, j in enumerate(order)]))
    for k, j in enumerate(order):
        assert comps[j].p_holm == pytest.approx(expect[k])
    assert all(c.p_holm >= c.p_value for c in comps)
    rep = report(rows)
    assert len(rep.comparisons) == 3 and "Holm" in rep.note and "p_holm" in str(rep)


def test_unknown_arm_and_bad_arguments():
    rows = rows_from(HAND)
    with pytest.raises(ConfigError, match="arm_b"):
        compare(rows, "a", "zz")
    with pytest.raises(ConfigError, match="level"):
        report(rows, level=95)
    with pytest.raises(ConfigError, match="method"):
        report(rows, method="jackknife")


def nct_power(diff: float, var_item: float, n: int, df: int, alpha: float = 0.05) -> float:
    """Two-sided t test power by integrating the noncentral t density (independent of scipy.nct.sf)."""
    from scipy import stats as sps

    ncp = diff / math.sqrt(var_item / n)
    crit = sps.t.ppf(1 - alpha / 2, df)
    from scipy.integrate import quad

    inside, _ = quad(lambda x: sps.nct.pdf(x, df, ncp), -crit, crit)
    return 1 - inside


def test_power_closed_form():
    from scipy import stats as sps

    plan = power(0.05, var_within=0.2, var_between=0.04, runs=5)
    var_item = 0.04 + 0.2 / 5
    # every item its own cluster: t on n - 1 df; the smallest n whose power reaches 0.8
    n = plan.n_items
    assert nct_power(0.05, var_item, n, n - 1) >= 0.8 > nct_power(0.05, var_item, n - 1, n - 2)
    assert plan.achieved == pytest.approx(nct_power(0.05, var_item, n, n - 1), abs=1e-6)
    z = sps.norm.ppf(0.975) + sps.norm.ppf(0.8)
    assert n >= math.ceil(z**2 * var_item / 0.05**2) == 252  # the normal approximation promised less
    assert plan.min_items >= math.ceil(z**2 * 0.04 / 0.05**2)


@pytest.mark.parametrize("clusters", [5, 10, 20, 50])
def test_power_uses_t_on_clusters_minus_one(clusters):
    # clusters of 10 items, design effect 2: the variance of the mean difference is 2 * v / n
    from scipy import stats as sps

    m, deff, v = 10, 2.0, 0.04 + 0.2 / 5
    n = clusters * m
    plan = power(
        0.05, var_within=0.2, var_between=0.04, runs=5, design_effect=deff, items_per_cluster=m, n_items=n
    )
    assert (plan.n_items, plan.n_clusters) == (n, clusters)
    assert plan.achieved == pytest.approx(nct_power(0.05, deff * v, n, clusters - 1), abs=1e-6)
    normal = sps.norm.sf(sps.norm.ppf(0.975) - 0.05 / math.sqrt(deff * v / n))
    assert plan.achieved < normal  # fewer df, less power than the normal approximation promised
    solved = power(
        0.05, 0.05, plan.achieved, var_within=0.2, var_between=0.04, design_effect=deff, items_per_cluster=m
    )
    assert solved.n_items <= n and solved.achieved >= plan.achieved - 1e-9


def test_power_is_monotone():
    base = dict(var_within=0.2, var_between=0.04)
    by_diff = [power(d, **base).n_items for d in (0.2, 0.1, 0.05, 0.02, 0.01)]
    by_power = [power(0.05, power=p, **base).n_items for p in (0.5, 0.7, 0.8, 0.9, 0.99)]
    by_alpha = [power(0.05, alpha=a, **base).n_items for a in (0.2, 0.1, 0.05, 0.01)]
    by_runs = [p.n_items for p in power(0.05, **base).tradeoff]
    assert by_diff == sorted(by_diff) and len(set(by_diff)) == 5
    assert by_power == sorted(by_power) and by_alpha == sorted(by_alpha)
    assert by_runs == sorted(by_runs, reverse=True)
    assert power(-0.05, **base).n_items == power(0.05, **base).n_items
    with pytest.raises(ConfigError):
        power(0.0, **base)
    with pytest.raises(ConfigError):
        power(0.05)
    for impossible in (1.0, 1.5, -1.2):  # a difference in accuracy lies strictly between -1 and 1
        with pytest.raises(
            ConfigError, match=r"diff: must be a non-zero difference in accuracy between -1 and 1"
        ):
            power(impossible, **base)


def test_the_noncentral_t_power_is_never_nan_at_a_large_noncentrality():
    from hrbench.stats._power import _t_test_power

    # scipy's nct.cdf(-crit, 2, 9.5) is nan: the power must still be a number, near 1
    powers = [_t_test_power(ncp, 2, 0.05) for ncp in np.linspace(0.0, 40.0, 161)]
    assert all(math.isfinite(p) for p in powers) and powers == sorted(powers)
    assert _t_test_power(9.5, 2, 0.05) == pytest.approx(0.98833, abs=1e-4)
    assert _t_test_power(-3.0, 5, 0.05) == _t_test_power(3.0, 5, 0.05)


def test_a_plan_says_what_its_items_are_and_whether_they_reach_the_power_asked():
    base = dict(var_within=0.1, var_between=0.02, var_cluster=0.01, items_per_cluster=4)
    solved = power(0.2, **base)
    # 25 items in 7 clusters are 4 clusters of 4 and 3 of 3 (the power was computed so)
    assert (solved.n_items, solved.n_clusters, solved.cluster_sizes) == (25, 7, (3, 4))
    assert "needs 25 items (7 clusters of 3-4; t on 6 df: power 0.855)" in str(solved)
    # asked at 9 items, the plan does not "need" 9 items: they give less power than asked
    given_items = power(0.2, **base, n_items=9)
    assert not given_items.solved and given_items.achieved < 0.8
    text = str(given_items)
    assert "needs" not in text
    assert "at 9 items (3 clusters of 3; t on 2 df: power 0.261), below the 0.8 asked" in text
    # with few clusters at a stated accuracy the power is simulated, not the noncentral t's
    simulated = power(0.2, **base, n_items=9, accuracy=0.7)
    assert simulated.simulated and "(3 clusters of 3; simulated: power" in str(simulated)
    # clusters of uneven sizes: Bell-McCaffrey's df, not the clusters less one
    uneven = power(
        0.05, var_within=0.1, var_between=0.02, var_cluster=0.001, cluster_sizes=[2, 5, 40, 10, 3, 8]
    )
    assert uneven.df is not None and uneven.df < uneven.n_clusters - 1
    assert f"t on {uneven.df:g} df" in str(uneven)


@pytest.mark.parametrize("diff", [0.3, 0.5, 0.7, 0.9])
def test_a_large_difference_on_few_clusters_needs_no_more_items_with_more_runs(diff):
    # few clusters of 4: the clusters' whole numbers made the rows rise (9, 10, 11 items at 1, 2, 3
    # runs) under a floor of 9 that the 20-run row (5) went below
    plan = power(diff, var_within=0.1, var_between=0.05, runs=5, items_per_cluster=4)
    rows = [p.n_items for p in plan.tradeoff]
    assert rows == sorted(rows, reverse=True)
    assert plan.min_items <= min(rows)
    assert next(p.n_items for p in plan.tradeoff if p.runs == plan.runs) == plan.n_items


def test_power_from_a_bench_matches_its_components_and_simulated_power():
    from scipy import stats as sps

    rows = correlated_arms(n_items=400)
    plan = power(0.05, bench=rows)
    assert plan.source.startswith("bench: a vs b") and plan.runs == 5
    rep = report(rows)
    # var_within of a paired run difference is the sum of the arms' run-to-run variances
    assert plan.var_within == pytest.approx(rep.arm("a").var_within + rep.arm("b").var_within)
    # simulate the plan: paired t tests on independent benchmarks of plan.n_items items
    assert plan.design_effect >= 1.0
    rng = np.random.default_rng(5)
    n = power(0.05, var_within=plan.var_within, var_between=plan.var_between).n_items  # no clusters
    sims, hits = 300, 0
    vb, vw = plan.var_between, plan.var_within
    for _ in range(sims):
        d_true = 0.05 + rng.normal(0, math.sqrt(vb), n)
        d = d_true + rng.normal(0, math.sqrt(vw / 5), n)
        hits += sps.ttest_1samp(d, 0).pvalue < 0.05
    assert 0.72 <= hits / sims <= 0.88


def test_cost_fields():
    from scipy import stats as sps

    rows = correlated_arms()
    rep = report(rows)
    a, b = rep.arm("a"), rep.arm("b")
    assert a.usd == pytest.approx(0.001 * 1000) and b.usd == pytest.approx(3.0)
    assert a.usd_per_run == pytest.approx(0.001)
    assert a.accuracy_per_usd == pytest.approx(a.accuracy / 0.001)
    assert a.accuracy_per_usd_low < a.accuracy_per_usd < a.accuracy_per_usd_high
    # constant cost: the ratio's (delta-method t) interval is the accuracy's t interval, scaled
    half = sps.t.ppf(0.975, a.df) * a.se
    assert a.accuracy_per_usd_low == pytest.approx((a.accuracy - half) / 0.001)
    boot = report(rows, method="bootstrap", n_boot=300).arm("a")
    assert boot.accuracy_per_usd_low == pytest.approx(boot.ci_low / 0.001)
    unpriced = [msgspec.structs.replace(r, usd=None) if r.item == "q0" else r for r in rows]
    u = report(unpriced).arm("a")
    assert u.usd_unpriced == 5 and u.accuracy_per_usd is None and "no price" in str(report(unpriced))


def test_surfaces_json_pandas_payload_and_plot(tmp_path):
    rows = correlated_arms()
    rep = report(rows)
    text = str(rep)
    assert "95% CI" in text and "Paired differences" in text and text.count("\n") > 5
    decoded = msgspec.json.decode(rep.to_json(), type=Report)
    assert decoded == rep
    assert isinstance(decoded.arms[0], ArmReport) and isinstance(decoded.comparisons[0], Comparison)
    frame = rep.to_pandas()
    assert list(frame["arm"]) == ["a", "b"] and frame.attrs["descriptive"] is False
    assert set(ArmReport.__struct_fields__) <= set(frame.columns)
    assert list(rep.to_pandas("comparisons")["arm_a"]) == ["a"]
    payload = report_payload(rows, compare_pair=("b", "a"))
    json.dumps(payload)
    assert payload["comparisons"][0]["arm_a"] == "b" and payload["text"].startswith("<hrbench report>")
    out = tmp_path / "plot.png"
    pytest.importorskip("matplotlib")
    rep.plot(out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_accepts_a_pandas_frame_and_dicts():
    rows = rows_from(HAND)
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame([msgspec.to_builtins(r) for r in rows])
    assert report(frame).arm("a").se == pytest.approx(HAND_SE)
    assert report([msgspec.to_builtins(r) for r in rows]).arm("a").se == pytest.approx(HAND_SE)


SMALL_TABLE = [
    ("50x10x5", "axc"),
    ("20x20x5 strong cluster", "equal"),
    ("15 cl of 2-40 @0.90", "axc"),
    ("25x8x1 descriptive", "equal"),
    ("10x3x5 @0.97", "equal"),
    ("10x3x5 @0.97", "axc"),
    ("3x10x5", "equal"),
    ("3x10x5", "axc"),
    ("2x20x5", "equal"),
    ("5x27x5 0.60 vs 0.45", "axc"),
    ("all correct, 5 items", "-"),
    ("10x20x5 whole clusters fail", "-"),
    ("30 lognormal 1-40 @0.7", "equal"),
    ("50x10x5", "skew"),
]
SMALL_N = 200


@pytest.mark.parametrize(
    ("name", "null"),
    [
        # Monte Carlo simulations (400 seeded benchmarks each, 5-25 s): `make test-slow`, run by
        # .ci/run; the design where every run is right (nothing to simulate) stays in make test
        pytest.param(n, x, id=f"{n} ({x})", marks=() if x == "-" else pytest.mark.slow)
        for n, x in SMALL_TABLE
    ],
)
def test_coverage_table_small_version(name, null):
    """A small, seeded version of bench/coverage.py's table, judged by the same rules.

    200 benchmarks per row (bench/coverage.py runs 2,000 of every design under both nulls): the
    Monte Carlo standard error of a 95% coverage is then 0.015, so every band is widened by 2 of
    them (0.031). The rules: per-arm and paired coverage 93.5-96.5%; false positives at most
    0.065 under both nulls (equal arms, and an arm x cluster effect of sd 0.3 with no average
    difference), at least 0.035 or power at least the clustered t test's and the exact cluster
    sign-flip test's less two Monte Carlo errors; no interval of zero width; power() within
    0.03 of the simulated power from its components stated (and, for the 5x27x5 design with
    an arm x cluster effect, estimated from a pilot).
    """
    from hrbench.testing import DESIGNS, promised_power, rows_for, verdict

    design = next(d for d in DESIGNS if d.name == name)
    d = dict(rows_for(design))[null]
    r = check(d, SMALL_N, 20261130)
    promised = {}
    if d.diff:
        promised["stated"] = promised_power(d, 7)
        if name.startswith("5x27x5"):
            promised["pilot"] = promised_power(d, 11, pilot=True)
    print(name, null, r, promised)
    assert verdict(r, SMALL_N, promised, slack=2 * math.sqrt(0.95 * 0.05 / SMALL_N)) == []
    assert r["min_p"] >= 1e-12
    if name in ("50x10x5", "20x20x5 strong cluster"):  # the naive iid interval under-covers
        assert r["arm_naive"] < r["arm_cover"] - 0.1


def _arm_coverage(design, n, seed, **how):
    """Coverage of arm a's interval over n seeded benchmarks, the interval as ``how`` says."""
    sim = simulate(design, n, np.random.default_rng(seed))
    g, n_g = design.cluster, len(design.sizes)
    hits = []
    for ya in sim.ya:
        iv = proportion_interval(ya, g, n_g, 0.95, how.get("trials"))
        lo, hi = iv.low, iv.high
        if "df" in how:  # the same Wilson interval on another df (equal tails)
            lo, hi = wilson_t(iv.est, iv.n_eff, how["df"]) if 0 < iv.est < 1 else (lo, hi)
        hits.append(lo <= sim.truth_a <= hi)
    return float(np.mean(hits))


@pytest.mark.slow  # 1,200 simulated benchmarks; make test-slow
def test_coverage_near_the_ceiling_is_nominal_not_conservative():
    """10 clusters of 3 items, 5 runs, accuracy 0.97 (600 seeded benchmarks, MC SE 0.009).

    No data of 150 runs can give a lower limit above 0.967, so the equal-tailed interval could
    miss only from below and covered about 0.975; bounded by the runs it is one-sided there.
    """
    design = Design("10x3x5 at 0.97", (3,) * 10, 5, 0.97)
    bounded = _arm_coverage(design, 600, 20261130, trials=150)
    equal = _arm_coverage(design, 600, 20261130)
    print("bounded", bounded, "equal-tailed", equal)
    assert 0.935 <= bounded <= 0.965
    assert equal > bounded + 0.01


@pytest.mark.slow  # 1,200 simulated benchmarks; make test-slow
def test_unequal_clusters_get_fewer_df_and_keep_their_coverage():
    """15 clusters of 2-40 items at accuracy 0.90 (600 seeded benchmarks).

    On clusters - 1 = 14 df the interval covered 0.933 (2,000 benchmarks); on Bell-McCaffrey's
    df it covers within 93.5-96.5%, and never less than on 14 df on the same benchmarks.
    """
    design = Design("15 clusters of 2-40", tuple(int(x) for x in np.linspace(2, 40, 15).round()), 5, 0.9)
    bm = _arm_coverage(design, 600, 20261130, trials=design.n_items * 5)
    g_minus_1 = _arm_coverage(design, 600, 20261130, df=14, trials=design.n_items * 5)  # the same n_eff
    print("Bell-McCaffrey df", bm, "14 df", g_minus_1)
    assert 0.935 <= bm <= 0.965
    assert bm >= g_minus_1 + 0.005


def test_through_a_real_benchmark():
    import hrbench as bm
    from hrbench.arm import Arm
    from hrbench.models import MockClient
    from hrbench.reference import Reference

    capitals = {"France": "Paris", "Peru": "Lima", "Chad": "Ndjamena", "Fiji": "Suva"}
    ref = Reference(
        items={"q1": "France", "q2": "Peru", "q3": "Chad", "q4": "Fiji"},
        labels=["Paris", "Lima", "N'Djamena", "Suva"],
        cluster=["a", "a", "b", "b"],
        split="test",
    )
    client = MockClient(lambda messages, params: capitals[messages[0]["content"][11:]])
    ask = Arm("ask", lambda item, ctx: ctx.call(f"Capital of {item}").text)
    lazy = Arm("lazy", lambda item, ctx: "Paris")
    bench = bm.benchmark([ask, lazy], ref, runs=5, client=client)
    rep = report(bench)
    assert [a.arm for a in rep.arms] == ["ask", "lazy"]
    ask_r = rep.arm("ask")
    assert (ask_r.accuracy, ask_r.n_runs, ask_r.failures, ask_r.n_clusters, ask_r.df) == (0.75, 20, 5, 2, 1)
    c = compare(bench, "ask", "lazy")
    assert c.diff == pytest.approx(0.5) and c.n_items == 4
    assert report(bench.to_pandas()).arm("ask").se == ask_r.se


def test_accepts_a_polars_frame():
    pl = pytest.importorskip("polars")
    rows = rows_from(HAND) + rows_from({("D", "q6"): [None] * 5})
    frame = pl.DataFrame([msgspec.to_builtins(r) for r in rows])
    a = report(frame).arm("a")
    assert a.se == pytest.approx(HAND_SE) and a.unlabelled_runs == 5


def test_real_benchmark_with_few_runs_needs_descriptive():
    import hrbench as bm
    from hrbench.arm import Arm
    from hrbench.errors import FewRunsWarning
    from hrbench.reference import Reference

    ref = Reference(items={"q1": "x", "q2": "y", "q3": "z"}, labels=["x", "y", "w"], cluster=["a", "a", "b"])
    echo = Arm("echo", lambda item, ctx: item)
    with pytest.warns(FewRunsWarning):
        bench = bm.benchmark(echo, ref, runs=3)
    with pytest.raises(TooFewRunsError):
        report(bench)
    rep = report(bench, descriptive=True)
    assert rep.descriptive and rep.runs == 3 and rep.arms[0].accuracy == pytest.approx(2 / 3)
    assert "DESCRIPTIVE" in str(rep) and rep.note.startswith(
        "Descriptive: fewer than 5 runs per item (3 here)"
    )
    assert rep.arms[0].se is not None and rep.arms[0].var_within is not None


def test_plot_without_matplotlib_says_how_to_install(monkeypatch, tmp_path):
    import sys

    rep = report(rows_from(HAND))
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.backends.backend_agg", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match=r"hrbench\[plot\]"):
        rep.plot(tmp_path / "x.png")


def png_size(path) -> tuple[int, int]:
    """(width, height) in pixels from a PNG's IHDR chunk."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def test_report_payload_writes_the_plot(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    rows = correlated_arms()
    out = tmp_path / "report.png"
    payload = report_payload(rows, **{"plot": str(out)})  # as the daemon passes its settings
    assert payload["plot"] == str(out) and png_size(out) == (704, 484)  # accuracy vs USD per run
    assert payload["text"].endswith(f"Plot: {out}")
    json.dumps(payload)
    assert "plot" not in report_payload(rows)
    monkeypatch.chdir(tmp_path)
    rel = report_payload(rows, plot="rel.png")
    assert rel["plot"] == str(tmp_path / "rel.png") and (tmp_path / "rel.png").exists()
    with pytest.raises(ConfigError, match="plot: cannot write the file"):
        report_payload(rows, plot=str(tmp_path / "no" / "such" / "dir.png"))
    with pytest.raises(ConfigError, match="plot"):
        report_payload(rows, plot="")


def test_plot_with_no_cost_is_a_dot_plot_per_arm(tmp_path):
    pytest.importorskip("matplotlib")
    # outputs arms scoring existing predictions: one run per item, USD 0
    rows = rows_from(ONE_A, usd=0.0) + rows_from(ONE_B, arm="b", usd=0.0)
    rep = report(rows, descriptive=True)
    assert all(a.usd_per_run == 0.0 for a in rep.arms)
    out = tmp_path / "zero.png"
    payload = report_payload(rows, descriptive=True, plot=str(out))
    assert payload["plot"] == str(out)
    width, height = png_size(out)
    assert width == 704 and height < 484  # the shorter horizontal dot plot, not the cost plot
    unpriced = [msgspec.structs.replace(r, usd=None) for r in rows]
    rep_u = report(unpriced, descriptive=True)
    assert png_size(rep_u.plot(tmp_path / "unpriced.png")) == (width, height)


def test_plot_payload_without_matplotlib_is_a_config_error(monkeypatch, tmp_path):
    import sys

    for mod in ("matplotlib", "matplotlib.backends.backend_agg", "matplotlib.figure"):
        monkeypatch.setitem(sys.modules, mod, None)
    with pytest.raises(ConfigError, match=r"hrbench\[plot\]"):
        report_payload(rows_from(HAND), plot=str(tmp_path / "x.png"))
    assert not (tmp_path / "x.png").exists()


# --------------------------------------------------------------------------------------------
# Shared cases, boundaries, guards
# --------------------------------------------------------------------------------------------

STATS_CASE_IDS = ["R08a", "R08c", "R08d"]
STATS_CASES = {c["id"]: c for c in load_cases("benchmark") if c["id"] in STATS_CASE_IDS}


def test_every_statistics_case_is_here():
    """The shared statistics cases this file tests, named; one dropped upstream fails here."""
    assert sorted(STATS_CASES) == STATS_CASE_IDS


def constant_bench(items: int, clusters: int, runs: int, right: bool, arms: tuple[str, ...] = ("ask",)):
    """A real benchmark through the runner and a mock model: every arm right (or wrong) on every run."""
    names = [f"q{i}" for i in range(items)]
    ref = hb.Reference(
        items={n: n.upper() for n in names},
        labels=[n.upper() for n in names],
        cluster=[f"c{i % clusters}" for i in range(items)],
        split="test",
    )
    client = hb.MockClient(lambda messages, params: messages[0]["content"] if right else "nothing")
    return hb.benchmark(
        [hb.Arm(a, lambda item, ctx: ctx.call(item).text) for a in arms], ref, runs=runs, client=client
    )


def test_case_R08a_correct_on_every_run_still_has_an_interval():
    from scipy import stats as sps

    case = STATS_CASES["R08a"]
    out = case["output"]
    bench = constant_bench(out["items"], out["clusters"], out["runs"], right=True)
    a = hb.report(bench).arm("ask")
    assert a.accuracy == 1.0 and (a.n_items, a.n_clusters, a.n_runs) == (5, 5, 25)
    assert a.ci_low < case["label"]["ci_low_below"]
    assert a.ci_high == 1.0
    z2 = sps.t.ppf(0.975, 4) ** 2  # Wilson for 5 of 5 items, t on 4 df
    assert a.ci_low == pytest.approx(5 / (5 + z2))


def test_case_R08c_wrong_on_every_run_still_has_an_interval():
    from scipy import stats as sps

    case = STATS_CASES["R08c"]
    out = case["output"]
    bench = constant_bench(out["items"], out["clusters"], out["runs"], right=False)
    a = hb.report(bench).arm("ask")
    assert a.accuracy == 0.0 and (a.n_items, a.n_clusters) == (30, 10)
    assert a.ci_high > case["label"]["ci_high_above"]
    assert a.ci_low == 0.0
    z2 = sps.t.ppf(0.975, 9) ** 2  # Wilson for 0 of 10 clusters (failures may come whole clusters at a time)
    assert a.ci_high == pytest.approx(z2 / (10 + z2))


def test_case_R08d_identical_arms():
    case = STATS_CASES["R08d"]
    bench = constant_bench(case["output"]["items"], 10, 5, right=True, arms=("a", "b"))
    c = hb.compare(bench, "a", "b")
    assert c.diff == case["label"]["diff"] and c.p_value == case["label"]["p_value"]
    assert c.ci_low < 0 < c.ci_high  # never disagreed on 30 items: not a point
    # the family: identical arms with mixed results, through the runner
    mixed = [msgspec.structs.replace(r, correct=(r.item < "q2"), failure_kind=None) for r in bench.rows]
    c2 = hb.compare(mixed, "a", "b")
    assert (c2.diff, c2.p_value) == (0.0, 1.0) and c2.ci_low < 0 < c2.ci_high


@pytest.mark.parametrize("items", [1, 2, 5, 30, 300])
@pytest.mark.parametrize("clusters", [2, 5, 30])
@pytest.mark.parametrize("value", [0.0, 1.0])
def test_boundary_family_has_width_within_unit_interval(items, clusters, value):
    if clusters > items:
        clusters = items
    if clusters < 2:
        return
    g = np.arange(items) % clusters
    iv = proportion_interval(np.full(items, value), g, clusters, 0.95)
    assert 0.0 <= iv.low <= value <= iv.high <= 1.0 and iv.high - iv.low > 0
    # no failure (no success) to estimate a design effect from: as if failures came whole clusters
    # at a time, each cluster one unit (Kish's effective clusters; the items when each is its own)
    sizes = np.bincount(g)
    assert iv.n_eff == pytest.approx(items**2 / float(np.sum(sizes**2)))
    same = difference_interval(np.full(items, value), np.full(items, value), g, clusters, 0.95)
    assert same.p_value == 1.0 and same.low < 0 < same.high


@given(
    y=st.lists(st.sampled_from([0.0, 0.2, 0.4, 0.6, 0.8, 1.0]), min_size=2, max_size=40),
    yb=st.lists(st.sampled_from([0.0, 0.2, 0.4, 0.6, 0.8, 1.0]), min_size=40, max_size=40),
    clusters=st.integers(2, 8),
    level=st.sampled_from([0.8, 0.9, 0.95, 0.99]),
)
@settings(max_examples=examples(150), deadline=None)
def test_intervals_contain_the_estimate_stay_in_range_and_p_is_never_zero(y, yb, clusters, level):
    ya = np.array(y)
    yb_ = np.array(yb[: ya.size])
    g = np.arange(ya.size) % min(clusters, ya.size)
    n_g = int(g.max()) + 1
    iv = proportion_interval(ya, g, n_g, level)
    assert 0.0 <= iv.low <= iv.est <= iv.high <= 1.0 and iv.high > iv.low
    dv = difference_interval(ya, yb_, g, n_g, level)
    assert -1.0 <= dv.low <= dv.est <= dv.high <= 1.0 and dv.high > dv.low
    assert 0.0 < dv.p_value <= 1.0
    assert (dv.p_value < 1 - level) == (dv.low > 0 or dv.high < 0) or abs(dv.p_value - (1 - level)) < 1e-6


@pytest.mark.parametrize(
    ("y", "clusters", "level"),
    [
        ([0.4, 1.0, 0.2, 0.0, 1.0, 0.6], 2, 0.8),  # both cluster means 0.5333
        ([0.2, 0.4, 0.4, 0.0, 0.8, 1.0, 0.2, 0.4, 0.0, 0.2, 0.8], 2, 0.8),  # both 0.4
        ([1, 0, 1, 1, 1, 0, 0, 0, 1, 0, 1, 1, 0, 1, 0, 1, 1, 1, 1, 0, 0], 3, 0.8),  # all 0.5714
        ([0.2, 0.8, 0.6, 0.4], 2, 0.95),
    ],
)
def test_cluster_means_that_agree_by_chance_still_give_an_interval(y, clusters, level):
    # The clustered variance is 0 up to rounding when every cluster has the same mean, and
    # Kish's effective size p(1-p)/var was ~1e33: an interval of one point at 0.5333 (the
    # hypothesis test above found it after a merge). With no run count, the items bound it.
    ya = np.array(y, dtype=float)
    g = np.arange(ya.size) % clusters
    iv = proportion_interval(ya, g, clusters, level)
    assert iv.n_eff <= ya.size
    assert iv.low < iv.est < iv.high
    dv = difference_interval(ya, ya[::-1].copy(), g, clusters, level)
    assert dv.low < dv.est < dv.high


@pytest.mark.parametrize("clusters", [2, 5, 30, 300])
def test_a_constant_difference_has_a_positive_p_value(clusters):
    # arm a right on every run, arm b wrong on every run: the largest possible effect
    ones, zeros = np.ones(clusters), np.zeros(clusters)
    dv = difference_interval(ones, zeros, np.arange(clusters), clusters, 0.95)
    assert dv.est == 1.0 and dv.se == 0.0
    assert 0.0 < dv.p_value < 1.0 and dv.high == 1.0 and dv.low < 1.0
    assert (dv.p_value < 0.05) is (clusters >= 5)


def test_run_count_rule_checks_every_cell():
    five = {k: v for k, v in HAND.items()}
    # an arm with 1 run beside one with 5
    rows = rows_from(five, arm="a") + rows_from({k: v[:1] for k, v in five.items()}, arm="b")
    with pytest.raises(TooFewRunsError, match=r"arm 'b', item 'q1' has 1 run\(s\)"):
        report(rows)
    # items with 3 runs beside items with 5
    mixed = dict(five)
    mixed[("B", "q3")] = [0, 0, 0]
    with pytest.raises(TooFewRunsError, match=r"item 'q3' has 3 run"):
        report(rows_from(mixed))
    # 3 runs numbered 6-8: counted, not read off the run numbers
    late = [msgspec.structs.replace(r, run=r.run + 5) for r in rows_from({k: v[:3] for k, v in five.items()})]
    with pytest.raises(TooFewRunsError, match="has 3 run"):
        report(late)
    assert report(late, descriptive=True).runs == 3
    # unequal runs, all 5 or more: refused unless descriptive
    more = dict(five)
    more[("B", "q3")] = [0] * 7
    with pytest.raises(TooFewRunsError, match=r"runs differ across arm x item cells: 5 .* to 7"):
        compare(rows_from(more) + rows_from(five, arm="b"), "a", "b")
    rep = report(rows_from(more), descriptive=True)
    assert rep.descriptive and rep.note.startswith("Descriptive: unequal runs per item (5-7 here)")
    # the same run twice is not two runs
    twice = rows_from(five) + rows_from({("A", "q1"): [1]})
    with pytest.raises(
        ConfigError, match=r"run: appears more than once at row \d+ \(arm 'a', item 'q1', run 1\)"
    ):
        report(twice)


@pytest.mark.parametrize(
    ("bad", "shown"),
    [(2.0, "2.0"), (-1, "-1"), (0.5, "0.5"), ("TRUE", "'TRUE'"), ("1", "'1'"), ([1], "[1]")],
)
def test_correct_must_be_boolean_or_0_1(bad, shown):
    rows = [msgspec.to_builtins(r) for r in rows_from(HAND)]
    rows[7]["correct"] = bad
    with pytest.raises(
        ConfigError,
        match=r"correct: must be True/False \(or 1/0\), or None, at row 7 "
        r"\(arm 'a', item 'q2', run 3\) \(got " + re.escape(shown) + r"\)",
    ):
        report(rows)


@pytest.mark.parametrize("ok", [1, 0, 1.0, 0.0, np.True_, np.int64(1), np.float64(0.0), None, float("nan")])
def test_correct_accepts_booleans_0_1_and_missing(ok):
    rows = [msgspec.to_builtins(r) for r in rows_from(HAND)]
    rows[7]["correct"] = ok
    a = report(rows).arm("a")
    assert a.n_runs == 25 - (ok is None or ok != ok)


def test_correct_accepts_pandas_nullable_booleans():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(
        [msgspec.to_builtins(r) for r in rows_from(HAND) + rows_from({("D", "q6"): [None] * 5})]
    )
    frame["correct"] = frame["correct"].astype("boolean")
    a = report(frame).arm("a")
    assert a.se == pytest.approx(HAND_SE) and a.unlabelled_runs == 5


def test_unpriced_runs_make_usd_na_as_the_seed_says():
    rows = correlated_arms()
    unpriced = [msgspec.structs.replace(r, usd=None) if r.arm == "b" else r for r in rows]
    rep = report(unpriced)
    assert rep.arm("b").usd is None and rep.arm("b").usd_unpriced == 1000
    assert rep.arm("a").usd == pytest.approx(1.0)
    text = str(rep)
    cost_b = text.split("Variance components")[1].splitlines()[3].split()
    assert cost_b[0] == "b" and cost_b[3] == "NA"
    assert "usd is NA when a model has no price" in text
    # through the runner: a mock model with no price gives NA in print(bench) and in report()
    ref = hb.Reference(items={"q1": "a", "q2": "b"}, labels=["a", "b"], cluster=["x", "y"])
    for model, usd in (("mock", 0.0), ("no-such-model", None)):
        client = hb.MockClient(lambda messages, params: "a", model=model)
        bench = hb.benchmark(hb.Arm("ask", lambda item, ctx: ctx.call(item).text), ref, runs=5, client=client)
        assert report(bench).arm("ask").usd == usd
        assert str(bench).splitlines()[2].split()[-1] == ("NA" if usd is None else "0.0000")


def test_printed_and_reported_counts_agree_or_say_why():
    ref = hb.Reference(
        items={"q1": "France", "q2": "Peru", "q3": "Chad", "q4": "Fiji", "q5": "Mars", "q6": "Pluto"},
        labels=["Paris", "Lima", "N'Djamena", "Suva", None, None],
        cluster=["a", "a", "b", "b", "c", "c"],
        split="test",
    )
    capitals = {
        "France": "Paris",
        "Peru": "Lima",
        "Chad": "Ndjamena",
        "Fiji": "Suva",
        "Mars": "?",
        "Pluto": "?",
    }
    client = hb.MockClient(lambda messages, params: capitals[messages[0]["content"][11:]])
    bench = hb.benchmark(
        hb.Arm("ask", lambda item, ctx: ctx.call(f"Capital of {item}").text), ref, runs=5, client=client
    )
    printed = str(bench).splitlines()[2].split()
    a = report(bench).arm("ask")
    assert int(printed[2]) == 30 and a.n_runs == 20 and a.unlabelled_runs == 10  # 40 vs 30 in the issue's
    assert int(printed[2]) == a.n_runs + a.unlabelled_runs
    assert float(printed[1]) == pytest.approx(a.accuracy)
    text = " ".join(str(report(bench)).split())
    assert "print(bench) also counts the runs on items with no label (ask: 10)" in text


# -- intervals nest across levels and agree with the p-value ----------------------------------------

RUNS_A = {0: "00000", 1: "00000", 2: "00000", 3: "00000", 4: "10000", 5: "11000", 6: "11111", 7: "00000"}
RUNS_B = {0: "00000", 1: "00000", 2: "11110", 3: "00000", 4: "00000", 5: "00000", 6: "00000", 7: "11100"}
LEVELS = [0.5, 0.8, 0.9, 0.95, 0.99, 0.999]


def _assert_nested_and_consistent(ya, yb, g, n_g, trials):
    arms = [proportion_interval(ya, g, n_g, lv, trials) for lv in LEVELS]
    pairs = [difference_interval(ya, yb, g, n_g, lv, trials) for lv in LEVELS]
    for lower, higher in zip(arms, arms[1:], strict=False):
        assert higher.low <= lower.low and higher.high >= lower.high, (lower, higher)
    for lower, higher in zip(pairs, pairs[1:], strict=False):
        assert higher.low <= lower.low and higher.high >= lower.high, (lower, higher)
    for lv, iv in zip(LEVELS, pairs, strict=True):
        excludes = iv.low > 0 or iv.high < 0
        assert (iv.p_value < 1 - lv) == excludes or abs(iv.p_value - (1 - lv)) < 1e-6, (lv, iv)


def test_a_small_difference_on_two_clusters_nests_across_levels_and_agrees_with_its_p_value():
    """8 items in 2 clusters, 5 runs: the 95% interval [0.010, 0.533] lay inside no 90% one
    ([-0.020, 0.341]) and p was 0.048 beside a 90% interval holding 0. Two clusters give a
    correlation of the two directions' disagreement of exactly 1, where the MOVER limits
    narrowed as the level rose."""
    ya = np.array([RUNS_A[i].count("1") / 5 for i in range(8)])
    yb = np.array([RUNS_B[i].count("1") / 5 for i in range(8)])
    g = np.array([0, 1] * 4)
    _assert_nested_and_consistent(ya, yb, g, 2, 40.0)
    p = difference_interval(ya, yb, g, 2, 0.95, 40.0).p_value
    assert p > 0.3  # a difference of 0.025 on 2 clusters is no evidence at all
    # (0.38: the disagreement b -> a, 0.175 in 40 runs, had a Kish size of 231 before it was capped at the runs)


@given(
    data=st.lists(
        st.tuples(st.integers(0, 5), st.integers(0, 5), st.integers(0, 7)), min_size=3, max_size=40
    ),
    runs=st.sampled_from([1, 2, 5]),
)
@settings(max_examples=examples(300), deadline=None)
def test_intervals_nest_across_levels_and_agree_with_the_p_value(data, runs):
    ya = np.array([min(a, runs) / runs for a, _, _ in data])
    yb = np.array([min(b, runs) / runs for _, b, _ in data])
    _, g = np.unique([c for _, _, c in data], return_inverse=True)
    n_g = int(g.max()) + 1
    if n_g < 2:
        return
    _assert_nested_and_consistent(ya, yb, g, n_g, float(len(data) * runs))


def _ratio_rows(n_items: int, n_clusters: int, runs: int, unit: float, stopped: dict[int, int]) -> list[Row]:
    """Every run right at ``unit`` USD, except ``stopped[i]`` runs of item i: budget_stop, $0, wrong."""
    rows = []
    for i in range(n_items):
        for r in range(1, runs + 1):
            stop = r > runs - stopped.get(i, 0)
            rows.append(
                Row(
                    cluster=f"c{i % n_clusters}",
                    item=f"q{i}",
                    arm="ask",
                    run=r,
                    split="test",
                    correct=not stop,
                    outcome=None,
                    failure_kind="budget_stop" if stop else None,
                    usd=0.0 if stop else unit,
                )
            )
    return rows


@pytest.mark.parametrize(
    ("n_items", "n_clusters", "stopped", "method"),
    [
        (4, 2, {3: 2}, "cluster"),  # kill.toml: 4 items, 2 clusters, 2 runs stopped
        (4, 2, {}, "cluster"),
        (12, 4, {}, "cluster"),
        (40, 20, {0: 1, 7: 3}, "cluster"),
        (40, 20, {}, "bootstrap"),
        (40, 20, {0: 1, 7: 3}, "bootstrap"),
    ],
)
@pytest.mark.filterwarnings("ignore::hrbench.errors.IntervalMethodWarning")  # 20 clusters, asked
def test_accuracy_per_usd_is_never_a_point_shown_as_an_interval(n_items, n_clusters, stopped, method) -> None:
    # SPEC section 6: zero width only when nothing was sampled; here every item's accuracy is
    # the same multiple of its cost, so the delta method (and every resample) gives a point
    rows = _ratio_rows(n_items, n_clusters, 5, 1.4e-5, stopped)
    a = report(rows, method=method, n_boot=200).arm("ask")
    assert a.accuracy_per_usd == pytest.approx(a.accuracy / a.usd_per_run)
    assert a.accuracy_per_usd_note is not None
    text = str(report(rows, method=method, n_boot=200))
    assert f"acc/usd of ask: {a.accuracy_per_usd_note}" in text
    if a.accuracy_per_usd_low is None:  # the usd/run interval reaches 0: no upper bound
        assert a.accuracy_per_usd_high is None and "no upper bound" in a.accuracy_per_usd_note
        assert n_clusters == 2
    else:  # the Bonferroni box of the accuracy and usd/run intervals, each at 97.5%
        # positive width; the upper end is the estimate itself only where accuracy is 1 and
        # every run cost the same (as the accuracy's own interval ends at 1)
        assert a.accuracy_per_usd_low < a.accuracy_per_usd <= a.accuracy_per_usd_high
        wider = report(rows, level=0.975, method="cluster").arm("ask")
        assert a.accuracy_per_usd_low == pytest.approx(wider.ci_low / wider.usd_per_run_high)
        assert a.accuracy_per_usd_high == pytest.approx(wider.ci_high / wider.usd_per_run_low)
        assert a.accuracy_per_usd_low <= wider.ci_low / a.usd_per_run  # at least the accuracy's spread


def test_accuracy_per_usd_keeps_the_delta_method_where_it_has_width() -> None:
    a = report(correlated_arms()).arm("a")
    assert a.accuracy_per_usd_note is None and a.accuracy_per_usd_low < a.accuracy_per_usd_high
