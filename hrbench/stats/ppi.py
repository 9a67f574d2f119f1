"""Prediction-powered inference: a judge's many verdicts and a few human grades, on clustered items.

The estimand is what the report's accuracy is, as humans would grade it: each arm's mean over
runs within an item, then over items, and the paired difference of two arms, with items sampled
in clusters. The judge's verdict ``f`` is known on every row; the human grade ``H`` (``correct``,
or the mean of several graders) on the graded rows ``L`` only, each drawn with a known
probability ``pi`` (:func:`hrbench.next_grades` writes it; a grade given without one counts as a
simple random sample of its arm's rows). For an arm, with ``w`` the row weights of the accuracy
(``1 / (items * runs of the item)``) and ``d = 1 / pi``, PPI++ (Angelopoulos, Duchi, Zrnic 2023,
"PPI++: Efficient Prediction-Powered Inference", arXiv 2311.01453) is::

    theta(lam) = lam * sum_all(w f) + sum_L(w d (H - lam f)) / sum_L(w d)

the judge's accuracy over every row plus the human-measured correction on the graded rows. With
one run per item, grades drawn uniformly and ``lam`` given, it is ppi-python's
``ppi_mean_pointestimate(H_L, f_L, f_all, lam)`` exactly. Any ``lam`` leaves it unbiased; ``lam
= 0`` is the human-only estimate (the graded rows' weighted mean). Weighting each grade by
``1 / pi`` is the stratified form of Fisch et al. 2024 ("Stratified Prediction-Powered
Inference for Hybrid Language Model Evaluation", arXiv 2406.04291): grades may be drawn more
often where the judge errs more, and the estimate stays unbiased.

Its variance is clustered: each row's share of the estimate's error (the linearisation of both
sums) is totalled per cluster, and a paired difference totals both arms' shares in each cluster
before squaring, so the judge's errors that two arms share in a cluster cancel and those that
differ by arm count (the **clustered paired difference**). ``lam`` (one per arm) is the value in
[0, 1] that minimises that clustered variance (PPI++'s power tuning, with the clustered variance
in place of the i.i.d. one), so the interval is never wider than the human-only one computed the
same way (``lam = 0`` is a candidate).

Small samples: the plain PPI++ interval under-covers with few grades (0.907 at 50 grades in a
simulation with a 90%-agreeing judge), because the rectifier's variance is estimated from the
few grades and is often 0 when none of them disagrees with the judge. Here (i) each arm's grades
are padded, for the variance only, with one pseudo-grade disagreeing each way at the arm's mean
weight, in a cluster of its own (an Agresti-Coull-style floor: a rectifier with no disagreement
seen still has the variance of one in each direction), (ii) the quantile is Student's t on the
clusters that hold a grade, less 1, and (iii) the end points are clipped to [0, 1] ([-1, 1] for a
difference). ``bench/ppi.py`` simulates clustered items, two arms and a judge whose errors are
correlated within clusters and differ by arm: coverage and false positives at 30, 50, 100 and
200 grades, and width against the human-only interval.

A judge that agrees poorly with the humans (Cohen's kappa below :data:`POOR_KAPPA` on the graded
rows, "fair" at best on Landis & Koch's 1977 scale) is not used: the estimate falls back to the
human-only one (``lam = 0``) and its note says why.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import msgspec
import numpy as np

from hrbench.errors import ConfigError

__all__ = [
    "POOR_KAPPA",
    "GradedEstimate",
    "HumanSection",
    "ppi_estimate",
]

POOR_KAPPA = 0.4
"""Cohen's kappa of the judge against the human grades below which the judge is not used (Landis & Koch 1977: 0.21-0.40 is "fair")."""

_MIN_GRADES = 2
"""Graded rows an arm needs (in 2 clusters or more) for an estimate with an interval."""


