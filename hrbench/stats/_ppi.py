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
same way (``lam = 0`` is a candidate). Grades weighted by the judge's verdict (drawn by
:func:`hrbench.next_grades`) make the estimate the post-stratified mean ``sum_v (N_v / N) H_v``
whatever ``lam`` is (the judge's weighted mean on the graded rows is its mean over every row):
its variance then takes the ``lam`` that estimate implies, ``H_1 - H_0`` (the human accuracy
where the judge says right less where it says wrong), and is not tuned; when that is wider than
the human-only interval, the human-only one is shown.

Small samples: the plain PPI++ interval under-covers with few grades (0.907 at 50 grades in a
simulation with a 90%-agreeing judge), because the rectifier's variance is estimated from the
few grades and is often 0 when none of them disagrees with the judge. Here (i) each arm's grades
are padded, for the variance only, with one pseudo-grade disagreeing each way at the arm's mean
weight, each in a cluster of its own (an Agresti-Coull-style floor: a rectifier with no
disagreement seen still has the variance of one in each direction), (ii) the variance is
multiplied by ``n / (n - p)`` for the ``p`` parameters fitted on an arm's ``n`` grades (HC1),
(iii) the quantile is Student's t on the clusters that hold a grade, less 1, and (iv) the end
points are clipped to [0, 1] ([-1, 1] for a difference). ``bench/ppi.py`` simulates clustered
items, two arms and a judge whose errors are correlated within clusters and differ by arm:
coverage and false positives at 30, 50, 100 and 200 grades, and width against the human-only
interval.

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
from hrbench.stats._ppi_rows import ArmRows, arm_parts, grades_table, item_names, paired_parts

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
        lam: the power-tuning weight of each arm's judge verdicts, in [0, 1] (0: not used); for
            an arm whose grades were drawn by stratum, the slope ``H_1 - H_0`` its variance takes.
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


def _shares(arm: ArmRows, n_g: int, slot: int) -> tuple[float, float, float, np.ndarray, np.ndarray]:
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


def _slope(arm: ArmRows) -> float:
    """The human accuracy where the judge says right less where it says wrong (weighted graded rows; 0 without both).

    With grades weighted by the judge's verdict (:func:`~hrbench.stats._ppi_rows.design_weights`)
    the estimate is the post-stratified mean ``sum_v (N_v / N) H_v``, whatever ``lam``; its
    error's share in a cluster is that of ``lam = H_1 - H_0`` (the graded rows' residuals within
    their verdict, and the verdicts' shares over every row times the gap), so that is the
    ``lam`` its variance takes, not one tuned to make the variance small.
    """
    L = arm.graded
    wd, h, f = arm.w[L] * arm.d[L], arm.h[L], arm.f[L]
    means = []
    for v in (1.0, 0.0):
        m = f == v
        if not np.any(m):
            return 0.0
        means.append(float(np.sum(wd[m] * h[m]) / np.sum(wd[m])))
    return means[0] - means[1]


def _t_quantile(level: float, df: int) -> float:
    from scipy.special import stdtrit

    return float(stdtrit(df, 0.5 + level / 2))


def _t_p(est: float, se: float, df: int) -> float:
    from scipy.special import stdtr

    if se <= 0:
        return 1.0 if est == 0 else 1e-300  # never 0 from finite data
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
    arms: list[ArmRows],
    signs: list[float],
    n_g: int,
    level: float,
    lam: list[float] | None,
    bounds: tuple[float, float],
) -> _Fit:
    """The PPI++ estimate of ``sum_k signs[k] * accuracy_k`` with its clustered, small-sample interval.

    ``lam`` fixes the weights (``[0, ...]`` for the human-only estimate); ``None`` tunes them.
    """
    size = n_g + 2 * len(arms)
    parts = [_shares(a, size, n_g + 2 * k) for k, a in enumerate(arms)]
    b = sum(s * p[3] for s, p in zip(signs, parts, strict=True))
    cols = [s * p[4] for s, p in zip(signs, parts, strict=True)]
    if lam is None:  # an arm graded by stratum: its slope; the others tuned
        fixed = [_slope(a) if a.stratified else None for a in arms]
        base = np.asarray(b) + sum(v * c for v, c in zip(fixed, cols, strict=True) if v is not None)
        free = _best_lam(base, [c for v, c in zip(fixed, cols, strict=True) if v is None])
        lam = [v if v is not None else free.pop(0) for v in fixed]
    est = sum(s * (lv * p[0] + p[1] - lv * p[2]) for s, lv, p in zip(signs, lam, parts, strict=True))
    e = np.asarray(b) + sum(lv * c for lv, c in zip(lam, cols, strict=True))
    graded = np.unique(np.concatenate([a.g[a.graded] for a in arms]))
    n_gr = int(graded.size)
    n_all = int(np.count_nonzero(np.bincount(np.concatenate([a.g for a in arms]), minlength=n_g)))
    var = float(np.sum(e * e)) * n_all / max(n_all - 1, 1) * _fitted(arms)
    se = math.sqrt(max(var, 0.0))
    df = max(n_gr - 1, 1)
    half = _t_quantile(level, df) * se
    lo, hi = bounds
    return _Fit(float(est), se, max(lo, est - half), min(hi, est + half), df, lam)


