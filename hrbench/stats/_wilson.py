"""Wilson's score interval on an effective sample size, within what the data can show.

The equal-tailed interval (:func:`_wilson`), over arrays of levels (:func:`_wilson_v`), and the
bounded one (:func:`_bounded_wilson`): one-sided beyond the switches (:func:`_switches`) above
which no data of the design's runs could reach. :mod:`hrbench.stats._intervals` builds the
proportion and paired-difference intervals on these.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np


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

    def quantiles(self, alpha: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(two-sided, one-sided) t quantiles on ``df`` at level ``1 - alpha`` (arrays of alpha too)."""
        a = np.asarray(alpha, dtype=float)
        if a is _ALPHAS:
            return _grid_quantiles(self.df)
        return _t_isf_v(a / 2, self.df), np.maximum(_t_isf_v(a, self.df), 0.0)


_ALPHAS = np.unique(
    np.concatenate(
        [
            np.logspace(-12, 0, 1201),
            1.0 - np.array([0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.975, 0.98, 0.99, 0.995, 0.999]),
        ]
    )
)
"""The levels (as ``alpha = 1 - level``, ascending, 1e-12 to 1) over which paired intervals nest.

A paired interval at ``alpha`` is the hull of the MOVER intervals at ``alpha`` and at every
grid ``alpha`` above it (every lower level): :func:`_nested`. The grid holds the usual levels
exactly (0.8, 0.9, 0.95, 0.99, ...); between its points (steps of 2.3% in ``alpha``) the
nesting holds up to the raw limits' change within one step.
"""


@functools.lru_cache(maxsize=256)
def _grid_quantiles(df: int) -> tuple[np.ndarray, np.ndarray]:
    return _t_isf_v(_ALPHAS / 2, df), np.maximum(_t_isf_v(_ALPHAS, df), 0.0)


def _t_isf_v(alpha: np.ndarray, df: int) -> np.ndarray:
    """:func:`_t_isf` over an array of ``alpha``."""
    from scipy.special import stdtrit

    with np.errstate(over="ignore", invalid="ignore"):
        q = -stdtrit(df, alpha)
    ok = (alpha >= 0.5) | ((q >= 0.0) & (q < 1e100))
    return np.where(ok, q, 1e100)


