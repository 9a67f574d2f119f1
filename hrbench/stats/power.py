"""Planning: how many items (and runs) a paired comparison needs, :func:`power`."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hrbench.errors import ConfigError
from hrbench.stats.intervals import _cluster_se, _compact, _components, _sps
from hrbench.stats.records import PowerPlan, PowerPoint
from hrbench.stats.table import MIN_RUNS, _arm_code, _items, _Table, _table

_TRADEOFF_RUNS = (1, 2, 3, 5, 10, 20)


def power(
    diff: float,
    alpha: float = 0.05,
    power: float = 0.8,
    *,
    var_within: float | None = None,
    var_between: float | None = None,
    runs: int | None = None,
    bench: Any = None,
    arm_a: str | None = None,
    arm_b: str | None = None,
    design_effect: float | None = None,
    items_per_cluster: float | None = None,
    n_items: int | None = None,
) -> PowerPlan:
    """Items needed to detect a difference ``diff`` between two arms in a paired comparison.

    Miller (2024) §5: with ``K`` runs per item the variance of one item's difference is
    ``var_between + var_within / K``, so the mean difference over ``n`` items has variance
    ``design_effect * (var_between + var_within / K) / n``. The test is the one
    :func:`~hrbench.stats.compare` makes (issue 14: the same reference distribution): Student's
    t on ``clusters - 1`` degrees of freedom, with ``clusters = ceil(n / items_per_cluster)``.
    Its power at ``n`` items is that of the noncentral t,
    ``P(|T| > t_{1 - alpha/2, G - 1})`` with ``T ~ nct(G - 1, diff / sd(mean difference))``,
    and ``n_items`` is the smallest ``n`` (at least 2) whose power reaches ``power``. With few
    clusters that is far more than the normal approximation ``(z_{1-alpha/2} + z_power)**2 *
    variance / diff**2`` promises (5 clusters: the normal approximation sized a design whose
    real power was 0.69 for a promised 0.90). More runs per item shrink only the second term:
    ``min_items`` is the floor as ``K`` grows.

    The variance components are stated (``var_within``, ``var_between``) or taken from
    ``bench``: with ``arm_a`` and ``arm_b`` (by default its first two arms) from their paired
    per-item differences (``var_within`` is the sum of the two arms' run-to-run variances,
    ``var_between`` the moment estimate of the true differences' variance, ``design_effect`` the
    ratio of the clustered to the independent variance of the mean difference, at least 1,
    ``items_per_cluster`` the mean over its clusters); with a single arm, as if comparing two
    uncorrelated arms like it (twice its components: a conservative plan). Stated values
    override the benchmark's.

    Args:
        diff: the difference in accuracy to detect (proportion units, e.g. 0.03).
        alpha: two-sided significance level.
        power: the probability of detecting ``diff`` when it is real.
        var_within: run-to-run variance of a per-run score difference (for two arms with
            run-to-run variances ``s_a**2`` and ``s_b**2``, their sum).
        var_between: variance across items of the true per-item difference.
        runs: runs per item (default: the benchmark's, else 5).
        bench: a benchmark (as for :func:`report`) to estimate the components from.
        arm_a: the first arm of ``bench`` to plan for (default: its first arm).
        arm_b: the second arm (default: the next arm; none when ``bench`` has one arm).
        design_effect: variance inflation from clusters (default: from ``bench``, else 1).
        items_per_cluster: items per cluster, which sets the degrees of freedom (default: from
            ``bench``, else 1: every item its own cluster).
        n_items: evaluate the plan at this many items instead of solving for them: the plan's
            ``achieved`` is then the power those items give.

    Returns:
        A :class:`PowerPlan` with ``n_items``, its clusters, the power it achieves and the
        runs-per-item trade-off.

    Raises:
        ConfigError: ``diff`` is 0, ``alpha``/``power`` are not in (0, 1), the variance
            components are missing (no ``bench``) or negative, or ``items_per_cluster`` or
            ``n_items`` are out of range.

    Example:
        >>> plan = power(0.05, var_within=0.2, var_between=0.04, runs=5)
        >>> plan.n_items, plan.min_items, round(plan.achieved, 3)
        (254, 128, 0.801)
        >>> few = power(0.05, var_within=0.2, var_between=0.04, runs=5, items_per_cluster=60)
        >>> few.n_clusters, few.n_items > plan.n_items
        (7, True)
    """
    if not diff or not math.isfinite(diff):
        raise ConfigError("diff", diff, "must be a non-zero difference in accuracy, e.g. 0.03")
    for field, v in (("alpha", alpha), ("power", power)):
        if not 0 < v < 1:
            raise ConfigError(field, v, "must be strictly between 0 and 1")
    source = "assumed"
    if bench is not None:
        t = _table(bench)
        if arm_a is None:
            arm_a = t.arms[0]
        if arm_b is None and arm_a != t.arms[-1] and len(t.arms) > 1:
            arm_b = next(a for a in t.arms if a != arm_a)
        bw, bb, deff_b, m_b = _bench_components(t, arm_a, arm_b)
        source = f"bench: {arm_a} vs {arm_b}" if arm_b else f"bench: {arm_a} (x2, as two uncorrelated arms)"
        var_within = bw if var_within is None else var_within
        var_between = bb if var_between is None else var_between
        design_effect = deff_b if design_effect is None else design_effect
        items_per_cluster = m_b if items_per_cluster is None else items_per_cluster
        runs = t.runs if runs is None else runs
    if var_within is None or var_between is None:
        raise ConfigError(
            "var_within/var_between", (var_within, var_between), "state both, or pass bench= to estimate them"
        )
    if var_within < 0 or var_between < 0:
        raise ConfigError("var_within/var_between", (var_within, var_between), "must not be negative")
    runs = MIN_RUNS if runs is None else int(runs)
    if runs < 1:
        raise ConfigError("runs", runs, "must be at least 1")
    m = 1.0 if items_per_cluster is None else float(items_per_cluster)
    if not (math.isfinite(m) and m >= 1):
        raise ConfigError("items_per_cluster", items_per_cluster, "must be a number, at least 1")
    if n_items is not None and not (isinstance(n_items, int) and n_items >= 2):
        raise ConfigError("n_items", n_items, "must be a whole number, at least 2")
    deff = 1.0 if design_effect is None else float(design_effect)
    d = abs(float(diff))

    def clusters(n: int) -> int:
        return max(2, math.ceil(n / m - 1e-9))

    def achieved(n: int, k: float) -> float:
        var = deff * (var_between + var_within / k) / n
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
    return PowerPlan(
        diff=d,
        alpha=float(alpha),
        power=float(power),
        runs=runs,
        n_items=n,
        var_within=float(var_within),
        var_between=float(var_between),
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


def _bench_components(t: _Table, arm_a: str, arm_b: str | None) -> tuple[float, float, float, float]:
    """(var_within, var_between, design_effect, items_per_cluster) of a paired difference."""
    ia = _items(t, _arm_code(t, arm_a, "arm_a"))
    if arm_b is None:
        w, b = _components(ia)
        if w is None or b is None:
            raise ConfigError(
                "bench", t.runs, "needs at least 2 runs per item to estimate variance components"
            )
        return 2 * w, 2 * b, *_clustering(ia.y, ia.cluster)
    ib = _items(t, _arm_code(t, arm_b, "arm_b"))
    common, pa, pb = np.intersect1d(ia.idx, ib.idx, assume_unique=True, return_indices=True)
    ka, kb = ia.k[pa], ib.k[pb]
    has = (ka > 1) & (kb > 1)
    if common.size < 2 or not has.any():
        raise ConfigError("bench", t.runs, "needs at least 2 common items with 2 or more runs each")
    sa, sb = ia.s2[pa][has], ib.s2[pb][has]
    d = ia.y[pa] - ib.y[pb]
    within = float(np.mean(sa) + np.mean(sb))
    between = max(float(np.var(d, ddof=1)) - float(np.mean(sa / ka[has] + sb / kb[has])), 0.0)
    return within, between, *_clustering(d, t.item_cluster[common])


def _clustering(v: np.ndarray, cluster: np.ndarray) -> tuple[float, float]:
    """(design_effect, items_per_cluster) of ``mean(v)``: clustered over independent variance."""
    g, n_g = _compact(cluster)
    iid = float(np.var(v, ddof=1)) / v.size if v.size > 1 else 0.0
    cl = _cluster_se(v, g, n_g)
    deff = max(1.0, (cl * cl) / iid) if (cl is not None and iid > 0) else 1.0
    return deff, v.size / n_g