def _fitted(arms: list[ArmRows]) -> float:
    """The variance's correction for the parameters fitted on each arm's grades: ``n / (n - p)``, the largest.

    ``p`` counts a mean per stratum of the grades (1, or 2 when weighted by the judge's verdict)
    and ``lam`` (counted whether tuned or 0, so the PPI++ and human-only intervals stay
    comparable): the HC1 correction of a regression on ``n`` graded rows (MacKinnon & White
    1985), taken from the arm with the fewest grades per parameter.
    """
    out = 1.0
    for a in arms:
        n = int(a.graded.sum())
        p = len(np.unique(a.d[a.graded])) + 1
        out = max(out, n / max(n - p, 1))
    return out


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
    from hrbench.stats._table import _table

    if not (isinstance(level, (int, float)) and 0 < level < 1):
        raise ConfigError("level", level, "must be a number between 0 and 1, e.g. 0.95")
    grades = getattr(bench, "grades", None) if grades is None else grades
    table = grades_table(grades)
    if not table:
        return None
    t = _table(bench)
    keep = t.reportable & ~np.isnan(t.correct)
    items = item_names(bench, t)
    arms_rows = arm_parts(t, keep, items, table)
    matched = sum(int(a.graded.sum()) for a in arms_rows.values())
    n_g = int(t.item_cluster.max()) + 1 if t.item_cluster.size else 1
    f_all = np.concatenate([a.f[a.graded] for a in arms_rows.values()]) if arms_rows else np.zeros(0)
    h_all = np.concatenate([a.h[a.graded] for a in arms_rows.values()]) if arms_rows else np.zeros(0)
    kappa = _kappa(f_all, h_all)
    fallback = matched > 0 and (kappa is None or kappa < POOR_KAPPA)
    rep = judge if judge is not None else _judge_only(t, level)
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
            pa, pb = paired_parts(arms_rows.get(a), arms_rows.get(b), t, keep, items, (a, b), table)
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


def _estimate(
    names: list[str],
    arms: list[ArmRows | None],
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
    if fit.se > human.se:  # a slope the variance must take made it wider: the judge adds nothing
        fit = human
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


def _judge_only(t: Any, level: float) -> dict[str, list[dict[str, Any]]]:
    """The judge-only estimates and intervals the report gives (the clustered Wilson ones), of every arm and pair."""
    from hrbench.stats._intervals import _compact, difference_interval, proportion_interval
    from hrbench.stats._table import _items

    arms, comps = [], []
    its = [_items(t, a) for a in range(len(t.arms))]
    for a, it in enumerate(its):
        g, n_g = _compact(it.cluster)
        iv = proportion_interval(it.y, g, n_g, level, float(it.k.sum())) if n_g > 1 else None
        acc = float(it.y.mean()) if it.y.size else None
        arms.append({"arm": t.arms[a], "accuracy": acc, "ci_low": iv and iv.low, "ci_high": iv and iv.high})
    for a in range(len(t.arms)):
        for b in range(a + 1, len(t.arms)):
            common, pa, pb = np.intersect1d(its[a].idx, its[b].idx, assume_unique=True, return_indices=True)
            g, n_g = _compact(t.item_cluster[common])
            ya, yb = its[a].y[pa], its[b].y[pb]
            k = float(np.minimum(its[a].k[pa], its[b].k[pb]).sum())
            iv = difference_interval(ya, yb, g, n_g, level, k) if n_g > 1 else None
            d = float((ya - yb).mean()) if common.size else None
            comps.append(
                {
                    "arm_a": t.arms[a],
                    "arm_b": t.arms[b],
                    "diff": d,
                    "ci_low": iv and iv.low,
                    "ci_high": iv and iv.high,
                }
            )
    return {"arms": arms, "comparisons": comps}


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
        "per arm as a small-sample floor and the HC1 correction for what is fitted on the grades. judge: the judge-only interval; human: the graded rows alone; worth: "
        "the human grades alone that would give the same variance."
    )
