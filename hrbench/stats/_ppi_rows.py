"""How PPI++ reads a benchmark's rows and grades: per arm, each row's cluster, weight, verdict, grade and design weight.

Private to :mod:`hrbench.stats._ppi` and :mod:`hrbench.stats._grading`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from hrbench.errors import ConfigError

__all__ = [
    "ArmRows",
    "arm_of",
    "arm_parts",
    "column",
    "design_weights",
    "grades_table",
    "item_names",
    "paired_parts",
]


@dataclass
class ArmRows:
    """One arm's rows as PPI reads them: per row its cluster, weight, verdict and (graded) grade."""

    g: np.ndarray  # cluster code per row
    w: np.ndarray  # accuracy weight per row (sums to 1)
    f: np.ndarray  # judge verdict per row, 0 or 1
    graded: np.ndarray  # bool per row
    h: np.ndarray  # human grade per row (nan where not graded)
    d: np.ndarray  # 1 / pi per row (nan where not graded)
    stratified: bool = False  # d is N_v / n_v by the judge's verdict v (grades drawn by stratum)


def grades_table(grades: Any) -> dict[tuple[str, str, int], tuple[float, float | None, list[str]]]:
    """Grades by row key ``(arm, item, run)``: the mean grade, the drawing probability, the graders.

    Raises:
        ConfigError: a grade that is not a boolean (or 0/1), or a ``pi`` outside (0, 1].
    """
    out: dict[tuple[str, str, int], list[Any]] = {}
    for i, g in enumerate(grades or ()):
        get: Any = g.get if isinstance(g, Mapping) else lambda c, g=g: getattr(g, c, None)
        key = (str(get("arm")), str(get("item")), int(get("run")))
        c = get("correct")
        if not isinstance(c, (bool, int, float)) or c not in (0, 1):
            raise ConfigError(
                "correct", c, f"a human grade must be true or false (1 or 0), at grade {i} {key}"
            )
        pi = get("pi")
        if pi is not None and not (isinstance(pi, (int, float)) and 0 < pi <= 1):
            raise ConfigError("pi", pi, f"a drawing probability must be in (0, 1], at grade {i} {key}")
        got = out.setdefault(key, [[], None, []])
        got[0].append(float(c))
        got[1] = pi if pi is not None else got[1]
        got[2].append(str(get("grader") or "human"))
    return {k: (float(np.mean(v[0])), v[1], v[2]) for k, v in out.items()}


def column(bench: Any, name: str) -> list[Any]:
    """One column of a benchmark's rows (a Bench, rows as Structs or dicts, or a frame), as a list."""
    from hrbench.stats._table import _tolist

    is_frame = hasattr(bench, "columns") or isinstance(bench, Mapping)
    rows = bench if is_frame else getattr(bench, "rows", bench)
    if is_frame:
        return _tolist(rows[name])
    return [r[name] if isinstance(r, Mapping) else getattr(r, name) for r in rows]


def item_names(bench: Any, t: Any) -> list[str]:
    """Item names by code, in the table's order (the order of their first rows)."""
    return [str(n) for n in dict.fromkeys(column(bench, "item"))]


def arm_parts(
    t: Any, keep: np.ndarray, items: list[str], table: Mapping[tuple[str, str, int], Any]
) -> dict[str, ArmRows]:
    """Each arm's rows with a verdict: clusters, accuracy weights, verdicts, grades and ``1 / pi``."""
    out: dict[str, ArmRows] = {}
    for code, name in enumerate(t.arms):
        m = keep & (t.arm == code)
        idx = np.flatnonzero(m)
        if idx.size == 0:
            continue
        out[name] = arm_of(t, idx, items, name, table)
    return out


def arm_of(
    t: Any, idx: np.ndarray, items: list[str], name: str, table: Mapping[tuple[str, str, int], Any]
) -> ArmRows:
    item = t.item[idx]
    per_item = np.bincount(item, minlength=t.n_items)
    n_items = int(np.count_nonzero(per_item))
    w = 1.0 / (n_items * per_item[item])
    h = np.full(idx.size, np.nan)
    pi = np.full(idx.size, np.nan)
    for j, r in enumerate(idx):
        got = table.get((name, items[int(t.item[r])], int(t.run[r])))
        if got is not None:
            h[j] = got[0]
            pi[j] = np.nan if got[1] is None else got[1]
    graded = ~np.isnan(h)
    f = t.correct[idx].astype(float)
    d, stratified = design_weights(graded, f, bool(np.any(graded & ~np.isnan(pi))))
    return ArmRows(
        g=t.item_cluster[item].astype(np.intp), w=w, f=f, graded=graded, h=h, d=d, stratified=stratified
    )


def design_weights(graded: np.ndarray, f: np.ndarray, by_verdict: bool) -> tuple[np.ndarray, bool]:
    """Each graded row's design weight (``nan`` elsewhere): 1, or ``N_v / n_v`` by the judge's verdict ``v``.

    Returns ``(d, stratified)``: ``stratified`` when the weights are by verdict.

    Grades drawn by :func:`hrbench.next_grades` (they carry ``pi``) are drawn uniformly within
    each arm x verdict stratum, more often where the judge errs more; weighting each by its
    stratum's rows over its grades keeps the estimate unbiased (stratified PPI). Grades given
    otherwise are read as a simple random sample of the arm's rows (equal weights), and so are
    all when a verdict's stratum has rows but no grade.
    """
    d = np.where(graded, 1.0, np.nan)
    if not by_verdict:
        return d, False
    for v in (0.0, 1.0):
        if np.any(f == v) and not np.any(graded & (f == v)):
            return d, False
    for v in (0.0, 1.0):
        n_v = int(np.sum(graded & (f == v)))
        if n_v:
            d[graded & (f == v)] = np.sum(f == v) / n_v
    return d, True


def paired_parts(
    a: ArmRows | None,
    b: ArmRows | None,
    t: Any,
    keep: np.ndarray,
    items: list[str],
    names: tuple[str, str],
    table: Mapping[tuple[str, str, int], Any],
) -> tuple[ArmRows | None, ArmRows | None]:
    """Both arms' rows on the items both ran (a paired difference is on the common items)."""
    if a is None or b is None:
        return a, b
    codes = [t.arms.index(n) for n in names]
    common = np.intersect1d(t.item[keep & (t.arm == codes[0])], t.item[keep & (t.arm == codes[1])])
    out: list[ArmRows | None] = []
    for name, code in zip(names, codes, strict=True):
        idx = np.flatnonzero(keep & (t.arm == code) & np.isin(t.item, common))
        out.append(None if idx.size == 0 else arm_of(t, idx, items, name, table))
    return out[0], out[1]
