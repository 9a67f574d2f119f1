"""Stop when sure: the margin that settles equal arms, the informative order, and what a ran-through stop reports."""

from __future__ import annotations

import functools
import importlib.util
import json
import math
from pathlib import Path

import numpy as np
import pytest

import hrbench as hb
from hrbench.errors import ConfigError
from hrbench.records import Row
from hrbench.stats import SequentialTest, StopWhenSure, cluster_spread, gate
from hrbench.stats._stopped import apply_stop, ran_through

REPO = Path(__file__).resolve().parents[3]


@functools.cache
def plan() -> hb.PowerPlan:
    """The design the rules are planned from: computed on first use, not at every worker's collection
    (power() imports scipy.stats: ~0.9 s of CPU in each of the suite's workers)."""
    return hb.power(0.05, var_within=0.4, var_between=0.02, runs=5, items_per_cluster=10)


def _noisy(
    rng: np.random.Generator, c: str, acc: dict[str, float], items: int = 10
) -> dict[str, dict[str, float]]:
    return {
        a: {f"{c}-{j}": float(x) for j, x in enumerate(rng.binomial(5, p, items) / 5)} for a, p in acc.items()
    }


def _run(rule: StopWhenSure, acc: dict[str, float], n: int = 200, seed: int = 0) -> SequentialTest:
    ids = [f"c{i:03d}" for i in range(n)]
    test = rule.start(list(acc), dict.fromkeys(ids, 10))
    rng = np.random.default_rng(seed)
    for c in rule.cluster_order(ids):
        test.commit(c, _noisy(rng, c, acc))
        if test.stopped:
            break
    return test


def test_equal_arms_are_settled_within_the_plan_s_margin_before_max_clusters():
    rule = StopWhenSure(pairs=[("a", "b")], plan=plan(), seed=1)
    assert rule.margin_for() == pytest.approx(1.75 * plan().diff)
    test = _run(rule, {"a": 0.6, "b": 0.6})
    out = test.summary()
    pair = out["pairs"][0]
    assert out["reason"] == "equivalent" and out["clusters"] < 2 * plan().n_clusters == out["of"]
    assert pair["within_margin"] and pair["decided"] is None and out["winner"] is None
    m = out["margin"]
    assert -m < pair["cs_low"] < pair["cs_high"] < m and abs(pair["diff"]) <= m / 3.5
    # without the margin the same benchmarks run to max_clusters
    off = _run(StopWhenSure(pairs=[("a", "b")], plan=plan(), seed=1, margin=0), {"a": 0.6, "b": 0.6})
    assert off.stopped == "max_clusters" and off.summary()["clusters"] == 2 * plan().n_clusters
    # a real difference is decided, not settled as none
    big = _run(StopWhenSure(pairs=[("a", "b")], plan=plan(), seed=1), {"a": 0.75, "b": 0.6})
    assert big.stopped == "decided" and big.summary()["pairs"][0]["within_margin"] is False
    # no plan, no margin unless given; a given one is used as it is
    assert StopWhenSure().margin_for() is None and StopWhenSure(margin=0.1).margin_for() == 0.1
    with pytest.raises(ConfigError, match="^margin:"):
        StopWhenSure(margin=1.5)


def test_a_settled_pair_survives_a_resume_and_its_arms_stop_being_run():
    rule = StopWhenSure(plan=plan(), seed=2)  # every pair of three arms
    test = _run(rule, {"a": 0.6, "b": 0.6, "c": 0.3}, seed=3)
    out = test.summary()
    assert out["reason"] == "equivalent" and [p["decided"] for p in out["pairs"]] == [None, "a", "b"]
    assert [p["within_margin"] for p in out["pairs"]] == [True, False, False]
    back = SequentialTest.from_state(rule, json.loads(json.dumps(test.state())))
    assert back.within == test.within and back.stopped == "equivalent"
    older = {k: v for k, v in test.state().items() if k not in ("within", "draw", "kappa")}
    assert SequentialTest.from_state(rule, older).within == [False] * 3  # saved before the margin


