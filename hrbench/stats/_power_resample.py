"""compare()'s power on benchmarks resampled from a pilot's own clusters, for :func:`~hrbench.stats.power`.

A cluster bootstrap of the pilot (Davison & Hinkley 1997, *Bootstrap Methods and their
Application*, §3.8: clusters drawn with replacement, the items within a cluster without), so
that however the arms' per-cluster differences are distributed (skewed: a little better on
most clusters and much worse on a few) the plan's benchmarks differ as the pilot's clusters do.
Each of the plan's clusters of ``m`` items is one of the pilot's clusters of at least ``m``
items (the largest when none is that large), drawn uniformly, and ``m`` of its items drawn
without replacement (with, beyond its items); each item keeps its own runs, ``K`` of them drawn
without replacement when the plan has fewer runs than the pilot (a subset of independent runs
is distributed as that many runs). The arms are moved to the planned difference by changing
runs at random: to raise an arm by ``h``, each of its wrong runs becomes right with probability
``h / (1 - accuracy)`` (to lower it, each right run wrong with probability ``h / accuracy``), half
the gap on each arm, so the arms' mean accuracy is the pilot's. Each benchmark goes through
:func:`~hrbench.stats.difference_interval`'s test, vectorised (:func:`_rejects`).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from hrbench.stats._intervals import _compact
from hrbench.stats._power_sim import _SIM_BENCHMARKS, _SIM_SEED, _rejects
from hrbench.stats._table import _arm_code, _items, _Table

RESAMPLED_CLUSTERS = 100
"""The most clusters a plan resampled from a pilot has (beyond, the noncentral t: the mean of that
many clusters is near normal however skewed their differences)."""

_BLOCK_CELLS = 4_000_000
"""Random draws held at once (benchmarks are simulated in blocks of about this many values)."""


class Cells(NamedTuple):
    """A pilot's two arms, paired by item, items sorted by cluster: what :func:`resampled_power` draws from."""

    right_a: np.ndarray  # per item: arm a's right runs
    runs_a: np.ndarray  # per item: arm a's runs
    right_b: np.ndarray
    runs_b: np.ndarray
    start: np.ndarray  # per cluster: its first item
    size: np.ndarray  # per cluster: its items


def pilot_cells(t: _Table, arm_a: str, arm_b: str) -> Cells | None:
    """The pilot's items common to ``arm_a`` and ``arm_b`` (right runs and runs of each), or None.

    None when they cannot be resampled: fewer than 2 clusters. (A run's score is right or wrong,
    1 or 0: the table refuses any other.)
    """
    ia, ib = (_items(t, _arm_code(t, arm, name)) for arm, name in ((arm_a, "arm_a"), (arm_b, "arm_b")))
    common, pa, pb = np.intersect1d(ia.idx, ib.idx, assume_unique=True, return_indices=True)
    g, n_g = _compact(t.item_cluster[common])
    if n_g < 2:
        return None
    order = np.argsort(g, kind="stable")
    size = np.bincount(g, minlength=n_g)
    start = np.concatenate([[0], np.cumsum(size)[:-1]])
    arms = [
        (np.rint(i.y[p] * i.k[p])[order].astype(np.int64), i.k[p][order].astype(np.int64))
        for i, p in ((ia, pa), (ib, pb))
    ]
    return Cells(*arms[0], *arms[1], start, size)


def _eligible(cells: Cells, m: int) -> np.ndarray:
    """The pilot clusters a plan cluster of ``m`` items is drawn from: those of ``m`` items or more, else the largest."""
    ok = np.flatnonzero(cells.size >= m)
    return ok if ok.size else np.flatnonzero(cells.size == cells.size.max())


def _accuracies(cells: Cells, sizes: np.ndarray) -> tuple[float, float]:
    """Each arm's expected accuracy over the plan's items (``sizes`` clusters), as resampled."""
    out = []
    for right, runs in ((cells.right_a, cells.runs_a), (cells.right_b, cells.runs_b)):
        means = np.add.reduceat(right / runs, cells.start) / cells.size  # per cluster: its items' mean
        out.append(sum(float(m * means[_eligible(cells, int(m))].mean()) for m in sizes) / float(sizes.sum()))
    return out[0], out[1]


def spread_kept(cells: Cells, sizes: np.ndarray) -> float:
    """The share of the spread between clusters that resampling keeps: ``(k - 1) / k`` for ``k`` pilot clusters drawn from.

    A cluster bootstrap of ``k`` clusters draws from their empirical distribution, whose variance
    is ``(k - 1) / k`` of the unbiased estimate (Davison & Hinkley 1997, §3.8: "the bootstrap
    variance is biased downwards by the factor (a - 1) / a" for ``a`` clusters), so benchmarks
    resampled from a pilot of few clusters vary less than real ones: a pilot of 2 clusters
    promised power 0.97 for a design whose power is 0.77. :func:`~hrbench.stats.power` has
    :func:`resampled_power` move the arms ``diff * sqrt(share)`` apart instead of ``diff``,
    which gives its test the noncentrality real benchmarks have. A plan cluster of ``m`` items draws from the pilot
    clusters of at least ``m`` items (:func:`_eligible`), ``k_m`` of them; a cluster's share of
    the mean's variance grows as ``m**2``, so the share kept is ``sum(m**2 (k_m - 1) / k_m) /
    sum(m**2)`` over the plan's clusters.

    Example:
        >>> cells = Cells(*(np.ones(6, dtype=np.int64),) * 4, np.array([0, 2, 4]), np.array([2, 2, 2]))
        >>> round(spread_kept(cells, np.array([2, 2, 2, 2])), 3)
        0.667
    """
    weight = sizes.astype(float) ** 2
    k = np.array([_eligible(cells, int(m)).size for m in sizes], dtype=float)
    return float(np.sum(weight * (k - 1) / k) / np.sum(weight))


