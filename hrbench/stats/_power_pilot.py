"""A pilot benchmark's variance components of a paired difference, for :func:`~hrbench.stats.power`."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from hrbench.errors import ConfigError
from hrbench.stats._intervals import _cluster_se, _compact, _components
from hrbench.stats._table import _arm_code, _items, _Table


class _Pilot(NamedTuple):
    """Variance components of a paired difference estimated from a pilot benchmark."""

    within: float  # run-to-run variance of a per-run difference
    between: float  # variance of the items' true differences within a cluster
    cluster: float  # variance between clusters of the mean true difference (size spread included)
    items: int
    clusters: int
    accuracy: float  # the mean accuracy of the two arms (of the one arm) over the items
    sizes: np.ndarray  # the items of each of its clusters
    cluster_accuracy: float = 0.0  # variance between clusters of the two arms' (the arm's) mean accuracy


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
        sizes = _sizes_of(ia.cluster)
        return _Pilot(
            2 * w, 2 * got[0], 2 * got[1], int(ia.y.size), got[2], float(ia.y.mean()), sizes, got[1]
        )
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
    accuracy = float((ia.y[pa].mean() + ib.y[pb].mean()) / 2)
    mean_noise = float(np.mean(sa / ka[has] + sb / kb[has])) / 4  # of (y_a + y_b) / 2
    _, cluster_accuracy, _ = _split((ia.y[pa] + ib.y[pb]) / 2, t.item_cluster[common], mean_noise)
    sizes = _sizes_of(t.item_cluster[common])
    return _Pilot(within, between, cluster, int(d.size), n_g, accuracy, sizes, cluster_accuracy)


def _sizes_of(cluster: np.ndarray) -> np.ndarray:
    """The items of each cluster of the per-item cluster codes ``cluster``."""
    return np.bincount(_compact(cluster)[0])


def _split(v: np.ndarray, cluster: np.ndarray, noise: float) -> tuple[float, float, int]:
    """(var_between, var_cluster, clusters) of per-item values ``v`` holding run noise ``noise``.

    ``var_between`` is the within-cluster mean square less the run noise (one-way ANOVA; with one
    item per cluster, or one cluster, the whole spread of ``v`` less the noise); ``var_cluster``
    is the CR2 clustered variance of ``mean(v)`` less the items' share ``(var_between + noise) /
    n``, over ``sum(n_c**2) / n**2`` (what a cluster's own difference weighs on an item-weighted
    mean; ``1 / G`` for clusters of equal size: the ANOVA estimate), floored at 0.
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
    weight = float(np.sum(sizes**2)) / (n * n)
    return max(msw - noise, 0.0), max((clustered - msw / n) / weight, 0.0), n_g