def test_the_informative_order_draws_in_proportion_to_the_history_and_weights_by_the_inverse():
    ids = [f"c{i}" for i in range(10)]
    history = {c: (0.4 if i < 3 else 0.0) for i, c in enumerate(ids)}  # three clusters ever disagreed
    rule = StopWhenSure(pairs=[("a", "b")], order="informative", history=history, seed=5, method="exact")
    p = rule.draw_probabilities(ids)
    assert p["c0"] == pytest.approx(0.8 / 3 + 0.02) and p["c9"] == pytest.approx(0.02)  # the floor: 0.2 / 10
    assert sum(p.values()) == pytest.approx(1.0)
    orders = [
        StopWhenSure(order="informative", history=history, seed=s).cluster_order(ids)[:3] for s in range(400)
    ]
    # successive draws in proportion to p: the three informative ones first with chance
    # 3p * 2p / (1 - p) * p / (1 - 2p) (p = 0.2867 each), under 0.001 for a uniform order
    pc = p["c0"]
    first_three = 3 * pc * (2 * pc / (1 - pc)) * (pc / (1 - 2 * pc))
    assert abs(np.mean([set(o) == {"c0", "c1", "c2"} for o in orders]) - first_three) < 0.08
    assert any("c9" in o for o in orders)  # and every cluster stays possible
    # no history (or one that never varied): the uniform order, as without the setting
    assert StopWhenSure(order="informative", seed=5).cluster_order(ids) == StopWhenSure(seed=5).cluster_order(
        ids
    )
    flat = StopWhenSure(order="informative", history=dict.fromkeys(ids, 0.0), seed=5)
    assert flat.cluster_order(ids) == StopWhenSure(seed=5).cluster_order(ids)
    # each committed cluster enters with its size weight x the scale x 1 / (|R| q), by hand
    test = rule.start(["a", "b"], dict.fromkeys(ids, 10))
    left = list(ids)
    s_expected = 0.0
    for k, c in enumerate(rule.cluster_order(ids)[:4]):
        q = p[c] / sum(p[x] for x in left)
        w = test.kappa / (len(left) * q)
        d = 0.1 * (k + 1)
        test.commit(c, {"a": {f"{c}-0": 0.5 + d}, "b": {f"{c}-0": 0.5}})
        s_expected += w * d
        left.remove(c)
    assert float(test.acc["s"][0]) == pytest.approx(s_expected)
    assert test.kappa > 1 and test.summary()["order"] == "informative"
    back = SequentialTest.from_state(
        StopWhenSure(pairs=[("a", "b")], seed=5), json.loads(json.dumps(test.state()))
    )
    assert back.p_draw == pytest.approx(test.p_draw) and back.kappa == test.kappa  # the same weights go on


def test_the_history_is_read_from_earlier_benchmarks_rows():
    rows = [
        Row(
            cluster=c, item=f"{c}{i}", arm=a, run=r, split="test", correct=ok, outcome=None, failure_kind=None
        )
        for c, agree in (("easy", True), ("hard", False))
        for i in range(2)
        for a in ("x", "y")
        for r in range(5)
        for ok in [(a == "x") or agree or r < 2]
    ]
    spread = cluster_spread([rows])
    assert spread == {"easy": 0.0, "hard": pytest.approx(0.6)}
    assert StopWhenSure(order="informative", history=[rows]).history == spread
    with pytest.raises(ConfigError, match="^history:"):
        StopWhenSure(order="informative", history={"a": -1.0})
    with pytest.raises(ConfigError, match="^order:"):
        StopWhenSure(order="sorted")


def test_a_stop_that_ran_through_its_clusters_keeps_the_fixed_interval_and_the_gate_takes_it():
    rows = [
        Row(cluster=f"c{i}", item=f"q{i}", arm=a, run=r, split="test", correct=(a == "a") or i % 3 > 0,
            outcome=None, failure_kind=None)
        for i in range(12) for a in ("a", "b") for r in range(5)
    ]  # fmt: skip
    through = {"reason": "max_clusters", "clusters": 12, "of": 12, "planned": 12, "summary": {"alpha": 0.05}}
    rep = apply_stop(hb.report(rows, stop=None), through)
    c = rep.comparisons[0]
    assert ran_through(through) and c.p_value is not None and "ran its most clusters" in c.note
    assert "conditional on the clusters run" not in (rep.arms[0].note or "")
    stopped = {**through, "reason": "decided", "clusters": 5}
    rep2 = apply_stop(hb.report(rows), stopped)
    assert rep2.comparisons[0].p_value is None and not ran_through(stopped)

    class Stopped(list):  # a Bench-like: rows and a stop record
        stop = through

    bench = Stopped(rows)
    assert (
        gate(Stopped([r for r in rows if r.arm == "a"]), [r for r in rows if r.arm == "b"]).decision == "pass"
    )
    Stopped.stop = stopped
    assert gate(Stopped([r for r in rows if r.arm == "a"]), bench).decision == "cannot"