def _flips(acc_a: float, acc_b: float, diff: float) -> tuple[float, float] | None:
    """Signed probabilities of changing a run of each arm (+: wrong to right) so that a - b is ``diff``."""
    half = (diff - (acc_a - acc_b)) / 2
    out = []
    for acc, h in ((acc_a, half), (acc_b, -half)):
        room = 1.0 - acc if h >= 0 else acc
        if abs(h) > room:
            return None
        out.append(0.0 if h == 0 else float(np.copysign(abs(h) / room, h)))
    return out[0], out[1]


def _picks(cells: Cells, sizes: np.ndarray, s: int, rng: np.random.Generator) -> np.ndarray:
    """The pilot item behind each item of ``s`` benchmarks of ``sizes`` clusters, shape (s, items)."""
    pick = np.empty((s, int(sizes.sum())), dtype=np.intp)
    ends = np.cumsum(sizes)
    for m in np.unique(sizes):
        cols = np.flatnonzero(sizes == m)  # the plan's clusters of m items
        ok = _eligible(cells, int(m))
        c = ok[rng.integers(ok.size, size=(s, cols.size))].ravel()
        nc = cells.size[c]
        if m <= nc.min():  # without replacement: the m smallest of random keys over the cluster's items
            keys = rng.random((c.size, int(nc.max())))
            keys[np.arange(keys.shape[1]) >= nc[:, None]] = 2.0
            off = np.argpartition(keys, int(m) - 1, axis=1)[:, : int(m)]
        else:  # a pilot with no cluster as large: with replacement
            off = (rng.random((c.size, int(m))) * nc[:, None]).astype(np.intp)
        got = (cells.start[c][:, None] + off).reshape(s, cols.size, int(m))
        for j, col in enumerate(cols):
            pick[:, ends[col] - m : ends[col]] = got[:, j]
    return pick


def _draw_runs(
    right: np.ndarray, runs: np.ndarray, k: int, flip: float, rng: np.random.Generator
) -> np.ndarray:
    """Right runs out of ``k`` per item (``right`` of ``runs`` in the pilot), then runs changed with ``flip``."""
    x = right.astype(np.int64)
    fewer = runs > k
    if fewer.any():  # k of the item's runs, without replacement
        x = x.copy()
        x[fewer] = rng.hypergeometric(x[fewer], runs[fewer] - x[fewer], k)
    if flip > 0:
        x = x + _binomial(k - x, flip, k, rng)
    elif flip < 0:
        x = x - _binomial(x, -flip, k, rng)
    return x


def _binomial(trials: np.ndarray, p: float, k: int, rng: np.random.Generator) -> np.ndarray:
    """Binomial draws of ``trials`` (each at most ``k``) at ``p``: by inversion of a table of their CDFs when ``k`` is small."""
    if k > 32:
        return rng.binomial(trials, p)
    w = np.arange(k + 1)[:, None]
    j = np.arange(k + 1)[None, :]
    comb = np.array([[math.comb(a, b) for b in range(k + 1)] for a in range(k + 1)], dtype=float)
    pmf = np.where(j <= w, comb * p**j * (1 - p) ** np.maximum(w - j, 0), 0.0)
    cdf = np.where(j >= w, 1.0, np.cumsum(pmf, axis=1))  # cdf[w, j] = P(Binomial(w, p) <= j)
    u = rng.random(trials.shape)
    out = np.zeros(trials.shape, dtype=np.int64)
    for at in range(k):
        out += u > cdf[trials, at]
    return out


def resampled_power(cells: Cells, sizes: np.ndarray, runs: int, alpha: float, diff: float) -> float | None:
    """The share of benchmarks resampled from ``cells`` (clusters ``sizes``, ``runs`` runs) whose paired test rejects.

    The arms are moved to ``diff`` (arm a minus arm b, proportion units) as the module says.

    Returns:
        The simulated power (4,000 benchmarks, seeded: the same on every call), or None when
        the pilot cannot give it: an item with fewer runs than ``runs``, or arms that cannot be
        moved ``diff`` apart (an arm would leave [0, 1]).
    """
    if min(int(cells.runs_a.min()), int(cells.runs_b.min())) < runs:
        return None
    flips = _flips(*_accuracies(cells, sizes), diff)
    if flips is None:
        return None
    rng = np.random.default_rng(_SIM_SEED)
    n, n_g = int(sizes.sum()), int(sizes.size)
    g = np.repeat(np.arange(n_g), sizes)
    block = max(16, min(_SIM_BENCHMARKS, _BLOCK_CELLS // (n + n_g * int(cells.size.max()))))
    hits = 0
    for done in range(0, _SIM_BENCHMARKS, block):
        s = min(block, _SIM_BENCHMARKS - done)
        pick = _picks(cells, sizes, s, rng)
        xa = _draw_runs(cells.right_a[pick], cells.runs_a[pick], runs, flips[0], rng)
        xb = _draw_runs(cells.right_b[pick], cells.runs_b[pick], runs, flips[1], rng)
        hits += int(np.sum(_rejects((xa - xb) / runs, g, n_g, alpha, float(n * runs))))
    return hits / _SIM_BENCHMARKS
