"""Tests of hrbench.stats._sequential (stop when sure): exact e-values, order, elimination, resume, errors."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import hrbench as hb
from hrbench.errors import ConfigError
from hrbench.stats import SequentialTest, StopWhenSure


def _cluster(c: str, means: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    """item_means for one cluster: arm -> item id -> mean score."""
    return {arm: {f"{c}-{j}": y for j, y in enumerate(ys)} for arm, ys in means.items()}


def _noisy(
    rng: np.random.Generator, c: str, acc: dict[str, float], items: int = 10
) -> dict[str, dict[str, float]]:
    """One cluster of ``items`` items whose item means (5 runs) scatter around each arm's accuracy."""
    return _cluster(c, {a: list(rng.binomial(5, p, items) / 5) for a, p in acc.items()})


def _by_hand_rho(n_clusters: int, pairs: int = 1, alpha: float = 0.05) -> float:
    # without a plan: cluster differences of sd 0.1, the boundary tightest at every cluster run
    c = math.log(pairs / alpha)
    return n_clusters * 0.01 / (2 * c + math.log(1 + 2 * c))


def test_log_e_is_the_normal_mixture_of_the_weighted_cluster_differences_by_hand():
    # clusters of 1 and 3 items (mean size 2: weights 0.5 and 1.5), then of 2 and 2 (weights 1)
    sizes = {"k1": 1, "k2": 3, "k3": 2, "k4": 2}
    test = StopWhenSure(pairs=[("a", "b")], method="exact").start(["a", "b"], sizes)
    rho = _by_hand_rho(4)
    assert test.p.rho == pytest.approx(rho, rel=1e-12)
    commits = [
        ("k1", {"a": [1.0], "b": [0.6]}),  # D = 0.4, w = 0.5
        ("k2", {"a": [0.8, 0.6, 0.4], "b": [0.8, 0.8, 0.8]}),  # D = -0.2, w = 1.5
        ("k3", {"a": [1.0, 0.8], "b": [0.6, 0.6]}),  # D = 0.3, w = 1
    ]
    s = v = 0.0
    best = -math.inf
    for (c, means), (w, d) in zip(commits, [(0.5, 0.4), (1.5, -0.2), (1.0, 0.3)], strict=True):
        test.commit(c, _cluster(c, means))
        s += w * d
        v += (w * d) ** 2
        log_e = 0.5 * math.log(rho / (v + rho)) + s**2 / (2 * (v + rho))
        best = max(best, log_e)
        pair = test.summary()["pairs"][0]
        assert pair["e_value"] == pytest.approx(math.exp(log_e), rel=1e-9)
        assert pair["p_anytime"] == pytest.approx(min(1.0, math.exp(-best)), rel=1e-9)
        assert pair["diff"] == pytest.approx({"k1": 0.4, "k2": -0.05, "k3": 0.2 / 3}[c], abs=1e-12)
    assert (s, v) == (pytest.approx(0.2), pytest.approx(0.04 + 0.09 + 0.09))
    assert test.stopped is None and test.summary()["clusters"] == 3


def test_a_clear_winner_is_decided_early_with_a_confidence_sequence_that_holds_it():
    rule = StopWhenSure(pairs=[("new", "base")], seed=3)
    ids = [f"c{i}" for i in range(60)]
    test = rule.start(["new", "base"], dict.fromkeys(ids, 10))
    rng = np.random.default_rng(0)
    for c in rule.cluster_order(ids):
        test.commit(c, _noisy(rng, c, {"new": 0.8, "base": 0.5}))
        if test.stopped:
            break
    out = test.summary()
    assert out["reason"] == "decided" and out["winner"] == "new" and 2 <= out["clusters"] < 30
    pair = out["pairs"][0]
    assert pair["decided"] == "new" and pair["e_value"] >= 20 and pair["p_anytime"] <= 0.05
    assert 0 < pair["cs_low"] <= pair["diff"] <= pair["cs_high"]
    assert out["estimand"] == "clusters like these" and out["of"] == 60
    assert test.active_arms == ()
    with pytest.raises(ConfigError, match="already stopped"):
        test.commit(rule.cluster_order(ids)[-1], {})


