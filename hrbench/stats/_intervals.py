"""Standard errors and intervals: clustered, t, cluster bootstrap; variance components."""

from __future__ import annotations

import math
import zlib
from typing import Any, NamedTuple

import numpy as np

from hrbench.stats import _nesting
from hrbench.stats._nesting import _TINY
from hrbench.stats._table import _Items
from hrbench.stats._wilson import _ALPHAS, _Bound, _bounded_wilson, _bounded_wilson_v

FEW_CLUSTERS = 10
"""Clusters below which an arm is flagged ``few_clusters``: t on ``clusters - 1`` df makes it wide."""

FEW_CLUSTERS_NOTE = f"few clusters (fewer than {FEW_CLUSTERS}): intervals on t with clusters-1 df are wide."

_BOOT_CELLS = 2_000_000  # resample-by-cluster cells held in memory at once (16 MB of float64)


def _sps() -> Any:
    """``scipy.stats``, imported on first use: ``import hrbench`` must not pay ~0.4 s for scipy."""
    from scipy import stats

    return stats


def _compact(cluster: np.ndarray) -> tuple[np.ndarray, int]:
    uniq, inv = np.unique(cluster, return_inverse=True)
    return inv, int(uniq.size)


def _cluster_cov(u: np.ndarray, v: np.ndarray, g: np.ndarray, n_g: int) -> float:
    """CR2 (Bell-McCaffrey) clustered covariance of ``mean(u)`` and ``mean(v)``.

    For a mean, the CR2 adjustment divides each cluster's squared total of residuals by
    ``1 - n_c / n`` (one minus the cluster's leverage): with equal clusters it is CR1's
    ``G / (G - 1)``, and with unequal ones it inflates the large clusters, whose residuals the
    mean has pulled toward itself (Bell & McCaffrey 2002; Pustejovsky & Tipton 2018).
    """
    n = u.size
    tu = np.bincount(g, weights=u - u.mean(), minlength=n_g)
    tv = tu if v is u else np.bincount(g, weights=v - v.mean(), minlength=n_g)
    keep = np.bincount(g, minlength=n_g) / n
    return float(np.sum(tu * tv / (1.0 - keep))) / (n * n)


def cluster_se(v: np.ndarray, g: np.ndarray, n_g: int) -> float | None:
    """The CR2 clustered standard error of ``mean(v)`` (Bell & McCaffrey 2002), in ``v``'s units.

    Args:
        v: one value per unit (an item's mean score, its cost in USD), shape ``(n,)``.
        g: each unit's cluster, integer codes ``0 .. n_g - 1``, shape ``(n,)``.
        n_g: the number of clusters.

    Returns:
        The standard error, or ``None`` with fewer than 2 clusters.

    Example:
        >>> round(cluster_se(np.array([1.0, 0.0, 1.0, 0.0]), np.array([0, 1, 2, 3]), 4), 4)
        0.2887
    """
    if n_g < 2:
        return None
    return math.sqrt(max(_cluster_cov(v, v, g, n_g), 0.0))


_cluster_se = cluster_se  # the name hrbench.stats._power imports


_BM_MAX_CLUSTERS = 1000  # above this, G - 1 df (G x G matrices; the t quantile is near the normal one)


def _icc(y: np.ndarray, g: np.ndarray, n_g: int) -> float:
    """The one-way ANOVA estimate of the intra-cluster correlation of ``y``, within [0, 1)."""
    n = y.size
    sizes = np.bincount(g, minlength=n_g).astype(float)
    means = np.bincount(g, weights=y, minlength=n_g) / sizes
    msb = float(np.sum(sizes * (means - y.mean()) ** 2)) / (n_g - 1)
    msw = float(np.sum((y - means[g]) ** 2)) / (n - n_g) if n > n_g else 0.0
    n0 = (n - float(np.sum(sizes**2)) / n) / (n_g - 1)
    denom = msb + (n0 - 1) * msw
    return min(max((msb - msw) / denom, 0.0), 0.99) if denom > 0 else 0.0