class GradedEstimate(msgspec.Struct, kw_only=True):
    """An arm's accuracy, or a paired difference, as humans would grade it: PPI++ with the judge.

    Attributes:
        arm_a: the arm (or the first arm of a difference ``arm_a - arm_b``).
        arm_b: the second arm of a difference; ``None`` for an arm's accuracy.
        estimate: the PPI++ estimate (human-only when ``method`` says so); ``None`` without
            enough grades.
        se: its clustered standard error.
        ci_low, ci_high: its interval at the section's level (within [0, 1], [-1, 1] for a difference).
        df: the t quantile's degrees of freedom (clusters holding a grade, less 1).
        lam: the power-tuning weight of each arm's judge verdicts, in [0, 1] (0: not used).
        method: ``"ppi++"`` or ``"human-only"`` (the judge agrees poorly, or adds nothing).
        n_graded: graded rows used (of both arms for a difference).
        n_rows: rows with a judge verdict (of both arms for a difference).
        n_clusters_graded: clusters holding a graded row.
        judge, judge_low, judge_high: the judge-only estimate and its interval (the report's).
        human, human_low, human_high: the human-only estimate (the graded rows alone, weighted
            by ``1 / pi``) and its interval, computed as the PPI++ one is with ``lam = 0``.
        worth: how many human grades alone would give the same variance (``n_graded`` times the
            human-only variance over the PPI++ one); ``None`` without an interval.
        p_value: two-sided p-value of no difference on that t (a difference only).
        note: why there is no estimate, or why the judge was not used; ``None`` otherwise.
    """

    arm_a: str
    arm_b: str | None = None
    estimate: float | None = None
    se: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    df: int | None = None
    lam: list[float] = []
    method: str = "ppi++"
    n_graded: int = 0
    n_rows: int = 0
    n_clusters_graded: int = 0
    judge: float | None = None
    judge_low: float | None = None
    judge_high: float | None = None
    human: float | None = None
    human_low: float | None = None
    human_high: float | None = None
    worth: float | None = None
    p_value: float | None = None
    note: str | None = None


class HumanSection(msgspec.Struct, kw_only=True):
    """The report's human-graded section: each arm and each pair as PPI++ estimates.

    Attributes:
        level: the intervals' level.
        n_grades: human grades matched to a row of the benchmark (a row graded by several
            graders counts once; its grade is their mean).
        graders: the graders' ids.
        unmatched: grades given for rows the benchmark does not have (arm, item or run unknown).
        kappa: Cohen's kappa of the judge's verdicts against the human grades on the graded rows.
        agree: graded rows on which the judge and the humans agree.
        fallback: ``True`` when the judge agrees poorly (``kappa`` below :data:`POOR_KAPPA`) and
            every estimate is the human-only one.
        arms: one :class:`GradedEstimate` per arm.
        pairs: one per pair of arms (``arm_a - arm_b``).
        note: how to read the section.
    """

    level: float
    n_grades: int
    graders: list[str]
    unmatched: int
    kappa: float | None
    agree: int
    fallback: bool
    arms: list[GradedEstimate]
    pairs: list[GradedEstimate]
    note: str


@dataclass
class _Arm:
    """One arm's rows as PPI reads them: per row its cluster, weight, verdict and (graded) grade."""

    g: np.ndarray  # cluster code per row
    w: np.ndarray  # accuracy weight per row (sums to 1)
    f: np.ndarray  # judge verdict per row, 0 or 1
    graded: np.ndarray  # bool per row
    h: np.ndarray  # human grade per row (nan where not graded)
    d: np.ndarray  # 1 / pi per row (nan where not graded)


def _shares(arm: _Arm, n_g: int, slot: int) -> tuple[float, float, float, np.ndarray, np.ndarray]:
    """An arm's parts: judge accuracy, weighted human and judge means on the graded rows, and per cluster the shares.

    Returns:
        ``(F, H_hat, f_hat, b, G)``: the estimate is ``lam * F + H_hat - lam * f_hat``; its error's
        share in cluster ``c`` is ``b[c] + lam * G[c]`` (``G = A - C``: the judge's share over every
        row less its share on the graded rows). Two pseudo-grades, one disagreeing each way
        (human right and judge wrong; the reverse), at the graded rows' mean weight, each in a
        cluster of its own (``slot`` and ``slot + 1``, past the ``n_g`` real ones), count in ``b``
        and ``G``: the variance's small-sample floor. The means are the real grades'.
    """
    size = max(n_g, slot + 2)
    F = float(np.sum(arm.w * arm.f))
    L = arm.graded
    wd = arm.w[L] * arm.d[L]
    W = float(wd.sum())
    hL, fL, gL = arm.h[L], arm.f[L], arm.g[L]
    H_hat = float(np.sum(wd * hL) / W)
    f_hat = float(np.sum(wd * fL) / W)
    a = np.bincount(arm.g, weights=arm.w * (arm.f - F), minlength=size)
    b = np.bincount(gL, weights=wd * (hL - H_hat) / W, minlength=size)
    c = np.bincount(gL, weights=wd * (fL - f_hat) / W, minlength=size)
    m = float(wd.mean()) / W
    b[slot], c[slot] = m * (1.0 - H_hat), m * (0.0 - f_hat)  # the humans say right, the judge wrong
    b[slot + 1], c[slot + 1] = m * (0.0 - H_hat), m * (1.0 - f_hat)  # and the reverse
    return F, H_hat, f_hat, b, a - c