def test_order_is_the_same_for_a_seed_whatever_the_listing_and_differs_across_seeds():
    ids = [f"cluster-{i}" for i in range(30)]
    a = StopWhenSure(seed=7).cluster_order(ids)
    assert a == StopWhenSure(seed=7).cluster_order(list(reversed(ids)))
    assert sorted(a) == sorted(ids)
    assert a != StopWhenSure(seed=8).cluster_order(ids)
    assert a != sorted(ids)
    assert StopWhenSure(seed=0).cluster_order(["x", "y", "z", "w"]) == StopWhenSure(seed=0).cluster_order(
        ["w", "z", "y", "x"]
    )


def test_an_arm_decided_worse_on_every_pair_stops_being_run_and_the_rest_go_on():
    rule = StopWhenSure(seed=1)  # every pair of three arms; alpha split three ways
    ids = [f"c{i}" for i in range(80)]
    test = rule.start(["a", "b", "c"], dict.fromkeys(ids, 10))
    assert test.p.log_threshold == pytest.approx(math.log(3 / 0.05))
    rng = np.random.default_rng(5)
    acc = {"a": 0.75, "b": 0.6, "c": 0.05}
    dropped_at = None
    for c in rule.cluster_order(ids):
        test.commit(c, _noisy(rng, c, {arm: acc[arm] for arm in test.active_arms}))
        if dropped_at is None and test.active_arms == ("a", "b"):
            dropped_at = len(test.committed)
        if test.stopped:
            break
    assert dropped_at is not None and dropped_at < len(test.committed)
    out = test.summary()
    assert out["reason"] == "decided" and out["winner"] == "a"
    assert [p["decided"] for p in out["pairs"]] == ["a", "a", "b"]


def test_best_arm_stops_once_one_arm_beats_every_other_though_the_others_are_undecided():
    rule = StopWhenSure(seed=2, best_arm=True)
    ids = [f"c{i}" for i in range(80)]
    test = rule.start(["a", "b", "c"], dict.fromkeys(ids, 10))
    rng = np.random.default_rng(9)
    for c in rule.cluster_order(ids):
        test.commit(c, _noisy(rng, c, {arm: {"a": 0.9, "b": 0.4, "c": 0.4}[arm] for arm in test.active_arms}))
        if test.stopped:
            break
    out = test.summary()
    assert out["reason"] == "decided" and out["winner"] == "a" and out["clusters"] < 80
    assert out["pairs"][2]["decided"] is None  # b vs c: not needed to name the best arm


@pytest.mark.parametrize("method", ["exact", "symmetric", "asymptotic", "strict"])
def test_resuming_from_state_gives_the_e_values_of_an_uninterrupted_run(method):
    rule = StopWhenSure(method=method, seed=4, max_clusters=12)
    ids = [f"c{i}" for i in range(20)]
    sizes = {c: 5 + (i % 3) for i, c in enumerate(ids)}
    rng = np.random.default_rng(11)
    data = {c: _noisy(rng, c, {"x": 0.62, "y": 0.55}, items=sizes[c]) for c in ids}
    order = rule.cluster_order(ids)
    whole = rule.start(["x", "y"], sizes)
    part = rule.start(["x", "y"], sizes)
    for c in order[:5]:
        whole.commit(c, data[c])
        part.commit(c, data[c])
    resumed = SequentialTest.from_state(rule, json.loads(json.dumps(part.state())))
    for c in order[5:12]:
        whole.commit(c, data[c])
        resumed.commit(c, data[c])
    assert resumed.summary() == whole.summary()
    assert resumed.stopped == whole.stopped == "max_clusters" and resumed.summary()["clusters"] == 12


