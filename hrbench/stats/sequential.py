"""Stop when sure: an anytime-valid sequential comparison of arms, cluster by cluster.

A benchmark normally runs every cluster of its reference. With a :class:`StopWhenSure` rule the
runner takes the clusters in a seeded random order, commits each finished cluster (in that
order) to a :class:`SequentialTest`, and stops as soon as the question is answered: which arm
is better (``goal="rank"``), how big the difference is to within a tolerance
(``goal="tolerance"``), either (``"rank_or_tolerance"``), or whether running the rest of the
reference could change the answer (``goal="full_run"``). The guarantee survives looking after
every cluster: whenever the benchmark stops, the chance that it declared a difference between
two arms that are equally good is at most ``alpha`` (split over the pairs), and every confidence
sequence holds at all looks at once with probability ``1 - alpha``.

The estimand is the mean difference over clusters like these: the reference's clusters are
treated as draws from a larger population of clusters (item-weighted: each cluster weighs by its
size). ``goal="full_run"`` is about this reference only: the difference a full run of every
cluster would show.

The test (``method="exact"``, the default). After each committed cluster ``c`` and for each
pair ``(a, b)``: ``D_c`` is the cluster's mean over items of ``y_a - y_b`` (each ``y`` the mean
of ``correct`` over the item's runs), ``w_c`` the cluster's size over the reference's mean
cluster size (known before the cluster runs: a predictable weight), ``S += w D``,
``V += w**2 D**2``, and::

    log E = 1/2 log(rho / (V + rho)) + S**2 / (2 (V + rho))

the normal mixture (over the bet ``lambda ~ N(0, 1/rho)``) of de la Pena's self-normalised
supermartingale ``exp(lambda S - lambda**2 V / 2)`` (de la Pena 1999, "A general class of
exponential inequalities for martingales and ratios", Ann. Probab. 27), valid for any
distribution of the cluster differences that is symmetric under "no difference", which arms that
are equally good (or differ cluster by cluster with no average difference) give. ``E`` is an
e-process: Ville's inequality bounds by ``alpha / pairs`` the chance it ever reaches
``pairs / alpha``; so a pair is decided (for the arm with the higher mean) when it does, and
``p_anytime = min(1, 1 / max E so far)`` is an anytime-valid p-value. ``rho`` is set before the
first cluster so that the boundary is tightest where the plan (an :func:`~hrbench.stats.power`
result: its difference and variance components) expects to be decided (Howard, Ramdas,
McAuliffe & Sekhon 2021, "Time-uniform, nonparametric, nonasymptotic confidence sequences",
Ann. Statist. 49, the normal-mixture boundary); without a plan, for clusters whose differences
vary with sd 0.1 over the reference's clusters. Its confidence sequence inverts the same
e-process at every candidate difference.

``method="symmetric"``: the same mixture over the bet of the product of ``exp(lambda w D) /
cosh(lambda w D)`` over the clusters, an exact martingale under the same symmetry that is at least
de la Pena's bet by bet (``cosh x <= exp(x**2 / 2)``) and can reach ``pairs / alpha`` after 5
clusters rather than 10: in ``bench/sequential.py`` it ran 1.08-1.24 times the fixed design's
clusters at the planned difference where the exact method ran 1.24-1.60 (designs of 13 or more
planned clusters). Its confidence sequence is the exact method's (also valid; it may still hold 0
when the pair has been decided).

``method="asymptotic"``: the same boundary with ``V`` taken around the running mean, an
asymptotic confidence sequence (Waudby-Smith, Arnold, Wu, Wang & Ramdas 2023, "Time-uniform
central limit theory and asymptotic confidence sequences", Ann. Statist.; Howard et al. 2021):
narrower, valid as the clusters grow in number. ``method="strict"``: a hedged betting confidence
sequence for differences bounded in [-1, 1] (Waudby-Smith & Ramdas 2023, "Estimating means of
bounded random variables by betting", JRSS B 86), valid whatever the distribution and however few
the clusters, and the widest. ``goal="full_run"``: the betting confidence sequence for sampling
without replacement (Waudby-Smith & Ramdas 2020, "Confidence sequences for sampling without
replacement", NeurIPS) over the random order of this reference's clusters, for the difference a
full run would give.

However large the difference, ``E`` after ``n`` clusters is at most ``exp((n - 1) / 2) /
sqrt(n)`` (Cauchy-Schwarz: ``S**2 <= n V``), so one pair at ``alpha = 0.05`` is decided after 10
clusters at the earliest: with fewer clusters planned, a fixed design is the better choice.

k arms: an arm decided worse on every pair of interest it is in stops being run; with
``best_arm=True`` the test stops once one arm is decided better than every other (and an arm
decided worse than any other stops being run). Resuming with :meth:`SequentialTest.from_state`
continues the same e-processes: e-values multiply, so optional continuation stays valid.

Example:
    >>> rule = StopWhenSure(pairs=[("new", "base")], seed=1)
    >>> test = rule.start(["new", "base"], {f"c{i}": 10 for i in range(40)})
    >>> for c in rule.order([f"c{i}" for i in range(40)]):
    ...     test.commit(c, {"new": {f"{c}-{j}": 0.9 for j in range(10)},
    ...                     "base": {f"{c}-{j}": 0.5 for j in range(10)}})
    ...     if test.stopped:
    ...         break
    >>> test.stopped, test.summary()["winner"], test.summary()["clusters"]
    ('decided', 'new', 10)
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hrbench.errors import ConfigError
from hrbench.stats import _sequential_math as sm

GOALS = ("rank", "tolerance", "rank_or_tolerance", "full_run")
METHODS = ("exact", "symmetric", "asymptotic", "strict")
REASONS = ("decided", "tolerance", "max_clusters")
_DEFAULT_SD = 0.1  # without a plan: cluster differences assumed to vary with this sd
_HORIZON = 1.0  # the boundary is tightest at this multiple of the plan's clusters
_STATE_VERSION = 1


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


@dataclass(frozen=True)
class StopWhenSure:
    """A rule that stops a benchmark as soon as its question is answered, valid however often it looks.

    Args:
        pairs: the pairs of arms ``(a, b)`` of interest; ``None``: every pair (alpha is split
            over the pairs).
        goal: ``"rank"`` (which arm is better), ``"tolerance"`` (the difference to within
            ``tolerance``), ``"rank_or_tolerance"`` (each pair by either) or ``"full_run"``
            (would running the rest of this reference change the answer).
        tolerance: for the tolerance goals: stop when every pair's confidence sequence lies
            within the difference plus or minus this (proportion units, e.g. 0.02).
        alpha: the chance of any wrong decision, over all pairs and all looks.
        plan: an :func:`hrbench.power` result: its difference, variance components and clusters
            tune the test; ``None``: a default tuning.
        max_clusters: clusters run at most; default twice the plan's clusters (all the
            reference's without a plan, and for ``"full_run"``), never more than the reference's.
        min_clusters: clusters committed before any stop.
        method: ``"exact"``, ``"symmetric"``, ``"asymptotic"`` or ``"strict"`` (see the module's
            description).
        seed: seeds the order of the clusters.
        best_arm: stop as soon as one arm is decided better than every other.

    Raises:
        ConfigError: a setting is out of range (the message names it).

    Example:
        >>> StopWhenSure(goal="tolerance", tolerance=0.03).order(["a", "b", "c", "d"])
        ['c', 'a', 'b', 'd']
    """

    pairs: tuple[tuple[str, str], ...] | None = None
    goal: str = "rank"
    tolerance: float | None = None
    alpha: float = 0.05
    plan: Any = None
    max_clusters: int | None = None
    min_clusters: int = 2
    method: str = "exact"
    seed: int = 0
    best_arm: bool = False

    def __post_init__(self) -> None:
        if self.pairs is not None:
            try:
                pairs = tuple((str(a), str(b)) for a, b in self.pairs)
            except (TypeError, ValueError):
                raise ConfigError("pairs", self.pairs, "must be a list of (arm, arm) pairs") from None
            object.__setattr__(self, "pairs", pairs)
        self._validate()

    def _validate(self) -> None:
        if self.goal not in GOALS:
            raise ConfigError("goal", self.goal, f"must be one of {', '.join(GOALS)}")
        if self.method not in METHODS:
            raise ConfigError("method", self.method, f"must be one of {', '.join(METHODS)}")
        if not (isinstance(self.alpha, (int, float)) and 0 < self.alpha < 1):
            raise ConfigError("alpha", self.alpha, "must be a number strictly between 0 and 1")
        needs_tol = self.goal in ("tolerance", "rank_or_tolerance")
        if needs_tol and self.tolerance is None:
            raise ConfigError("tolerance", None, f'goal "{self.goal}" needs a tolerance, e.g. 0.02')
        if self.tolerance is not None and not (
            isinstance(self.tolerance, (int, float)) and 0 < self.tolerance < 1
        ):
            raise ConfigError("tolerance", self.tolerance, "must be a difference between 0 and 1, e.g. 0.02")
        if self.max_clusters is not None and not (_is_int(self.max_clusters) and self.max_clusters >= 1):
            raise ConfigError("max_clusters", self.max_clusters, "must be a whole number, at least 1")
        if not (_is_int(self.min_clusters) and self.min_clusters >= 1):
            raise ConfigError("min_clusters", self.min_clusters, "must be a whole number, at least 1")
        if self.max_clusters is not None and self.max_clusters < self.min_clusters:
            raise ConfigError(
                "max_clusters", self.max_clusters, f"must be at least min_clusters ({self.min_clusters})"
            )
        if not _is_int(self.seed):
            raise ConfigError("seed", self.seed, "must be a whole number")
        if self.plan is not None:
            for f in ("diff", "var_within", "var_between", "runs", "items_per_cluster", "n_clusters"):
                if not hasattr(self.plan, f):
                    raise ConfigError(
                        "plan", type(self.plan).__name__, f"must be an hb.power() result (no {f})"
                    )

    def resolve_pairs(self, arms: Sequence[str]) -> tuple[tuple[str, str], ...]:
        """The pairs of interest among ``arms``: ``pairs``, or every pair in the arms' order."""
        if self.pairs is None:
            return tuple(itertools.combinations(arms, 2))
        return self.pairs

    def check(self, arms: Sequence[str], n_clusters: int) -> None:
        """Check the rule against a benchmark's arms and its reference's clusters.

        Raises:
            ConfigError: fewer than two arms, a pair naming an arm not in ``arms`` (or an arm
                twice, or the same pair twice), or a reference of fewer than ``min_clusters``
                clusters.
        """
        self._validate()
        arms = list(arms)
        if len(arms) < 2:
            raise ConfigError("arms", arms, "stopping when sure compares arms: give at least two")
        if len(set(arms)) != len(arms):
            raise ConfigError("arms", arms, "an arm is named twice")
        pairs = self.resolve_pairs(arms)
        if not pairs:
            raise ConfigError("pairs", list(pairs), "give at least one pair of arms")
        seen: set[frozenset[str]] = set()
        for a, b in pairs:
            for x in (a, b):
                if x not in arms:
                    raise ConfigError("pairs", (a, b), f"names an arm that is not in the benchmark ({x!r})")
            if a == b:
                raise ConfigError("pairs", (a, b), "compares an arm with itself")
            if frozenset((a, b)) in seen:
                raise ConfigError("pairs", (a, b), "is listed twice")
            seen.add(frozenset((a, b)))
        if not (_is_int(n_clusters) and n_clusters >= self.min_clusters):
            raise ConfigError(
                "min_clusters",
                self.min_clusters,
                f"the reference has {n_clusters} cluster(s); stopping early needs at least min_clusters",
            )

    def fewest_to_decide(self, n_pairs: int) -> int | None:
        """The fewest clusters after which this rule's test can decide a pair at all.

        However large the difference, the exact test's e-value after ``n`` clusters is at most
        ``exp((n - 1) / 2) / sqrt(n)``, and the symmetric test's at most ``2 ** n`` (each
        cluster's factor ``exp(x) / cosh(x)`` is below 2); a pair is decided at ``n_pairs /
        alpha``. ``None`` where no such bound is used here (the asymptotic and strict methods,
        and the goals that do not rank).

        Example:
            >>> StopWhenSure().fewest_to_decide(1), StopWhenSure(method="symmetric").fewest_to_decide(1)
            (10, 5)
        """
        if self.goal not in ("rank", "rank_or_tolerance") or self.method not in ("exact", "symmetric"):
            return None
        c = math.log(max(n_pairs, 1) / self.alpha)
        if self.method == "symmetric":
            return max(1, math.ceil(c / math.log(2)))
        n = 1
        while (n - 1) / 2 - 0.5 * math.log(n) < c:
            n += 1
        return n

    def limit(self, n_clusters: int) -> int:
        """The most clusters this rule runs on a reference of ``n_clusters``."""
        if self.max_clusters is not None:
            return min(self.max_clusters, n_clusters)
        if self.plan is not None and self.goal != "full_run":
            return max(min(2 * int(self.plan.n_clusters), n_clusters), min(self.min_clusters, n_clusters))
        return n_clusters

    def order(self, clusters: Sequence[str]) -> list[str]:
        """The seeded random order to run the clusters in: the same for the same seed and clusters.

        The clusters are sorted first, so the order does not depend on how they were listed.
        """
        ids = sorted(str(c) for c in clusters)
        perm = np.random.default_rng(int(self.seed)).permutation(len(ids))
        return [ids[i] for i in perm]

    def params(self, n_pairs: int, cluster_sizes: Sequence[float] | np.ndarray) -> sm.Params:
        """The test's tuning, fixed before the first cluster (``rho``, thresholds, bet sizes)."""
        c = math.log(n_pairs / self.alpha)
        sizes = np.asarray(cluster_sizes, dtype=float)
        n_total = sizes.size
        # without a plan, tuned for the whole reference, not for max_clusters: a resume under a
        # larger max_clusters then continues the same e-process (rho is fixed before the first
        # cluster and never changes with the settings of a later resume)
        horizon = float(n_total)
        if self.plan is not None:
            plan = self.plan
            m = max(float(plan.items_per_cluster), 1.0)
            var_c = (
                float(getattr(plan, "var_cluster", 0.0))
                + (float(plan.var_between) + float(plan.var_within) / max(int(plan.runs), 1)) / m
            )
            d2 = float(plan.diff) ** 2
            horizon = max(float(plan.n_clusters) * _HORIZON, 1.0)
        else:
            var_c, d2 = _DEFAULT_SD**2, 0.0
        method = "wor" if self.goal == "full_run" else self.method
        return sm.Params(
            method=method,
            log_threshold=c,
            rho=sm.rho_for(horizon * (var_c + d2), c),
            horizon=horizon,
            var0=var_c + d2,
            n_total=n_total,
            bound=float(sizes.max() / sizes.mean()) if n_total else 1.0,
        )

    def start(self, arms: Sequence[str], cluster_sizes: Mapping[str, int]) -> SequentialTest:
        """A fresh test for ``arms`` on a reference whose clusters have ``cluster_sizes`` items.

        Raises:
            ConfigError: as :meth:`check`, or a cluster of no items.
        """
        return SequentialTest(self, arms, cluster_sizes)


