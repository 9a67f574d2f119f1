"""The order a stop rule runs clusters in: uniform, or informative (drawn with known probabilities).

Private to :mod:`hrbench.stats.sequential`. ``order="informative"`` draws the clusters one by
one without replacement, each with a probability in proportion to ``p_c``, which grows with how
much the paired difference varied on that cluster in earlier benchmarks of the same reference
(:func:`cluster_spread`), mixed with the uniform distribution so that every cluster stays
possible (:data:`FLOOR`): ``p_c = (1 - FLOOR) * w_c s_c / sum(w s) + FLOOR / G``, ``w_c`` the
cluster's size over the mean size and ``s_c`` the root mean square of its cluster mean
differences in the history. A cluster drawn when the clusters ``R`` are left had the chance
``q = p_c / sum_R p`` of being drawn; it enters the e-process with the weight ``w_c / (|R| q)``
(:func:`ipw`): the inverse of its probability, relative to a uniform draw from ``R`` (1 when
every ``p`` is equal). Under arms that are equally good on every cluster each cluster's
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

__all__ = ["FLOOR", "cluster_spread", "draw_probabilities", "ipw", "weighted_order"]

FLOOR = 0.2
"""The share of the drawing probability spread evenly over the clusters: each has at least ``FLOOR / G``."""


def cluster_spread(history: Iterable[Any]) -> dict[str, float]:
    """Per cluster, the root mean square of its mean paired difference in earlier benchmarks.

    Args:
        history: earlier benchmarks of the same reference: each a :class:`~hrbench.Bench`, a
            list of rows (:class:`~hrbench.records.Row` or dicts) or a mapping of the row
            columns. Every pair of arms of each counts; items are averaged over their runs
            (labelled, reportable rows).

    Returns:
        ``{cluster: spread}`` (proportion units) for the clusters they ran; empty when none
        ran two arms on a labelled item.

    Example:
        >>> rows = [{"cluster": c, "item": f"{c}{i}", "arm": a, "run": 1, "correct": ok, "failure_kind": None,
        ...          "usd": None, "reportable": True}
        ...         for c, i, a, ok in [("x", 1, "a", 1), ("x", 1, "b", 0), ("y", 1, "a", 1), ("y", 1, "b", 1)]]
        >>> cluster_spread([rows])
        {'x': 1.0, 'y': 0.0}
    """
    from hrbench.stats.table import _items, _table

    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    for bench in history:
        t = _table(bench)
        names = [str(c) for c in t.clusters]
        per = [_items(t, a) for a in range(len(t.arms))]
        for i in range(len(per)):
            for j in range(i + 1, len(per)):
                common, pa, pb = np.intersect1d(per[i].idx, per[j].idx, assume_unique=True, return_indices=True)
                if common.size == 0:
                    continue
                d = per[i].y[pa] - per[j].y[pb]
                cl = t.item_cluster[common]
                tot = np.bincount(cl, weights=d, minlength=len(names))
                n = np.bincount(cl, minlength=len(names))
                for c in np.flatnonzero(n):
                    name = names[int(c)]
                    sums[name] = sums.get(name, 0.0) + float(tot[c] / n[c]) ** 2
                    counts[name] = counts.get(name, 0) + 1
    return {c: math.sqrt(sums[c] / counts[c]) for c in sorted(sums)}


def draw_probabilities(
    clusters: Sequence[str], sizes: Mapping[str, float], spread: Mapping[str, float] | None
) -> dict[str, float]:
    """Each cluster's drawing weight ``p_c`` (summing to 1): uniform without a spread to go by.

    A cluster the history did not run takes the mean spread of those it did. When no cluster
    varied at all (every spread 0), the draw is uniform.
    """
    g = len(clusters)
    known = [float(spread[c]) for c in clusters if spread and c in spread]
    if not known or not any(v > 0 for v in known):
        return dict.fromkeys(clusters, 1.0 / g)
    fill = float(np.mean(known))
    mean_size = float(np.mean([sizes[c] for c in clusters]))
    raw = np.array([sizes[c] / mean_size * float(spread.get(c, fill)) for c in clusters])  # type: ignore[union-attr]
    p = (1.0 - FLOOR) * raw / raw.sum() + FLOOR / g
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