def test_a_damaged_state_is_refused_naming_it():
    rule = StopWhenSure()
    state = rule.start(["x", "y"], {"c1": 2, "c2": 2}).state()
    with pytest.raises(ConfigError, match=r"^state:"):
        SequentialTest.from_state(rule, {k: v for k, v in state.items() if k != "acc"})
    with pytest.raises(ConfigError, match=r"^state\.version:"):
        SequentialTest.from_state(rule, {**state, "version": 99})


@pytest.mark.parametrize(
    ("settings", "field"),
    [
        ({"goal": "cheapest"}, "goal"),
        ({"method": "bayes"}, "method"),
        ({"alpha": 1.5}, "alpha"),
        ({"alpha": 0}, "alpha"),
        ({"goal": "tolerance"}, "tolerance"),
        ({"goal": "rank_or_tolerance", "tolerance": -0.1}, "tolerance"),
        ({"max_clusters": 0}, "max_clusters"),
        ({"max_clusters": 2.5}, "max_clusters"),
        ({"min_clusters": 0}, "min_clusters"),
        ({"min_clusters": 5, "max_clusters": 3}, "max_clusters"),
        ({"seed": "x"}, "seed"),
        ({"plan": {"diff": 0.03}}, "plan"),
        ({"pairs": [("a",)]}, "pairs"),
    ],
)
def test_bad_settings_are_refused_naming_the_field(settings, field):
    with pytest.raises(ConfigError) as e:
        StopWhenSure(**settings)
    assert e.value.field == field and str(e.value).startswith(f"{field}:")


def test_a_rule_that_does_not_fit_the_benchmark_is_refused_naming_the_field():
    sizes = {"c1": 3, "c2": 3, "c3": 3}
    for rule, arms, field in [
        (StopWhenSure(pairs=[("a", "z")]), ["a", "b"], "pairs"),
        (StopWhenSure(pairs=[("a", "a")]), ["a", "b"], "pairs"),
        (StopWhenSure(pairs=[("a", "b"), ("b", "a")]), ["a", "b"], "pairs"),
        (StopWhenSure(), ["a"], "arms"),
        (StopWhenSure(min_clusters=4), ["a", "b"], "min_clusters"),
    ]:
        with pytest.raises(ConfigError) as e:
            rule.start(arms, sizes)
        assert e.value.field == field
    test = StopWhenSure().start(["a", "b"], sizes)
    with pytest.raises(ConfigError, match=r"^cluster: is not one"):
        test.commit("c9", {})
    with pytest.raises(ConfigError, match=r"item_means\['a'\]\['c1-0'\]: must be a mean score in \[0, 1\]"):
        test.commit("c1", _cluster("c1", {"a": [1.5], "b": [0.5]}))
    test.commit("c2", _cluster("c2", {"a": [1.0], "b": [0.5]}))
    with pytest.raises(ConfigError, match=r"^cluster: was already committed"):
        test.commit("c2", _cluster("c2", {"a": [1.0], "b": [0.5]}))


def test_the_tolerance_goal_stops_once_the_confidence_sequence_is_narrow_enough():
    rule = StopWhenSure(goal="tolerance", tolerance=0.08, seed=5)
    ids = [f"c{i}" for i in range(200)]
    test = rule.start(["a", "b"], dict.fromkeys(ids, 10))
    rng = np.random.default_rng(2)
    for c in rule.cluster_order(ids):
        test.commit(c, _noisy(rng, c, {"a": 0.6, "b": 0.6}))
        if test.stopped:
            break
    out = test.summary()
    pair = out["pairs"][0]
    assert out["reason"] == "tolerance" and 2 < out["clusters"] < 200
    assert pair["cs_high"] - pair["cs_low"] <= 0.16 and pair["cs_low"] <= 0.0 <= pair["cs_high"]
    assert pair["decided"] is None


