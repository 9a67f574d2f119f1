"""Standard errors and intervals: clustered, t, cluster bootstrap; variance components."""

from __future__ import annotations

import math
import zlib
from typing import Any, NamedTuple

import numpy as np

from hrbench.stats.table import _Items

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


def _cluster_se(v: np.ndarray, g: np.ndarray, n_g: int) -> float | None:
    """CR2 clustered standard error of ``mean(v)``; ``None`` with fewer than 2 clusters."""
    if n_g < 2:
        return None
    return math.sqrt(max(_cluster_cov(v, v, g, n_g), 0.0))


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
    Issue 14: with 15 clusters of 2-40 items the interval on ``clusters - 1`` df covered 0.933.

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
    n = float(y.size)
    rho = _icc(y, g, n_g)
    # the CR2 variance is sum_c w_c (q_c' y)**2, q_c = 1_c - (n_c / n) 1 (the cluster's residual total)
    w = 1.0 / ((1.0 - sizes / n) * n * n)
    q = np.diag(sizes) - np.outer(sizes, sizes) / n  # q[e, c] = 1_e' q_c
    # q_c' Omega q_d; q is symmetric, and q' q = D**2 - (D s s' + s s' D) / n + s s' |s|**2 / n**2
    qq = np.diag(sizes**2) - (sizes[:, None] + sizes[None, :]) * np.outer(sizes, sizes) / n
    qq += np.outer(sizes, sizes) * float(np.sum(sizes**2)) / (n * n)
    cov = (1.0 - rho) * q + rho * qq
    a = np.sqrt(w)[:, None] * cov * np.sqrt(w)[None, :]
    tr, tr2 = float(np.trace(a)), float(np.sum(a * a))
    df = tr * tr / tr2 if tr2 > 0 else n_g - 1.0
    return int(min(max(math.floor(df + 1e-9), 1), n_g - 1))


def _t_quantile(level: float, df: int) -> float:
    """The two-sided ``level`` quantile of Student's t on ``df`` degrees of freedom."""
    return float(_sps().t.ppf(0.5 + level / 2, df))


class Interval(NamedTuple):
    """An estimate with its standard error, interval and (for a difference) its p-value."""

    est: float
    se: float | None
    low: float | None
    high: float | None
    n_eff: float | None = None
    p_value: float | None = None
    df: int | None = None


def _wilson(p: float, n_eff: float, z: float) -> tuple[float, float]:
    """Wilson's score interval for a proportion ``p`` from ``n_eff`` trials at quantile ``z``."""
    zz = z * z / n_eff
    centre = (p + zz / 2) / (1 + zz)
    half = z / (1 + zz) * math.sqrt(max(p * (1 - p), 0.0) / n_eff + zz / (4 * n_eff))
    return max(0.0, min(centre - half, p)), min(1.0, max(centre + half, p))


class _Bound(NamedTuple):
    """What limits a Wilson interval: its df, the df of the design, and the most trials held."""

    df: int
    df_max: int  # clusters - 1: the df at which any data's lower limit is highest
    trials: float | None  # total runs behind the scores (None: unknown, no cap, equal tails)

    def quantiles(self, alpha: float) -> tuple[float, float, float]:
        """(two-sided quantile, one-sided quantile, ceiling) at level ``1 - alpha``."""
        two = _t_isf(alpha / 2, self.df)
        if self.trials is None:
            return two, two, 1.0
        ceiling = self.trials / (self.trials + _t_isf(alpha / 2, self.df_max) ** 2)
        return two, max(_t_isf(alpha, self.df), 0.0), ceiling


