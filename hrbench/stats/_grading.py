"""Which rows to grade next: the human grades that would narrow the PPI++ intervals most.

:func:`next_grades` draws ``k`` rows not graded yet, stratified by arm and by the judge's verdict
(the strata of :mod:`hrbench.stats._ppi`'s weights). The ``k`` grades are shared out one at a
time to the stratum where one more grade cuts the estimated variance most: a stratum ``h`` of
``N_h`` rows whose human grades vary as ``q_h (1 - q_h)`` (``q_h`` the share the humans call
right among its grades so far, with Jeffreys' half a grade each way; no grade yet: the most,
0.25) adds ``(N_h / N_arm)**2 q_h (1 - q_h) / n_h`` to its arm's variance (Neyman's allocation,
made greedy so the grades already given count; Zrnic & Candes 2024, "Active Statistical
Inference", draw labels where the model is least sure in the same spirit). A stratum with no
grade is served first. Within a stratum the rows are drawn by systematic sampling over the rows
in cluster, item and run order from a seeded random start: every row not graded yet has the
same probability ``pi = k_h / U_h`` of being drawn (written with each row), and the grades are
spread over the clusters. Stratified PPI weights each stratum by its rows over its grades, so
the estimate stays unbiased however the grades were shared out.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from hrbench.errors import ConfigError
from hrbench.stats._ppi_rows import column, grades_table, item_names

__all__ = ["next_grades"]


def _allocate(
    sizes: dict[Any, int],
    free: dict[Any, int],
    n: dict[Any, int],
    q: dict[Any, float],
    arm_rows: dict[Any, int],
    k: int,
) -> dict[Any, int]:
    """Grades per stratum, given out one at a time where the variance falls most."""
    take = dict.fromkeys(sizes, 0)
    for _ in range(k):
        best, gain = None, -1.0
        for h, size in sizes.items():
            if take[h] >= free[h]:
                continue
            have = n[h] + take[h]
            w2 = (size / arm_rows[h[0]]) ** 2
            g = math.inf if have == 0 else w2 * q[h] * (1 - q[h]) * (1 / have - 1 / (have + 1))
            if g > gain:
                best, gain = h, g
        if best is None:
            break
        take[best] += 1
    return take


def next_grades(
    bench: Any, k: int, grades: Iterable[Any] | None = None, *, seed: int = 0
) -> list[dict[str, Any]]:
    """The ``k`` rows whose human grades would narrow the PPI++ intervals most, to grade next.

    Args:
        bench: a judged benchmark (a :class:`~hrbench.Bench`, its rows or a frame of rows),
            with the grades given so far as ``bench.grades`` when ``grades`` is ``None``.
        k: rows to draw (fewer when fewer rows are left ungraded).
        grades: the grades given so far (``item``, ``arm``, ``run``, ``correct``).
        seed: the draw's seed (the same benchmark, grades and seed give the same rows).

    Returns:
        One dict per row, in arm, cluster, item and run order: ``arm``, ``item``, ``run``,
        ``cluster``, ``judge`` (the judge's verdict) and ``pi`` (the probability the row had of
        being drawn; keep it with the grade: it marks the grade as drawn by stratum).

    Raises:
        ConfigError: ``k`` is not a whole number of at least 1.

    Example:
        >>> from hrbench.records import Row
        >>> rows = [Row(cluster=f"c{i // 4}", item=f"q{i}", arm=a, run=1, split="test",
        ...             correct=(i + len(a)) % 3 != 0, outcome="correct", failure_kind=None)
        ...         for i in range(40) for a in ("a", "b")]
        >>> picked = next_grades(rows, 6)
        >>> len(picked), sorted({p["arm"] for p in picked}), sorted({p["judge"] for p in picked})
        (6, ['a', 'b'], [False, True])
    """
    from hrbench.stats._table import _table

    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ConfigError("k", k, "must be a whole number of rows, at least 1")
    table = grades_table(getattr(bench, "grades", None) if grades is None else grades)
    t = _table(bench)
    items = item_names(bench, t)
    keep = np.flatnonzero(t.reportable & ~np.isnan(t.correct))
    order = keep[np.lexsort((t.run[keep], t.item[keep], t.item_cluster[t.item[keep]], t.arm[keep]))]
    strata: dict[tuple[int, int], list[int]] = {}
    sizes: dict[tuple[int, int], int] = {}
    n: dict[tuple[int, int], int] = {}
    ones: dict[tuple[int, int], float] = {}
    for r in order:
        h = (int(t.arm[r]), int(t.correct[r]))
        sizes[h] = sizes.get(h, 0) + 1
        got = table.get((t.arms[h[0]], items[int(t.item[r])], int(t.run[r])))
        if got is None:
            strata.setdefault(h, []).append(int(r))
        else:
            n[h] = n.get(h, 0) + 1
            ones[h] = ones.get(h, 0.0) + got[0]
    for h in sizes:
        strata.setdefault(h, [])
        n.setdefault(h, 0)
    q = {h: (ones.get(h, 0.0) + 0.5) / (n[h] + 1) for h in sizes}
    arm_rows: dict[int, int] = {}
    for h, size in sizes.items():
        arm_rows[h[0]] = arm_rows.get(h[0], 0) + size
    take = _allocate(sizes, {h: len(v) for h, v in strata.items()}, n, q, arm_rows, k)
    rng = np.random.default_rng([seed, 0x9AD])
    clusters = column(bench, "cluster")
    pos = {int(r): i for i, r in enumerate(order)}
    out: list[dict[str, Any]] = []
    where: list[int] = []  # each drawn row's place in cluster, item and run order
    for h, m in take.items():
        pool = strata[h]
        if not m:
            continue
        step = len(pool) / m
        start = rng.uniform(0, step)
        for j in range(m):
            r = pool[int(start + j * step)]
            out.append(
                dict(
                    arm=t.arms[int(t.arm[r])],
                    item=items[int(t.item[r])],
                    run=int(t.run[r]),
                    cluster=str(clusters[r]),
                    judge=bool(t.correct[r]),
                    pi=m / len(pool),
                )
            )
            where.append(pos[r])
    return [d for _, d in sorted(zip(where, out, strict=True), key=lambda x: x[0])]
