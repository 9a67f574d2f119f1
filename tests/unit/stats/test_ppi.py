"""PPI++ with a judge and a few human grades (hrbench.stats._ppi) and the rows to grade next (hrbench.stats._grading).

The point estimate is checked against ppi-python (a dev dependency: the reference
implementation of Angelopoulos, Duchi, Zrnic 2023) on i.i.d. rows; the clustered, stratified
and small-sample parts are checked by their properties: never wider than the human-only
interval, unbiased under next_grades' stratified draws (and biased without the stratum
weights), a floor when no grade disagrees, the fallback for a judge that agrees poorly.
"""

from __future__ import annotations

import numpy as np
import pytest

from hrbench.errors import ConfigError
from hrbench.records import Row
from hrbench.results._grades import human_grades
from hrbench.stats import compare, next_grades, ppi_estimate, report
from hrbench.stats._ppi import POOR_KAPPA


def _cols(cluster, item, arm, run, f) -> dict:
    n = len(item)
    return dict(
        cluster=np.asarray(cluster),
        item=np.asarray(item),
        arm=np.asarray(arm),
        run=np.asarray(run),
        correct=np.asarray(f, dtype=bool),
        failure_kind=np.array([None] * n, dtype=object),
        usd=np.zeros(n),
        reportable=np.ones(n, dtype=bool),
    )


def _iid(seed: int, n: int = 400, agree: float = 0.9, acc: float = 0.7):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < acc
    f = np.where(rng.random(n) < agree, y, ~y)
    items = [f"q{i}" for i in range(n)]
    return _cols(items, items, ["a"] * n, [1] * n, f), y, f


@pytest.mark.parametrize("seed", range(6))
def test_the_point_estimate_is_ppi_pythons_on_iid_rows(seed: int) -> None:
    # imported here: ppi-python pulls in statsmodels, scikit-learn and numba (1.6 s of CPU), which
    # every pytest-xdist worker would pay at collection, not only the one that runs these cases
    from ppi_py import ppi_mean_pointestimate

    bench, y, f = _iid(seed)
    graded = np.random.default_rng(seed + 100).choice(y.size, 40, replace=False)
    grades = [{"item": f"q{i}", "arm": "a", "run": 1, "correct": bool(y[i])} for i in graded]
    est = ppi_estimate(bench, grades, judge={"arms": [], "comparisons": []}).arms[0]
    lam = est.lam[0]
    assert 0 < lam <= 1
    theirs = ppi_mean_pointestimate(
        y[graded].astype(float), f[graded].astype(float), f.astype(float), lam=lam
    )
    assert est.estimate == pytest.approx(float(np.squeeze(theirs)), abs=1e-12)
    # lam = 0 is the classical (human-only) estimate: the graded rows' mean, as ppi-python's lam=0
    classical = ppi_mean_pointestimate(
        y[graded].astype(float), f[graded].astype(float), f.astype(float), lam=0
    )
    assert (
        est.human == pytest.approx(float(np.squeeze(classical)), abs=1e-12) == pytest.approx(y[graded].mean())
    )
    # ppi-python's own tuned lam lands within a few hundredths of ours (they pool the judge's variance)
    own = float(
        np.squeeze(ppi_mean_pointestimate(y[graded].astype(float), f[graded].astype(float), f.astype(float)))
    )
    assert abs(own - est.estimate) < 0.02


def _clustered(seed: int, g: int = 20, m: int = 5, runs: int = 3, lenient_b: bool = True):
    """Two arms on g clusters of m items; judge errors shared within clusters, lenient with arm b."""
    rng = np.random.default_rng(seed)
    u, eta = rng.normal(0, 0.8, g), rng.normal(0, 1.0, g)
    cols: dict[str, list] = {k: [] for k in ("cluster", "item", "arm", "run", "f", "y")}
    for a in ("a", "b"):
        for c in range(g):
            for i in range(m):
                p = 1 / (1 + np.exp(-(0.8 + u[c] + rng.normal(0, 1))))
                for r in range(1, runs + 1):
                    y = rng.random() < p
                    base = -0.9 if (a == "b" and not y and lenient_b) else -2.4
                    flip = rng.random() < 1 / (1 + np.exp(-(base + eta[c])))
                    for k, v in (
                        ("cluster", f"c{c}"),
                        ("item", f"q{c}_{i}"),
                        ("arm", a),
                        ("run", r),
                        ("f", y ^ flip),
                        ("y", y),
                    ):
                        cols[k].append(v)
    bench = _cols(cols["cluster"], cols["item"], cols["arm"], cols["run"], cols["f"])
    return bench, np.asarray(cols["y"])