def test_max_clusters_stops_two_equal_arms_and_defaults_to_twice_the_plan():
    rule = StopWhenSure(max_clusters=6, seed=1)
    ids = [f"c{i}" for i in range(30)]
    test = rule.start(["a", "b"], dict.fromkeys(ids, 10))
    rng = np.random.default_rng(3)
    for c in rule.cluster_order(ids):
        test.commit(c, _noisy(rng, c, {"a": 0.5, "b": 0.5}))
        if test.stopped:
            break
    out = test.summary()
    assert (out["reason"], out["clusters"], out["of"], out["winner"]) == ("max_clusters", 6, 6, None)
    plan = hb.power(0.1, var_within=0.4, var_between=0.02, runs=5, items_per_cluster=10)
    assert StopWhenSure(plan=plan).limit(1000) == 2 * plan.n_clusters
    assert StopWhenSure(plan=plan).limit(5) == 5  # never more than the reference holds
    assert StopWhenSure().limit(40) == 40


def test_full_run_ends_on_the_reference_s_own_difference_and_its_sequence_holds_it_throughout():
    rule = StopWhenSure(goal="full_run", seed=6)
    ids = [f"c{i}" for i in range(12)]
    sizes = {c: 2 + i % 4 for i, c in enumerate(ids)}
    rng = np.random.default_rng(4)
    data = {c: _noisy(rng, c, {"a": 0.55, "b": 0.5}, items=sizes[c]) for c in ids}
    diffs = [data[c]["a"][i] - data[c]["b"][i] for c in ids for i in data[c]["a"]]
    truth = float(np.mean(diffs))  # the finite reference's item-weighted difference
    test = rule.start(["a", "b"], sizes)
    for c in rule.cluster_order(ids):
        test.commit(c, data[c])
        pair = test.summary()["pairs"][0]
        assert pair["cs_low"] - 1e-9 <= truth <= pair["cs_high"] + 1e-9
        if test.stopped:
            break
    out = test.summary()
    assert out["estimand"] == "about this reference only" and out["clusters"] == 12
    pair = out["pairs"][0]
    assert pair["cs_low"] == pytest.approx(truth, abs=1e-12) and pair["cs_high"] == pytest.approx(
        truth, abs=1e-12
    )
    assert pair["decided"] == ("a" if truth > 0 else "b")


def test_best_arm_follows_a_chain_of_decisions_to_the_unbeaten_arm():
    rule = StopWhenSure(seed=2, best_arm=True, min_clusters=1)
    ids = [f"c{i}" for i in range(80)]
    test = rule.start(["a", "b", "c"], dict.fromkeys(ids, 10))
    rng = np.random.default_rng(1)
    order = iter(rule.cluster_order(ids))
    while test.summary()["pairs"][0]["decided"] is None:  # a vs b first: only they run
        c = next(order)
        test.commit(c, _noisy(rng, c, {"a": 0.7, "b": 0.2}))
    assert test.active_arms == ("a", "c") and test.winner is None
    while not test.stopped:  # then c beats a; b vs c is never decided
        c = next(order)
        test.commit(c, _noisy(rng, c, {"a": 0.5, "c": 0.95}))
    assert (test.stopped, test.winner) == ("decided", "c")
    assert [p["decided"] for p in test.summary()["pairs"]] == ["a", "c", None]


def test_the_tolerance_goal_keeps_running_a_decided_pair_until_it_is_precise():
    rule = StopWhenSure(goal="tolerance", tolerance=0.06, seed=8)
    ids = [f"c{i}" for i in range(300)]
    test = rule.start(["a", "b"], dict.fromkeys(ids, 10))
    rng = np.random.default_rng(6)
    decided_at = None
    for c in rule.cluster_order(ids):
        test.commit(c, _noisy(rng, c, {"a": 0.8, "b": 0.4}))
        if decided_at is None and test.summary()["pairs"][0]["decided"] == "a":
            decided_at = len(test.committed)
        if test.stopped:
            break
    pair = test.summary()["pairs"][0]
    assert test.stopped == "tolerance" and decided_at is not None and decided_at < len(test.committed)
    assert pair["cs_high"] - pair["cs_low"] <= 0.12 and pair["cs_low"] <= 0.4 <= pair["cs_high"] + 0.05


