"""The oracle for the sequential test's plumbing: every confidence sequence recomputed at every look.

:class:`FullRecompute` is :class:`~hrbench.stats.SequentialTest` deciding and reporting as it
did when each commit and each summary ran :func:`~hrbench.stats._sequential_math.cs` over every
pair and every cluster committed so far; the shipped test computes a pair's sequence only when
a rule reads it, once per commit. Both must give the same stops, decisions and numbers.
:func:`random_design` draws small designs (2 to 5 arms, ties, clusters of unequal size) and
:func:`commit_all` runs a test through one.
"""

from __future__ import annotations

import math
import types
from collections.abc import Mapping
from typing import Any

import numpy as np

from hrbench.stats import SequentialTest, StopWhenSure
from hrbench.stats import _sequential_math as sm

_NEAR = 3.5


class FullRecompute(SequentialTest):
    """The sequential test with every sequence computed over all pairs at every commit and summary."""

    def _settle(self) -> None:
        n = len(self.committed)
        lo, hi = sm.cs(self.acc, self.p)
        mu = sm.mean(self.acc)
        whole = self.p.method == "wor" and n >= len(self.sizes)
        tol = self.rule.tolerance
        sure_now = sm.sure_closed(self.acc, self.p, n, self.rule.min_clusters)
        for j in range(len(self.pairs)):
            if self._settled(j):
                continue
            sure = bool(sure_now[j])
            if whole:
                lo[j] = hi[j] = mu[j]
                sure = mu[j] != 0
            if sure and mu[j] != 0 and self.decided[j] is None:
                self.decided[j] = self.pairs[j][0] if mu[j] > 0 else self.pairs[j][1]
                if self.rule.goal != "tolerance":
                    self.frozen_cs[j] = (float(lo[j]), float(hi[j]))
            if tol is not None and n >= self.rule.min_clusters and hi[j] - lo[j] <= 2 * tol + 1e-12:
                self.precise[j] = True
                self.frozen_cs[j] = (float(lo[j]), float(hi[j]))
            if self._full_inside(j, n, float(lo[j]), float(hi[j]), float(mu[j])):
                self.within[j] = True
                self.frozen_cs[j] = (float(lo[j]), float(hi[j]))
        self._stopped = self._reason(n)

    def _full_inside(self, j: int, n: int, lo: float, hi: float, mu: float) -> bool:
        m = self.margin
        if m is None or self.decided[j] is not None or self.within[j] or n < self.rule.min_clusters:
            return False
        return -m < lo and hi < m and abs(mu) <= m / _NEAR

    def summary(self) -> dict[str, Any]:
        log_e = sm.log_e(self.acc, self.p)
        lo, hi = sm.cs(self.acc, self.p)
        mu = sm.mean(self.acc)
        whole = self.p.method == "wor" and len(self.committed) >= len(self.sizes)
        pairs = []
        for j, (a, b) in enumerate(self.pairs):
            low, high = self.frozen_cs[j] or ((float(mu[j]),) * 2 if whole else (float(lo[j]), float(hi[j])))
            pairs.append(
                {
                    "a": a,
                    "b": b,
                    "e_value": float(math.exp(min(float(log_e[j]), 700.0))),
                    "p_anytime": float(min(1.0, math.exp(-float(self.acc["max_log_e"][j])))),
                    "diff": float(mu[j]),
                    "cs_low": low,
                    "cs_high": high,
                    "decided": self.decided[j],
                    "within_margin": self.within[j],
                }
            )
        out = dict(super().summary())
        out["pairs"] = pairs
        return out


def random_design(rng: np.random.Generator) -> dict[str, Any]:
    """A small random design: arms, clusters of unequal size, runs, each run right or wrong, and a rule.

    Returns ``arms``, ``sizes`` (cluster -> items), ``runs``, ``correct`` ((arm, item, run) ->
    bool; some arms tie, copying another's runs), ``cluster_of`` (item -> cluster) and ``rule``.
    """
    n_arms = int(rng.choice([2, 3, 5]))
    arms = [f"arm{i}" for i in range(n_arms)]
    n_clusters = int(rng.integers(6, 26))
    sizes = {f"c{c:02d}": int(rng.integers(1, 6)) for c in range(n_clusters)}
    if rng.random() < 0.5:
        sizes = dict.fromkeys(sizes, int(rng.integers(1, 4)))
    runs = int(rng.integers(1, 4))
    items = [(c, f"{c}-i{k}") for c, m in sizes.items() for k in range(m)]
    acc = {a: float(rng.choice([0.3, 0.5, 0.5, 0.7, 0.95])) for a in arms}
    correct: dict[tuple[str, str, int], bool] = {}
    for i, a in enumerate(arms):
        copy = arms[i - 1] if i and rng.random() < 0.3 else None  # a tie: the same runs as the arm before
        for _, item in items:
            for run in range(1, runs + 1):
                correct[(a, item, run)] = correct[(copy, item, run)] if copy else bool(rng.random() < acc[a])
    goal = str(rng.choice(["rank", "rank", "tolerance", "rank_or_tolerance", "full_run"]))
    kw: dict[str, Any] = {
        "goal": goal,
        "seed": int(rng.integers(0, 1000)),
        "alpha": float(rng.choice([0.05, 0.2])),
    }
    if goal != "full_run":
        kw["method"] = str(rng.choice(["auto", "symmetric", "exact", "asymptotic", "strict"]))
    if goal in ("tolerance", "rank_or_tolerance"):
        kw["tolerance"] = float(rng.choice([0.1, 0.2, 0.3]))
    if goal in ("rank", "rank_or_tolerance") and rng.random() < 0.5:
        kw["plan"] = types.SimpleNamespace(
            diff=0.1,
            var_within=0.2,
            var_between=0.02,
            var_cluster=0.0,
            runs=runs,
            items_per_cluster=2,
            n_clusters=max(2, n_clusters // 2),
            power=0.8,
        )
    if rng.random() < 0.3:
        kw["best_arm"] = True
    if rng.random() < 0.3 and n_arms > 2:
        kw["pairs"] = [(arms[0], arms[1]), (arms[0], arms[-1])]
    return {
        "arms": arms,
        "sizes": sizes,
        "runs": runs,
        "correct": correct,
        "cluster_of": {item: c for c, item in items},
        "rule": StopWhenSure(**kw),
    }


def item_means(design: Mapping[str, Any], cluster: str, arms: Any) -> dict[str, dict[str, float]]:
    """Per arm in ``arms``, per item of ``cluster``: its mean of ``correct`` over the runs."""
    runs = design["runs"]
    items = [i for i, c in design["cluster_of"].items() if c == cluster]
    return {
        a: {i: sum(design["correct"][(a, i, r)] for r in range(1, runs + 1)) / runs for i in items}
        for a in arms
    }


def commit_all(test: SequentialTest, design: Mapping[str, Any], look: Any = None) -> list[str]:
    """Commit the design's clusters in the rule's order until the test stops; ``look(test)`` after each.

    Only the arms still active are committed, as the runner runs only those. Returns the
    clusters committed.
    """
    rule, sizes = design["rule"], design["sizes"]
    done: list[str] = []
    for cluster in rule.cluster_order(list(sizes), sizes)[: test.max_clusters]:
        test.commit(cluster, item_means(design, cluster, test.active_arms))
        done.append(cluster)
        if look is not None:
            look(test)
        if test.stopped is not None:
            break
    return done