def _graded(bench: dict, y: np.ndarray, idx) -> list[dict]:
    return [
        {
            "item": str(bench["item"][i]),
            "arm": str(bench["arm"][i]),
            "run": int(bench["run"][i]),
            "correct": bool(y[i]),
        }
        for i in idx
    ]


@pytest.mark.parametrize("seed", range(8))
def test_never_wider_than_the_human_only_interval(seed: int) -> None:
    bench, y = _clustered(seed)
    idx = np.random.default_rng(seed).choice(y.size, 30 + 10 * seed, replace=False)
    s = ppi_estimate(bench, _graded(bench, y, idx), judge={"arms": [], "comparisons": []})
    for e in [*s.arms, *s.pairs]:
        assert e.ci_low is not None and e.human_low is not None
        assert e.ci_high - e.ci_low <= e.human_high - e.human_low + 1e-12
        assert e.worth >= e.n_graded - 1e-9  # worth at least the grades themselves
        assert -1 <= e.ci_low < e.estimate < e.ci_high <= 1


def _truth(bench: dict, y: np.ndarray, arm: str) -> float:
    """The benchmark's human accuracy of an arm: mean over runs within an item, then over items."""
    m = bench["arm"] == arm
    items, inv = np.unique(bench["item"][m], return_inverse=True)
    return float((np.bincount(inv, weights=y[m]) / np.bincount(inv)).mean())


def test_stratified_draws_are_unbiased_and_would_not_be_without_their_weights() -> None:
    bench, y = _clustered(3, g=20, m=5, runs=2)
    truth = _truth(bench, y, "a") - _truth(bench, y, "b")
    where = {
        (str(a), str(i), int(r)): j
        for j, (a, i, r) in enumerate(zip(bench["arm"], bench["item"], bench["run"], strict=True))
    }
    weighted, human, plain = [], [], []
    for seed in range(300):
        got = []
        for k in (20, 40):  # two rounds: the second sized from the first one's grades
            for row in next_grades(bench, k, got, seed=seed * 2 + len(got)):
                j = where[(row["arm"], row["item"], row["run"])]
                got.append({**_graded(bench, y, [j])[0], "pi": row["pi"]})
        judge = {"arms": [], "comparisons": []}
        e = ppi_estimate(bench, got, judge=judge).pairs[0]
        weighted.append(e.estimate)
        human.append(e.human)
        plain.append(ppi_estimate(bench, [{**g, "pi": None} for g in got], judge=judge).pairs[0].human)
    for got in (weighted, human):
        assert abs(np.mean(got) - truth) < 3 * np.std(got) / np.sqrt(len(got)) + 0.002
    # the judge's "wrong" rows of arm b are drawn more often than the others: the grades alone,
    # unweighted, are biased (PPI++'s lam, near the slope of the grades on the verdicts, hides it)
    assert abs(np.mean(plain) - truth) > 6 * np.std(plain) / np.sqrt(len(plain))


def test_grades_drawn_by_stratum_give_the_post_stratified_mean_and_its_variance_its_slope() -> None:
    # weighted by the judge's verdict, the estimate is sum_v (N_v / N) H_v whatever lam is, so the
    # variance takes the lam that estimate implies (H_1 - H_0), not one tuned to shrink it
    bench, y = _clustered(4, g=20, m=5, runs=1)
    where = {
        (str(i), int(r)): j
        for j, (a, i, r) in enumerate(zip(bench["arm"], bench["item"], bench["run"], strict=True))
        if a == "a"
    }
    got = [
        {**_graded(bench, y, [where[(row["item"], row["run"])]])[0], "pi": row["pi"]}
        for row in next_grades(bench, 40, seed=3)
        if row["arm"] == "a"
    ]
    e = ppi_estimate(bench, got, judge={"arms": [], "comparisons": []}).arms[0]
    f = bench["correct"][bench["arm"] == "a"]
    judge_of = {(g["item"], g["run"]): bool(bench["correct"][where[(g["item"], g["run"])]]) for g in got}
    h = {
        v: np.mean([g["correct"] for g in got if judge_of[(g["item"], g["run"])] == v]) for v in (True, False)
    }
    assert e.estimate == pytest.approx(f.mean() * h[True] + (1 - f.mean()) * h[False], abs=1e-12)
    assert e.estimate == pytest.approx(e.human, abs=1e-12)
    assert e.method == "ppi++" and e.lam == [pytest.approx(h[True] - h[False], abs=1e-12)]
    assert e.ci_high - e.ci_low <= e.human_high - e.human_low