def _best_lam(b: np.ndarray, cols: list[np.ndarray]) -> list[float]:
    """The ``lam`` in [0, 1] per column minimising ``sum((b + sum_k lam_k cols_k)**2)`` (box-constrained least squares)."""
    k = len(cols)
    X = np.column_stack(cols) if k else np.zeros((b.size, 0))

    def cost(lam: np.ndarray) -> float:
        return float(np.sum((b + X @ lam) ** 2))

    cands = [np.zeros(k), np.ones(k)]
    if k:
        sol = np.linalg.lstsq(X, -b, rcond=None)[0]
        cands.append(np.clip(sol, 0.0, 1.0))
    for j in range(k):  # one at a bound, the other(s) free then clipped
        for fixed in (0.0, 1.0):
            rest = [i for i in range(k) if i != j]
            lam = np.zeros(k)
            lam[j] = fixed
            if rest:
                r = b + X[:, j] * fixed
                sol = np.linalg.lstsq(X[:, rest], -r, rcond=None)[0]
                lam[rest] = np.clip(sol, 0.0, 1.0)
            cands.append(lam)
    best = min(cands, key=cost)
    return [float(v) for v in best]


def _t_quantile(level: float, df: int) -> float:
    from scipy.special import stdtrit

    return float(stdtrit(df, 0.5 + level / 2))


def _t_p(est: float, se: float, df: int) -> float:
    from scipy.special import stdtr

    if se <= 0:
        return 1.0 if est == 0 else 0.0
    return float(max(2 * stdtr(df, -abs(est) / se), 1e-300))


@dataclass
class _Fit:
    estimate: float
    se: float
    low: float
    high: float
    df: int
    lam: list[float]


def _fit(
    arms: list[_Arm], signs: list[float], n_g: int, level: float, lam: list[float] | None, bounds: tuple[float, float]
) -> _Fit:
    """The PPI++ estimate of ``sum_k signs[k] * accuracy_k`` with its clustered, small-sample interval.

    ``lam`` fixes the weights (``[0, ...]`` for the human-only estimate); ``None`` tunes them.
    """
    size = n_g + 2 * len(arms)
    parts = [_shares(a, size, n_g + 2 * k) for k, a in enumerate(arms)]
    b = sum(s * p[3] for s, p in zip(signs, parts, strict=True))
    cols = [s * p[4] for s, p in zip(signs, parts, strict=True)]
    if lam is None:
        lam = _best_lam(np.asarray(b), cols)
    est = sum(s * (lv * p[0] + p[1] - lv * p[2]) for s, lv, p in zip(signs, lam, parts, strict=True))
    e = np.asarray(b) + sum(lv * c for lv, c in zip(lam, cols, strict=True))
    graded = np.unique(np.concatenate([a.g[a.graded] for a in arms]))
    n_gr = int(graded.size)
    n_all = int(np.count_nonzero(np.bincount(np.concatenate([a.g for a in arms]), minlength=n_g)))
    var = float(np.sum(e * e)) * n_all / max(n_all - 1, 1)
    se = math.sqrt(max(var, 0.0))
    df = max(n_gr - 1, 1)
    half = _t_quantile(level, df) * se
    lo, hi = bounds
    return _Fit(float(est), se, max(lo, est - half), min(hi, est + half), df, lam)


def _kappa(f: np.ndarray, h: np.ndarray) -> float | None:
    """Cohen's kappa of two binary raters (``h`` rounded to the majority grade)."""
    n = f.size
    if n == 0:
        return None
    hb = h >= 0.5
    fb = f >= 0.5
    po = float(np.mean(hb == fb))
    pf, ph = float(fb.mean()), float(hb.mean())
    pe = pf * ph + (1 - pf) * (1 - ph)
    return None if pe >= 1 else (po - pe) / (1 - pe)


