"""Planning: how many items (and runs) a paired comparison needs, :func:`power`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hrbench._util.warn import warn_at_caller
from hrbench.errors import ConfigError
from hrbench.stats._intervals import FEW_CLUSTERS, _sps, sized_df
from hrbench.stats._power_pilot import _bench_components
from hrbench.stats._power_resample import RESAMPLED_CLUSTERS, Cells, pilot_cells, resampled_power, spread_kept
from hrbench.stats._power_sim import _fit_logit, _Logit, _simulated_power, plan_sizes
from hrbench.stats._power_sim import _rejects as _rejects  # the tests import it from here
from hrbench.stats._records import PilotClustersWarning, PowerPlan, PowerPoint
from hrbench.stats._table import MIN_RUNS, _table

_TRADEOFF_RUNS = (1, 2, 3, 5, 10, 20)

PILOT_CLUSTERS = 10
"""The fewest clusters of a pilot whose spread between clusters a plan uses without :class:`PilotClustersWarning`."""

RESAMPLED_PILOT_CLUSTERS = 30
"""The fewest clusters of a pilot that :func:`power` resamples (fewer: the components' model).

Resampled, the plan's spread between clusters is the spread of the pilot's cluster means alone,
noisier than the components' model, which estimates the items' and runs' share from every item:
from pilots of 10 clusters of a design whose power is 0.77 (300 items in 30 clusters, 5 runs),
the resampled plan promised 0.49-0.97 (10th-90th percentile of 24 pilots), the components'
0.50-0.81; from pilots of 30 clusters, 0.70-0.92 and 0.69-0.82."""


def power(
    diff: float,
    alpha: float = 0.05,
    power: float = 0.8,
    *,
    var_within: float | None = None,
    var_between: float | None = None,
    var_cluster: float | None = None,
    runs: int | None = None,
    bench: Any = None,
    arm_a: str | None = None,
    arm_b: str | None = None,
    design_effect: float | None = None,
    items_per_cluster: float | None = None,
    n_items: int | None = None,
    accuracy: float | None = None,
    cluster_sizes: Sequence[int] | None = None,
    var_cluster_accuracy: float | None = None,
) -> PowerPlan:
    """Items needed to detect a difference ``diff`` between two arms in a paired comparison.

    Miller (2024) §5, with clusters: with ``K`` runs per item the variance of one item's
    difference is ``var_between + var_within / K``, and the clusters add ``var_cluster``, the
    variance between clusters of their mean true difference (an arm better on some clusters
    and worse on others: an arm x cluster effect), so the mean difference over ``n`` items in
    ``G`` clusters of ``n_c`` items has variance ``(var_between + var_within / K) / n +
    var_cluster * sum(n_c**2) / n**2`` (``var_cluster / G`` for clusters of equal size).
    Stating a ``design_effect`` instead takes it as ``design_effect * (var_between +
    var_within / K) / n``. The test is the one :func:`~hrbench.stats.compare` makes (the same
    reference distribution): Student's t on ``G - 1`` degrees of freedom, with ``G =
    ceil(n / items_per_cluster)``. Its power at ``n`` items is that of the noncentral t,
    ``P(|T| > t_{1 - alpha/2, G - 1})`` with ``T ~ nct(G - 1, diff / sd(mean difference))``,
    and ``n_items`` is the smallest ``n`` (at least 2) whose power reaches ``power``. With few
    clusters that is far more than the normal approximation ``(z_{1-alpha/2} + z_power)**2 *
    variance / diff**2`` promises (5 clusters: the normal approximation sized a design whose
    real power was 0.69 for a promised 0.90).

    With few clusters (10 or fewer at the plan's items) or clusters of unequal size
    (``cluster_sizes``, or a pilot's), and the arms' accuracy known (stated as ``accuracy``, or
    from ``bench``), the power is instead that of compare()'s own test,
    simulated: near the ceiling or with 2-5 clusters the noncentral t is not its power
    (compare()'s Wilson/MOVER test rejected 0.331 of benchmarks of 3 clusters of 10 items
    where the noncentral t promised 0.363; at 10 clusters of 3 items at accuracy 0.97 the t
    test itself reached 0.30 of a promised 0.34). A parametric bootstrap (Efron & Tibshirani
    1993, ch. 6): 4,000 benchmarks of the plan's clusters (as equal as the items allow) and
    runs are drawn from logit-normal arms, ``logit p = mu_arm + s_item + o_arm,cluster +
    o_arm,item``, fitted to the components (``mu_arm`` to the arms' accuracies, ``accuracy
    -+ diff / 2``; the sd of ``s + o`` to ``var_within``; the sd of ``o`` to ``var_between +
    var_cluster``; its cluster part to ``var_cluster``, each on the probability scale they are
    stated on, by Gauss-Hermite quadrature), and each goes through
    :func:`~hrbench.stats.difference_interval`'s test, vectorised. Given
    ``var_cluster_accuracy`` (how much the clusters differ in difficulty), a part of ``s`` is
    the cluster's, shared by both arms: a cluster both arms find easy then shows a smaller
    difference on the probability scale, and that share of ``var_cluster`` is no arm x cluster
    effect. It matters: such differences go with less disagreement in easy clusters, so
    compare()'s test (whose standard error follows each benchmark's disagreement) loses less
    to them than to an arm x cluster effect of the same ``var_cluster`` (15 clusters of 2-40
    items at accuracy 0.90, logit sd 0.5 of cluster difficulty and no arm x cluster effect:
    compare() rejected 0.90; planned without ``var_cluster_accuracy``, all of ``var_cluster``
    an arm x cluster effect, 0.875; with it 0.898). What this assumes beyond the components:
    the arms' item probabilities are logit-normal, and without ``var_cluster_accuracy`` what
    the arms share varies by item, not by cluster (conservative). The seed is fixed, so a plan is the same on
    every call; its Monte Carlo error is at most 0.008. The runs trade-off and ``min_items``
    stay on the noncentral t. More runs per item shrink only the
    ``var_within`` term: ``min_items`` is the floor as ``K`` grows.

    Stated components are summary numbers: they say how much the arms' per-cluster differences
    spread, not how that spread is shaped, and the plan assumes it symmetric (normal on the
    logit scale). When one arm is a little better on most clusters and much worse on a few,
    give a pilot instead: from a pilot of two arms on 30 or more clusters
    (:data:`RESAMPLED_PILOT_CLUSTERS`; fewer clusters' means are too noisy a spread) with no
    component stated, the power at up to 100 clusters is compare()'s test on benchmarks resampled from the pilot's own clusters
    (:mod:`hrbench.stats._power_resample`: a cluster bootstrap, Davison & Hinkley 1997 §3.8;
    each plan cluster one of the pilot's clusters at least as large, its items drawn without
    replacement, ``runs`` of each item's runs drawn without replacement, and runs changed at
    random to move the arms apart about their mean accuracy, by ``diff`` shrunk for the
    bootstrap's ``(k - 1) / k`` deflation of the spread of ``k`` clusters), so the plan sees the
    skew (5 clusters of 40 items, arm a better by 0.15 on the logit on 90% of clusters and
    worse by 1.35 on 10%: stated components promised 0.24 where compare() rejected 0.52, the
    resampled pilot 0.51). The logit-normal model stays for a pilot whose scores are not all
    0 or 1, one with an item of fewer runs than ``runs``, or arms that cannot be moved
    ``diff`` apart. ``bench/coverage.py`` simulates compare() on every design it lists, with
    and without an arm x cluster effect and with a skewed one: from a 2,000-cluster pilot this
    power was within 0.03 of compare()'s on 34 of its 36 rows (0.031 and 0.034 off on two whose
    largest clusters are few in the pilot: the plan's largest clusters come from those alone),
    and from stated components on every row but the skewed ones.

    The variance components are stated (``var_within``, ``var_between``, ``var_cluster``) or
    taken from ``bench``, a pilot: with ``arm_a`` and ``arm_b`` (by default its first two
    arms) from their paired per-item differences (``var_within`` is the sum of the two arms'
    run-to-run variances, ``var_between`` the moment estimate of the true differences'
    variance between items of a cluster, ``var_cluster`` the pilot's clustered (CR2) variance
    of the mean difference less its items' share, over ``sum(n_c**2) / n**2`` of its clusters;
    ``items_per_cluster`` the mean over its clusters and ``cluster_sizes`` its clusters' sizes);
    with a single arm, as if comparing two uncorrelated arms like it (twice its components: a
    conservative plan). Stated values override the benchmark's.

    A pilot whose items are all in one cluster cannot show how clusters differ. Rule: unless
    ``var_cluster`` or ``design_effect`` is stated, the plan is then conservative, as if the
    items of a cluster were copies of one another (``design_effect`` = items per cluster: a
    cluster counts as one item), and :class:`~hrbench.stats.PilotClustersWarning` says so.
    A pilot of 2 to 9 clusters shows it roughly: unless ``var_cluster`` or ``design_effect``
    is stated, :class:`~hrbench.stats.PilotClustersWarning` says the plan is rough.

    Args:
        diff: the difference in accuracy to detect, ``arm_a - arm_b`` (proportion units, e.g.
            0.03); its sign matters only when a pilot is resampled (skewed differences are
            not symmetric).
        alpha: two-sided significance level.
        power: the probability of detecting ``diff`` when it is real.
        var_within: run-to-run variance of a per-run score difference (for two arms with
            run-to-run variances ``s_a**2`` and ``s_b**2``, their sum).
        var_between: variance across the items of a cluster of the true per-item difference.
        var_cluster: variance across clusters of the cluster's mean true difference (default:
            from ``bench``, else 0).
        runs: runs per item (default: the benchmark's, else 5).
        bench: a benchmark (as for :func:`report`) to estimate the components from.
        arm_a: the first arm of ``bench`` to plan for (default: its first arm).
        arm_b: the second arm (default: the next arm; none when ``bench`` has one arm).
        design_effect: variance inflation from clusters, in place of ``var_cluster``.
        items_per_cluster: items per cluster, which sets the clusters and so the degrees of
            freedom (default: from ``bench``, else 1: every item its own cluster).
        n_items: evaluate the plan at this many items instead of solving for them: the plan's
            ``achieved`` is then the power those items give.
        accuracy: the two arms' mean accuracy (proportion; default: ``bench``'s, else
            unknown): with 10 or fewer clusters, or unequal ones, the power is then simulated
            (above). Both arms, ``accuracy -+ diff / 2``, must lie strictly between 0 and 1 (a
            pilot at the ceiling falls back to the noncentral t).
        var_cluster_accuracy: variance across clusters of the cluster's mean true accuracy
            (of the two arms' mean; proportion units squared): how much the clusters differ in
            difficulty (default: from ``bench``, else 0). Used only where the power is
            simulated (above).
        cluster_sizes: the items of the clusters the plan's look like (default: ``bench``'s;
            else every cluster ``items_per_cluster`` items): a plan of ``G`` clusters takes
            their sizes at ``G`` evenly spaced quantiles, scaled to its items. Unequal sizes
            weigh ``var_cluster`` by ``sum(n_c**2) / n**2`` and, with ``accuracy``, simulate
            compare()'s test on clusters of those sizes (with 15 clusters of 2-40 items the
            noncentral t on equal clusters promised 0.654 where compare() reached 0.695).

    Returns:
        A :class:`PowerPlan` with ``n_items``, its clusters, the power it achieves and the
        runs-per-item trade-off; its ``design_effect`` is the variance inflation at ``runs``.

    Raises:
        ConfigError: ``diff`` is 0 or not between -1 and 1, ``alpha``/``power`` are not in (0, 1), the variance
            components are missing (no ``bench``) or negative, both ``design_effect`` and
            ``var_cluster`` are stated, or ``items_per_cluster``, ``n_items``, ``accuracy`` or
            ``cluster_sizes`` are out of range, or ``var_cluster_accuracy`` is negative.

    Example:
        >>> plan = power(0.05, var_within=0.2, var_between=0.04, runs=5)
        >>> plan.n_items, plan.min_items, round(plan.achieved, 3)
        (254, 128, 0.801)
        >>> few = power(0.05, var_within=0.2, var_between=0.04, runs=5, items_per_cluster=60)
        >>> few.n_clusters, few.n_items > plan.n_items
        (7, True)
        >>> arms_differ = power(0.05, var_within=0.2, var_between=0.04, var_cluster=0.002, runs=5,
        ...                     items_per_cluster=20)
        >>> arms_differ.n_clusters, round(arms_differ.design_effect, 2)
        (21, 1.49)
    """
    _check_asked(diff, alpha, power, design_effect, var_cluster)
    ask = _Ask(var_within, var_between, var_cluster, runs, design_effect, items_per_cluster, accuracy)
    ask.var_cluster_accuracy = var_cluster_accuracy
    ask.sizes = _check_sizes(cluster_sizes)
    if bench is not None:
        _from_pilot(ask, bench, arm_a, arm_b)
    return _planner(ask, diff, alpha, power, n_items, pilot=bench is not None).plan_for(n_items)


def _check_sizes(sizes: Sequence[int] | None) -> np.ndarray | None:
    """``cluster_sizes`` as an array of whole numbers of items, at least 1 each (at least 2 clusters)."""
    if sizes is None:
        return None
    try:
        arr = np.asarray(list(sizes), dtype=float)
    except (TypeError, ValueError):
        raise ConfigError("cluster_sizes", sizes, "must be a list of whole numbers of items") from None
    if arr.ndim != 1 or arr.size < 2 or not np.all(np.isfinite(arr)) or np.any(arr < 1) or np.any(arr % 1):
        raise ConfigError("cluster_sizes", sizes, "must list at least 2 clusters, each of 1 or more items")
    return arr.astype(np.int64)


def _check_asked(
    diff: float, alpha: float, power: float, design_effect: float | None, var_cluster: float | None
) -> None:
    """The checks that need no pilot: a difference to detect, the levels, one way of stating clusters."""
    if not diff or not math.isfinite(diff) or abs(diff) >= 1:
        raise ConfigError(
            "diff", diff, "must be a non-zero difference in accuracy between -1 and 1, e.g. 0.03"
        )
    for name, v in (("alpha", alpha), ("power", power)):
        if not 0 < v < 1:
            raise ConfigError(name, v, "must be strictly between 0 and 1")
    if design_effect is not None and var_cluster is not None:
        raise ConfigError(
            "design_effect", design_effect, "state design_effect or var_cluster, not both (they say the same)"
        )


@dataclass
class _Ask:
    """What a plan is asked for: the values stated, then what a pilot fills in (:func:`_from_pilot`)."""

    var_within: float | None
    var_between: float | None
    var_cluster: float | None
    runs: int | None
    design_effect: float | None
    items_per_cluster: float | None
    accuracy: float | None
    source: str = "assumed"
    sizes: np.ndarray | None = None  # the sizes of the clusters the plan's look like
    cells: Cells | None = None  # the pilot's paired items, when its clusters are resampled
    var_cluster_accuracy: float | None = None  # how much the clusters differ in difficulty


def _from_pilot(ask: _Ask, bench: Any, arm_a: str | None, arm_b: str | None) -> None:
    """Fill in what ``ask`` leaves unstated from the pilot ``bench`` (its arms ``arm_a`` and ``arm_b``)."""
    t = _table(bench)
    if arm_a is None:
        arm_a = t.arms[0]
    if arm_b is None and arm_a != t.arms[-1] and len(t.arms) > 1:
        arm_b = next(a for a in t.arms if a != arm_a)
    got = _bench_components(t, arm_a, arm_b)
    stated = (ask.var_within, ask.var_between, ask.var_cluster, ask.design_effect, ask.accuracy)
    if arm_b is not None and all(v is None for v in stated) and got.clusters >= RESAMPLED_PILOT_CLUSTERS:
        ask.cells = pilot_cells(t, arm_a, arm_b)  # the pilot alone: its clusters resampled
    ask.source = f"bench: {arm_a} vs {arm_b}" if arm_b else f"bench: {arm_a} (x2, as two uncorrelated arms)"
    ask.var_within = got.within if ask.var_within is None else ask.var_within
    ask.var_between = got.between if ask.var_between is None else ask.var_between
    if got.clusters < 2 and ask.design_effect is None and ask.var_cluster is None:
        m_one = float(got.items) if ask.items_per_cluster is None else float(ask.items_per_cluster)
        ask.design_effect = m_one
        ask.source += ", one cluster: planned as if a cluster counted as one item"
        warn_at_caller(
            f"power: the pilot's {got.items} items are all in one cluster, so how clusters differ "
            f"cannot be estimated; planned conservatively, as if the items of a cluster were copies of "
            f"one another (design effect {m_one:g} = items per cluster). Pilot on several clusters, or "
            "state var_cluster (or design_effect).",
            PilotClustersWarning,
        )
    elif ask.design_effect is None and ask.var_cluster is None:
        ask.var_cluster = got.cluster
        if got.clusters < PILOT_CLUSTERS:
            ask.source += f", {got.clusters} clusters: var_cluster rough"
            warn_at_caller(
                f"power: the pilot has {got.clusters} clusters, so how its arms differ from cluster to "
                f"cluster is estimated from {got.clusters} alone and the plan is rough (from pilots of 5 "
                "clusters of 10 items of a design whose power is 0.77, the power promised ranged "
                "0.46-0.83, 10th to 90th percentile). "
                f"Pilot on {PILOT_CLUSTERS} or more clusters, or state var_cluster (or design_effect).",
                PilotClustersWarning,
            )
    if ask.items_per_cluster is None:
        ask.items_per_cluster = got.items / max(got.clusters, 1)
    if ask.sizes is None and got.clusters >= 2:
        ask.sizes = got.sizes
    ask.runs = t.runs if ask.runs is None else ask.runs
    if ask.accuracy is None:
        ask.accuracy = got.accuracy
    if ask.var_cluster_accuracy is None and got.clusters >= 2:
        ask.var_cluster_accuracy = got.cluster_accuracy


def _planner(
    ask: _Ask, diff: float, alpha: float, power: float, n_items: int | None, pilot: bool
) -> _Planner:
    """The planner for ``ask`` once its values are checked (``pilot``: they came from a benchmark)."""
    var_within, var_between, var_cluster = ask.var_within, ask.var_between, ask.var_cluster
    if var_within is None or var_between is None:
        raise ConfigError(
            "var_within/var_between", (var_within, var_between), "state both, or pass bench= to estimate them"
        )
    if var_within < 0 or var_between < 0 or (var_cluster is not None and var_cluster < 0):
        raise ConfigError(
            "var_within/var_between/var_cluster",
            (var_within, var_between, var_cluster),
            "must not be negative",
        )
    va = ask.var_cluster_accuracy
    if va is not None and not (math.isfinite(va) and 0 <= va <= 0.25):
        raise ConfigError("var_cluster_accuracy", va, "must be a variance of accuracies, between 0 and 0.25")
    runs = MIN_RUNS if ask.runs is None else int(ask.runs)
    if runs < 1:
        raise ConfigError("runs", runs, "must be at least 1")
    m = 1.0 if ask.items_per_cluster is None else float(ask.items_per_cluster)
    if ask.items_per_cluster is None and ask.sizes is not None:
        m = float(ask.sizes.mean())
    if not (math.isfinite(m) and m >= 1):
        raise ConfigError("items_per_cluster", ask.items_per_cluster, "must be a number, at least 1")
    if n_items is not None and not (isinstance(n_items, int) and n_items >= 2):
        raise ConfigError("n_items", n_items, "must be a whole number, at least 2")
    design_effect = ask.design_effect
    if design_effect is not None and not (math.isfinite(design_effect) and design_effect > 0):
        raise ConfigError("design_effect", design_effect, "must be a positive number")
    d = abs(float(diff))
    accuracy = ask.accuracy
    if accuracy is not None and not (
        math.isfinite(accuracy) and 0 < accuracy - d / 2 and accuracy + d / 2 < 1
    ):
        if not pilot:
            raise ConfigError(
                "accuracy", accuracy, f"must leave both arms (accuracy -+ {d / 2:g}) strictly between 0 and 1"
            )
        accuracy = None  # a pilot at the ceiling: the noncentral t plan
    vc = 0.0 if var_cluster is None else float(var_cluster)
    sizes = ask.sizes if ask.sizes is not None and ask.sizes.min() != ask.sizes.max() else None
    return _Planner(
        diff,
        d,
        alpha,
        power,
        runs,
        m,
        var_within,
        var_between,
        vc,
        design_effect,
        accuracy,
        ask.source,
        sizes,
        cells=ask.cells,
        var_accuracy=0.0 if va is None else float(va),
    )


@dataclass
class _Planner:
    """The power a plan promises at any number of items and runs, and the items it needs."""

    diff: float  # as asked (for the error when it is too small to detect)
    d: float  # its size
    alpha: float
    power: float
    runs: int
    m: float  # items per cluster
    var_within: float
    var_between: float
    vc: float  # var_cluster
    design_effect: float | None
    accuracy: float | None  # the arms' mean accuracy: with few clusters the power is simulated
    source: str
    pattern: np.ndarray | None = None  # unequal cluster sizes the plan's clusters look like
    cells: Cells | None = None  # a pilot's paired items, to resample
    var_accuracy: float = 0.0  # var_cluster_accuracy: how much the clusters differ in difficulty
    fitted: list[_Logit] = field(default_factory=list)
    simulated: dict[int, float] = field(default_factory=dict)
    resampled: dict[int, float | None] = field(default_factory=dict)

    def resample(self, n: int) -> float | None:
        """compare()'s power at ``n`` items on the pilot's clusters resampled, or None when it cannot be."""
        if self.cells is None or self.clusters(n) > RESAMPLED_CLUSTERS:
            return None
        if n not in self.resampled:
            sizes = self.sizes(n)  # the arms moved apart less: the bootstrap keeps less of the spread
            shrunk = self.diff * math.sqrt(spread_kept(self.cells, sizes))
            self.resampled[n] = resampled_power(self.cells, sizes, self.runs, self.alpha, shrunk)
        return self.resampled[n]

    def simulate(self, n: int) -> float:
        """compare()'s power at ``n`` items and ``runs`` runs, simulated (resampled, or from logit-normal arms)."""
        got = self.resample(n)
        if got is not None:
            return got
        if n not in self.simulated:
            if not self.fitted:
                acc, d = self.accuracy, self.d
                assert acc is not None
                self.fitted.append(
                    _fit_logit(
                        acc + d / 2,
                        acc - d / 2,
                        self.var_within,
                        self.var_between,
                        self.vc,
                        self.var_accuracy,
                    )
                )
            self.simulated[n] = _simulated_power(self.fitted[0], self.sizes(n), self.runs, self.alpha)
        return self.simulated[n]

    def simulates(self, n: int) -> bool:
        """Whether the power at ``n`` items is simulated: a pilot resampled, or the arms' accuracy known and few clusters."""
        if self.design_effect is not None:
            return False
        few = self.clusters(n) <= FEW_CLUSTERS or self.pattern is not None
        return self.resample(n) is not None or (self.accuracy is not None and few)

    def promised(self, n: int) -> float:
        """The power the plan promises at ``n`` items and ``runs`` runs."""
        if self.simulates(n) and n >= 2:
            return self.simulate(n)
        return self.achieved(n, self.runs)

    def clusters(self, n: int) -> int:
        return max(2, math.ceil(n / self.m - 1e-9))

    def sizes(self, n: int) -> np.ndarray:
        """The sizes of the plan's clusters at ``n`` items: as equal as the items allow, or like ``pattern``."""
        return plan_sizes(n, self.clusters(n), self.pattern)

    def variance(self, n: int, k: float) -> float:
        items = self.var_between + self.var_within / k
        if self.design_effect is not None:
            return float(self.design_effect) * items / n
        if self.pattern is None:
            return items / n + self.vc / self.clusters(n)
        sizes = self.sizes(n).astype(float)
        return items / n + self.vc * float(np.sum(sizes**2)) / float(sizes.sum()) ** 2

    def achieved(self, n: int, k: float) -> float:
        var = self.variance(n, k)
        if var <= 0:
            return 1.0
        return _t_test_power(self.d / math.sqrt(var), self.df(n, k), self.alpha)

    def df(self, n: int, k: float) -> int:
        """compare()'s degrees of freedom at ``n`` items: ``G - 1``, Bell-McCaffrey's with unequal clusters."""
        if self.pattern is None or self.design_effect is not None:
            return self.clusters(n) - 1
        items = self.var_between + self.var_within / k
        rho = self.vc / (self.vc + items) if self.vc + items > 0 else 0.0
        return sized_df(self.sizes(n).astype(float), rho)

    def need(self, k: float, at: Any = None, start: int = 2) -> int:
        """The fewest items whose power (``at(n)``, by default the noncentral t's at ``k`` runs) reaches it."""
        how = (lambda n: self.achieved(n, k)) if at is None else at
        power = self.power
        lo, hi, grow = 1, 2, 2.0  # how(lo) < power <= how(hi) (lo = 1 is never tried)
        if start > 2:  # a bracket from a first guess, in steps of a third
            grow = 4 / 3
            if how(start) >= power:
                lo, hi = max(1, start * 3 // 4), start
                while lo > 1 and how(lo) >= power:
                    lo, hi = max(1, lo * 3 // 4), lo
            else:
                lo, hi = start, int(start * grow) + 1
        while how(hi) < power:
            lo, hi = hi, int(hi * grow) + 1
            if hi > 2**40:
                raise ConfigError("diff", self.diff, "needs more than 2**40 items: too small to detect")
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if how(mid) >= power else (mid, hi)
        return hi

    def plan_for(self, n_items: int | None) -> PowerPlan:
        """The plan: at ``n_items``, or at the fewest items that reach the power asked."""
        runs = self.runs
        # the noncentral t's answer is the first guess of the simulated plan's (a few simulations, not a dozen)
        n = self.need(runs, self.promised, self.need(runs)) if n_items is None else n_items
        source = self.source
        if self.simulates(n):
            how = (
                "the pilot's clusters resampled"
                if self.resample(n) is not None
                else f"arms at {self.accuracy:g} -+ {self.d / 2:g}"
            )
            source += f", power simulated for {self.clusters(n)} clusters (compare()'s own test, {how})"
        # the other runs' rows are the noncentral t's, scaled to agree with a simulated plan at its runs
        scale = n / self.need(runs) if n_items is None and self.simulates(n) else 1.0
        needed = {
            k: n if k == runs and n_items is None else math.ceil(self.need(k) * scale - 1e-9)
            for k in sorted({*_TRADEOFF_RUNS, runs})
        }
        # more runs per item never need more items (the same items with more runs have at least
        # the power): where the clusters' whole numbers make a row rise, it keeps the row before's
        fewest = math.inf
        for k in needed:
            if k != runs or n_items is not None:
                needed[k] = int(min(needed[k], fewest))
            fewest = min(fewest, needed[k])
        tradeoff = [PowerPoint(runs=k, n_items=m, total_runs=k * m) for k, m in needed.items()]
        per_items = self.var_between + self.var_within / runs
        deff = (
            float(self.design_effect)
            if self.design_effect is not None
            else (self.variance(n, runs) * n / per_items if per_items > 0 else 1.0)
        )
        sizes = self.sizes(n)
        return PowerPlan(
            diff=self.d,
            alpha=float(self.alpha),
            power=float(self.power),
            runs=runs,
            n_items=n,
            var_within=float(self.var_within),
            var_between=float(self.var_between),
            var_cluster=self.vc,
            design_effect=deff,
            min_items=min(math.ceil(self.need(math.inf) * scale - 1e-9), *needed.values()),
            tradeoff=tradeoff,
            source=source,
            items_per_cluster=self.m,
            n_clusters=self.clusters(n),
            achieved=self.promised(n),
            solved=n_items is None,
            cluster_sizes=(int(sizes.min()), int(sizes.max())),
            df=float(self.df(n, runs)),
            simulated=self.simulates(n) and n >= 2,
        )


def _t_test_power(ncp: float, df: int, alpha: float) -> float:
    """Power of the two-sided t test at ``alpha`` on ``df`` df when the noncentrality is ``ncp``."""
    sps = _sps()
    crit = float(sps.t.ppf(1 - alpha / 2, df))
    ncp = abs(ncp)  # the test is two-sided: the same power either way
    upper = float(sps.nct.sf(crit, df, ncp))
    if not math.isfinite(upper):
        upper = 1.0 - float(sps.nct.cdf(crit, df, ncp))
    # the far tail, below -crit, is below 1e-9 once the noncentrality is large, where scipy's
    # nct.cdf can return nan (df 2, ncp 9.5): a nan power read as "not reached" asked for more items
    lower = float(sps.nct.cdf(-crit, df, ncp))
    return upper + (lower if math.isfinite(lower) else 0.0)