def test_next_grades_draws_ungraded_rows_by_stratum_with_their_probabilities() -> None:
    bench, y = _clustered(5, g=10, m=4, runs=1)
    first = next_grades(bench, 20, seed=1)
    assert len(first) == 20 and first == next_grades(bench, 20, seed=1)  # seeded
    keys = {(r["arm"], r["item"], r["run"]) for r in first}
    assert len(keys) == 20
    rows_by = {
        (a, j): int(np.sum((bench["arm"] == a) & (bench["correct"] == j))) for a in ("a", "b") for j in (0, 1)
    }
    for r in first:  # pi = the stratum's draws over its rows not graded yet
        n = sum(1 for x in first if (x["arm"], x["judge"]) == (r["arm"], r["judge"]))
        assert r["pi"] == pytest.approx(n / rows_by[(r["arm"], int(r["judge"]))])
    assert {(r["arm"], r["judge"]) for r in first} == set(rows_by)  # every stratum served
    # spread over the clusters (systematic sampling in cluster order)
    assert len({r["cluster"] for r in first}) >= 8
    graded = _graded(
        bench, y, [int(np.flatnonzero((bench["arm"] == a) & (bench["item"] == i))[0]) for a, i, _ in keys]
    )
    second = next_grades(bench, 30, graded, seed=2)
    assert not keys & {(r["arm"], r["item"], r["run"]) for r in second}  # never a row graded already
    assert len(next_grades(bench, 10_000, seed=0)) == y.size  # no more than there are
    with pytest.raises(ConfigError, match="k: "):
        next_grades(bench, 0)


def test_a_stratum_where_the_judge_errs_more_gets_more_grades() -> None:
    n = 400
    f = np.array([i % 2 == 0 for i in range(n)])
    items = [f"q{i}" for i in range(n)]
    bench = _cols([f"c{i // 4}" for i in range(n)], items, ["a"] * n, [1] * n, f)
    # the judge's "right" is always right; its "wrong" is half the time wrong
    y = np.where(f, True, np.arange(n) % 4 == 1)
    graded = _graded(bench, y, range(0, 80))
    picked = next_grades(bench, 40, graded)
    said_wrong = sum(not r["judge"] for r in picked)
    assert said_wrong >= 30, said_wrong


def test_no_grade_disagreeing_still_leaves_an_interval_of_width() -> None:
    bench, y, f = _iid(1, n=200, agree=1.0, acc=1.0)  # every run right, by the judge and the humans
    grades = [{"item": f"q{i}", "arm": "a", "run": 1, "correct": True} for i in range(0, 200, 5)]
    e = ppi_estimate(bench, grades, judge={"arms": [], "comparisons": []}).arms[0]
    assert e.estimate == 1.0 and e.ci_high == 1.0
    assert 0.8 < e.ci_low < 0.99 and 0.8 < e.human_low < 0.99  # the floor: one pseudo-disagreement each way


def test_a_judge_that_agrees_poorly_falls_back_to_the_human_only_interval() -> None:
    bench, y, f = _iid(2, n=300, agree=0.55)
    grades = [{"item": f"q{i}", "arm": "a", "run": 1, "correct": bool(y[i])} for i in range(0, 300, 6)]
    s = ppi_estimate(bench, grades, judge={"arms": [], "comparisons": []})
    assert s.kappa < POOR_KAPPA and s.fallback
    e = s.arms[0]
    assert e.method == "human-only" and e.lam == [0.0]
    assert (e.estimate, e.ci_low, e.ci_high) == (e.human, e.human_low, e.human_high)
    assert "agrees poorly" in s.note and "agrees poorly" in e.note
    good = ppi_estimate(_iid(2, n=300, agree=0.95)[0], grades, judge={"arms": [], "comparisons": []})
    assert not good.fallback and good.arms[0].method == "ppi++"