def test_the_symmetric_e_value_is_the_mixture_of_cosh_bets_and_at_least_the_exact_one():
    from scipy import integrate
    from scipy.special import expit

    sizes = dict.fromkeys(["k1", "k2", "k3", "k4"], 2)
    rule = StopWhenSure(method="symmetric", pairs=[("a", "b")])
    exact = StopWhenSure(pairs=[("a", "b")], method="exact").start(["a", "b"], sizes)
    test = rule.start(["a", "b"], sizes)
    rho = _by_hand_rho(4)
    xs: list[float] = []
    for c, (ya, yb) in zip(
        ["k1", "k2", "k3"],
        [([1.0, 0.8], [0.4, 0.6]), ([0.6, 0.6], [0.8, 0.6]), ([1.0, 1.0], [0.6, 0.8])],
        strict=True,
    ):
        means = _cluster(c, {"a": ya, "b": yb})
        test.commit(c, means)
        exact.commit(c, means)
        xs.append(float(np.mean(ya) - np.mean(yb)))

        def bet(lam: float) -> float:  # exp(l x) / cosh(l x) = 2 expit(2 l x); lambda ~ N(0, 1 / rho)
            prior = math.sqrt(rho / (2 * math.pi)) * math.exp(-rho * lam * lam / 2)
            return math.prod(2 * float(expit(2 * lam * x)) for x in xs) * prior

        edge = 40 / math.sqrt(rho)
        by_hand = integrate.quad(bet, -edge, edge, epsabs=1e-12, limit=200)[0]
        nodes, weights = np.polynomial.hermite.hermgauss(80)  # the prior at 80 nodes: a discrete mixture
        discrete = sum(
            q
            / math.sqrt(math.pi)
            * bet(math.sqrt(2 / rho) * z)
            / (math.sqrt(rho / (2 * math.pi)) * math.exp(-z * z))
            for z, q in zip(nodes, weights, strict=True)
        )
        got = test.summary()["pairs"][0]["e_value"]
        assert got == pytest.approx(discrete, rel=1e-9)
        assert got == pytest.approx(by_hand, rel=0.02)  # close to the continuous normal mixture
        assert got >= exact.summary()["pairs"][0]["e_value"]
    assert xs == pytest.approx([0.4, -0.1, 0.3])


def _symmetric_log_e_by_hand(xs: list[float], rho: float, mu: float) -> float:
    """log of the 80-node mixture of prod exp(l (x - mu)) / cosh(l (x - mu)), every weight 1."""
    from scipy.special import logsumexp

    nodes, weights = np.polynomial.hermite.hermgauss(80)
    lam = math.sqrt(2 / rho) * nodes
    terms = [sum(math.log(2.0) - float(np.logaddexp(0.0, -2 * b * (x - mu))) for x in xs) for b in lam]
    return float(logsumexp(np.array(terms) + np.log(weights / math.sqrt(math.pi))))


def test_the_symmetric_confidence_sequence_inverts_its_own_e_process_and_excludes_0_once_decided():
    ids = [f"c{i}" for i in range(40)]
    rule = StopWhenSure(method="symmetric", pairs=[("new", "base")], seed=2)
    test = rule.start(["new", "base"], dict.fromkeys(ids, 10))
    rng = np.random.default_rng(11)
    xs: list[float] = []
    for c in rule.cluster_order(ids):
        means = _noisy(rng, c, {"new": 0.75, "base": 0.55})
        test.commit(c, means)
        xs.append(float(np.mean(list(means["new"].values())) - np.mean(list(means["base"].values()))))
        if test.stopped:
            break
    pair = test.summary()["pairs"][0]
    assert test.stopped == "decided" and pair["decided"] == "new"
    assert 0 < pair["cs_low"] < pair["diff"] < pair["cs_high"]  # a decided pair's sequence excludes 0
    c = test.p.log_threshold
    # each end is where the e-process against that difference reaches the threshold, by hand
    for end, inside in ((pair["cs_low"], pair["cs_low"] + 1e-3), (pair["cs_high"], pair["cs_high"] - 1e-3)):
        assert _symmetric_log_e_by_hand(xs, test.p.rho, end) == pytest.approx(c, abs=1e-3)
        assert _symmetric_log_e_by_hand(xs, test.p.rho, inside) < c
    assert _symmetric_log_e_by_hand(xs, test.p.rho, 0.0) >= c
    # the exact method's sequence on the same clusters is another one: this is not it
    exact = StopWhenSure(method="exact", pairs=[("new", "base")], seed=2).start(
        ["new", "base"], dict.fromkeys(ids, 10)
    )
    exact.acc = {k: v.copy() for k, v in test.acc.items() if k not in ("lk", "hx", "hw")}
    from hrbench.stats import _sequential_math as sm

    lo_exact, _ = sm.cs(exact.acc, exact.p)
    assert abs(float(lo_exact[0]) - pair["cs_low"]) > 1e-3