@pytest.mark.parametrize(("goal", "margin"), [("rank", 0.0), ("rank", 0.1), ("tolerance", None)])
def test_a_ran_through_stop_shows_the_fixed_interval_and_p_to_describe_not_to_decide(goal, margin):
    # a stop rule that ran its most clusters without deciding, where the fixed design's p is below
    # alpha: the interval and p stay shown, labelled the fixed design's; no text reads them as a
    # decision (read as one, equal arms were told of a difference more than alpha of the time)
    rows = [
        Row(cluster=f"c{i}", item=f"q{i}", arm=a, run=r, split="test", correct=(a == "a") or i % 2 > 0,
            outcome=None, failure_kind=None)
        for i in range(12) for a in ("a", "b") for r in range(5)
    ]  # fmt: skip
    summary = {"alpha": 0.05, "goal": goal, "margin": margin or None, "method": "symmetric"}
    pair = {"a": "a", "b": "b", "diff": 0.33, "cs_low": -0.1, "cs_high": 0.7, "e_value": 3.0,
            "p_anytime": 0.3, "decided": None, "within_margin": False}  # fmt: skip
    record = {"reason": "max_clusters", "clusters": 12, "of": 12, "planned": 12, "winner": None,
              "summary": summary, "pairs": [pair]}  # fmt: skip
    rep = apply_stop(hb.report(rows), record)
    (c,) = rep.comparisons
    assert c.p_value is not None and c.p_value < 0.05 and c.ci_low is not None and c.ci_low > 0
    assert "the fixed design's interval and p" in c.note and "not to decide it" in c.note
    assert "alpha / (1 - alpha)" not in c.note
    head = rep.stop["headline"]
    assert head.startswith("Not decided:") and "to describe, not to decide" in head and "hold" not in head
    text, md = str(rep), rep.to_markdown()
    assert "The paired differences below are the fixed design's" in text and "not to decide it" in text
    assert "Fixed design's differences:" in md and "not to decide it" in md
    assert "over them hold" not in text + md


def test_the_bench_prints_every_configuration_of_a_tiny_design():
    spec = importlib.util.spec_from_file_location("bench_sequential", REPO / "bench" / "sequential.py")
    assert spec and spec.loader
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    d = bench.Design("tiny", (10,) * 10, 5, 0.7, diff=0.15)
    lines, bad = bench.two_arm_design("equal clusters", d, 20, 123, ("auto",))
    assert len(lines) == 2 and " auto:asym " in lines[0] and " fixed " in lines[1]
    assert all(isinstance(b, str) for b in bad)
    en = [float(x) for x in lines[0].split("|")[2].split()]  # EN at 0 (two nulls), 0.5x, 1x, 2x
    assert len(en) == 5 and all(math.isfinite(x) and 0 < x <= 2 for x in en)


@pytest.mark.slow  # 80 simulated benchmarks and two power plans; make test-slow
def test_the_claims_bench_counts_a_ran_through_fixed_result_apart_from_the_stop_s_decisions():
    spec = importlib.util.spec_from_file_location("bench_stop_claims", REPO / "bench" / "stop_claims.py")
    assert spec and spec.loader
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    d = bench.Design("tiny", (10,) * 10, 5, 0.7, diff=0.15)
    lines, bad = bench.cell(
        2, "equal clusters", d, 40, 5, keep="rank"
    )  # the tolerance's sequences cost seconds
    labels = ("rank, no margin ", "rank, margin ", "rank, margin, max n ")
    assert len(lines) == 3 and all(label in line for label, line in zip(labels, lines, strict=True))
    for line in lines:
        seq, through, _ = line.split("|")[1].split()
        old, _, now = (float(x) for x in line.split("|")[2].split())
        assert now == float(seq) <= old and 0.0 <= float(through) <= 1.0
    assert all(isinstance(b, str) for b in bad)


def _sym(threshold: float, rho: float):
    from hrbench.stats import _sequential_math as sm

    return sm, sm.Params("symmetric", math.log(threshold), rho=rho)