def _wilson_v(p: float, n_eff: float, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_wilson` over an array of quantiles ``z``."""
    zz = z * z / n_eff
    centre = (p + zz / 2) / (1 + zz)
    half = z / (1 + zz) * np.sqrt(max(p * (1 - p), 0.0) / n_eff + zz / (4 * n_eff))
    return np.maximum(0.0, np.minimum(centre - half, p)), np.minimum(1.0, np.maximum(centre + half, p))


def _switches(p: float, n_eff: float, b: _Bound) -> tuple[float, float]:
    """The values beyond which the test of a true rate is one-sided: (below ``p``, above ``p``).

    A true rate ``p0`` above ``p`` can be missed only from below when no data could give a
    lower limit above it at the level used: Wilson's lower limit for ``trials`` of ``trials``
    on ``df_max`` df (the ceiling) is at most ``p0`` exactly when ``alpha <= alpha_c(p0) = 2 *
    sf_t(sqrt(trials (1 - p0) / p0), df_max)``; there the equal-tailed test of ``p0`` (p-value
    ``P2``, Wilson's score statistic on ``df`` df) gives way to the one-sided one (``P1 = P2 /
    2``). Decided level by level, that accepts ``p0`` at some levels and rejects it at a higher
    one when ``P1 < alpha_c <= P2``, and intervals at different levels do not nest (a
    95% interval inside a 90% one). So each ``p0`` gets one p-value at
    every level: ``P1`` when ``P1 < alpha_c(p0)`` (its one-sided test already rejects at levels
    where no data could reach past ``p0``), else ``P2``. It falls as ``p0`` moves away from
    ``p``, so its superlevel sets are intervals and nest; wherever the level-by-level rule
    nests it is that rule, and it keeps its coverage (bench/coverage.py: 0.955 at 10 clusters
    of 3 items at accuracy 0.97; the hull of the gap, always ``P2``, covered 0.971). The switch
    above ``p`` is the root of ``P1(p0) = alpha_c(p0)`` in ``(p, 1)`` (one root: ``P1`` falls
    and ``alpha_c`` rises); the one below mirrors it (``alpha_c`` from ``sqrt(trials p0 / (1 -
    p0))``).

    Returns:
        ``(low_switch, high_switch)``: ``0.0`` / ``1.0`` when there is no one-sided region.
    """
    if b.trials is None or math.isinf(n_eff):
        return 0.0, 1.0
    from scipy.optimize import brentq

    n, t, sf = n_eff, float(b.trials), _t_sf

    def up(p0: float) -> float:  # P1(p0) - alpha_c(p0)
        return sf((p0 - p) / math.sqrt(p0 * (1 - p0) / n), b.df) - 2 * sf(
            math.sqrt(t * (1 - p0) / p0), b.df_max
        )

    def down(p0: float) -> float:
        return sf((p - p0) / math.sqrt(p0 * (1 - p0) / n), b.df) - 2 * sf(
            math.sqrt(t * p0 / (1 - p0)), b.df_max
        )

    eps = 1e-15
    high = 1.0
    if p < 1.0 and up(1.0 - eps) < 0.0 < up(max(p, eps) + eps):
        high = float(brentq(up, max(p, eps) + eps, 1.0 - eps, xtol=1e-14, rtol=1e-14))
    low = 0.0
    if p > 0.0 and down(eps) < 0.0 < down(min(p, 1.0 - eps) - eps):
        low = float(brentq(down, eps, min(p, 1.0 - eps) - eps, xtol=1e-14, rtol=1e-14))
    return low, high


def _bounded_wilson(p: float, n_eff: float, alpha: float, b: _Bound) -> tuple[float, float]:
    """Wilson's interval on ``n_eff`` at level ``1 - alpha``, within what the data can show.

    With ``trials`` runs in all, data holding at most the information of ``trials``
    independent runs (a design effect of at least 1, as Korn & Graubard 1998 take it) cannot
    give a lower limit above Wilson's for all of ``trials`` right (``t`` on ``df_max``, the most
    df any data of the design get). A true accuracy above that ceiling can therefore only be
    missed from below: the test that the interval inverts has no upper rejection region there,
    and Neyman's construction spends all of ``alpha`` on the lower one (an exact-level test need
    not have equal tails: Blaker 2000, "Confidence curves and improved exact confidence
    intervals for discrete distributions", Can. J. Stat. 28:783-798; the one-sided bound at the
    boundary: Louis 1981, "Confidence intervals for a binomial parameter after observing no
    successes", Am. Stat. 35:154). Each true value is tested one-sided or equal-tailed the same
    way at every level (:func:`_switches`), so intervals at higher levels contain those at
    lower ones. The upper limit is the one-sided ``1 - alpha`` one when that lies above the
    switch, and is otherwise the equal-tailed one held at the switch; the lower limit mirrors
    it near 0. With 10 clusters of 3 items, 5 runs each at accuracy 0.97, the equal-tailed
    interval can miss only from below and covers 0.975.

    Args:
        p: the estimate in [0, 1].
        n_eff: its effective sample size.
        alpha: one minus the level.
        b: the df and the runs behind ``p``; ``trials`` ``None`` gives the equal-tailed interval.

    Returns:
        ``(low, high)`` within [0, 1], around ``p``.

    Example:
        >>> b = _Bound(df=9, df_max=9, trials=150)
        >>> [round(x, 3) for x in _bounded_wilson(0.9, 20.0, 0.05, b)]  # one-sided above the switch
        [0.66, 0.97]
        >>> [round(x, 3) for x in _bounded_wilson(0.9, 20.0, 0.05, b._replace(trials=None))]
        [0.66, 0.977]
    """
    lo, hi = _bounded_wilson_v(p, n_eff, np.array([alpha]), b)
    return float(lo[0]), float(hi[0])


def _bounded_wilson_v(
    p: float, n_eff: float, alphas: np.ndarray, b: _Bound, switches: tuple[float, float] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_bounded_wilson` over an array of ``alpha`` (``switches``: :func:`_switches`, if known)."""
    two, one = b.quantiles(alphas)
    lo2, hi2 = _wilson_v(p, n_eff, two)
    if b.trials is None:
        return lo2, hi2
    s_lo, s_hi = _switches(p, n_eff, b) if switches is None else switches
    lo1, hi1 = _wilson_v(p, n_eff, one)
    hi = np.where(hi1 > s_hi, hi1, np.minimum(hi2, s_hi))
    lo = np.where(lo1 < s_lo, lo1, np.maximum(lo2, s_lo))
    return lo, hi


def _t_sf(x: float, df: float) -> float:
    """Student's t survival function, ``P(T > x)`` on ``df`` df (fractional df too).

    ``scipy.special.stdtr`` is what ``scipy.stats.t.sf`` computes it with (the same float),
    without importing ``scipy.stats``.

    Example:
        >>> round(_t_sf(2.0, 10), 6), _t_sf(0.0, 3)
        (0.036694, 0.5)
    """
    from scipy.special import stdtr

    return float(stdtr(df, -x))


def _t_isf(alpha: float, df: int) -> float:
    """The upper ``alpha`` quantile of Student's t on ``df`` df, at most 1e100 (Wilson's is then [0, 1])."""
    from scipy.special import stdtrit

    q = -float(stdtrit(df, alpha))
    return q if (alpha >= 0.5 or 0.0 <= q < 1e100) else 1e100
