"""The array arithmetic of :class:`~hrbench.stats.SequentialTest`, vectorised.

Private to ``hrbench.stats``: :class:`~hrbench.stats.SequentialTest` keeps one
accumulator per pair of arms (arrays of shape ``(pairs,)``) and ``bench/sequential.py`` one per
simulated benchmark (shape ``(n,)``), and both go through these same functions, so the bench
measures the shipped rule. An accumulator is a dict of float arrays; every function works
element-wise on any leading shape (the betting methods add a last axis: the grid of candidate
differences).

Methods (see :mod:`hrbench.stats._sequential` for the sources):

* ``"exact"``: de la Pena's self-normalised e-process with a normal mixture over the bet,
  ``log E = 1/2 log(rho / (V + rho)) + S**2 / (2 (V + rho))``, ``S = sum w D``,
  ``V = sum w**2 D**2``; its confidence sequence inverts the same e-process at every candidate
  difference ``mu`` (``D - mu`` in place of ``D``).
* ``"symmetric"``: the normal mixture (same ``rho``) of the product of
  ``exp(lambda w D) / cosh(lambda w D)``, an exact martingale for symmetric differences that
  dominates de la Pena's ``exp(lambda w D - lambda**2 w**2 D**2 / 2)`` bet by bet (``cosh x <=
  exp(x**2 / 2)``), over the normal prior's 80 Gauss-Hermite nodes (a discrete prior, so the
  mixture is itself exactly an e-process; within 1-2% of the continuous mixture); its confidence
  sequence inverts the same e-process at every candidate difference (it keeps each cluster's
  ``w D`` and ``w`` for that: ``D - mu`` in place of ``D``), so a pair decided at ``pairs / alpha`` has a sequence that never
  holds 0.
* ``"asymptotic"``: the same normal-mixture boundary with ``V`` estimated around the running
  mean, with a small-sample allowance (an asymptotic confidence sequence).
* ``"strict"``: a hedged betting confidence sequence for differences bounded in [-1, 1].
* ``"wor"`` (goal ``"full_run"``): the betting confidence sequence for sampling without
  replacement from the finite set of the reference's clusters.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

Acc = dict[str, np.ndarray]

GRID = np.linspace(-1.0, 1.0, 801)
"""Candidate differences for the betting methods (steps of 0.0025)."""

RESOLVED = ("exact", "symmetric", "asymptotic", "strict", "wor")
"""The methods a :class:`Params` runs (``"auto"`` chooses one of the first four beforehand)."""

_HUGE = 1e6  # a log capital that rejects at any level (finite, so that a state stays JSON)
_SMALL_SAMPLE = 2.0  # the asymptotic method's variance allowance: V times 1 + this / clusters that disagree
_TRUNC = 0.5  # the largest share of capital a bet may put at risk (Waudby-Smith & Ramdas's c)


@dataclass(frozen=True)
class Params:
    """What a sequence needs besides its data, fixed before the first cluster.

    Attributes:
        method: ``"exact"``, ``"symmetric"``, ``"asymptotic"``, ``"strict"`` or ``"wor"``.
        log_threshold: ``log(pairs / alpha)``: a pair is decided when ``log E`` reaches it.
        rho: the normal mixture's precision, in units of ``V`` (squared differences).
        horizon: clusters the betting methods tune their bet for.
        var0: the prior variance of a cluster difference for the bet size.
        n_total: clusters in the reference (``"wor"`` only).
        bound: the largest ``|w D|`` possible (``"wor"`` only: the largest weight).
    """

    method: str
    log_threshold: float
    rho: float
    horizon: float = 20.0
    var0: float = 0.05
    n_total: int = 0
    bound: float = 1.0


def new_acc(p: Params, shape: tuple[int, ...]) -> Acc:
    """Empty accumulators of ``shape`` for method ``p.method``."""
    keys = ["t", "nz", "sw", "sw2", "s", "v", "q", "mean", "m2", "max_log_e"]
    acc = {k: np.zeros(shape) for k in keys}
    if p.method in ("strict", "wor"):
        acc["kp"] = np.zeros((*shape, GRID.size))
        acc["km"] = np.zeros((*shape, GRID.size))
    if p.method == "symmetric":
        acc["lk"] = np.zeros((*shape, _NODES.size))
        for k in _HISTORY:
            acc[k] = np.zeros((*shape, 0))
    return acc


_HISTORY = ("hx", "hw")
"""The symmetric method's per-cluster ``w D`` and ``w`` (last axis: the clusters committed)."""