def _grades_table(grades: Any) -> dict[tuple[str, str, int], tuple[float, float | None, list[str]]]:
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
            raise ConfigError("correct", c, f"a human grade must be true or false (1 or 0), at grade {i} {key}")
        pi = get("pi")
        if pi is not None and not (isinstance(pi, (int, float)) and 0 < pi <= 1):
            raise ConfigError("pi", pi, f"a drawing probability must be in (0, 1], at grade {i} {key}")
        got = out.setdefault(key, [[], None, []])
        got[0].append(float(c))
        got[1] = pi if pi is not None else got[1]
        got[2].append(str(get("grader") or "human"))
    return {k: (float(np.mean(v[0])), v[1], v[2]) for k, v in out.items()}


def ppi_estimate(
    bench: Any,
    grades: Iterable[Any] | None = None,
    level: float = 0.95,
    *,
    judge: Any = None,
) -> HumanSection | None:
    """Each arm's accuracy and each paired difference as humans would grade them, by PPI++.

    Args:
        bench: a benchmark whose ``correct`` is a judge's verdict (a :class:`~hrbench.Bench`,
            its rows, or a frame of rows), with its grades as ``bench.grades`` when ``grades``
            is ``None`` (:func:`hrbench.human_grades`).
        grades: human grades, each with ``item``, ``arm``, ``run``, ``correct`` and optionally
            ``grader`` and ``pi`` (the probability the row had of being drawn for grading).
        level: the intervals' level.
        judge: the report's records (``{"arms": [ArmReport], "comparisons": [Comparison]}``)
            whose intervals are shown as the judge-only ones; computed when ``None``.

    Returns:
        A :class:`HumanSection`, or ``None`` when there are no grades.

    Raises:
        ConfigError: a grade that is not true or false, a bad ``pi`` or ``level``.

    Example:
        >>> from hrbench.records import Row
        >>> rows = [Row(cluster=f"c{i // 2}", item=f"q{i}", arm="a", run=1, split="test",
        ...             correct=i % 4 != 0, outcome="correct", failure_kind=None) for i in range(40)]
        >>> grades = [{"item": f"q{i}", "arm": "a", "run": 1, "correct": i % 4 != 0 and i % 8 != 1}
        ...           for i in range(0, 40, 3)]
        >>> s = ppi_estimate(rows, grades)
        >>> s.n_grades, s.arms[0].method, round(s.arms[0].estimate, 3)
        (14, 'ppi++', 0.582)
    """
    from hrbench.stats.table import _table

    if not (isinstance(level, (int, float)) and 0 < level < 1):
        raise ConfigError("level", level, "must be a number between 0 and 1, e.g. 0.95")
    grades = getattr(bench, "grades", None) if grades is None else grades
    table = _grades_table(grades)
    if not table:
        return None
    t = _table(bench)
    keep = t.reportable & ~np.isnan(t.correct)
    items = _item_names(bench, t)
    arms_rows = _arm_parts(t, keep, items, table)
    matched = sum(int(a.graded.sum()) for a in arms_rows.values())
    n_g = int(t.item_cluster.max()) + 1 if t.item_cluster.size else 1
    f_all = np.concatenate([a.f[a.graded] for a in arms_rows.values()]) if arms_rows else np.zeros(0)
    h_all = np.concatenate([a.h[a.graded] for a in arms_rows.values()]) if arms_rows else np.zeros(0)
    kappa = _kappa(f_all, h_all)
    fallback = matched > 0 and (kappa is None or kappa < POOR_KAPPA)
    rep = judge if judge is not None else _judge_only(bench, level, len(t.arms) > 1)
    arms_out = [
        _estimate(
            [name],
            [arms_rows.get(name)],
            [1.0],
            n_g,
            level,
            fallback,
            kappa,
            _judge_of(rep, name, None),
        )
        for name in t.arms
    ]
    pairs_out = []
    for i, a in enumerate(t.arms):
        for b in t.arms[i + 1 :]:
            pa, pb = _paired_parts(arms_rows.get(a), arms_rows.get(b), t, keep, items, (a, b), table)
            pairs_out.append(
                _estimate([a, b], [pa, pb], [1.0, -1.0], n_g, level, fallback, kappa, _judge_of(rep, a, b))
            )
    graders = sorted({g for v in table.values() for g in v[2]})
    return HumanSection(
        level=float(level),
        n_grades=matched,
        graders=graders,
        unmatched=len(table) - matched,
        kappa=kappa,
        agree=int(np.sum((f_all >= 0.5) == (h_all >= 0.5))),
        fallback=fallback,
        arms=arms_out,
        pairs=pairs_out,
        note=_section_note(level, fallback, kappa, matched),
    )