def _one_sided_by_hand(x: list[float], mu: float, rho: float, below: bool) -> float:
    """2 sum_{j: l_j on the side} q_j prod_c (1 + tanh(l_j (x_c - mu))), node by node."""
    nodes, weights = np.polynomial.hermite.hermgauss(80)
    total = 0.0
    for z, q in zip(nodes, weights, strict=True):
        lam = math.sqrt(2.0 / rho) * z
        if (lam < 0) != below:
            continue
        total += q / math.sqrt(math.pi) * math.prod(1.0 + math.tanh(lam * (xc - mu)) for xc in x)
    return 2.0 * total


def test_a_pair_is_settled_by_two_one_sided_tests_before_its_two_sided_sequence_lies_within_the_margin():
    # Schuirmann's two one-sided tests: each side at the whole alpha / pairs (one of them at most is true)
    sm, p = _sym(20.0, 0.0131)
    acc = sm.new_acc(p, (1,))
    xs = [0.06, -0.06, 0.05, -0.04] * 2
    for x in xs:
        sm.update(acc, p, np.array([x]), np.array([1.0]))
    lo, hi = sm.cs(acc, p)
    assert not (-0.1 < lo[0] and hi[0] < 0.1)  # the two-sided sequence still reaches past 0.1
    assert sm.within_margin(acc, p, 0.1, 0.05).tolist() == [True]
    assert sm.within_margin(acc, p, 0.1, 0.001).tolist() == [
        False
    ]  # the difference seen, 0.0025, is not that near
    assert sm.within_margin(acc, p, 0.1, 0.05, np.array([False])).tolist() == [False]
    by_hand = [_one_sided_by_hand(xs, mu, p.rho, below) for mu, below in ((0.1, True), (-0.1, False))]
    assert min(by_hand) >= 20.0
    low, high = sm.equivalence_bounds(acc, p)
    assert -0.1 < low[0] < sm.mean(acc)[0] < high[0] < 0.1
    # at each bound its one-sided test is at the threshold (bisection to 1e-9)
    assert _one_sided_by_hand(xs, float(high[0]), p.rho, True) == pytest.approx(20.0, rel=1e-4)
    assert _one_sided_by_hand(xs, float(low[0]), p.rho, False) == pytest.approx(20.0, rel=1e-4)
    # one cluster fewer: not yet
    short = sm.new_acc(p, (1,))
    for x in xs[:-1]:
        sm.update(short, p, np.array([x]), np.array([1.0]))
    assert sm.within_margin(short, p, 0.1, 0.05).tolist() == [False]
    assert min(_one_sided_by_hand(xs[:-1], mu, p.rho, b) for mu, b in ((0.1, True), (-0.1, False))) < 20.0


@pytest.mark.parametrize("shift", [0.0, 0.04])
def test_a_one_sided_test_at_the_margin_ever_rejects_a_difference_at_or_beyond_it_at_most_alpha(shift: float):
    # every one of the 2**12 sign patterns of differences symmetric about margin + shift, exactly
    sm, p = _sym(20.0, 0.05)
    m, n = 0.1, 12
    signs = np.array(list(np.ndindex(*(2,) * n))) * 2.0 - 1.0
    x = m + shift + 0.15 * signs
    ever = np.zeros(len(x), dtype=bool)
    for t in range(1, n + 1):
        acc = {"hx": x[:, :t], "hw": np.ones((len(x), t))}
        ever |= sm._side_log_e(acc, p, np.full((len(x), 1), m), -1.0)[:, 0] >= p.log_threshold
    assert 0.0 < ever.mean() <= 0.05  # it can reject (the bound is not vacuous), at most alpha of the time


