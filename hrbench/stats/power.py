"""Planning: how many items (and runs) a paired comparison needs, :func:`power`."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from hrbench._warn import warn_at_caller
from hrbench.errors import ConfigError
from hrbench.stats.intervals import _cluster_se, _compact, _components, _sps
from hrbench.stats.records import PilotClustersWarning, PowerPlan, PowerPoint
from hrbench.stats.table import MIN_RUNS, _arm_code, _items, _Table, _table

_TRADEOFF_RUNS = (1, 2, 3, 5, 10, 20)


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
) -> PowerPlan:
    """Items needed to detect a difference ``diff`` between two arms in a paired comparison.

    Miller (2024) §5, with clusters: with ``K`` runs per item the variance of one item's
    difference is ``var_between + var_within / K``, and the clusters add ``var_cluster``, the
    variance between clusters of their mean true difference (an arm better on some clusters
    and worse on others: an arm x cluster effect), so the mean difference over ``n`` items in
    ``G`` clusters has variance ``(var_between + var_within / K) / n + var_cluster / G``.
    Stating a ``design_effect`` instead takes it as ``design_effect * (var_between +
    var_within / K) / n``. The test is the one :func:`~hrbench.stats.compare` makes (the same
    reference distribution): Student's t on ``G - 1`` degrees of freedom, with ``G =
    ceil(n / items_per_cluster)``. Its power at ``n`` items is that of the noncentral t,
    ``P(|T| > t_{1 - alpha/2, G - 1})`` with ``T ~ nct(G - 1, diff / sd(mean difference))``,
    and ``n_items`` is the smallest ``n`` (at least 2) whose power reaches ``power``. With few
    clusters that is far more than the normal approximation ``(z_{1-alpha/2} + z_power)**2 *
    variance / diff**2`` promises (5 clusters: the normal approximation sized a design whose
    real power was 0.69 for a promised 0.90). More runs per item shrink only the
    ``var_within`` term: ``min_items`` is the floor as ``K`` grows. ``bench/coverage.py``
    simulates compare() on every design it lists, with and without an arm x cluster effect:
    this power is within 0.03 of compare()'s, from components stated or estimated from a pilot.

    The variance components are stated (``var_within``, ``var_between``, ``var_cluster``) or
    taken from ``bench``, a pilot: with ``arm_a`` and ``arm_b`` (by default its first two
    arms) from their paired per-item differences (``var_within`` is the sum of the two arms'
    run-to-run variances, ``var_between`` the moment estimate of the true differences'
    variance between items of a cluster, ``var_cluster`` the pilot's clustered (CR2) variance
    of the mean difference less its items' share, times its clusters, so that it carries the
    spread of the pilot's cluster sizes; ``items_per_cluster`` the mean over its clusters);
    with a single arm, as if comparing two uncorrelated arms like it (twice its components: a
    conservative plan). Stated values override the benchmark's.

    A pilot whose items are all in one cluster cannot show how clusters differ. Decided: unless
    ``var_cluster`` or ``design_effect`` is stated, the plan is then conservative, as if the
    items of a cluster were copies of one another (``design_effect`` = items per cluster: a
    cluster counts as one item), and :class:`~hrbench.stats.PilotClustersWarning` says so.

    Args:
        diff: the difference in accuracy to detect (proportion units, e.g. 0.03).
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

    Returns:
        A :class:`PowerPlan` with ``n_items``, its clusters, the power it achieves and the
        runs-per-item trade-off; its ``design_effect`` is the variance inflation at ``runs``.

    Raises:
        ConfigError: ``diff`` is 0, ``alpha``/``power`` are not in (0, 1), the variance
            components are missing (no ``bench``) or negative, both ``design_effect`` and
            ``var_cluster`` are stated, or ``items_per_cluster`` or ``n_items`` are out of range.

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
    if not diff or not math.isfinite(diff):
        raise ConfigError("diff", diff, "must be a non-zero difference in accuracy, e.g. 0.03")
    for field, v in (("alpha", alpha), ("power", power)):
        if not 0 < v < 1:
            raise ConfigError(field, v, "must be strictly between 0 and 1")
    if design_effect is not None and var_cluster is not None:
        raise ConfigError(
            "design_effect", design_effect, "state design_effect or var_cluster, not both (they say the same)"
        )
    source = "assumed"
    if bench is not None:
        t = _table(bench)
        if arm_a is None:
            arm_a = t.arms[0]
        if arm_b is None and arm_a != t.arms[-1] and len(t.arms) > 1:
            arm_b = next(a for a in t.arms if a != arm_a)
        got = _bench_components(t, arm_a, arm_b)
        source = f"bench: {arm_a} vs {arm_b}" if arm_b else f"bench: {arm_a} (x2, as two uncorrelated arms)"
        var_within = got.within if var_within is None else var_within
        var_between = got.between if var_between is None else var_between
        if got.clusters < 2 and design_effect is None and var_cluster is None:
            m_one = float(got.items) if items_per_cluster is None else float(items_per_cluster)
            design_effect = m_one
            source += ", one cluster: planned as if a cluster counted as one item"
            warn_at_caller(
                f"power: the pilot's {got.items} items are all in one cluster, so how clusters differ "
                f"cannot be estimated; planned conservatively, as if the items of a cluster were copies of "
                f"one another (design effect {m_one:g} = items per cluster). Pilot on several clusters, or "
                "state var_cluster (or design_effect).",
                PilotClustersWarning,
            )
        elif design_effect is None and var_cluster is None:
            var_cluster = got.cluster
        items_per_cluster = (
            got.items / max(got.clusters, 1) if items_per_cluster is None else items_per_cluster
        )
        runs = t.runs if runs is None else runs
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
    runs = MIN_RUNS if runs is None else int(runs)
    if runs < 1:
        raise ConfigError("runs", runs, "must be at least 1")
    m = 1.0 if items_per_cluster is None else float(items_per_cluster)
    if not (math.isfinite(m) and m >= 1):
        raise ConfigError("items_per_cluster", items_per_cluster, "must be a number, at least 1")
    if n_items is not None and not (isinstance(n_items, int) and n_items >= 2):
        raise ConfigError("n_items", n_items, "must be a whole number, at least 2")
    if design_effect is not None and not (math.isfinite(design_effect) and design_effect > 0):
        raise ConfigError("design_effect", design_effect, "must be a positive number")
    vc = 0.0 if var_cluster is None else float(var_cluster)
    d = abs(float(diff))

    def clusters(n: int) -> int:
        return max(2, math.ceil(n / m - 1e-9))

    def variance(n: int, k: float) -> float:
        items = var_between + var_within / k
        if design_effect is not None:
            return float(design_effect) * items / n
        return items / n + vc / clusters(n)

    def achieved(n: int, k: float) -> float:
        var = variance(n, k)
        if var <= 0:
            return 1.0
        return _t_test_power(d / math.sqrt(var), clusters(n) - 1, alpha)

    def need(k: float) -> int:
        lo, hi = 1, 2  # achieved(lo) < power <= achieved(hi)
        while achieved(hi, k) < power:
            lo, hi = hi, hi * 2
            if hi > 2**40:
                raise ConfigError("diff", diff, "needs more than 2**40 items: too small to detect")
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if achieved(mid, k) >= power else (mid, hi)
        return hi

    n = need(runs) if n_items is None else n_items
    tradeoff = [
        PowerPoint(runs=k, n_items=need(k), total_runs=k * need(k)) for k in sorted({*_TRADEOFF_RUNS, runs})
    ]
    per_items = var_between + var_within / runs
    deff = (
        float(design_effect)
        if design_effect is not None
        else (variance(n, runs) * n / per_items if per_items > 0 else 1.0)
    )
    return PowerPlan(
        diff=d,
        alpha=float(alpha),
        power=float(power),
        runs=runs,
        n_items=n,
        var_within=float(var_within),
        var_between=float(var_between),
        var_cluster=vc,
        design_effect=deff,
        min_items=need(math.inf),
        tradeoff=tradeoff,
        source=source,
        items_per_cluster=m,
        n_clusters=clusters(n),
        achieved=achieved(n, runs),
    )


def _t_test_power(ncp: float, df: int, alpha: float) -> float:
    """Power of the two-sided t test at ``alpha`` on ``df`` df when the noncentrality is ``ncp``."""
    sps = _sps()
    crit = float(sps.t.ppf(1 - alpha / 2, df))
    return float(sps.nct.sf(crit, df, ncp) + sps.nct.cdf(-crit, df, ncp))


class _Pilot(NamedTuple):
    """Variance components of a paired difference estimated from a pilot benchmark."""

    within: float  # run-to-run variance of a per-run difference
    between: float  # variance of the items' true differences within a cluster
    cluster: float  # variance between clusters of the mean true difference (size spread included)
    items: int
    clusters: int


def _bench_components(t: _Table, arm_a: str, arm_b: str | None) -> _Pilot:
    """The variance components of a paired difference (or of one arm, doubled) in a pilot."""
    ia = _items(t, _arm_code(t, arm_a, "arm_a"))
    if arm_b is None:
        w, _ = _components(ia)
        if w is None:
            raise ConfigError(
                "bench", t.runs, "needs at least 2 runs per item to estimate variance components"
            )
        has = ia.k > 1
        noise = float(np.mean(ia.s2[has] / ia.k[has]))
        got = _split(ia.y, ia.cluster, noise)
        return _Pilot(2 * w, 2 * got[0], 2 * got[1], int(ia.y.size), got[2])
    ib = _items(t, _arm_code(t, arm_b, "arm_b"))
    common, pa, pb = np.intersect1d(ia.idx, ib.idx, assume_unique=True, return_indices=True)
    ka, kb = ia.k[pa], ib.k[pb]
    has = (ka > 1) & (kb > 1)
    if common.size < 2 or not has.any():
        raise ConfigError("bench", t.runs, "needs at least 2 common items with 2 or more runs each")
    sa, sb = ia.s2[pa][has], ib.s2[pb][has]
    d = ia.y[pa] - ib.y[pb]
    within = float(np.mean(sa) + np.mean(sb))
    noise = float(np.mean(sa / ka[has] + sb / kb[has]))
    between, cluster, n_g = _split(d, t.item_cluster[common], noise)
    return _Pilot(within, between, cluster, int(d.size), n_g)


def _split(v: np.ndarray, cluster: np.ndarray, noise: float) -> tuple[float, float, int]:
    """(var_between, var_cluster, clusters) of per-item values ``v`` holding run noise ``noise``.

    ``var_between`` is the within-cluster mean square less the run noise (one-way ANOVA; with one
    item per cluster, or one cluster, the whole spread of ``v`` less the noise); ``var_cluster``
    is ``G`` times the CR2 clustered variance of ``mean(v)`` less the items' share
    ``(var_between + noise) / n``: for clusters of equal size the ANOVA estimate, and with
    unequal ones it carries their spread (what it weighs on an item-weighted mean), floored at 0.
    """
    g, n_g = _compact(cluster)
    n = v.size
    if n_g < 2 or n_g == n:
        return max(float(np.var(v, ddof=1)) - noise, 0.0), 0.0, n_g
    sizes = np.bincount(g, minlength=n_g).astype(float)
    means = np.bincount(g, weights=v, minlength=n_g) / sizes
    msw = float(np.sum((v - means[g]) ** 2)) / (n - n_g)
    se = _cluster_se(v, g, n_g)
    clustered = 0.0 if se is None else se * se
    return max(msw - noise, 0.0), max(n_g * (clustered - msw / n), 0.0), n_g