_NODES, _QW = np.polynomial.hermite.hermgauss(80)
_LOG_QW = np.log(_QW / math.sqrt(math.pi))


def _lambdas(rho: float) -> np.ndarray:
    """The bets ``lambda ~ N(0, 1 / rho)`` at the Gauss-Hermite nodes."""
    return math.sqrt(2.0 / rho) * _NODES


def log_e_mixture(s: np.ndarray, v: np.ndarray, rho: float) -> np.ndarray:
    """``1/2 log(rho / (V + rho)) + S**2 / (2 (V + rho))``: the normal-mixture log e-value."""
    return 0.5 * np.log(rho / (v + rho)) + s**2 / (2.0 * (v + rho))


def _log_mean_exp(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.logaddexp(a, b) - math.log(2.0)


def update(acc: Acc, p: Params, d: np.ndarray, w: np.ndarray) -> None:
    """Add one cluster's differences ``d`` (in [-1, 1]) with predictable weights ``w`` (0: skip), in place."""
    d = np.asarray(d, dtype=float)
    w = np.asarray(w, dtype=float)
    on = w > 0
    if p.method in ("strict", "wor"):
        _bet(acc, p, d, w, on)
    if p.method == "symmetric":  # log(exp(a) / cosh(a)) = log 2 - log(1 + exp(-2 a))
        a = _lambdas(p.rho) * (w * d)[..., None]
        acc["lk"] += np.where(on[..., None], math.log(2.0) - np.logaddexp(0.0, -2.0 * a), 0.0)
        if {"hx", "hw"} <= acc.keys():
            acc["hx"] = np.concatenate([acc["hx"], np.where(on, w * d, 0.0)[..., None]], axis=-1)
            acc["hw"] = np.concatenate([acc["hw"], np.where(on, w, 0.0)[..., None]], axis=-1)
    t = acc["t"] + on
    acc["nz"] = acc["nz"] + (on & (d != 0))
    delta = np.where(on, d - acc["mean"], 0.0)
    mean = acc["mean"] + np.where(on, delta / np.maximum(t, 1), 0.0)
    acc["m2"] += np.where(on, delta * (d - mean), 0.0)
    acc["mean"], acc["t"] = mean, t
    wd = w * d
    acc["sw"] += w
    acc["sw2"] += w * w
    acc["s"] += wd
    acc["v"] += wd * wd
    acc["q"] += w * wd
    acc["max_log_e"] = np.maximum(acc["max_log_e"], log_e(acc, p))


def _lam(acc: Acc, p: Params) -> np.ndarray:
    """The predictable bet size (before truncation): Waudby-Smith & Ramdas's plug-in at a horizon."""
    t = acc["t"]
    var = (p.var0 + acc["m2"]) / (t + 1.0)
    return np.sqrt(2.0 * (p.log_threshold + math.log(2.0)) / (np.maximum(var, 1e-6) * p.horizon))


def _bet(acc: Acc, p: Params, d: np.ndarray, w: np.ndarray, on: np.ndarray) -> None:
    lam = _lam(acc, p)[..., None]
    if p.method == "strict":
        x, m, b = d[..., None], GRID, 1.0
        lam = lam * w[..., None]
    else:
        x = (w * d)[..., None]
        left = p.n_total - acc["t"][..., None]
        m = (p.n_total * GRID - acc["s"][..., None]) / np.maximum(left, 1.0)
        b = p.bound
    room_p = np.maximum(b + m, 1e-12)
    room_m = np.maximum(b - m, 1e-12)
    lp = np.minimum(lam, _TRUNC / room_p)
    lm = np.minimum(lam, _TRUNC / room_m)
    with np.errstate(divide="ignore", invalid="ignore"):
        gp = np.log1p(lp * (x - m))
        gm = np.log1p(-lm * (x - m))
    if p.method == "wor":  # a difference the clusters seen rule out: its capital is all but infinite
        bad = (m < -b - 1e-9) | (m > b + 1e-9)
        gp = np.where(bad, _HUGE, gp)
        gm = np.where(bad, _HUGE, gm)
    on_ = on[..., None]
    acc["kp"] += np.where(on_, gp, 0.0)
    acc["km"] += np.where(on_, gm, 0.0)


def _v_at(acc: Acc, mu: np.ndarray) -> np.ndarray:
    return np.maximum(acc["v"] - 2.0 * mu * acc["q"] + mu * mu * acc["sw2"], 0.0)


def _v_hat(acc: Acc, p: Params) -> np.ndarray:
    """The asymptotic method's ``V``: around the running mean, with a small-sample allowance.

    ``sum w**2 (D - mean)**2``, times ``t / (t - 1)`` (unbiased) and ``1 + 2 / k`` for the ``k``
    clusters whose difference is not 0 (vanishing as they grow), plus one cluster's worth of
    the planned variance: early on the spread of a few clusters says little, and near the
    ceiling most clusters show no difference at all and say nothing of the spread (tuned in
    ``bench/sequential.py``: without the allowance the sequence covered 0.92 and stopped 6-8%
    of null benchmarks; with ``1 + 3 / t`` over all the clusters it covered 0.928 at 10
    clusters of 3 items at accuracy 0.97, with ``1 + 2 / k`` 0.956, and spent 1.32-1.33 times
    a fixed design's clusters on plans of 4-5 clusters, where ``1 + 3 / k`` spent 1.35-1.36).
    """
    t = acc["t"]
    mu = acc["s"] / np.maximum(acc["sw"], 1e-300)
    v = _v_at(acc, mu) * t / np.maximum(t - 1.0, 1.0)
    return v * (1.0 + _SMALL_SAMPLE / np.maximum(acc["nz"], 1.0)) + p.var0


_ZERO = int(np.argmin(np.abs(GRID)))


def logsumexp(a: np.ndarray) -> np.ndarray:
    """``log(sum(exp(a)))`` over the last axis: scipy.special.logsumexp's arithmetic for real ``a``, in plain numpy.

    The same operations in the same order as scipy's (the largest terms kept out of the sum,
    ``log1p(s / m) + log(m) + max`` for ``m`` of them), so every e-value and bound is the same
    to the last bit, without scipy's array-API dispatch (about 0.2 ms a call, most of a stop
    rule's cost: its confidence sequences call it ~200 times a look).

    Example:
        >>> float(logsumexp(np.log(np.array([1.0, 2.0, 3.0]))))  # log 6
        1.791759469228055
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        a_max = np.max(a, axis=-1, keepdims=True)
        i_max = a == a_max
        m = np.sum(i_max, axis=-1, keepdims=True, dtype=a.dtype)
        s = np.sum(np.exp(np.where(i_max, -np.inf, a) - a_max), axis=-1, keepdims=True)
        s = np.where(s == 0, s, s / m)
        out = np.squeeze(np.log1p(s) + np.log(m) + a_max, axis=-1)
        finite = np.isfinite(out)
        if not finite.all():  # an infinite or empty sum: log(sum(exp(a))) directly, as scipy does
            with np.errstate(over="ignore"):
                out = np.where(finite, out, np.log(np.sum(np.exp(a), axis=-1)))
    return out


def log_e(acc: Acc, p: Params) -> np.ndarray:
    """The log e-value against "no difference" now (not the running maximum)."""
    if p.method == "exact":
        return log_e_mixture(acc["s"], acc["v"], p.rho)
    if p.method == "asymptotic":
        return log_e_mixture(acc["s"], _v_hat(acc, p), p.rho)
    if p.method == "symmetric":
        return logsumexp(acc["lk"] + _LOG_QW)
    return _log_mean_exp(acc["kp"][..., _ZERO], acc["km"][..., _ZERO])


def fewest_to_decide(p: Params, weights: np.ndarray, alpha: float) -> int:
    """The fewest clusters after which a pair can be decided on clusters of these weights, however large the difference.

    A lower bound, by the largest e-value ``n`` clusters can give: the exact test's is at most
    ``exp((n - 1) / 2) / sqrt(n)`` (Cauchy-Schwarz: ``S**2 <= n V``) and the symmetric test's
    below ``2 ** n`` (each cluster's factor ``exp(x) / cosh(x)`` is below 2), both against
    ``1 / alpha``, which every pair must reach alone (its own set in :func:`sure_closed`); the
    asymptotic statistic's ``V`` is never below ``var0`` (:func:`_v_hat`) and ``|S|`` is at most
    the sum of the ``n`` largest ``weights`` (differences in [-1, 1]), against ``pairs / alpha``.
    ``len(weights) + 1`` when no number of these clusters is enough. The strict and ``wor``
    methods have no such bound: ``0``.

    Example:
        >>> [fewest_to_decide(Params(m, math.log(3 / 0.05), rho=1.0), np.ones(20), 0.05) for m in ("exact", "symmetric")]
        [10, 5]
        >>> fewest_to_decide(Params("asymptotic", math.log(1 / 0.05), rho=0.0088, var0=0.01), np.ones(7), 0.05)
        1
    """
    n = np.arange(1, weights.size + 1)
    if p.method == "asymptotic":
        s = np.cumsum(np.sort(weights)[::-1])
        top = log_e_mixture(s, np.full(s.shape, p.var0), p.rho)
        c = p.log_threshold
    elif p.method in ("exact", "symmetric"):
        n = np.arange(1, max(weights.size, 64) + 1)  # the bound does not depend on the clusters
        top = (n - 1) / 2 - 0.5 * np.log(n) if p.method == "exact" else n * math.log(2.0)
        c = math.log(1.0 / alpha)
    else:
        return 0
    ok = np.flatnonzero(top >= c)
    return int(n[ok[0]]) if ok.size else weights.size + 1


def sure(acc: Acc, p: Params, n: int, min_clusters: int) -> np.ndarray:
    """Where the e-value has reached ``pairs / alpha`` after ``n`` clusters (none before ``min_clusters``)."""
    return (log_e(acc, p) >= p.log_threshold) & (n >= min_clusters) & (mean(acc) != 0)


def sure_closed(acc: Acc, p: Params, n: int, min_clusters: int) -> np.ndarray:
    """:func:`sure` for several pairs at once (the last axis), stepped down by closed testing.

    A pair is decided when, for every set of pairs holding it, the mean of their e-values now
    reaches ``1 / alpha`` (closed testing: Marcus, Peritz & Gabriel 1976, "On closed testing
    procedures with special reference to ordered analysis of variance", Biometrika 63:655-660;
    each intersection tested by the arithmetic mean of its e-values, an e-value for it under any
    dependence: Vovk & Wang 2021, "E-values: calibration, combination and applications", Ann.
    Statist. 49:1736-1754, section 5). The mean of e-processes on the same clusters is an
    e-process, so by Ville's inequality the chance that the pairs whose arms are equally good
    ever reach it is at most ``alpha`` at every look at once. A pair whose e-value reaches
    ``pairs / alpha`` (:func:`sure`) is always decided; others can be decided sooner, once the
    pairs already far from 0 no longer share the ``alpha``. The asymptotic method's statistic is
    not an e-process: it keeps the split ``alpha / pairs``.

    Example:
        >>> p = Params("exact", math.log(3 / 0.05), rho=1.0)
        >>> acc = {"s": np.array([7.4, 6.8, 0.0]), "v": np.array([4.0, 4.0, 4.0]),
        ...        "sw": np.ones(3), "t": np.full(3, 9.0), "nz": np.full(3, 9.0)}
        >>> sure(acc, p, 9, 1).tolist(), sure_closed(acc, p, 9, 1).tolist()
        ([True, False, False], [True, True, False])
    """
    k = acc["t"].shape[-1]
    if k == 1 or p.method == "asymptotic":
        return sure(acc, p, n, min_clusters)
    worst = closed_log_e(log_e(acc, p))
    return (worst >= p.log_threshold - math.log(k)) & (n >= min_clusters) & (mean(acc) != 0)


def closed_log_e(le: np.ndarray) -> np.ndarray:
    """For each pair (last axis), the least log of the mean e-value over the sets of pairs holding it.

    The least mean holds the pair and the smallest others: for the pair of rank ``r`` (ascending)
    the pair with the ``m`` smallest others (``m <= r``), or the ``m + 1`` smallest of all.

    Example:
        >>> np.exp(closed_log_e(np.log(np.array([1.0, 100.0, 40.0])))).round(2).tolist()
        [1.0, 47.0, 20.5]
    """
    k = le.shape[-1]
    order = np.argsort(le, axis=-1)
    s = np.take_along_axis(le, order, axis=-1)
    prefix = np.concatenate(
        [np.full((*s.shape[:-1], 1), -np.inf), np.logaddexp.accumulate(s, axis=-1)], axis=-1
    )  # log of the sum of the L smallest, L = 0..k
    size = np.log(np.arange(1, k + 1))
    with_j = np.logaddexp(s[..., :, None], prefix[..., None, :k]) - size  # rank r with the m smallest others
    m_le_r = np.arange(k)[None, :] <= np.arange(k)[:, None]
    a = np.where(m_le_r, with_j, np.inf).min(axis=-1)
    b = prefix[..., 1:] - size  # the L = m + 1 smallest, which hold the pair when m > r
    after = np.minimum.accumulate(b[..., ::-1], axis=-1)[..., ::-1]  # min over m >= the index
    tail = np.concatenate([after[..., 1:], np.full((*s.shape[:-1], 1), np.inf)], axis=-1)
    worst_sorted = np.minimum(a, tail)
    out = np.empty_like(worst_sorted)
    np.put_along_axis(out, order, worst_sorted, axis=-1)
    return out


def within_margin(
    acc: Acc, p: Params, margin: float, near: float, rows: np.ndarray | None = None
) -> np.ndarray:
    """Where a pair is settled as no different: no difference beyond ``+-margin``, the one seen within ``near``.

    The symmetric method (with its clusters kept) tests the two one-sided hypotheses "the
    difference is at least ``margin``" and "at most ``-margin``" (Schuirmann 1987, "A comparison
    of the two one-sided tests procedure and the power approach for assessing the equivalence
    of average bioavailability", J. Pharmacokinet. Biopharm. 15:657-680), each with the half of
    the symmetric mixture that bets against it: ``log E = log 2 + log sum_{j: l_j < 0} q_j
    prod_c (1 + tanh(l_j w_c (D_c - margin)))`` (and ``l_j > 0`` at ``-margin``). Each factor
    grows with the candidate difference, so reaching ``pairs / alpha`` at ``margin`` rejects
    every difference beyond it: the one-sided bound is below ``margin``, and it misses the
    truth with chance at most ``alpha / pairs`` (Ville's inequality); only one of the two
    hypotheses can be true, so each side takes the whole ``alpha / pairs``, where the two-sided
    sequence splits it. The other methods: the confidence sequence within ``+-margin``.

    Args:
        acc: accumulators of any leading shape.
        p: the test's parameters.
        margin: the margin (proportion units, above 0).
        near: the largest ``|difference seen|`` settled.
        rows: where to look (a boolean mask of the leading shape); elsewhere ``False``.

    Returns:
        A boolean array of the leading shape.

    Example:
        >>> p = Params("symmetric", math.log(20.0), rho=0.05)
        >>> acc = new_acc(p, (1,))
        >>> for _ in range(12):
        ...     update(acc, p, np.array([0.0]), np.array([1.0]))
        >>> within_margin(acc, p, 0.5, 0.1).tolist(), within_margin(acc, p, 0.05, 0.1).tolist()
        ([True], [False])
    """
    mu = mean(acc)
    near_ = np.abs(mu) <= near if rows is None else rows & (np.abs(mu) <= near)
    out = np.zeros(mu.shape, dtype=bool)
    if not near_.any():
        return out
    sub = {k: v[near_] for k, v in acc.items()}
    if not _sided(sub, p):
        lo, hi = cs(sub, p)
        out[near_] = (lo > -margin) & (hi < margin)
        return out
    ends = np.full((int(near_.sum()), 1), margin)
    up = _side_log_e(sub, p, -ends, 1.0)[..., 0] >= p.log_threshold
    down = _side_log_e(sub, p, ends, -1.0)[..., 0] >= p.log_threshold
    out[near_] = up & down
    return out


def _sided(acc: Acc, p: Params) -> bool:
    """Whether the settling uses the two one-sided symmetric tests (the symmetric method, its clusters kept)."""
    return p.method == "symmetric" and {"hx", "hw"} <= acc.keys()


def _side_log_e(acc: Acc, p: Params, mu: np.ndarray, sign: float) -> np.ndarray:
    """The one-sided symmetric log e-value against candidates ``mu`` (shape ``(..., k)``).

    ``sign = 1``: the bets that the difference is above ``mu`` (``l_j > 0``); ``-1``: below.
    """
    lam = _lambdas(p.rho)
    side = sign * lam > 0
    hx, hw = acc["hx"], acc["hw"]
    x = hx[..., None, :] - mu[..., :, None] * hw[..., None, :]  # (..., k, clusters)
    a = lam[side] * x[..., None]
    on = (hw[..., None, :] > 0)[..., None]
    f = np.where(on, math.log(2.0) - np.logaddexp(0.0, -2.0 * a), 0.0).sum(axis=-2)
    return math.log(2.0) + logsumexp(f + _LOG_QW[side])


def equivalence_bounds(acc: Acc, p: Params) -> tuple[np.ndarray, np.ndarray]:
    """The bounds :func:`within_margin` settles on: each one-sided at ``alpha / pairs``.

    For the symmetric method, the lower bound of the test that the difference is above a
    candidate and the upper bound of the one that it is below (each misses the truth with
    chance at most ``alpha / pairs``; together an interval at ``1 - 2 alpha / pairs``, as the
    two one-sided tests' interval is); else :func:`cs`.
    """
    if not _sided(acc, p):
        return cs(acc, p)

    def side(sign: float) -> Callable[[np.ndarray], np.ndarray]:
        return lambda mu: _side_log_e(acc, p, mu, sign) >= p.log_threshold

    return _inverted_cs(acc, p, side(1.0))[0], _inverted_cs(acc, p, side(-1.0))[1]


def mean(acc: Acc) -> np.ndarray:
    """The running weighted mean difference ``sum w D / sum w`` (0 before any cluster)."""
    return np.where(acc["sw"] > 0, acc["s"] / np.maximum(acc["sw"], 1e-300), 0.0)


def cs(acc: Acc, p: Params) -> tuple[np.ndarray, np.ndarray]:
    """The time-uniform confidence sequence ``(low, high)`` for the difference, within [-1, 1]."""
    c = p.log_threshold
    if p.method == "asymptotic":
        v = _v_hat(acc, p)
        half = np.sqrt((v + p.rho) * (2.0 * c + np.log((v + p.rho) / p.rho)))
        mu = mean(acc)
        half = np.where(acc["sw"] > 0, half / np.maximum(acc["sw"], 1e-300), 2.0)
        return np.clip(mu - half, -1.0, 1.0), np.clip(mu + half, -1.0, 1.0)
    if p.method == "exact" or (p.method == "symmetric" and not {"hx", "hw"} <= acc.keys()):
        return _exact_cs(acc, p)
    if p.method == "symmetric":
        return _inverted_cs(acc, p, _symmetric_over(acc, p))
    inside = _log_mean_exp(acc["kp"], acc["km"]) < c
    lo = np.where(inside, GRID, np.inf).min(axis=-1)
    hi = np.where(inside, GRID, -np.inf).max(axis=-1)
    empty = ~inside.any(axis=-1)
    if empty.any():  # every grid point rejected (the truth between two of them): the least rejected
        best = GRID[np.argmin(_log_mean_exp(acc["kp"], acc["km"]), axis=-1)]
        lo, hi = np.where(empty, best, lo), np.where(empty, best, hi)
    return lo, hi


def _exact_cs(acc: Acc, p: Params) -> tuple[np.ndarray, np.ndarray]:
    """Invert the exact e-process: the interval around the running mean where ``log E(mu)`` stays below the threshold."""

    def over(mu: np.ndarray) -> np.ndarray:
        s = acc["s"][..., None] - mu * acc["sw"][..., None]
        v = np.maximum(
            acc["v"][..., None] - 2.0 * mu * acc["q"][..., None] + mu * mu * acc["sw2"][..., None], 0.0
        )
        return log_e_mixture(s, v, p.rho) >= p.log_threshold

    return _inverted_cs(acc, p, over)


def _symmetric_over(acc: Acc, p: Params) -> Callable[[np.ndarray], np.ndarray]:
    """Where the symmetric e-process at candidate differences ``mu`` (shape ``(..., k)``) reaches the threshold.

    ``log E(mu) = log mean_j prod_c exp(l_j x_c) / cosh(l_j x_c)`` with ``x_c = w_c (D_c - mu)``
    over the Gauss-Hermite bets ``l_j``: the clusters' kept ``w D`` and ``w``.
    """
    lam = _lambdas(p.rho)
    hx, hw = acc["hx"], acc["hw"]

    def over(mu: np.ndarray) -> np.ndarray:
        x = hx[..., None, :] - mu[..., :, None] * hw[..., None, :]  # (..., k, clusters)
        on = hw[..., None, :] > 0
        a = lam * x[..., None]  # (..., k, clusters, nodes)
        f = np.where(on[..., None], math.log(2.0) - np.logaddexp(0.0, -2.0 * a), 0.0)
        return logsumexp(f.sum(axis=-2) + _LOG_QW) >= p.log_threshold

    return over


def _inverted_cs(
    acc: Acc, p: Params, over: Callable[[np.ndarray], np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """The interval around the running mean where an e-process at ``mu`` stays below the threshold.

    ``over(mu)`` says, for candidates ``mu`` of shape ``(..., k)``, where the e-process against
    ``mu`` reaches the threshold. On each side of the running mean the first candidate that
    reaches it, on a grid denser near the mean (64 steps to -1 or 1), then bisection (30 steps),
    vectorised; a side that never reaches it ends at -1 or 1. Far from the data the
    self-normalised e-value can fall back below the threshold (its ``log V`` term grows): those
    candidates, cut off from the estimate by rejected ones, are left out.
    """
    mu0 = mean(acc)
    steps = (np.arange(1, 65) / 64.0) ** 2
    out = []
    for edge in (-1.0, 1.0):
        path = mu0[..., None] + steps * (edge - mu0[..., None])
        hit = over(path)
        first = np.argmax(hit, axis=-1)
        reach = hit.any(axis=-1)
        outer = np.take_along_axis(path, first[..., None], axis=-1)[..., 0]
        prev = np.where(first > 0, first - 1, 0)
        inner = np.where(first > 0, np.take_along_axis(path, prev[..., None], axis=-1)[..., 0], mu0)
        for _ in range(30):
            mid = 0.5 * (inner + outer)
            up = over(mid[..., None])[..., 0]
            outer = np.where(up, mid, outer)
            inner = np.where(up, inner, mid)
        out.append(np.where(reach, outer, edge))
    return out[0], out[1]


def rho_for(v_star: float, log_threshold: float) -> float:
    """The mixture precision whose boundary is tightest at intrinsic time ``v_star`` (Howard et al. 2021)."""
    c2 = 2.0 * log_threshold
    return max(v_star / (c2 + math.log1p(c2)), 1e-12)


def to_lists(acc: Acc) -> dict[str, list[float]]:
    """JSON-able copy of one accumulator of shape ``(pairs,)`` (the betting grids as nested lists)."""
    return {k: v.tolist() for k, v in acc.items()}


def from_lists(obj: dict[str, list[float]], p: Params, shape: tuple[int, ...]) -> Acc:
    """The accumulator :func:`to_lists` wrote; ``KeyError``/``ValueError`` on a malformed one."""
    acc = new_acc(p, shape)
    for k in list(acc):
        if k == "nz" and k not in obj:  # saved before the count was kept: every cluster counted
            acc["nz"] = np.asarray(obj["t"], dtype=float).reshape(shape)
            continue
        if k in _HISTORY and k not in obj:  # saved before the symmetric sequence kept its clusters
            acc.pop(k)  # (its sequence is then the exact method's)
            continue
        if k not in acc:
            continue
        arr = np.asarray(obj[k], dtype=float)
        if k in _HISTORY:
            arr = arr.reshape((*shape, -1)) if arr.size else np.zeros((*shape, 0))
            if arr.shape[:-1] != shape:
                raise ValueError(f"{k}: shape {arr.shape}, expected {(*shape, 'clusters')}")
            acc[k] = arr
            continue
        if arr.shape != acc[k].shape:
            raise ValueError(f"{k}: shape {arr.shape}, expected {acc[k].shape}")
        acc[k] = arr
    return acc
