"""The simulated power of compare()'s own test, for :func:`~hrbench.stats.power` with few clusters.

Logit-normal arms are fitted to the variance components (:func:`_fit_logit`), benchmarks of the
plan's clusters and runs are drawn from them (:func:`_simulated_power`), and each goes through
:func:`~hrbench.stats.difference_interval`'s test, vectorised (:func:`_rejects`).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from hrbench.stats import _nesting

_SIM_BENCHMARKS = 4000
"""Benchmarks behind a simulated power (its Monte Carlo error is then at most 0.008)."""

_SIM_SEED = 20261201
_GH_X, _GH_W = np.polynomial.hermite_e.hermegauss(48)
_GH_W = _GH_W / math.sqrt(2 * math.pi)


class _Logit(NamedTuple):
    """Logit-normal arms: ``logit p = mu + s_cluster + s_item + o_cluster + o_item`` (``s`` shared, ``o`` each arm's own).

    ``sd_shared`` is the sd of ``s_cluster + s_item``, ``sd_shared_cluster`` its cluster part.
    """

    mu_a: float
    mu_b: float
    sd_shared: float
    sd_own_cluster: float
    sd_own_item: float
    sd_shared_cluster: float = 0.0


def _expit(x: np.ndarray) -> np.ndarray:
    from scipy.special import expit

    return np.asarray(expit(x))


def _moments(mu: float, sd: float) -> tuple[float, float]:
    """``(E p, E p**2)`` for ``p = expit(mu + sd Z)``, ``Z`` standard normal (Gauss-Hermite)."""
    p = _expit(mu + sd * _GH_X)
    return float(np.sum(_GH_W * p)), float(np.sum(_GH_W * p * p))


def _solve_mu(accuracy: float, sd: float) -> float:
    from scipy.optimize import brentq

    return float(brentq(lambda m: _moments(m, sd)[0] - accuracy, -60.0, 60.0, xtol=1e-12))


def _fit_logit(
    acc_a: float,
    acc_b: float,
    var_within: float,
    var_between: float,
    var_cluster: float,
    var_cluster_accuracy: float = 0.0,
) -> _Logit:
    """The logit-normal arms whose accuracies, run-to-run variance and true-difference variance are these.

    The marginal logit sd ``tau`` sets ``E[p (1 - p)]`` of each arm, so it is solved from
    ``var_within`` (the sum over the arms); the arms' own part ``sd_own`` (``<= tau``) sets how
    far their item probabilities differ, so it is solved from ``var_diff = var_between +
    var_cluster``. The clusters then take a part of each: of the shared part, what makes the
    arms' cluster accuracies vary by ``var_cluster_accuracy`` (:func:`_cluster_parts`); of the
    own part, what makes the clusters' mean differences vary by ``var_cluster`` together with
    it (a cluster both arms find easy shows a smaller difference on the probability scale, so
    some of ``var_cluster`` comes from the clusters' difficulty, not from an arm x cluster
    effect). Each is held at its range's end when the components lie beyond what the model can
    give.
    """
    from scipy.optimize import brentq

    def mus(tau: float) -> tuple[float, float]:
        return _solve_mu(acc_a, tau), _solve_mu(acc_b, tau)

    def within(tau: float) -> float:
        ma, mb = mus(tau)
        return sum(m1 - m2 for m1, m2 in (_moments(ma, tau), _moments(mb, tau)))

    hi_tau = 12.0
    if within(0.0) <= var_within:
        tau = 0.0
    elif within(hi_tau) >= var_within:
        tau = hi_tau
    else:
        tau = float(brentq(lambda x: within(x) - var_within, 0.0, hi_tau, xtol=1e-6))
    ma, mb = mus(tau)

    def diff_var(own: float) -> float:
        shared = math.sqrt(max(tau * tau - own * own, 0.0))
        s = shared * _GH_X
        ea = np.array([_moments(ma + x, own)[0] for x in s])  # E[p_a | s]
        eb = np.array([_moments(mb + x, own)[0] for x in s])
        ea2 = np.array([_moments(ma + x, own)[1] for x in s])
        eb2 = np.array([_moments(mb + x, own)[1] for x in s])
        second = float(np.sum(_GH_W * (ea2 + eb2 - 2 * ea * eb)))
        return second - (acc_a - acc_b) ** 2

    var_diff = var_between + var_cluster
    if tau == 0.0 or diff_var(0.0) >= var_diff:
        own = 0.0
    elif diff_var(tau) <= var_diff:
        own = tau
    else:
        own = float(brentq(lambda x: diff_var(x) - var_diff, 0.0, tau, xtol=1e-6))
    shared = math.sqrt(max(tau * tau - own * own, 0.0))
    ss, sc = _cluster_parts(ma, mb, tau, shared, own, var_cluster, var_cluster_accuracy)
    return _Logit(ma, mb, shared, sc, math.sqrt(max(own * own - sc * sc, 0.0)), ss)


_GH_SMALL_X, _GH_SMALL_W = np.polynomial.hermite_e.hermegauss(24)
_GH_SMALL_W = _GH_SMALL_W / math.sqrt(2 * math.pi)


def _cluster_means(ma: float, mb: float, tau: float, ss: float, sc: float) -> tuple[np.ndarray, np.ndarray]:
    """``E[p_arm | cluster]`` on a grid of (shared cluster effect, the arm's own cluster effect), each arm.

    Rows: the shared cluster effect ``ss * x`` at the quadrature nodes; columns: the arm's own
    cluster effect ``sc * y``; the rest of the logit sd, ``sqrt(tau**2 - ss**2 - sc**2)``, is
    the items'.
    """
    rest = math.sqrt(max(tau * tau - ss * ss - sc * sc, 0.0))
    z = ss * _GH_SMALL_X[:, None] + sc * _GH_SMALL_X[None, :]
    out = []
    for mu in (ma, mb):
        p = _expit(mu + z[..., None] + rest * _GH_X)  # (x, y, item nodes)
        out.append(np.sum(p * _GH_W, axis=-1))
    return out[0], out[1]


def _cluster_parts(
    ma: float, mb: float, tau: float, shared: float, own: float, var_cluster: float, var_accuracy: float
) -> tuple[float, float]:
    """The cluster parts ``(ss, sc)`` of the shared and own logit sds (``ss <= shared``, ``sc <= own``).

    ``ss`` makes the variance over clusters of the arms' cluster accuracy ``E[(p_a + p_b) / 2 |
    cluster]`` ``var_accuracy``; ``sc`` makes the variance over clusters of
    ``E[p_a - p_b | cluster]`` ``var_cluster``, the shared cluster effect's share of it
    included. Solved in turn (each moves the other little), a few rounds.
    """
    from scipy.optimize import brentq

    w = _GH_SMALL_W

    def acc_var(ss: float, sc: float) -> float:  # of the arms' mean, (p_a + p_b) / 2
        fa, fb = _cluster_means(ma, mb, tau, ss, sc)
        ea, eb = fa @ w, fb @ w
        second = w @ ((fa * fa) @ w + (fb * fb) @ w + 2 * ea * eb) / 4
        return float(second) - float(w @ (ea + eb)) ** 2 / 4

    def diff_var(ss: float, sc: float) -> float:  # the arms' own cluster effects are independent
        fa, fb = _cluster_means(ma, mb, tau, ss, sc)
        ea, eb = fa @ w, fb @ w  # E over each arm's own effect, given the shared one
        second = w @ ((fa * fa) @ w + (fb * fb) @ w - 2 * ea * eb)
        return float(second) - float(w @ (ea - eb)) ** 2

    def solve(f: Any, target: float, top: float) -> float:
        if top <= 0.0 or target <= 0.0 or f(0.0) >= target:
            return 0.0
        if f(top) <= target:
            return top
        return float(brentq(lambda x: f(x) - target, 0.0, top, xtol=1e-6))

    ss = sc = 0.0
    for _ in range(3 if var_accuracy > 0.0 and var_cluster > 0.0 else 1):
        sc = solve(lambda x, ss=ss: diff_var(ss, x), var_cluster, own)
        ss = solve(lambda x, sc=sc: acc_var(x, sc), var_accuracy, shared)
    sc = solve(lambda x, ss=ss: diff_var(ss, x), var_cluster, own)
    return ss, sc


def plan_sizes(n: int, g: int, pattern: np.ndarray | None) -> np.ndarray:
    """The items of each of ``g`` clusters holding ``n`` items: as equal as can be, or shaped like ``pattern``.

    With a ``pattern`` (the sizes of clusters like the plan's), the sizes at ``g`` evenly
    spaced quantiles of it, scaled to ``n`` items in all, each at least 1.

    Example:
        >>> plan_sizes(10, 3, None).tolist(), plan_sizes(30, 3, np.array([1, 2, 9])).tolist()
        ([4, 3, 3], [2, 5, 23])
    """
    if pattern is None:
        return np.full(g, n // g) + (np.arange(g) < n % g)
    ordered = np.sort(pattern).astype(float)
    picked = ordered[((np.arange(g) + 0.5) / g * ordered.size).astype(int)]
    sizes = np.maximum(1, np.rint(picked * n / picked.sum())).astype(np.int64)
    sizes[np.argmax(sizes)] += n - int(sizes.sum())  # the rounding left over, on the largest
    return np.maximum(sizes, 1)


def _simulated_power(model: _Logit, sizes: np.ndarray, runs: int, alpha: float) -> float:
    """The share of simulated benchmarks of ``model`` in ``sizes`` clusters whose paired test rejects."""
    rng = np.random.default_rng(_SIM_SEED)
    g = np.repeat(np.arange(sizes.size), sizes)
    n, s = int(sizes.sum()), _SIM_BENCHMARKS
    item_sd = math.sqrt(max(model.sd_shared**2 - model.sd_shared_cluster**2, 0.0))
    shared = rng.normal(0.0, item_sd, (s, n))
    if model.sd_shared_cluster:
        shared += rng.normal(0.0, model.sd_shared_cluster, (s, sizes.size))[:, g]
    counts = []
    for mu in (model.mu_a, model.mu_b):
        logit = mu + shared + rng.normal(0.0, model.sd_own_item, (s, n))
        logit += rng.normal(0.0, model.sd_own_cluster, (s, sizes.size))[:, g]
        counts.append(rng.binomial(runs, _expit(logit)))
    d = (counts[0] - counts[1]) / runs
    return float(np.mean(_rejects(d, g, int(sizes.size), alpha, float(n * runs))))


def _rejects(d: np.ndarray, g: np.ndarray, n_g: int, alpha: float, trials: float) -> np.ndarray:
    """Whether :func:`~hrbench.stats.difference_interval` rejects at ``alpha``, per row of ``d``.

    The same test, vectorised over benchmarks (rows of per-item differences ``d``, shape (S, n),
    the runs known: ``trials``): the MOVER limits of the two discordance rates' equal-tailed
    Wilson intervals on their effective sizes, nested over the lower levels of the grid, and a
    rejection where that interval excludes 0 (exactly where its p-value is below ``alpha``).
    """
    from hrbench.stats._intervals import _VAR_RTOL
    from hrbench.stats._wilson import _ALPHAS, _t_isf_v

    s, n = d.shape
    onehot = np.zeros((n, n_g))
    onehot[np.arange(n), g] = 1.0
    inflate = 1.0 / (1.0 - onehot.sum(axis=0) / n)
    a, b = np.maximum(d, 0.0), np.maximum(-d, 0.0)
    both = a + b
    ta, tb, tc = ((x - x.mean(axis=1, keepdims=True)) @ onehot for x in (a, b, both))

    def cov(u: np.ndarray, v: np.ndarray) -> np.ndarray:
        return np.sum(u * v * inflate, axis=1) / (n * n)

    va, vb, vc, cab = cov(ta, ta), cov(tb, tb), cov(tc, tc), cov(ta, tb)
    pa, pb, pc = a.mean(axis=1), b.mean(axis=1), both.mean(axis=1)

    def fit(p: np.ndarray, v: np.ndarray) -> np.ndarray:
        return (p > 0) & (p < 1) & (v > _VAR_RTOL * p * (1 - p) / n)

    def size(p: np.ndarray, v: np.ndarray, ok: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(ok, p * (1 - p) / np.where(ok, v, 1.0), float(n))

    fa, fb = fit(pa, va), fit(pb, vb)
    pooled = size(pc, vc, fit(pc, vc))
    na = np.where(fa, size(pa, va, fa), np.where((pa > 0) & (pa < 1) & fb, np.inf, pooled))
    nb = np.where(fb, size(pb, vb, fb), np.where((pb > 0) & (pb < 1) & fa, np.inf, pooled))
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(fa & fb, np.clip(cab / np.sqrt(va * vb), -1.0, 1.0), 0.0)
    df = _rows_df(d, g, onehot)
    above = int(np.searchsorted(_ALPHAS, alpha, side="right"))
    alphas = np.concatenate([[alpha], _ALPHAS])
    levels, which = np.unique(df, return_inverse=True)
    z = np.stack([_t_isf_v(alphas / 2, int(k)) for k in levels])  # (df values, levels): rows by `which`

    # the interval at alpha nested over every level (hrbench.stats._nesting), as compare() does
    keep = np.flatnonzero(d.mean(axis=1) != 0.0)
    out = np.zeros(s, dtype=bool)
    for start in range(0, keep.size, _CHUNK):  # rows in blocks: every level's limits at once fit in cache
        k = keep[start : start + _CHUNK]
        low, high = _mover(pa[k], pb[k], na[k], nb[k], r[k], z[which[k]])
        out[k] = _nesting.rejects(low, high, above)
    return out


_CHUNK = 256


def _rows_df(d: np.ndarray, g: np.ndarray, onehot: np.ndarray) -> np.ndarray:
    """:func:`~hrbench.stats.design_df` of each row of ``d`` (shape (S, n); ``onehot``: items x clusters), vectorised.

    Bell-McCaffrey's df is ``tr(A)**2 / tr(A @ A)`` with ``A = (1 - rho) A0 + rho A1``, so both
    traces are polynomials in each row's intra-cluster correlation ``rho`` (one-way ANOVA).
    """
    from hrbench.stats._intervals import _BM_MAX_CLUSTERS, _sized_df_parts

    s, n = d.shape
    sizes = onehot.sum(axis=0)
    n_g = int(sizes.size)
    if n_g < 3 or n_g > _BM_MAX_CLUSTERS or sizes.min() == sizes.max():
        return np.full(s, max(n_g - 1, 1))
    means = (d @ onehot) / sizes
    msb = np.sum(sizes * (means - d.mean(axis=1, keepdims=True)) ** 2, axis=1) / (n_g - 1)
    msw = np.sum((d - means[:, g]) ** 2, axis=1) / (n - n_g) if n > n_g else np.zeros(s)
    denom = msb + ((n - float(np.sum(sizes**2)) / n) / (n_g - 1) - 1) * msw
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = np.where(denom > 0, np.clip((msb - msw) / denom, 0.0, 0.99), 0.0)
    alone, shared = _sized_df_parts(sizes)
    step = shared - alone
    tr = np.trace(alone) + rho * np.trace(step)
    tr2 = np.sum(alone * alone) + 2 * rho * np.sum(alone * step) + rho * rho * np.sum(step * step)
    with np.errstate(divide="ignore", invalid="ignore"):
        df = np.where(tr2 > 0, tr * tr / tr2, n_g - 1.0)
    return np.clip(np.floor(df + 1e-9), 1, n_g - 1).astype(np.int64)


def _mover(
    pa: np.ndarray, pb: np.ndarray, na: np.ndarray, nb: np.ndarray, r: np.ndarray, z: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The raw MOVER limits of ``pa - pb`` at every quantile of ``z`` (rows: benchmarks; columns: quantiles)."""

    def wilson(p: np.ndarray, m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        p, m = p[:, None], m[:, None]
        zz = z * z / m
        centre = (p + zz / 2) / (1 + zz)
        half = z / (1 + zz) * np.sqrt(np.maximum(p * (1 - p), 0.0) / m + zz / (4 * m))
        return np.maximum(0.0, np.minimum(centre - half, p)), np.minimum(1.0, np.maximum(centre + half, p))

    la, ua = wilson(pa, na)
    lb, ub = wilson(pb, nb)
    ea, eb, rr = pa[:, None], pb[:, None], r[:, None]
    low = (ea - eb) - np.sqrt(
        np.maximum((ea - la) ** 2 + (ub - eb) ** 2 - 2 * rr * (ea - la) * (ub - eb), 0.0)
    )
    high = (ea - eb) + np.sqrt(
        np.maximum((ua - ea) ** 2 + (eb - lb) ** 2 - 2 * rr * (ua - ea) * (eb - lb), 0.0)
    )
    return np.maximum(-1.0, low), np.minimum(1.0, high)