def _column(bench: Any, name: str) -> list[Any]:
    """One column of a benchmark's rows (a Bench, rows as Structs or dicts, or a frame), as a list."""
    from hrbench.stats.table import _tolist

    is_frame = hasattr(bench, "columns") or isinstance(bench, Mapping)
    rows = bench if is_frame else getattr(bench, "rows", bench)
    if is_frame:
        return _tolist(rows[name])
    return [r[name] if isinstance(r, Mapping) else getattr(r, name) for r in rows]


def _item_names(bench: Any, t: Any) -> list[str]:
    """Item names by code, in the table's order (the order of their first rows)."""
    return [str(n) for n in dict.fromkeys(_column(bench, "item"))]


def _arm_parts(
    t: Any, keep: np.ndarray, items: list[str], table: Mapping[tuple[str, str, int], Any]
) -> dict[str, _Arm]:
    """Each arm's rows with a verdict: clusters, accuracy weights, verdicts, grades and ``1 / pi``."""
    out: dict[str, _Arm] = {}
    for code, name in enumerate(t.arms):
        m = keep & (t.arm == code)
        idx = np.flatnonzero(m)
        if idx.size == 0:
            continue
        out[name] = _arm_of(t, idx, items, name, table)
    return out


def _arm_of(
    t: Any, idx: np.ndarray, items: list[str], name: str, table: Mapping[tuple[str, str, int], Any]
) -> _Arm:
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
    d = _design_weights(graded, f, bool(np.any(graded & ~np.isnan(pi))))
    return _Arm(g=t.item_cluster[item].astype(np.intp), w=w, f=f, graded=graded, h=h, d=d)


def _design_weights(graded: np.ndarray, f: np.ndarray, by_verdict: bool) -> np.ndarray:
    """Each graded row's design weight (``nan`` elsewhere): 1, or ``N_v / n_v`` by the judge's verdict ``v``.

    Grades drawn by :func:`hrbench.next_grades` (they carry ``pi``) are drawn uniformly within
    each arm x verdict stratum, more often where the judge errs more; weighting each by its
    stratum's rows over its grades keeps the estimate unbiased (stratified PPI). Grades given
    otherwise are read as a simple random sample of the arm's rows (equal weights), and so are
    all when a verdict's stratum has rows but no grade.
    """
    d = np.where(graded, 1.0, np.nan)
    if not by_verdict:
        return d
    for v in (0.0, 1.0):
        if np.any(f == v) and not np.any(graded & (f == v)):
            return d
    for v in (0.0, 1.0):
        n_v = int(np.sum(graded & (f == v)))
        if n_v:
            d[graded & (f == v)] = np.sum(f == v) / n_v
    return d


def _paired_parts(
    a: _Arm | None,
    b: _Arm | None,
    t: Any,
    keep: np.ndarray,
    items: list[str],
    names: tuple[str, str],
    table: Mapping[tuple[str, str, int], Any],
) -> tuple[_Arm | None, _Arm | None]:
    """Both arms' rows on the items both ran (a paired difference is on the common items)."""
    if a is None or b is None:
        return a, b
    codes = [t.arms.index(n) for n in names]
    common = np.intersect1d(t.item[keep & (t.arm == codes[0])], t.item[keep & (t.arm == codes[1])])
    out: list[_Arm | None] = []
    for name, code in zip(names, codes, strict=True):
        idx = np.flatnonzero(keep & (t.arm == code) & np.isin(t.item, common))
        out.append(None if idx.size == 0 else _arm_of(t, idx, items, name, table))
    return out[0], out[1]