def _bounded_wilson(p: float, n_eff: float, q: tuple[float, float, float], b: _Bound) -> tuple[float, float]:
    """Wilson's interval on ``n_eff`` at level ``1 - alpha``, within what the data can show.

    With ``trials`` runs in all, data holding at most the information of ``trials``
    independent runs (a design effect of at least 1, as Korn & Graubard 1998 take it) cannot
    give a lower limit above the ``ceiling = trials / (trials + t**2)``: Wilson's lower limit for
    all of ``trials`` right, ``t`` on ``df_max`` (the most df any data of the design get). A
    true accuracy above the ceiling can therefore only be missed from below: the test of ``p0`` that the interval inverts has no upper rejection region there, and
    Neyman's construction spends all of ``alpha`` on the lower one (an exact-level test need not
    have equal tails: Blaker 2000, "Confidence curves and improved exact confidence intervals
    for discrete distributions", Can. J. Stat. 28:783-798; the one-sided bound at the boundary:
    Louis 1981, "Confidence intervals for a binomial parameter after observing no successes",
    Am. Stat. 35:154). So the upper limit is the one-sided ``1 - alpha`` one when that lies above
    the ceiling, and is otherwise the equal-tailed one held at the ceiling; the lower limit
    mirrors it near 0. Issue 14: with 10 clusters of 3 items, 5 runs each at accuracy 0.97
    (ceiling 0.967), the equal-tailed interval could miss only from below and covered 0.975.

    Args:
        p: the estimate in [0, 1].
        n_eff: its effective sample size.
        q: ``b.quantiles(alpha)``: the two-sided and one-sided t quantiles and the ceiling.
        b: the df and the runs behind ``p``; ``trials`` ``None`` gives the equal-tailed interval.

    Returns:
        ``(low, high)`` within [0, 1], around ``p``.

    Example:
        >>> b = _Bound(df=9, df_max=9, trials=150)
        >>> [round(x, 3) for x in _bounded_wilson(0.9, 20.0, b.quantiles(0.05), b)]  # one-sided above .967
        [0.66, 0.97]
        >>> [round(x, 3) for x in _bounded_wilson(0.9, 20.0, b.quantiles(0.05), b._replace(trials=None))]
        [0.66, 0.977]
    """
    two, one, ceiling = q  # from b.quantiles(alpha)
    if b.trials is None:
        return _wilson(p, n_eff, two)
    lo2, hi2 = _wilson(p, n_eff, two)
    lo1, hi1 = _wilson(p, n_eff, one)
    hi = hi1 if hi1 > ceiling else min(hi2, max(ceiling, p))
    lo = lo1 if lo1 < 1.0 - ceiling else max(lo2, min(1.0 - ceiling, p))
    return lo, hi


def _t_isf(alpha: float, df: int) -> float:
    """The upper ``alpha`` quantile of Student's t on ``df`` df, at most 1e100 (Wilson's is then [0, 1])."""
    from scipy.special import stdtrit

    q = -float(stdtrit(df, alpha))
    return q if (alpha >= 0.5 or 0.0 <= q < 1e100) else 1e100