def test_a_plan_for_several_pairs_settles_a_difference_seen_up_to_more_of_the_planned_one():
    # the planned difference less 1.40 of the plan's standard errors: half of it at alpha 0.05 and power
    # 0.8, 0.62 of it for 10 pairs at alpha 0.005; a pair seen at 0.033 of 0.06 is settled by the second only,
    # and only among several pairs: one pair of interest keeps margin / 3.5 whatever the plan
    two = hb.power(0.06, var_within=0.4, var_between=0.02, runs=5, items_per_cluster=10)
    ten = hb.power(0.06, alpha=0.005, var_within=0.4, var_between=0.02, runs=5, items_per_cluster=10)
    assert StopWhenSure(plan=two).near_for(3) == pytest.approx(0.03)
    assert StopWhenSure(plan=ten).near_for(10) == pytest.approx(0.0369, abs=1e-4)
    assert StopWhenSure(plan=ten).near_for(1) == pytest.approx(1.75 * 0.06 / 3.5)
    assert StopWhenSure(plan=ten, margin=0.07).near_for(10) == pytest.approx(0.02)  # a given margin: / 3.5
    assert StopWhenSure(plan=ten, margin=0).near_for(10) is None and StopWhenSure().near_for(10) is None

    def run(plan: object, arms: tuple[str, ...]) -> SequentialTest:
        rule = StopWhenSure(pairs=[("a", x) for x in arms[1:]], plan=plan, seed=2, max_clusters=400)
        ids = [f"c{i:03d}" for i in range(400)]
        test = rule.start(list(arms), dict.fromkeys(ids, 1))
        for i, c in enumerate(rule.cluster_order(ids)):
            d = 0.033 + (0.08 if i % 2 == 0 else -0.08)
            got = {"a": {c: 0.5 + d / 2}, "b": {c: 0.5 - d / 2}, "c": {c: 0.1 + (i % 3) / 10}}
            test.commit(c, {x: got[x] for x in arms})
            if test.stopped:
                break
        return test

    settled = run(ten, ("a", "b", "c")).summary()
    pair = settled["pairs"][0]
    assert settled["reason"] == "equivalent" and settled["pairs"][1]["decided"] == "a"
    assert pair["within_margin"] and pair["diff"] == pytest.approx(0.033)
    assert -settled["margin"] < pair["cs_low"] < pair["cs_high"] < settled["margin"]
    for held in (run(two, ("a", "b", "c")).summary(), run(ten, ("a", "b")).summary()):
        assert not held["pairs"][0]["within_margin"]  # never settled: run on until decided
        assert held["reason"] == "decided" and held["clusters"] > settled["clusters"]


def _main_rule_run(rule: StopWhenSure, stream: np.ndarray) -> tuple[list[bool], tuple[float, float]]:
    """Two arms, committed cluster by cluster: whether the pair is settled within the margin after each look,
    beside the two-sided rule recomputed on the confidence sequence itself; and the summary's
    confidence sequence after the last look (the one the caller reads)."""
    from hrbench.stats import _sequential_math as sm

    ids = [f"c{i:03d}" for i in range(len(stream))]
    test = rule.start(["a", "b"], dict.fromkeys(ids, 1))
    p, m = test.p, rule.margin_for()
    assert m is not None
    acc = sm.new_acc(p, (1,))
    got, want = [], []
    for n, (c, d) in enumerate(zip(rule.cluster_order(ids), stream, strict=False), start=1):
        test.commit(c, {"a": {c: 0.5 + d / 2}, "b": {c: 0.5 - d / 2}})
        sm.update(acc, p, np.array([d]), np.array([1.0]))
        lo, hi = (float(x[0]) for x in sm.cs(acc, p))
        mu = float(sm.mean(acc)[0])
        was = bool(got and got[-1])
        inside = (
            n >= rule.min_clusters and test.decided[0] is None and -m < lo and hi < m and abs(mu) <= m / 3.5
        )
        got.append(test.within[0])
        want.append(was or inside)
        if test.stopped:
            break
    assert got == want
    pair = test.summary()["pairs"][0]
    return got, (pair["cs_low"], pair["cs_high"])


@pytest.mark.parametrize("method", ["symmetric", "asymptotic", "exact"])
def test_two_arms_are_settled_only_when_the_two_sided_confidence_sequence_lies_within_the_margin(method: str):
    # settling the one pair ends the benchmark: the stricter two-sided rule, whatever the plan's alpha
    strict = hb.power(0.05, alpha=0.005, var_within=0.4, var_between=0.02, runs=5, items_per_cluster=10)
    settled = 0
    for seed in range(16):
        rng = np.random.default_rng(seed)
        rule = StopWhenSure(pairs=[("a", "b")], plan=strict if seed % 2 else plan(), seed=seed, method=method)
        truth = rng.choice([0.0, 0.01, 0.02, 0.03])
        stream = np.clip(truth + rng.normal(0.0, 0.1, 200), -1.0, 1.0)
        within, (lo, hi) = _main_rule_run(rule, stream)
        if within[-1]:
            settled += 1
            m = rule.margin_for()
            assert m is not None and -m < lo < hi < m  # the two-sided sequence it was settled on
    assert settled >= 6  # the rule is exercised, not only its absence
