"""The sequential test computes a pair's confidence sequence only when a rule reads it, with the same results.

Oracle: :class:`tests.unit.stats._sequential_oracle.FullRecompute`, the test recomputing every
pair's sequence over every cluster at every commit and summary. On random small designs (2, 3
and 5 arms, ties, clusters of unequal size, every method and goal) both give the same stop at
the same cluster, the same decisions, and the same summary and state, number for number, at
every look.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest

from hrbench.stats import SequentialTest
from hrbench.stats import _sequential_math as sm
from tests.unit.stats._sequential_oracle import FullRecompute, commit_all, item_means, random_design

pytestmark = pytest.mark.timeout(600)

SEED = int(os.environ.get("HRBENCH_ORACLE_SEED", "20261201"))


def _look(test: SequentialTest) -> dict[str, Any]:
    return {
        "stopped": test.stopped,
        "decided": list(test.decided),
        "precise": list(test.precise),
        "within": list(test.within),
        "frozen_cs": list(test.frozen_cs),
        "active": test.active_arms,
        "winner": test.winner,
        "summary": test.summary(),
        "state": test.state(),
    }


@pytest.mark.parametrize("case", range(60))
def test_the_incremental_test_decides_and_reports_as_the_full_recomputation(case: int) -> None:
    rng = np.random.default_rng([SEED, case])
    design = random_design(rng)
    rule, arms, sizes = design["rule"], design["arms"], design["sizes"]
    print(f"seed {SEED} case {case}: {len(arms)} arms, sizes {list(sizes.values())}, {rule}")
    fast, full = rule.start(arms, sizes), FullRecompute(rule, arms, sizes)
    looks_full: list[dict[str, Any]] = []
    done_full = commit_all(full, design, lambda t: looks_full.append(_look(t)))
    looks_fast: list[dict[str, Any]] = []
    done_fast = commit_all(fast, design, lambda t: looks_fast.append(_look(t)))
    assert done_fast == done_full
    assert len(looks_fast) == len(looks_full)
    for n, (got, want) in enumerate(zip(looks_fast, looks_full, strict=True), start=1):
        assert got == want, f"after {n} clusters"


def test_the_designs_cover_what_the_oracle_must_see() -> None:
    """The random designs hold 3 and 5 arms, ties, unequal clusters, every goal, and both stops and runs to the end."""
    seen: dict[str, set[Any]] = {"arms": set(), "goal": set(), "stopped": set(), "method": set()}
    ties = unequal = 0
    for case in range(60):
        design = random_design(np.random.default_rng([SEED, case]))
        rule, arms, sizes = design["rule"], design["arms"], design["sizes"]
        test = rule.start(arms, sizes)
        commit_all(test, design)
        seen["arms"].add(len(arms))
        seen["goal"].add(rule.goal)
        seen["stopped"].add(test.stopped)
        seen["method"].add(test.p.method)
        unequal += len(set(sizes.values())) > 1
        c = design["correct"]
        ties += any(
            all(c[(a, i, r)] == c[(b, i, r)] for (x, i, r) in c if x == a)
            for a, b in zip(arms, arms[1:], strict=False)
        )
    assert {2, 3, 5} <= seen["arms"]
    assert seen["goal"] == {"rank", "tolerance", "rank_or_tolerance", "full_run"}
    assert {"decided", "max_clusters"} <= seen["stopped"] and len(seen["stopped"]) >= 3
    assert {"symmetric", "exact", "asymptotic", "strict", "wor"} <= seen["method"]
    assert ties >= 5 and unequal >= 10


def test_a_resumed_test_reports_as_the_one_that_ran_on() -> None:
    """A test read back from its state (an empty cache) continues with the same numbers."""
    rng = np.random.default_rng([SEED, 999])
    for _ in range(8):
        design = random_design(rng)
        rule, arms, sizes = design["rule"], design["arms"], design["sizes"]
        whole = rule.start(arms, sizes)
        order = commit_all(whole, design)
        half = rule.start(arms, sizes)
        for cluster in order[: len(order) // 2]:
            half.commit(cluster, item_means(design, cluster, half.active_arms))
        back = SequentialTest.from_state(rule, half.state())
        assert back.summary() == half.summary()
        for cluster in order[len(order) // 2 :]:
            back.commit(cluster, item_means(design, cluster, back.active_arms))
        assert back.summary() == whole.summary() and back.state() == whole.state()


def test_a_rank_goal_computes_a_sequence_only_for_a_pair_it_decides(monkeypatch: pytest.MonkeyPatch) -> None:
    """Commits cost no sequence until a pair is decided: the symmetric one costs time in proportion to the clusters."""
    calls: list[int] = []
    real = sm.cs

    def counted(acc: sm.Acc, p: sm.Params) -> Any:
        calls.append(acc["t"].size)  # the pairs it was computed for
        return real(acc, p)

    monkeypatch.setattr(sm, "cs", counted)
    from hrbench.stats import StopWhenSure

    rule = StopWhenSure(seed=2)
    arms = ["a", "b", "c"]
    test = rule.start(arms, {f"c{i:02d}": 2 for i in range(40)})
    means = {"a": {"x": 1.0, "y": 1.0}, "b": {"x": 0.0, "y": 0.0}, "c": {"x": 0.5, "y": 0.5}}
    for cluster in rule.cluster_order(list(test.sizes)):
        test.commit(cluster, {k: v for k, v in means.items() if k in test.active_arms})
        if test.stopped:
            break
    assert test.stopped == "decided" and len(test.committed) > 3
    assert sum(calls) == 3  # one pair each, at its decision
    calls.clear()
    test.summary()
    assert calls == []  # every pair decided: their sequences as they stood