def design_df(y: np.ndarray, g: np.ndarray, n_g: int) -> int:
    """Degrees of freedom of the t reference for a clustered (CR2) mean of ``y``.

    With clusters of equal size it is ``clusters - 1``, the design-based df of survey
    packages (Korn & Graubard 1998). With unequal clusters the CR2 variance leans on the large
    clusters and has fewer: the Bell-McCaffrey (Satterthwaite) df, ``(tr A)**2 / tr(A @ A)``
    for the CR2 variance as a quadratic form ``y' M y``, ``A = M Omega``, under a working
    model of exchangeable correlation within clusters with the intra-cluster correlation
    estimated from ``y`` (one-way ANOVA; Bell & McCaffrey 2002, "Bias reduction in standard
    errors for linear regression with multi-stage samples", Survey Methodology 28:169-181;
    Imbens & Kolesar 2016, "Robust standard errors in small samples: some practical advice",
    Rev. Econ. Stat. 98:701-712; Pustejovsky & Tipton 2018). It is rounded down (never more
    than ``clusters - 1``) and is at least 1; above 1,000 clusters it is ``clusters - 1``.
    With 15 clusters of 2-40 items the interval on ``clusters - 1`` df covers 0.933.

    Args:
        y: per-item values, shape (n,).
        g: per-item cluster codes in ``range(n_g)``, shape (n,).
        n_g: the number of clusters (at least 2).

    Returns:
        The whole number of degrees of freedom, in ``[1, n_g - 1]``.

    Example:
        >>> design_df(np.arange(12.0), np.repeat(np.arange(4), 3), 4)
        3
        >>> design_df(np.arange(12.0) % 2, np.repeat(np.arange(3), [2, 2, 8]), 3)
        1
    """
    sizes = np.bincount(g, minlength=n_g).astype(float)
    if n_g < 3 or n_g > _BM_MAX_CLUSTERS or sizes.min() == sizes.max():
        return max(n_g - 1, 1)
    return sized_df(sizes, _icc(y, g, n_g))


def sized_df(sizes: np.ndarray, rho: float) -> int:
    """:func:`design_df` for clusters of ``sizes`` items whose intra-cluster correlation is ``rho``.

    Example:
        >>> sized_df(np.array([10.0, 10.0, 10.0]), 0.1), sized_df(np.array([2.0, 2.0, 8.0, 40.0]), 0.05)
        (2, 1)
    """
    n_g = int(sizes.size)
    if n_g < 3 or n_g > _BM_MAX_CLUSTERS or sizes.min() == sizes.max():
        return max(n_g - 1, 1)
    alone, shared = _sized_df_parts(sizes)
    a = (1.0 - rho) * alone + rho * shared
    tr, tr2 = float(np.trace(a)), float(np.sum(a * a))
    df = tr * tr / tr2 if tr2 > 0 else n_g - 1.0
    return int(min(max(math.floor(df + 1e-9), 1), n_g - 1))


