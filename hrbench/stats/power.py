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
) -> PowerPlan:
    """Items needed to detect a difference ``diff`` between two arms in a paired comparison.

    Miller (2024) §5: with ``K`` runs per item the variance of one item's difference is
    ``var_between + var_within / K``, so a two-sided test at ``alpha`` has power ``power`` with
    ``n = ceil((z_{1-alpha/2} + z_{power})**2 * design_effect * (var_between + var_within / K)
    / diff**2)`` items (normal approximation; at least 2). More runs per item shrink only the
    second term: ``min_items`` is the floor as ``K`` grows.

    The variance components are stated (``var_within``, ``var_between``) or taken from
    ``bench``: with ``arm_a`` and ``arm_b`` (by default its first two arms) from their paired
    per-item differences (``var_within`` is the sum of the two arms' run-to-run variances,
    ``var_between`` the moment estimate of the true differences' variance, ``design_effect`` the
    ratio of the clustered to the independent variance of the mean difference, at least 1);
    with a single arm, as if comparing two uncorrelated arms like it (twice its components: a
    conservative plan). Stated values override the benchmark's.

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

    Returns:
        A :class:`PowerPlan` with ``n_items`` and the runs-per-item trade-off.

    Raises:
        ConfigError: ``diff`` is 0, ``alpha``/``power`` are not in (0, 1), or the variance
            components are missing (no ``bench``) or negative.

    Example:
        >>> plan = power(0.05, var_within=0.2, var_between=0.04, runs=5)
        >>> plan.n_items, plan.min_items
        (252, 126)
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
        bw, bb, deff = _bench_components(t, arm_a, arm_b)
        source = f"bench: {arm_a} vs {arm_b}" if arm_b else f"bench: {arm_a} (x2, as two uncorrelated arms)"
        var_within = bw if var_within is None else var_within
        var_between = bb if var_between is None else var_between
        design_effect = deff if design_effect is None else design_effect
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
    deff = 1.0 if design_effect is None else float(design_effect)
    z = float(_sps().norm.ppf(1 - alpha / 2) + _sps().norm.ppf(power))
    scale = z * z * deff / (diff * diff)

    def need(k: float) -> int:
        return max(2, math.ceil(scale * (var_between + var_within / k) - 1e-9))

    tradeoff = [
        PowerPoint(runs=k, n_items=need(k), total_runs=k * need(k)) for k in sorted({*_TRADEOFF_RUNS, runs})
    ]
    return PowerPlan(
        diff=abs(float(diff)),
        alpha=float(alpha),
        power=float(power),
        runs=runs,
        n_items=need(runs),
        var_within=float(var_within),
        var_between=float(var_between),
        design_effect=deff,
        min_items=need(math.inf),
        tradeoff=tradeoff,
        source=source,
    )


def _bench_components(t: _Table, arm_a: str, arm_b: str | None) -> tuple[float, float, float]:
    """(var_within, var_between, design_effect) of a paired difference, from a benchmark."""
    ia = _items(t, _arm_code(t, arm_a, "arm_a"))
    if arm_b is None:
        w, b = _components(ia)
        if w is None or b is None:
            raise ConfigError(
                "bench", t.runs, "needs at least 2 runs per item to estimate variance components"
            )
        return 2 * w, 2 * b, 1.0
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
    g, n_g = _compact(t.item_cluster[common])
    iid = float(np.var(d, ddof=1)) / d.size
    cl = _cluster_se(d, g, n_g)
    deff = max(1.0, (cl * cl) / iid) if (cl is not None and iid > 0) else 1.0
    return within, between, deff
