"""Other tests of a paired difference, set beside hrbench's on simulated benchmarks (:mod:`hrbench.testing._designs`).

The clustered t test (:func:`clustered_t_p`) and the exact cluster sign-flip test
(:func:`sign_flip_p`), and how many clusters hold any disagreement (:func:`disagreeing_clusters`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = [
    "SkewedT",
    "bootstrap_t",
    "clustered_t_p",
    "disagreeing_clusters",
    "hall_t",
    "johnson_t_p",
    "sign_flip_p",
    "skewed_t",
]


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


class SkewedT(NamedTuple):
    """A clustered mean's t statistic with its skewness, the parts of the skewness-corrected t tests.

    ``est`` is ``mean(d)``, ``se`` its CR2 standard error (:func:`~hrbench.stats.cluster_se`),
    ``skew`` the estimated skewness of ``est`` itself (its third cumulant over ``se**3``: the
    data's skewness over ``sqrt(G)`` for equal clusters), ``df`` the design's degrees of freedom
    (:func:`~hrbench.stats.design_df`).
    """

    est: float
    se: float
    skew: float
    df: int


def skewed_t(d: np.ndarray, cluster: np.ndarray, n_clusters: int) -> SkewedT | None:
    """The parts of the skewness-corrected t tests of ``mean(d)`` over clusters; ``None`` where t is not defined.

    The third cumulant of ``mean(d)`` is estimated from the clusters' residual totals
    ``e_c = sum over the cluster of (d - mean(d))`` as ``sum(e_c**3) / n**3`` times
    ``G**2 / ((G - 1) (G - 2))``, which for one item per cluster is the unbiased third moment of
    the data over ``n**2`` (Johnson 1978); with 2 clusters it cannot be estimated and is 0 (the
    corrections are then the t test). ``None`` with one cluster, or where the clusters show no
    spread (as :func:`clustered_t_p` does not reject there).

    Example:
        >>> p = skewed_t(np.array([0.2, 0.2, 0.2, 0.2, -0.4]), np.arange(5), 5)
        >>> round(p.est, 3), round(p.se, 4), round(p.skew, 4), p.df
        (0.08, 0.12, -1.0, 4)
    """
    from hrbench.stats import cluster_se, design_df, estimable

    se = cluster_se(d, cluster, n_clusters)
    if se is None or not estimable(min(float(np.abs(d).mean()), 0.5), se * se, d.size):
        return None
    est = float(d.mean())
    df = design_df(d, cluster, n_clusters)
    if n_clusters < 3:
        return SkewedT(est, se, 0.0, df)
    e = np.bincount(cluster, weights=d - est, minlength=n_clusters)
    k3 = float(np.sum(e**3)) / d.size**3 * n_clusters**2 / ((n_clusters - 1) * (n_clusters - 2))
    return SkewedT(est, se, k3 / se**3, df)


def johnson_t_p(d: np.ndarray, cluster: np.ndarray, n_clusters: int) -> float:
    """The two-sided p-value of Johnson's modified t test of ``mean(d) = 0`` over clusters.

    Johnson (1978), "Modified t tests and confidence intervals for asymmetrical populations",
    JASA 73:536-544: ``t1 = T + skew / 6 + skew * T**2 / 3`` with ``T = est / se`` and ``skew``
    the estimator's skewness (:func:`skewed_t`), referred to t on the design's df. It removes the
    first-order effect of skewness on the t statistic's distribution (Edgeworth). 1 where
    :func:`skewed_t` is ``None``.

    Example:
        >>> round(johnson_t_p(np.array([0.2, 0.2, 0.2, 0.2, -0.4]), np.arange(5), 5), 4)
        0.7427
    """
    from scipy.special import stdtr

    p = skewed_t(d, cluster, n_clusters)
    if p is None:
        return 1.0
    t = p.est / p.se
    return min(1.0, 2.0 * float(stdtr(p.df, -abs(t + p.skew / 6.0 + p.skew * t * t / 3.0))))


def hall_t(
    d: np.ndarray, cluster: np.ndarray, n_clusters: int, level: float = 0.95
) -> tuple[float, float, float]:
    """The interval and two-sided p-value of Hall's transformed t of ``mean(d)`` over clusters.

    Hall (1992), "On the removal of skewness by transformation", JRSS B 54:221-228: with
    ``T = (est - mu) / se``, ``a = skew / 3`` and ``b = skew / 6`` (:func:`skewed_t`),
    ``g(T) = T + a T**2 + a**2 T**3 / 3 + b`` is Johnson's statistic made monotone
    (``g'(T) = (1 + a T)**2``), so it inverts: ``|g(T)| <= c`` (``c`` the t quantile on the
    design's df) holds for ``T`` in ``[g^-1(-c), g^-1(c)]``, ``g^-1(x) = ((3 a (x - b) + 1)**(1/3) - 1) / a``,
    and the interval for ``mu`` is ``[est - g^-1(c) se, est - g^-1(-c) se]``. The p-value is
    that of ``|g(est / se)|`` on t. ``(-1, 1, 1.0)`` where :func:`skewed_t` is ``None``.

    Example:
        >>> lo, hi, p = hall_t(np.array([0.2, 0.2, 0.2, 0.2, -0.4]), np.arange(5), 5)
        >>> round(lo, 4), round(hi, 4), round(p, 4)
        (-0.7292, 0.2722, 0.7351)
    """
    from scipy.special import stdtr, stdtrit

    p = skewed_t(d, cluster, n_clusters)
    if p is None:
        return -1.0, 1.0, 1.0
    a, b = p.skew / 3.0, p.skew / 6.0

    def inverse(x: float) -> float:
        return x - b if abs(a) < 1e-12 else float((np.cbrt(3.0 * a * (x - b) + 1.0) - 1.0) / a)

    c = float(stdtrit(p.df, 0.5 + level / 2))
    t = p.est / p.se
    g = t + a * t * t + a * a * t**3 / 3.0 + b
    return p.est - inverse(c) * p.se, p.est - inverse(-c) * p.se, min(1.0, 2.0 * float(stdtr(p.df, -abs(g))))


def bootstrap_t(
    d: np.ndarray,
    cluster: np.ndarray,
    n_clusters: int,
    rng: np.random.Generator,
    n_boot: int = 999,
    level: float = 0.95,
) -> tuple[float, float, float]:
    """The cluster bootstrap-t (studentized) interval and two-sided p-value of ``mean(d)``.

    Clusters are drawn with replacement ``n_boot`` times; each resample's
    ``T* = (est* - est) / se*`` (``se*`` the CR2 standard error of the resample, as
    :func:`~hrbench.stats.cluster_se`) gives the quantiles of the studentized mean, and the
    interval is ``[est - q(1 - alpha/2) se, est - q(alpha/2) se]`` (Efron & Tibshirani 1993,
    ch. 12; Cameron, Gelbach & Miller 2008 for clusters). Resamples of one repeated cluster
    (``se* = 0``) are left out. The p-value is twice the smaller share of ``T*`` beyond
    ``est / se`` on either side (the equal-tailed interval's inversion). ``(-1, 1, 1.0)`` (no
    test) with fewer than 3 clusters, where :func:`skewed_t` is ``None`` or where fewer than 10
    resamples have spread.
    """
    p = skewed_t(d, cluster, n_clusters)
    if p is None or n_clusters < 3:
        return -1.0, 1.0, 1.0
    tot = np.bincount(cluster, weights=d, minlength=n_clusters)
    sizes = np.bincount(cluster, minlength=n_clusters).astype(float)
    draws = rng.integers(0, n_clusters, size=(n_boot, n_clusters))
    t_c, s_c = tot[draws], sizes[draws]
    n = s_c.sum(axis=1)
    est = t_c.sum(axis=1) / n
    e = t_c - s_c * est[:, None]
    se = np.sqrt(np.maximum(np.sum(e * e / (1.0 - s_c / n[:, None]), axis=1), 0.0)) / n
    ok = se > 1e-9 * p.se
    if np.count_nonzero(ok) < 10:
        return -1.0, 1.0, 1.0
    star = (est[ok] - p.est) / se[ok]
    q_lo, q_hi = np.quantile(star, [0.5 - level / 2, 0.5 + level / 2])
    t = p.est / p.se
    pv = 2.0 * min(float(np.mean(star >= t)), float(np.mean(star <= t)))
    return p.est - float(q_hi) * p.se, p.est - float(q_lo) * p.se, min(1.0, pv)
