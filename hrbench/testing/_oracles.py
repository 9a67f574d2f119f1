"""Other tests of a paired difference, set beside hrbench's on simulated benchmarks (:mod:`hrbench.testing._designs`).

The clustered t test (:func:`clustered_t_p`) and the exact cluster sign-flip test
(:func:`sign_flip_p`), and how many clusters hold any disagreement (:func:`disagreeing_clusters`).
"""

from __future__ import annotations

import numpy as np

__all__ = ["clustered_t_p", "disagreeing_clusters", "sign_flip_p"]


def disagreeing_clusters(d: np.ndarray, cluster: np.ndarray, n_clusters: int) -> int:
    """How many clusters hold an item on which the two arms' scores differ (``d`` nonzero)."""
    return int(np.count_nonzero(np.bincount(cluster, weights=np.abs(d) > 1e-12, minlength=n_clusters)))


def sign_flip_p(counts: np.ndarray, cluster: np.ndarray, n_clusters: int) -> float:
    """The exact two-sided p-value of the cluster sign-flip test of a paired difference.

    Under "the arms are exchangeable within each cluster" (equally good, or differing cluster by
    cluster with no average difference) each cluster's total difference is as likely with
    either sign; the p-value is the share of the ``2**G`` sign patterns whose total is at least
    the observed one in absolute value. ``counts`` are integer per-item differences (correct
    runs of ``a`` minus ``b``), so the totals are integers and the distribution over all sign
    patterns is built exactly by convolution, one cluster at a time (``scipy.stats.permutation_test``
    enumerates the ``2**G`` patterns, out of reach at 50 clusters). It is valid whatever the
    distribution, and discrete: with ``G`` clusters it is at least ``2 / 2**G``, so with 5 or fewer
    clusters it never rejects at 0.05.

    Example:
        >>> sign_flip_p(np.array([1, 1, 1, 1, 1, 1]), np.arange(6), 6)  # 2 of 64 patterns reach 6
        0.03125
    """
    totals = np.bincount(cluster, weights=counts, minlength=n_clusters)
    t = np.rint(np.abs(totals)).astype(np.int64)
    observed = int(abs(round(float(totals.sum()))))
    t = t[t > 0]
    top = int(t.sum())
    dist = np.zeros(2 * top + 1)
    dist[top] = 1.0
    for x in t.tolist():
        new = np.zeros_like(dist)
        new[x:] += dist[:-x]
        new[:-x] += dist[x:]
        dist = new * 0.5
    values = np.abs(np.arange(-top, top + 1))
    return float(min(1.0, dist[values >= observed].sum()))


def clustered_t_p(d: np.ndarray, cluster: np.ndarray, n_clusters: int) -> float:
    """The two-sided p-value of the clustered t test: ``mean(d) / se`` (CR2) on the design's df.

    The same standard error and degrees of freedom as hrbench's paired comparison
    (:func:`~hrbench.stats.design_df`; with equal clusters it is the one-sample t
    test on the cluster means). Where the clusters show no spread at all (their totals tie:
    a standard error of 0 up to rounding, common with 2 clusters) the statistic is not defined
    and the test does not reject: p is 1 (counting those as rejections, as ``diff / 0`` would,
    gave it 0.05 false positives on 2 clusters of 20 items, half of them on ties).
    """
    from scipy import stats

    from hrbench.stats import cluster_se, design_df, estimable

    diff = float(d.mean())
    se = cluster_se(d, cluster, n_clusters)
    if se is None or not estimable(min(float(np.abs(d).mean()), 0.5), se * se, d.size):
        return 1.0
    return float(2.0 * stats.t.sf(abs(diff) / se, design_df(d, cluster, n_clusters)))