def _sized_df_parts(sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The matrices ``A`` of :func:`sized_df` at ``rho`` 0 and 1: at ``rho`` it is ``(1 - rho) A0 + rho A1``."""
    n = float(sizes.sum())
    # the CR2 variance is sum_c w_c (q_c' y)**2, q_c = 1_c - (n_c / n) 1 (the cluster's residual total)
    sw = np.sqrt(1.0 / ((1.0 - sizes / n) * n * n))
    q = np.diag(sizes) - np.outer(sizes, sizes) / n  # q[e, c] = 1_e' q_c
    # q_c' Omega q_d; q is symmetric, and q' q = D**2 - (D s s' + s s' D) / n + s s' |s|**2 / n**2
    qq = np.diag(sizes**2) - (sizes[:, None] + sizes[None, :]) * np.outer(sizes, sizes) / n
    qq += np.outer(sizes, sizes) * float(np.sum(sizes**2)) / (n * n)
    return sw[:, None] * q * sw[None, :], sw[:, None] * qq * sw[None, :]


def _t_quantile(level: float, df: int) -> float:
    """The two-sided ``level`` quantile of Student's t on ``df`` degrees of freedom.

    ``scipy.special.stdtrit`` is what ``scipy.stats.t.ppf`` computes it with (the same float);
    importing ``scipy.stats`` for it added about 0.5 s of CPU to each daemon's first report.
    """
    from scipy.special import stdtrit

    return float(stdtrit(df, 0.5 + level / 2))


class Interval(NamedTuple):
    """An estimate with its standard error, interval and (for a difference) its p-value."""

    est: float
    se: float | None
    low: float | None
    high: float | None
    n_eff: float | None = None
    p_value: float | None = None
    df: int | None = None


_VAR_RTOL = 1e-9
"""A clustered variance below this fraction of ``p (1 - p) / n`` is taken as 0 (:func:`estimable`)."""


def estimable(p: float, var: float, n: int) -> bool:
    """Whether a design effect can be estimated: ``p`` inside (0, 1) and a variance that is not 0.

    "Not 0" is relative: below ``_VAR_RTOL`` times the independent variance ``p (1 - p) / n``
    (a design effect under 1e-9) it is rounding left over when cluster totals cancel exactly
    (equal cluster means leave ~1e-33, whose Kish size was ~1e30: an interval of one point and
    a p-value of 1e-17 on two clusters).

    Args:
        p: the proportion (an accuracy, or a rate of disagreement).
        var: its clustered variance (:func:`cluster_se` squared).
        n: the units (items) behind it.

    Example:
        >>> estimable(0.5, 0.01, 40), estimable(0.5, 1e-33, 40), estimable(1.0, 0.01, 40)
        (True, False, False)
    """
    return 0.0 < p < 1.0 and var > _VAR_RTOL * p * (1.0 - p) / n


def _effective_n(p: float, var: float, n: int, cap: float | None = None) -> float:
    """Kish's effective sample size ``p (1 - p) / var``, at most ``cap``; ``n`` when it cannot be estimated.

    At ``p`` 0 or 1, or with a clustered variance of 0 (relative to ``p (1 - p) / n``:
    :func:`estimable`), there is no design effect to estimate, and the units (items) are the
    most the data can hold: ``n`` whatever the runs per item, since the runs of an item may
    agree every time (Korn & Graubard 1998 set ``n* = n`` there). Cluster means that agree by
    chance leave such a variance: 0 up to rounding (1e-34), and Kish's size was 1e33, an
    interval of one point (the hypothesis test of the interval properties shows it, and with
    the runs given, a simulation: 2.4-2.9% of the intervals on 2 clusters).

    ``cap``: the most it may be: the items when the runs behind the scores are not known
    (Korn & Graubard's truncation of a design effect below 1); none when they are. Not
    capped at the runs: with 2 or 3 clusters the clustered variance is often small by
    chance (below ``p (1 - p) / runs`` in 30% of benchmarks of 3 clusters of 10 items), the t
    quantile on 1 or 2 df already allows for that, and a floor at the runs made per-arm
    coverage 0.994-0.999 there (without it 0.949-0.955; the t interval of the cluster means
    0.945-0.949).
    """
    if not estimable(p, var, n):
        return float(n)
    n_eff = p * (1 - p) / var
    return n_eff if cap is None else min(n_eff, cap)


def effective_clusters(g: np.ndarray, n_g: int) -> float:
    """Kish's effective number of clusters, ``n**2 / sum(n_c**2)``: the items' worth when a cluster acts as one.

    An arm right on every run (or on none) shows no failure (no success), so nothing says
    whether its failures would come one item at a time or a whole cluster at once (a model
    that cannot read one document fails every question on it). Its interval is sized for the
    second: each cluster one unit, weighed by its items (``G`` for clusters of equal size, the
    items when every item is its own cluster). With whole-cluster failures, sizing it on the
    items covered 0.59-0.69 (an arm right on all 200 items of 10 clusters got [0.975, 1]).

    Example:
        >>> effective_clusters(np.repeat(np.arange(10), 20), 10)
        10.0
        >>> round(effective_clusters(np.repeat(np.arange(3), [1, 1, 8]), 3), 2)
        1.52
    """
    sizes = np.bincount(g, minlength=n_g).astype(float)
    return float(sizes.sum() ** 2 / np.sum(sizes**2))


def proportion_interval(
    y: np.ndarray, g: np.ndarray, n_g: int, level: float, trials: float | None = None
) -> Interval:
    """The interval for a mean of scores in [0, 1] (item means) sampled in clusters.

    The method is Wilson's score interval on the effective sample size with design-based
    degrees of freedom, as survey packages offer for proportions from cluster samples (Stata's
    ``proportion, citype(wilson)``; Korn & Graubard 1998, "Confidence intervals for proportions
    with small expected number of positive counts estimated from survey data", Survey
    Methodology 24:193-201; Dean & Pagano 2015, "Evaluating confidence interval methods for
    binomial proportions in clustered surveys", J. Survey Stat. Methodol. 3:484-503):

    * ``p`` is the mean of ``y`` and ``var`` its CR2 clustered variance (:func:`_cluster_cov`);
    * ``n_eff = p (1 - p) / var`` (Kish), or the number of items when the variance is 0
      (relative to ``p (1 - p) / n``: equal cluster means leave 1e-33, not 0), and at most the
      items when ``trials`` is unknown (:func:`_effective_n`); when ``p`` is 0 or 1 (no run went
      the other way), the effective number of clusters (:func:`effective_clusters`): failures
      that come a whole cluster at a time cannot be told from none;
    * the interval is Wilson's for ``p`` out of ``n_eff`` with ``z`` the ``t`` quantile on
      :func:`design_df` degrees of freedom (``clusters - 1`` with equal clusters, Bell-McCaffrey's
      with unequal ones);
    * given ``trials`` (the runs behind ``y``), above the highest lower limit data of that
      many runs could give, the upper limit is one-sided (near 0, the lower one):
      :func:`_bounded_wilson`.

    It lies within [0, 1], is asymmetric near 0 and 1 (where the sampling distribution is),
    and has positive width whenever anything was sampled: an arm right on every run of 5 items
    gets about [0.39, 1] with 5 clusters (case R08a), not [1, 1].

    Args:
        y: per-item scores in [0, 1], shape (n,).
        g: per-item cluster codes in ``range(n_g)``, shape (n,).
        n_g: the number of clusters.
        level: the interval's level (0.95 for 95%).
        trials: the number of runs behind ``y`` (``None``: unknown; ``n_eff`` at most the items,
            equal tails).

    Returns:
        An :class:`Interval`; ``se``, ``low`` and ``high`` are ``None`` with fewer than 2
        clusters (no degrees of freedom).

    Example:
        >>> iv = proportion_interval(np.ones(5), np.arange(5), 5, 0.95)
        >>> iv.est, iv.se, round(iv.low, 3), iv.high
        (1.0, 0.0, 0.393, 1.0)
    """
    p = float(y.mean())
    se = cluster_se(y, g, n_g)
    if se is None:
        return Interval(p, None, None, None)
    if p in (0.0, 1.0):  # nothing went the other way: as many units as clusters, if failures come whole
        n_eff = effective_clusters(g, n_g)
    else:
        n_eff = _effective_n(p, se * se, y.size, float(y.size) if trials is None else None)
    df = design_df(y, g, n_g)
    bound = _Bound(df, n_g - 1, trials)
    lo, hi = _bounded_wilson(p, n_eff, 1.0 - level, bound)
    return Interval(p, se, lo, hi, n_eff, df=df)


def difference_interval(
    ya: np.ndarray, yb: np.ndarray, g: np.ndarray, n_g: int, level: float, trials: float | None = None
) -> Interval:
    """The interval and two-sided p-value of a paired difference ``mean(ya - yb)``.

    Each item's difference ``d = ya - yb`` is split into the part where ``a`` did better,
    ``max(d, 0)``, and where ``b`` did, ``max(-d, 0)``: two rates in [0, 1] (the discordance in
    each direction), each given :func:`proportion_interval`'s Wilson interval on its effective
    sample size. Their difference gets the MOVER interval (method of variance estimates
    recovery: Zou & Donner 2008, "Construction of confidence limits about effect measures: a
    general approach", Stat. Med. 27:1693-1702; Newcombe 1998, "Improved confidence intervals
    for the difference between binomial proportions based on paired data", Stat. Med.
    17:2635-2650), with the two rates' correlation from the CR2 clustered covariance. Away from
    the boundary it is the clustered t interval of the mean difference; when the arms rarely
    disagree it is asymmetric as the data are. A direction in which the arms never disagreed
    takes the effective sample size of their disagreement in either direction (a design effect
    borrowed from the closest estimate), and when they never disagree at all, the number of
    items: the interval still has width (about the rule of three over the items), never a
    point. When no item scored differently at all, the interval is never wider than
    :func:`zero_disagreement_bound`, the exact bound for no disagreement in ``G`` clusters.

    A direction whose cluster totals tie exactly (its clustered variance 0 up to rounding, its
    rate inside (0, 1): common with 2 or 3 clusters and few disagreements) adds no spread of its
    own, as in the clustered t test of the difference, while the other direction has some; when
    both tie, both borrow the size of the disagreement in either direction, or the items. (Kish's
    size on a variance of 1e-33 was 1e30: an interval of one point, p = 1e-17 on 2 clusters.)

    Each direction's Wilson interval has equal tails at every level: MOVER reads a limit's
    distance from its rate as that rate's spread at the level, which a one-sided limit near 0
    understates (with the one-sided limits of :func:`_bounded_wilson`, 3 clusters of 10 items
    gave 0.059 false positives, and more rejections than the clustered t test at 2 and 3
    clusters, which :func:`~hrbench.stats.power` could not promise). Near the ceiling with few
    clusters the test then rejects equal arms less than 5% of the time (10 clusters of 3 items
    at accuracy 0.97: about 0.02, most such benchmarks holding disagreement in 5 or fewer
    clusters), with power at least the clustered t test's and above the exact cluster sign-flip
    test's (``bench/coverage.py``). Given ``trials``, Kish's effective sizes are not capped at
    the items (runs that agree within items hold more than one run's worth each).

    Intervals at higher levels contain those at lower ones (else, with 2 clusters, a 95%
    interval can lie inside no 90% one): each rate's limits nest by
    construction, and the MOVER combination is the midpoint of its two nested envelopes, the
    hull over lower levels and the intersection with higher ones (:mod:`hrbench.stats._nesting`;
    where the raw intervals nest it is the raw one; exact at the usual levels, which are on its
    grid; the hull alone covered 0.969 at 2 clusters of 20 items, the midpoint 0.962). The p-value inverts
    the interval: the largest ``alpha`` at which it holds 0, its quantiles on Student's t with
    :func:`design_df` degrees of freedom of the differences (so away from the boundary it is
    the clustered t test, and :func:`~hrbench.stats.power` plans with the same reference
    distribution, or with 10 or fewer clusters simulates this test itself); the interval at a level excludes 0 exactly when ``p < 1 - level``. It is 1
    when the arms agree on average and never 0 from finite data (floored at the smallest
    positive double). It is model-based, not a randomisation test, and not bound by one's
    ceiling: with ``k`` clusters holding any disagreement the exact two-sided sign-flip test's
    p is at least ``2 / 2**k``, so with 5 or fewer it cannot reject at 0.05 while this test
    can, leaning on the t model; :func:`~hrbench.stats.compare` says so in its ``note``.

    Args:
        ya: per-item mean scores of arm ``a`` in [0, 1], shape (n,).
        yb: the same items' mean scores of arm ``b``.
        g: per-item cluster codes in ``range(n_g)``.
        n_g: the number of clusters.
        level: the interval's level.
        trials: the run pairs behind the items (``None``: unknown; the effective sizes are
            then at most the items).

    Returns:
        An :class:`Interval` with ``p_value``; ``se`` is the CR2 standard error of the mean
        difference; ``se``, ``low``, ``high`` and ``p_value`` are ``None`` with one cluster.

    Example:
        >>> same = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 1.0])
        >>> iv = difference_interval(same, same, np.arange(6), 6, 0.95)
        >>> iv.est, iv.p_value, iv.low < 0 < iv.high
        (0.0, 1.0, True)
    """
    d = ya - yb
    diff = float(d.mean())
    se = cluster_se(d, g, n_g)
    if se is None:
        return Interval(diff, None, None, None)
    df = design_df(d, g, n_g)
    parts = _Discordance(np.maximum(d, 0.0), np.maximum(-d, 0.0), g, n_g, _Bound(df, n_g - 1, trials))
    lo, hi = parts.limits(1.0 - level)
    if not np.any(d):  # no item scored differently: never wider than the exact bound
        bound = zero_disagreement_bound(n_g, level)
        return Interval(diff, se, max(lo, -bound), min(hi, bound), p_value=1.0, df=df)
    if diff == 0.0:
        return Interval(diff, se, lo, hi, p_value=1.0, df=df)
    p = parts.crossing(diff > 0)
    return Interval(diff, se, lo, hi, p_value=min(1.0, max(p, _TINY)), df=df)


def zero_disagreement_bound(n_clusters: int, level: float) -> float:
    """The exact ``level`` bound on a paired difference when no item scored differently in ``n_clusters`` clusters.

    When the two arms agree on every item of every cluster, the true difference is at most the
    share of clusters on which they could disagree at all (equal clusters; a disagreement of
    at most 1 on each of their items). Seeing none in ``G`` clusters drawn independently, the
    Clopper-Pearson (one-sided, exact) upper bound on that share is ``1 - (1 - level) ** (1 /
    G)``, whatever the correlation of items within a cluster (items are not independent, so
    the items do not count: 10 clusters give 0.259 at 95%; for one item per cluster it is
    the usual ``1 - 0.05 ** (1 / n)``, about ``3 / n``). So ``[-bound, bound]`` covers the
    difference at least at ``level``. :func:`difference_interval` never gives a
    zero-disagreement interval wider than that.

    Example:
        >>> round(zero_disagreement_bound(9, 0.95), 3), round(zero_disagreement_bound(100, 0.95), 4)
        (0.283, 0.0295)
    """
    return 1.0 - (1.0 - level) ** (1.0 / n_clusters)


class _Discordance:
    """The two directional discordance rates of a paired difference, for MOVER limits at any level."""

    def __init__(self, a: np.ndarray, b: np.ndarray, g: np.ndarray, n_g: int, bound: _Bound) -> None:
        self.bound = bound
        self.a, self.b = float(a.mean()), float(b.mean())
        va, vb = _cluster_cov(a, a, g, n_g), _cluster_cov(b, b, g, n_g)
        both = a + b  # |d|: disagreement in either direction
        vc = _cluster_cov(both, both, g, n_g)
        # a direction with no disagreement borrows the effective size of disagreement overall
        cap = float(a.size) if bound.trials is None else None  # (see _effective_n)
        pooled = _effective_n(float(both.mean()), vc, a.size, cap)
        fit_a, fit_b = estimable(self.a, va, a.size), estimable(self.b, vb, a.size)
        # a direction whose clusters tie exactly (clustered variance 0 with a rate inside (0, 1))
        # adds what its clusters show, nothing, as the t test of the difference would, while
        # the other direction has a spread of its own
        tied_a, tied_b = 0.0 < self.a < 1.0 and not fit_a, 0.0 < self.b < 1.0 and not fit_b
        self.na = (
            _effective_n(self.a, va, a.size, cap) if fit_a else (math.inf if tied_a and fit_b else pooled)
        )
        self.nb = (
            _effective_n(self.b, vb, a.size, cap) if fit_b else (math.inf if tied_b and fit_a else pooled)
        )
        cov = _cluster_cov(a, b, g, n_g)
        self.r = min(1.0, max(-1.0, cov / math.sqrt(va * vb))) if fit_a and fit_b else 0.0
        self._env: _nesting.Envelopes | None = None
        # equal tails in each direction: MOVER reads each limit's distance as its rate's spread at
        # the level (a one-sided limit near 0 would understate it; it gave 0.059 false positives at
        # 3 clusters of 10 items, and more power than the clustered t test at 2 and 3 clusters)
        self.switch_a = self.switch_b = (0.0, 1.0)

    def raw(self, alphas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The MOVER limits at each level ``1 - alphas``, before nesting (:mod:`~hrbench.stats._nesting`)."""
        a, b, r = self.a, self.b, self.r
        la, ua = _bounded_wilson_v(a, self.na, alphas, self.bound, self.switch_a)
        lb, ub = _bounded_wilson_v(b, self.nb, alphas, self.bound, self.switch_b)
        low = (a - b) - np.sqrt(np.maximum((a - la) ** 2 + (ub - b) ** 2 - 2 * r * (a - la) * (ub - b), 0.0))
        high = (a - b) + np.sqrt(np.maximum((ua - a) ** 2 + (b - lb) ** 2 - 2 * r * (ua - a) * (b - lb), 0.0))
        return np.maximum(-1.0, low), np.minimum(1.0, high)

    def limits(self, alpha: float) -> tuple[float, float]:
        """The MOVER interval at level ``1 - alpha``, nested over levels (:func:`~hrbench.stats._nesting.nested`)."""
        low, high, self._env = _nesting.nested(alpha, self.raw, self._env)
        return low, high

    def crossing(self, positive: bool) -> float:
        """The largest ``alpha`` at which the nested interval holds 0: the p-value it inverts to."""
        if self._env is None:
            self._env = _nesting.Envelopes(*self.raw(_ALPHAS))
        return _nesting.crossing(self.raw, self._env, positive)


def t_interval(
    est: float, se: float | None, df: int, level: float, bounds: tuple[float, float] = (-math.inf, math.inf)
) -> tuple[float | None, float | None]:
    """The t interval ``est ± t(level, df) * se``, clipped to ``bounds`` (for costs and ratios, not accuracies).

    Args:
        est: the estimate (a mean cost in USD, a ratio).
        se: its standard error, ``None`` when there is none.
        df: the t reference's degrees of freedom (clusters - 1, or :func:`design_df`).
        level: the interval's level (0.95 for 95%).
        bounds: the values the interval may reach (``(0, inf)`` for a cost).

    Returns:
        ``(low, high)``, or ``(None, None)`` without a standard error or with ``df < 1``.

    Example:
        >>> [round(x, 3) for x in t_interval(0.5, 0.1, 9, 0.95, (0.0, 1.0))]
        [0.274, 0.726]
    """
    if se is None or df < 1:
        return None, None
    half = _t_quantile(level, df) * se
    return _clip(est - half, bounds), _clip(est + half, bounds)


def _clip(v: float, bounds: tuple[float, float]) -> float:
    return min(max(v, bounds[0]), bounds[1])


_UNIT = (0.0, 1.0)  # an accuracy
_DIFF = (-1.0, 1.0)  # a difference of accuracies
_POSITIVE = (0.0, math.inf)  # a cost, or accuracy per USD


def _boot_totals(
    parts: np.ndarray, g: np.ndarray, n_g: int, rng: np.random.Generator, n_boot: int
) -> np.ndarray:
    """Resampled column totals: clusters drawn with replacement ``n_boot`` times.

    ``parts`` is (items, m); returns (n_boot, m) sums over the items of the drawn clusters.
    """
    cluster_totals = np.stack([np.bincount(g, weights=p, minlength=n_g) for p in parts.T], axis=1)
    out = np.empty((n_boot, parts.shape[1]))
    chunk = max(1, _BOOT_CELLS // n_g)
    for start in range(0, n_boot, chunk):
        b = min(chunk, n_boot - start)
        draws = rng.integers(0, n_g, size=(b, n_g))
        draws += (np.arange(b) * n_g)[:, None]
        counts = np.bincount(draws.ravel(), minlength=b * n_g).reshape(b, n_g).astype(float)
        out[start : start + b] = counts @ cluster_totals
    return out


def _rng(seed: int, *names: str) -> np.random.Generator:
    return np.random.default_rng([seed, *(zlib.crc32(n.encode()) for n in names)])


def _boot_summary(
    boot: np.ndarray, level: float, bounds: tuple[float, float] = (-math.inf, math.inf)
) -> tuple[float, float, float]:
    ok = boot[np.isfinite(boot)]
    lo, hi = np.quantile(ok, [0.5 - level / 2, 0.5 + level / 2])
    return float(ok.std(ddof=1)), _clip(float(lo), bounds), _clip(float(hi), bounds)


def _components(items: _Items) -> tuple[float | None, float | None]:
    """Within-item (run-to-run) and between-item variance components (Miller §4)."""
    has = items.k > 1
    if not has.any() or items.y.size < 2:
        return None, None
    within = float(np.mean(items.s2[has]))
    noise = float(np.mean(items.s2[has] / items.k[has]))
    between = max(float(np.var(items.y, ddof=1)) - noise, 0.0)
    return within, between