def test_auto_picks_only_a_test_valid_on_the_design_and_an_asked_one_outside_its_validity_warns():
    many = StopWhenSure(pairs=[("a", "b")]).start(["a", "b"], {f"c{i}": 5 for i in range(40)})
    few = StopWhenSure(pairs=[("a", "b")]).start(["a", "b"], {f"c{i}": 5 for i in range(20)})
    assert (many.p.method, few.p.method) == ("symmetric", "asymptotic")
    assert many.summary()["method"] == "symmetric" and many.summary()["method_asked"] == "auto"
    # clusters of unequal size: the asymptotic sequence does not hold its alpha there, so auto
    # keeps the symmetric test however small the plan, and asking for it warns
    uneven = {f"c{i}": (1 if i % 2 else 30) for i in range(20)}
    assert StopWhenSure(pairs=[("a", "b")]).start(["a", "b"], uneven).p.method == "symmetric"
    said = StopWhenSure(method="asymptotic").validity_warning(1, 20, list(uneven.values()))
    assert said is not None and "count as 10.7 of 20" in said
    assert StopWhenSure().validity_warning(1, 20, list(uneven.values())) is None  # auto: nothing to warn of
    assert StopWhenSure(method="asymptotic").validity_warning(1, 20, [5] * 20) is None
    # with a plan, its clusters decide: 13 or more for one pair at 0.05 (2.5 times the 5 it needs)
    plan = hb.power(0.05, var_within=0.4, var_between=0.02, runs=5, items_per_cluster=10)
    assert plan.n_clusters >= 13 and StopWhenSure(plan=plan).resolved_method(1, 1000) == "symmetric"
    # three pairs at 0.05: the symmetric test needs 6 clusters, so 15 planned
    assert StopWhenSure(max_clusters=28).resolved_method(3, 100) == "asymptotic"
    assert StopWhenSure(max_clusters=30).resolved_method(3, 100) == "symmetric"
    assert StopWhenSure(method="exact").resolved_method(1, 4) == "exact"
    # the choice is stored with the state: a resume under another max_clusters keeps it
    part = StopWhenSure(pairs=[("a", "b")], max_clusters=4).start(["a", "b"], {f"c{i}": 5 for i in range(40)})
    assert part.p.method == "asymptotic"
    state = json.loads(json.dumps(part.state()))
    back = SequentialTest.from_state(StopWhenSure(pairs=[("a", "b")]), state)
    assert back.p.method == "asymptotic"
    with pytest.raises(ConfigError, match="state"):
        SequentialTest.from_state(StopWhenSure(pairs=[("a", "b")]), {**state, "method": "magic"})