def _estimate(
    names: list[str],
    arms: list[_Arm | None],
    signs: list[float],
    n_g: int,
    level: float,
    fallback: bool,
    kappa: float | None,
    judge: tuple[float | None, float | None, float | None],
) -> GradedEstimate:
    """One :class:`GradedEstimate`: PPI++ (or human-only on fallback) beside the human-only and judge-only ones."""
    head: dict[str, Any] = dict(
        arm_a=names[0],
        arm_b=names[1] if len(names) > 1 else None,
        judge=judge[0],
        judge_low=judge[1],
        judge_high=judge[2],
    )
    if any(a is None for a in arms):
        return GradedEstimate(**head, note="no estimate: an arm has no row with a verdict")
    real = [a for a in arms if a is not None]
    head.update(
        n_graded=sum(int(a.graded.sum()) for a in real),
        n_rows=sum(int(a.f.size) for a in real),
        n_clusters_graded=int(np.unique(np.concatenate([a.g[a.graded] for a in real])).size),
    )
    short = [n for n, a in zip(names, real, strict=True) if int(a.graded.sum()) < _MIN_GRADES]
    if short:
        return GradedEstimate(
            **head,
            note=f"no estimate: arm {short[0]!r} has fewer than {_MIN_GRADES} graded rows",
        )
    if head["n_clusters_graded"] < 2:
        return GradedEstimate(**head, note="no estimate: every graded row is in one cluster")
    bounds = (-1.0, 1.0) if len(names) > 1 else (0.0, 1.0)
    human = _fit(real, signs, n_g, level, [0.0] * len(real), bounds)
    fit = human if fallback else _fit(real, signs, n_g, level, None, bounds)
    method = "human-only" if fallback or not any(fit.lam) else "ppi++"
    note = None
    if fallback:
        k = "undefined" if kappa is None else f"{kappa:.2f}"
        note = (
            f"the judge agrees poorly with the human grades (kappa {k}, below {POOR_KAPPA}): "
            "the human-only interval is shown"
        )
    worth = head["n_graded"] * (human.se**2 / fit.se**2) if fit.se > 0 else None
    return GradedEstimate(
        **head,
        estimate=fit.estimate,
        se=fit.se,
        ci_low=fit.low,
        ci_high=fit.high,
        df=fit.df,
        lam=fit.lam,
        method=method,
        human=human.estimate,
        human_low=human.low,
        human_high=human.high,
        worth=worth,
        p_value=_t_p(fit.estimate, fit.se, fit.df) if len(names) > 1 else None,
        note=note,
    )


def _judge_only(bench: Any, level: float, pairs: bool) -> Any:
    """The report's judge-only records of ``bench`` (descriptive allowed: few runs still give an interval)."""
    from hrbench.stats.report import report

    return report(bench, level, descriptive=True, pairs=pairs, warn=False)


def _judge_of(rep: Any, a: str, b: str | None) -> tuple[float | None, float | None, float | None]:
    """The judge-only estimate and interval of an arm (``b`` ``None``) or of ``a - b``, from the report's records."""

    def get(x: Any, k: str) -> Any:
        return x.get(k) if isinstance(x, Mapping) else getattr(x, k, None)

    if b is None:
        for x in get(rep, "arms") or []:
            if get(x, "arm") == a:
                return get(x, "accuracy"), get(x, "ci_low"), get(x, "ci_high")
        return None, None, None
    for x in get(rep, "comparisons") or []:
        if (get(x, "arm_a"), get(x, "arm_b")) == (a, b):
            return get(x, "diff"), get(x, "ci_low"), get(x, "ci_high")
        if (get(x, "arm_a"), get(x, "arm_b")) == (b, a):
            d, lo, hi = get(x, "diff"), get(x, "ci_low"), get(x, "ci_high")
            return (None if d is None else -d), (None if hi is None else -hi), (None if lo is None else -lo)
    return None, None, None


def _section_note(level: float, fallback: bool, kappa: float | None, n: int) -> str:
    """How to read the human-graded section."""
    if fallback:
        k = "undefined" if kappa is None else f"{kappa:.2f}"
        head = (
            f"The judge agrees poorly with the {n} human grades (Cohen's kappa {k}, below {POOR_KAPPA}), so it "
            "is not used: every estimate is the human-only one."
        )
    else:
        head = (
            f"Accuracy as humans grade it, from {n} human grade(s) and every judge verdict: PPI++ (the judge's "
            "accuracy plus the human-measured correction, its weight lam tuned on the clustered variance)."
        )
    return (
        f"{head} {level:.0%} intervals: clustered by cluster (a paired difference totals both arms' shares in "
        "each cluster), Student's t on the clusters holding a grade less 1, with one pseudo-disagreement each way "
        "per arm as a small-sample floor. judge: the judge-only interval; human: the graded rows alone; worth: "
        "the human grades alone that would give the same variance."
    )
