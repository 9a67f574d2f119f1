"""The order a stop rule runs clusters in: uniform, or informative (drawn with known probabilities).

Private to :mod:`hrbench.stats._sequential`. ``order="informative"`` draws the clusters one by
one without replacement, each with a probability in proportion to ``p_c``, which grows with how
much the paired difference varied on that cluster in earlier benchmarks of the same reference
(:func:`cluster_spread`), mixed with the uniform distribution so that every cluster stays
possible (:data:`FLOOR`): ``p_c = (1 - FLOOR) * w_c s_c / sum(w s) + FLOOR / G``, ``w_c`` the
cluster's size over the mean size and ``s_c`` the root mean square of its cluster mean
differences in the history. A cluster drawn when the clusters ``R`` are left had the chance
``q = p_c / sum_R p`` of being drawn; it enters the e-process with the weight ``w_c / (|R| q)``
(:func:`ipw`): the inverse of its probability, relative to a uniform draw from ``R`` (1 when
every ``p`` is equal), times one constant fixed before the first cluster (:func:`scale`: the
test is tuned for the fewer clusters a right history needs). Under arms that are equally good on every cluster each cluster's
difference is centred on 0 (symmetric) whatever the history said, and the weight is known
before the cluster runs, so the e-process stays one (false stops at most ``alpha`` with a
right or a wrong history); what the history buys is fewer clusters when it is right: the
clusters whose differences vary most (the informative ones) come first, down-weighted, and
the clusters on which arms always agree are left for later (Hansen & Hurwitz 1943, "On the
theory of sampling from finite populations", Ann. Math. Statist. 14, sampling with
probability proportional to size; Efraimidis & Spirakis 2006, "Weighted random sampling with
a reservoir", Inf. Process. Lett. 97, the order itself).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["FLOOR", "cluster_spread", "draw_probabilities", "ipw", "scale", "weighted_order"]

FLOOR = 0.2
"""The share of the drawing probability spread evenly over the clusters: each has at least ``FLOOR / G``."""


def cluster_spread(history: Iterable[Any]) -> dict[str, float]:
    """Per cluster, how much pairs of arms disagreed on its items in earlier benchmarks.

    The root mean square, over every pair of arms of every benchmark and over the cluster's
    items, of the paired difference of item mean scores (items averaged over their runs; the
    labelled, reportable rows): 0 for a cluster on which every arm always agreed.

    Args:
        history: earlier benchmarks of the same reference: each a :class:`~hrbench.Bench`, a
            list of rows (:class:`~hrbench.records.Row` or dicts) or a mapping of the row
            columns.

    Returns:
        ``{cluster: spread}`` (proportion units) for the clusters they ran; empty when none
        ran two arms on a labelled item.

    Example:
        >>> rows = [{"cluster": c, "item": f"{c}{i}", "arm": a, "run": 1, "correct": ok, "failure_kind": None,
        ...          "usd": None, "reportable": True}
        ...         for c, i, a, ok in [("x", 1, "a", 1), ("x", 1, "b", 0), ("x", 2, "a", 1), ("x", 2, "b", 1),
        ...                             ("y", 1, "a", 1), ("y", 1, "b", 1)]]
        >>> {c: round(v, 3) for c, v in cluster_spread([rows]).items()}
        {'x': 0.707, 'y': 0.0}
    """
    from hrbench.stats._table import _items, _table

    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    for bench in history:
        t = _table(bench)
        names = [str(c) for c in t.clusters]
        per = [_items(t, a) for a in range(len(t.arms))]
        for i in range(len(per)):
            for j in range(i + 1, len(per)):
                common, pa, pb = np.intersect1d(
                    per[i].idx, per[j].idx, assume_unique=True, return_indices=True
                )
                if common.size == 0:
                    continue
                d = per[i].y[pa] - per[j].y[pb]
                cl = t.item_cluster[common]
                sq = np.bincount(cl, weights=d * d, minlength=len(names))
                n = np.bincount(cl, minlength=len(names))
                for c in np.flatnonzero(n):
                    sums[names[c]] = sums.get(names[c], 0.0) + float(sq[c])
                    counts[names[c]] = counts.get(names[c], 0) + int(n[c])
    return {c: math.sqrt(sums[c] / counts[c]) for c in sorted(sums)}


def _importance(
    clusters: Sequence[str], sizes: Mapping[str, float], spread: Mapping[str, float] | None
) -> np.ndarray | None:
    """Per cluster ``sqrt(n_c) s_c``: how much its size-weighted difference is expected to vary.

    A cluster's mean difference varies about as ``s_c / sqrt(n_c)`` (its items' spread over
    their number), and it enters the test weighed by its size ``n_c``. A cluster the history did
    not run takes the mean spread of those it did. ``None`` when no cluster varied at all.
    """
    known = [float(spread[c]) for c in clusters if spread and c in spread]
    if not known or not any(v > 0 for v in known):
        return None
    fill = float(np.mean(known))
    return np.array([math.sqrt(sizes[c]) * float(spread.get(c, fill)) for c in clusters])  # type: ignore[union-attr]


def draw_probabilities(
    clusters: Sequence[str], sizes: Mapping[str, float], spread: Mapping[str, float] | None
) -> dict[str, float]:
    """Each cluster's drawing weight ``p_c`` (summing to 1): uniform without a spread to go by.

    ``(1 - FLOOR) * i_c / sum(i) + FLOOR / G`` with ``i_c = sqrt(n_c) s_c`` (:func:`_importance`):
    probability proportional to how much the cluster's weighted difference varies, the optimum
    of sampling with probability proportional to size (Hansen & Hurwitz 1943), mixed with the
    uniform draw so that every cluster stays possible.
    """
    g = len(clusters)
    imp = _importance(clusters, sizes, spread)
    if imp is None:
        return dict.fromkeys(clusters, 1.0 / g)
    p = (1.0 - FLOOR) * imp / imp.sum() + FLOOR / g
    return {c: float(v) for c, v in zip(clusters, p / p.sum(), strict=True)}


def weighted_order(clusters: Sequence[str], p: Mapping[str, float], seed: int) -> list[str]:
    """The clusters drawn one by one without replacement, each in proportion to ``p`` (seeded).

    Efraimidis & Spirakis's keys ``u ** (1 / p)``, sorted from the largest: the same law as
    successive draws in proportion to ``p`` among the clusters left.
    """
    ids = sorted(clusters)
    u = np.random.default_rng(int(seed)).random(len(ids))
    keys = np.log(u) / np.array([p[c] for c in ids])
    return [ids[i] for i in np.argsort(-keys, kind="stable")]


def ipw(cluster: str, p: Mapping[str, float], left: Iterable[str]) -> float:
    """The inverse-probability weight of ``cluster`` drawn when the clusters ``left`` (it among them) remain.

    ``1 / (|R| q)`` with ``q = p_c / sum_R p``: 1 when every ``p`` is equal.

    Example:
        >>> ipw("a", {"a": 0.5, "b": 0.25, "c": 0.25}, ["a", "b", "c"])
        0.6666666666666666
    """
    rest = list(left)
    return float(sum(p[c] for c in rest) / (len(rest) * p[cluster]))


def scale(p: Mapping[str, float], sizes: Mapping[str, float], spread: Mapping[str, float] | None) -> float:
    """The constant every inverse-probability weight is multiplied by: ``1 / r``.

    ``r`` is the expected square of a first draw's weighted difference over a uniform draw's,
    when each cluster's weighted difference varies as the history shows (``i_c``,
    :func:`_importance`): ``sum(i**2 / (G p)) / sum(i**2)``, below 1 when the history is right,
    so that about ``r`` times the plan's clusters decide. The test's mixture over bets is tuned
    for its sum of squares at the plan's clusters; scaled by ``1 / r``, the weighted differences
    reach that sum where they are expected to decide (the same as tuning it for ``r`` times the
    clusters; ``bench/sequential.py``: 0.59 of a fixed design's clusters at the planned
    difference on its uneven design, 0.65 with ``1 / sqrt(r)``). 1 without a spread to go by.
    Fixed before the first cluster (it reads only the history), so the e-process stays one.

    Example:
        >>> p = {"a": 0.6, "b": 0.2, "c": 0.2}
        >>> round(scale(p, dict.fromkeys("abc", 1.0), {"a": 0.3, "b": 0.0, "c": 0.0}), 3)
        1.8
    """
    ids = list(p)
    imp = _importance(ids, sizes, spread)
    if imp is None:
        return 1.0
    pr = np.array([p[c] for c in ids])
    r = float(np.sum(imp**2 / (len(ids) * pr)) / np.sum(imp**2))
    return 1.0 / r if r > 0 else 1.0