def test_states_saved_before_the_symmetric_history_and_the_disagreement_count_still_resume():
    ids = [f"c{i}" for i in range(30)]
    rule = StopWhenSure(method="symmetric", pairs=[("a", "b")], seed=4)
    test = rule.start(["a", "b"], dict.fromkeys(ids, 10))
    rng = np.random.default_rng(5)
    for c in rule.cluster_order(ids)[:8]:
        test.commit(c, _noisy(rng, c, {"a": 0.7, "b": 0.6}))
    state = json.loads(json.dumps(test.state()))
    old = {**state, "acc": {k: v for k, v in state["acc"].items() if k not in ("hx", "hw", "nz")}}
    old.pop("method")
    back = SequentialTest.from_state(rule, old)
    assert back.summary()["pairs"][0]["e_value"] == pytest.approx(test.summary()["pairs"][0]["e_value"])
    assert back.acc["nz"].tolist() == back.acc["t"].tolist()  # every cluster counted, as before
    lo, hi = back.summary()["pairs"][0]["cs_low"], back.summary()["pairs"][0]["cs_high"]
    assert lo < back.summary()["pairs"][0]["diff"] < hi  # the exact method's sequence, as it was then
    nxt = rule.cluster_order(ids)[8]
    back.commit(nxt, _noisy(rng, nxt, {"a": 0.7, "b": 0.6}))  # and it continues
    assert len(back.committed) == 9


def test_the_step_down_takes_the_least_mean_e_value_over_every_set_of_pairs_holding_a_pair():
    import itertools

    from hrbench.stats._sequential_math import closed_log_e

    rng = np.random.default_rng(20261207)
    for _ in range(200):
        k = int(rng.integers(1, 7))
        le = rng.normal(0.0, 3.0, k)
        le[int(rng.integers(k))] = le[0]  # ties too
        by_hand = [
            min(
                math.log(np.mean(np.exp(le[[j, *others]])))
                for r in range(k)
                for others in itertools.combinations([i for i in range(k) if i != j], r)
            )
            for j in range(k)
        ]
        assert closed_log_e(le) == pytest.approx(by_hand)
        assert closed_log_e(np.stack([le, le]))[1] == pytest.approx(by_hand)  # leading axes: benchmarks


def test_with_three_arms_a_pair_is_decided_by_the_step_down_before_its_own_e_value_reaches_pairs_over_alpha():
    # a far ahead of b and c, which are equal: once (a, b) or (a, c) is far from 0, the other needs
    # its mean with (b, c) at 1 / alpha, not its own e-value at 3 / alpha
    rule = StopWhenSure(seed=3, method="exact")
    ids = [f"c{i}" for i in range(80)]
    test = rule.start(["a", "b", "c"], dict.fromkeys(ids, 10))
    rng = np.random.default_rng(4)
    for c in rule.cluster_order(ids):
        test.commit(
            c, _noisy(rng, c, {arm: {"a": 0.85, "b": 0.55, "c": 0.55}[arm] for arm in test.active_arms})
        )
        if test.pairs and all(x is not None for x in test.decided[:2]):
            break
    pairs = test.summary()["pairs"]
    assert [p["decided"] for p in pairs[:2]] == ["a", "a"] and pairs[2]["decided"] is None
    assert min(pairs[0]["e_value"], pairs[1]["e_value"]) < 3 / 0.05  # decided below the split threshold
    bc = pairs[2]["e_value"]
    assert (
        min(pairs[0]["e_value"], pairs[1]["e_value"]) + bc
    ) / 2 >= 1 / 0.05  # every set holding it at 1 / alpha


def test_the_numpy_logsumexp_is_scipys_to_the_last_bit():
    from scipy.special import logsumexp as scipy_logsumexp

    from hrbench.stats._sequential_math import logsumexp

    rng = np.random.default_rng(5)
    for shape in [(1,), (5,), (3, 7), (2, 4, 20), (400, 33)]:
        for scale in (1e-3, 1.0, 30.0, 700.0):
            a = rng.normal(0.0, scale, shape)
            a[..., -1] = a[..., 0]  # ties at the maximum are kept out of the sum as scipy keeps them
            assert np.array_equal(logsumexp(a), np.asarray(scipy_logsumexp(a, axis=-1)))
    edges = np.array([[-np.inf, -np.inf], [np.inf, 1.0], [1.0, 1.0], [800.0, 800.0], [-np.inf, 2.0]])
    assert np.array_equal(logsumexp(edges), scipy_logsumexp(edges, axis=-1))