def _effective_n(p: float, var: float, n: int) -> float:
    """Kish's effective sample size ``p (1 - p) / var``; ``n`` when it cannot be estimated.

    At ``p`` 0 or 1 (or zero variance) there is no design effect to estimate, and the units
    (items) are the most the data can hold: ``n`` whatever the runs per item, since the runs of
    an item may agree every time (Korn & Graubard 1998 set ``n* = n`` there).
    """
    return p * (1 - p) / var if (var > 0 and 0 < p < 1) else float(n)


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
    * ``n_eff = p (1 - p) / var`` (Kish), or the number of items when ``p`` is 0 or 1 or the
      variance is 0 (:func:`_effective_n`);
    * the interval is Wilson's for ``p`` out of ``n_eff`` with ``z`` the ``t`` quantile on
      :func:`design_df` degrees of freedom (``clusters - 1`` with equal clusters, Bell-McCaffrey's
      with unequal ones);
    * given ``trials`` (the runs behind ``y``), ``n_eff`` is at most ``trials`` and above the
      highest lower limit any data could give, the upper limit is one-sided (near 0, the lower
      one): :func:`_bounded_wilson`.

    It lies within [0, 1], is asymmetric near 0 and 1 (where the sampling distribution is),
    and has positive width whenever anything was sampled: an arm right on every run of 5 items
    gets about [0.39, 1] with 5 clusters (case R08a), not [1, 1].

    Args:
        y: per-item scores in [0, 1], shape (n,).
        g: per-item cluster codes in ``range(n_g)``, shape (n,).
        n_g: the number of clusters.
        level: the interval's level (0.95 for 95%).
        trials: the number of runs behind ``y`` (``None``: unknown; no cap, equal tails).

    Returns:
        An :class:`Interval`; ``se``, ``low`` and ``high`` are ``None`` with fewer than 2
        clusters (no degrees of freedom).

    Example:
        >>> iv = proportion_interval(np.ones(5), np.arange(5), 5, 0.95)
        >>> iv.est, iv.se, round(iv.low, 3), iv.high
        (1.0, 0.0, 0.393, 1.0)
    """
    p = float(y.mean())
    se = _cluster_se(y, g, n_g)
    if se is None:
        return Interval(p, None, None, None)
    n_eff = _effective_n(p, se * se, y.size)
    df = design_df(y, g, n_g)
    bound = _Bound(df, n_g - 1, trials)
    lo, hi = _bounded_wilson(p, n_eff, bound.quantiles(1.0 - level), bound)
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
    point.

    Given ``trials`` (the run pairs behind the items), each rate's Wilson interval is
    :func:`_bounded_wilson`'s: its effective size at most ``trials``, one-sided near 0 where no
    data could show a smaller rate (issue 14: at accuracy 0.97 on 150 runs the arms rarely
    disagree, and the equal-tailed interval rejected equal arms 1.6% of the time at alpha 0.05).

    The p-value inverts the interval: the ``alpha`` at which it first touches 0, its quantiles
    on Student's t with :func:`design_df` degrees of freedom of the differences (so away from the
    boundary it is the clustered t test, and :func:`~hrbench.stats.power` plans with the same
    reference distribution). It is 1 when the arms agree on average and never 0 from finite
    data (floored at the smallest positive double).

    Args:
        ya: per-item mean scores of arm ``a`` in [0, 1], shape (n,).
        yb: the same items' mean scores of arm ``b``.
        g: per-item cluster codes in ``range(n_g)``.
        n_g: the number of clusters.
        level: the interval's level.
        trials: the run pairs behind the items (``None``: unknown; no cap, equal tails).

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
    se = _cluster_se(d, g, n_g)
    if se is None:
        return Interval(diff, None, None, None)
    df = design_df(d, g, n_g)
    parts = _Discordance(np.maximum(d, 0.0), np.maximum(-d, 0.0), g, n_g, _Bound(df, n_g - 1, trials))
    lo, hi = parts.limits(1.0 - level)
    if diff == 0.0:
        return Interval(diff, se, lo, hi, p_value=1.0, df=df)
    p = parts.crossing(diff > 0)
    return Interval(diff, se, lo, hi, p_value=min(1.0, max(p, _TINY)), df=df)


_TINY = float(np.finfo(float).tiny)
_LOG_TINY = math.log(_TINY)


class _Discordance:
    """The two directional discordance rates of a paired difference, for MOVER limits at any level."""

    def __init__(self, a: np.ndarray, b: np.ndarray, g: np.ndarray, n_g: int, bound: _Bound) -> None:
        self.bound = bound
        self.a, self.b = float(a.mean()), float(b.mean())
        va, vb = _cluster_cov(a, a, g, n_g), _cluster_cov(b, b, g, n_g)
        both = a + b  # |d|: disagreement in either direction
        vc = _cluster_cov(both, both, g, n_g)
        # a direction with no disagreement borrows the effective size of disagreement overall
        pooled = _effective_n(float(both.mean()), vc, a.size)
        self.na = self.a * (1 - self.a) / va if (va > 0 and 0 < self.a < 1) else pooled
        self.nb = self.b * (1 - self.b) / vb if (vb > 0 and 0 < self.b < 1) else pooled
        cov = _cluster_cov(a, b, g, n_g)
        self.r = min(1.0, max(-1.0, cov / math.sqrt(va * vb))) if va > 0 and vb > 0 else 0.0

    def limits(self, alpha: float) -> tuple[float, float]:
        """The MOVER interval at level ``1 - alpha``."""
        a, b, r = self.a, self.b, self.r
        q = self.bound.quantiles(alpha)
        la, ua = _bounded_wilson(a, self.na, q, self.bound)
        lb, ub = _bounded_wilson(b, self.nb, q, self.bound)
        low = (a - b) - math.sqrt(max((a - la) ** 2 + (ub - b) ** 2 - 2 * r * (a - la) * (ub - b), 0.0))
        high = (a - b) + math.sqrt(max((ua - a) ** 2 + (b - lb) ** 2 - 2 * r * (ua - a) * (b - lb), 0.0))
        return max(-1.0, low), min(1.0, high)

    def crossing(self, positive: bool) -> float:
        """The ``alpha`` at which the interval's near end reaches 0 (bisection on its log)."""

        def clear(log_alpha: float) -> bool:  # the interval at level 1 - alpha excludes 0
            lo, hi = self.limits(math.exp(log_alpha))
            return lo > 0 if positive else hi < 0

        lo, hi = _LOG_TINY, 0.0  # clear(hi) unless p is 1; not clear(lo) unless p is below TINY
        if not clear(hi):
            return 1.0
        if clear(lo):
            return _TINY
        while hi - lo > 1e-10 * max(1.0, -lo):
            mid = (lo + hi) / 2
            if clear(mid):
                hi = mid
            else:
                lo = mid
        return math.exp(hi)


def _t_interval(
    est: float, se: float | None, df: int, level: float, bounds: tuple[float, float] = (-math.inf, math.inf)
) -> tuple[float | None, float | None]:
    """``est ± t(level, df) * se``, clipped to ``bounds`` (for costs and ratios, not accuracies)."""
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