class SequentialTest:
    """The running state of a :class:`StopWhenSure` rule on one benchmark.

    Made by :meth:`StopWhenSure.start`; fed one cluster at a time with :meth:`commit`, in the
    rule's order. ``stopped`` says when to stop; ``summary()`` is the report; ``state()`` and
    :meth:`from_state` resume it.
    """

    def __init__(self, rule: StopWhenSure, arms: Sequence[str], cluster_sizes: Mapping[str, int]) -> None:
        sizes = {str(k): v for k, v in cluster_sizes.items()}
        rule.check(arms, len(sizes))
        for k, v in sizes.items():
            if not (_is_int(v) and v >= 1):
                raise ConfigError("cluster_sizes", {k: v}, "every cluster must hold at least one item")
        self.rule = rule
        self.arms = tuple(str(a) for a in arms)
        self.pairs = rule.resolve_pairs(self.arms)
        self.sizes = sizes
        mean_size = sum(sizes.values()) / len(sizes)
        self._w = {k: v / mean_size for k, v in sizes.items()}
        self.p = rule.params(len(self.pairs), list(sizes.values()))
        self.max_clusters = rule.limit(len(sizes))
        self.acc = sm.new_acc(self.p, (len(self.pairs),))
        self.committed: list[str] = []
        self.decided: list[str | None] = [None] * len(self.pairs)
        self.precise = [False] * len(self.pairs)
        self.frozen_cs: list[tuple[float, float] | None] = [None] * len(self.pairs)
        self._stopped: str | None = None

    def commit(self, cluster: str, item_means: Mapping[str, Mapping[str, float]]) -> None:
        """Add one finished cluster to the test (clusters in the rule's order, each once).

        Args:
            cluster: the cluster's id (a key of the reference's cluster sizes).
            item_means: arm -> item id -> mean of ``correct`` over the item's runs, in [0, 1],
                for this cluster; arms no longer active may be left out. A pair is compared on
                the items both its arms scored; a pair with none adds no evidence.

        Raises:
            ConfigError: an unknown or repeated cluster, a mean outside [0, 1], or a commit
                after the test stopped.
        """
        cluster = str(cluster)
        if self._stopped is not None:
            raise ConfigError("cluster", cluster, f"the test has already stopped ({self._stopped})")
        if cluster not in self.sizes:
            raise ConfigError("cluster", cluster, "is not one of the reference's clusters")
        if cluster in self.committed:
            raise ConfigError("cluster", cluster, "was already committed")
        d, w = np.zeros(len(self.pairs)), np.zeros(len(self.pairs))
        for j, (a, b) in enumerate(self.pairs):
            if self._settled(j):
                continue
            got = _pair_difference(item_means, a, b, cluster)
            if got is not None:
                d[j], w[j] = got, self._w[cluster]
        sm.update(self.acc, self.p, d, w)
        self.committed.append(cluster)
        self._settle()

    def _settle(self) -> None:
        """Decide the pairs that reached the threshold and see whether to stop."""
        n = len(self.committed)
        lo, hi = sm.cs(self.acc, self.p)
        mu = sm.mean(self.acc)
        whole = self.p.method == "wor" and n >= len(self.sizes)
        tol = self.rule.tolerance
        sure_now = sm.sure(self.acc, self.p, n, self.rule.min_clusters)
        for j in range(len(self.pairs)):
            if self._settled(j):
                continue
            sure = bool(sure_now[j])
            if whole:  # every cluster seen: the reference's difference is known exactly
                lo[j] = hi[j] = mu[j]
                sure = mu[j] != 0
            if sure and mu[j] != 0 and self.decided[j] is None:
                self.decided[j] = self.pairs[j][0] if mu[j] > 0 else self.pairs[j][1]
                if self.rule.goal != "tolerance":  # the pair runs no more: its sequence as it stood
                    self.frozen_cs[j] = (float(lo[j]), float(hi[j]))
            if tol is not None and n >= self.rule.min_clusters and hi[j] - lo[j] <= 2 * tol + 1e-12:
                self.precise[j] = True
                self.frozen_cs[j] = (float(lo[j]), float(hi[j]))
        self._stopped = self._reason(n)

    def _settled(self, j: int) -> bool:
        """Whether pair ``j`` needs no more clusters: decided (rank goals) or precise (tolerance goals)."""
        goal = self.rule.goal
        if goal == "tolerance":
            return self.precise[j]
        if goal == "rank_or_tolerance":
            return self.decided[j] is not None or self.precise[j]
        full_tol = goal == "full_run" and self.rule.tolerance is not None
        return self.decided[j] is not None or (full_tol and self.precise[j])

    def _reason(self, n: int) -> str | None:
        goal = self.rule.goal
        ranked = [x is not None for x in self.decided]
        if self.rule.best_arm and goal != "tolerance" and self.winner is not None:
            return "decided"
        if goal in ("rank", "full_run") and all(ranked):
            return "decided"
        if goal == "tolerance" and all(self.precise):
            return "tolerance"
        if goal == "rank_or_tolerance" and all(r or t for r, t in zip(ranked, self.precise, strict=True)):
            return "decided" if all(ranked) else "tolerance"
        if (
            goal == "full_run"
            and self.rule.tolerance is not None
            and all(r or t for r, t in zip(ranked, self.precise, strict=True))
        ):
            return "tolerance"
        if n >= self.max_clusters:
            return "max_clusters"
        return None

    @property
    def stopped(self) -> str | None:
        """``None`` while running; else why it stopped: ``"decided"``, ``"tolerance"`` or ``"max_clusters"``."""
        return self._stopped

    def _losses(self) -> dict[str, tuple[int, int]]:
        """Per arm: (pairs of interest it lost, pairs of interest it is in)."""
        out = {a: [0, 0] for a in self.arms}
        for (a, b), dec in zip(self.pairs, self.decided, strict=True):
            out[a][1] += 1
            out[b][1] += 1
            if dec is not None:
                out[b if dec == a else a][0] += 1
        return {k: (v[0], v[1]) for k, v in out.items()}

    @property
    def active_arms(self) -> tuple[str, ...]:
        """The arms still to run: not decided worse on every pair of interest they are in.

        With ``best_arm``, an arm decided worse than any other is dropped; arms in no pair of
        interest are dropped; once the test has stopped, none is active.
        """
        if self._stopped is not None:
            return ()
        losses = self._losses()
        keep = []
        for a in self.arms:
            lost, of = losses[a]
            ranking = self.rule.goal != "tolerance"
            if of == 0 or (ranking and (lost == of or (self.rule.best_arm and lost > 0))):
                continue
            if all(self._settled(j) for j, pr in enumerate(self.pairs) if a in pr):
                continue  # every pair it is in is settled: nothing left to learn from it
            keep.append(a)
        return tuple(keep)

    @property
    def winner(self) -> str | None:
        """The arm decided better than every other arm it is compared with, if exactly one is.

        With ``best_arm``: the one arm that lost no pair when every other arm has lost one (to
        any arm: decisions chain, so the unbeaten arm is the best).
        """
        if self.rule.best_arm:
            losses = self._losses()
            unbeaten = [a for a in self.arms if losses[a][0] == 0]
            return unbeaten[0] if len(unbeaten) == 1 and any(d is not None for d in self.decided) else None
        wins = []
        for a in self.arms:
            mine = [d for pr, d in zip(self.pairs, self.decided, strict=True) if a in pr]
            if mine and all(d == a for d in mine):
                wins.append(a)
        return wins[0] if len(wins) == 1 else None

    def summary(self) -> dict[str, Any]:
        """The test's result, JSON-able.

        Returns:
            ``clusters`` committed, ``of`` (the most it would run), ``reason`` (``stopped``),
            ``winner``, ``method``, ``goal``, ``alpha``, ``seed``, ``estimand`` ("clusters like
            these", or "about this reference only" for ``"full_run"``) and per pair ``a``,
            ``b``, ``e_value`` (now), ``p_anytime`` (``min(1, 1 / max e_value so far)``),
            ``diff`` (the weighted mean of ``a - b``, proportion units), ``cs_low``/``cs_high``
            (its time-uniform confidence sequence, at the decision for a decided pair) and
            ``decided`` (the better arm, or ``None``).
        """
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
                }
            )
        return {
            "clusters": len(self.committed),
            "of": self.max_clusters,
            "total_clusters": len(self.sizes),
            "pairs": pairs,
            "winner": self.winner,
            "reason": self._stopped,
            "method": "betting without replacement" if self.p.method == "wor" else self.rule.method,
            "goal": self.rule.goal,
            "alpha": self.rule.alpha,
            "seed": int(self.rule.seed),
            "estimand": "about this reference only" if self.p.method == "wor" else "clusters like these",
        }

    def state(self) -> dict[str, Any]:
        """Everything :meth:`from_state` needs to continue the same e-processes, JSON-able."""
        return {
            "version": _STATE_VERSION,
            "arms": list(self.arms),
            "cluster_sizes": dict(self.sizes),
            "committed": list(self.committed),
            "decided": list(self.decided),
            "precise": list(self.precise),
            "frozen_cs": [list(x) if x else None for x in self.frozen_cs],
            "stopped": self._stopped,
            "acc": sm.to_lists(self.acc),
        }

    @classmethod
    def from_state(cls, rule: StopWhenSure, state: Mapping[str, Any]) -> SequentialTest:
        """Resume a test from :meth:`state`: the same order and e-processes continue.

        Raises:
            ConfigError: the state is malformed, or was made with other arms or clusters.
        """
        try:
            if state["version"] != _STATE_VERSION:
                raise ConfigError("state.version", state["version"], f"must be {_STATE_VERSION}")
            test = cls(rule, state["arms"], state["cluster_sizes"])
            n = len(test.pairs)
            test.acc = sm.from_lists(state["acc"], test.p, (n,))
            test.committed = [str(c) for c in state["committed"]]
            test.decided = [None if d is None else str(d) for d in state["decided"]]
            test.precise = [bool(x) for x in state["precise"]]
            test.frozen_cs = [None if x is None else (float(x[0]), float(x[1])) for x in state["frozen_cs"]]
            if len(test.decided) != n or len(test.precise) != n or len(test.frozen_cs) != n:
                raise ValueError("one entry per pair expected")
            if any(c not in test.sizes for c in test.committed):
                raise ValueError("a committed cluster is not in the reference")
            stopped = state["stopped"]
            if stopped is not None and stopped not in REASONS:
                raise ValueError(f"unknown stop reason {stopped!r}")
            test._stopped = stopped
        except (KeyError, TypeError, ValueError, IndexError) as e:
            if isinstance(e, ConfigError):
                raise
            raise ConfigError("state", type(e).__name__, f"is not a saved sequential test ({e})") from None
        return test


def _pair_difference(
    item_means: Mapping[str, Mapping[str, float]], a: str, b: str, cluster: str
) -> float | None:
    """The cluster's mean over shared items of ``y_a - y_b``; ``None`` when no item has both."""
    ya, yb = item_means.get(a), item_means.get(b)
    if not ya or not yb:
        return None
    diffs = []
    for item in ya.keys() & yb.keys():
        for arm, y in ((a, ya[item]), (b, yb[item])):
            if not (isinstance(y, (int, float, np.floating)) and 0.0 <= float(y) <= 1.0):
                raise ConfigError(
                    f"item_means[{arm!r}][{item!r}]",
                    y,
                    f"must be a mean score in [0, 1] (cluster {cluster!r})",
                )
        diffs.append(float(ya[item]) - float(yb[item]))
    return float(np.mean(diffs)) if diffs else None