def _rows(seed: int = 0) -> list[Row]:
    rng = np.random.default_rng(seed)
    return [
        Row(
            cluster=f"c{i // 3}",
            item=f"q{i}",
            arm=a,
            run=r,
            split="test",
            correct=bool(rng.random() < 0.75),
            outcome="correct",
            failure_kind=None,
        )
        for i in range(45)
        for a in ("a", "b")
        for r in range(1, 6)
    ]


def test_report_and_compare_give_the_human_graded_estimates() -> None:
    rows = _rows()
    truth = {(r.arm, r.item, r.run): r.correct if r.item[-1] != "7" else not r.correct for r in rows}
    grades = [
        {"item": i, "arm": a, "run": 1, "correct": truth[(a, i, 1)]}
        for a in ("a", "b")
        for i in [f"q{k}" for k in range(0, 45, 2)]
    ]
    bench = human_grades(rows, grades)
    rep = report(bench)
    assert rep.human is not None and rep.human["n_grades"] == len(grades)
    assert [e["arm_a"] for e in rep.human["arms"]] == ["a", "b"]
    pair = rep.human["pairs"][0]
    assert (pair["judge"], pair["judge_low"]) == (rep.comparisons[0].diff, rep.comparisons[0].ci_low)
    assert "Human-graded (PPI++, 95%)" in str(rep) and "**Human-graded (PPI++, 95%)" in rep.to_markdown()
    c = compare(bench, "b", "a")
    assert c.human["arm_a"] == "b" and c.human["estimate"] == pytest.approx(-pair["estimate"])
    assert report(rows).human is None and compare(rows, "a", "b").human is None
    # grades given to report() directly count the same
    assert report(rows, grades=grades).human == rep.human


@pytest.mark.parametrize(
    ("grade", "said"),
    [
        ({"item": "q1", "arm": "a", "run": 1, "correct": "maybe"}, "correct"),
        ({"item": "q1", "arm": "a", "run": 1, "correct": 2}, "correct"),
        ({"item": "q1", "arm": "a", "run": 1, "correct": True, "pi": 0}, "pi"),
        ({"item": "q1", "arm": "a", "run": 1, "correct": True, "pi": 1.5}, "pi"),
    ],
)
def test_a_bad_grade_is_refused_by_name(grade: dict, said: str) -> None:
    with pytest.raises(ConfigError, match=said):
        ppi_estimate(_rows(), [grade])


def test_human_grades_refuses_a_row_the_benchmark_does_not_have() -> None:
    with pytest.raises(ConfigError, match="a/q1/9"):
        human_grades(_rows(), [{"item": "q1", "arm": "a", "run": 9, "correct": True}])
    with pytest.raises(ConfigError, match="correct"):
        human_grades(_rows(), [{"item": "q1", "arm": "a", "run": 1}])


def test_the_gate_reads_the_human_graded_interval() -> None:
    from hrbench.stats import gate

    def rows(arm: str, judge_wrong_every: int) -> list[Row]:
        return [
            Row(
                cluster=f"c{i // 2}",
                item=f"q{i}",
                arm=arm,
                run=r,
                split="test",
                correct=i % judge_wrong_every != 0,
                outcome="correct",
                failure_kind=None,
            )
            for i in range(60)
            for r in range(1, 6)
        ]

    # the judge calls a fifth of the candidate's answers wrong; the humans find every answer right
    cand, base = rows("new", 5), rows("old", 1000)
    assert gate(cand, base, max_drop=0.02).decision == "fail"
    graded = lambda arm: [{"item": f"q{i}", "arm": arm, "run": 1, "correct": True} for i in range(0, 60, 2)]  # noqa: E731
    res = gate(human_grades(cand, graded("new")), human_grades(base, graded("old")), max_drop=0.02)
    assert res.human is not None and res.human["n_graded"] == 60
    assert res.decision == "pass" and "as humans grade it (PPI++ on 60 human grades)" in res.reason
    assert (res.diff, res.ci_high) == (res.human["estimate"], res.human["ci_high"])
