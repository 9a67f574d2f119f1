"""Paired comparisons of arms on the items both ran: :func:`compare`, :func:`compare_all`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from hrbench._util.forms import check_one_of
from hrbench._util.warn import warn_at_caller
from hrbench.errors import ConfigError, NoLabelsWarning
from hrbench.records import FAILURE_KINDS
from hrbench.stats._consistency import METRICS, item_values, pass_k_runs
from hrbench.stats._human import human_pair
from hrbench.stats._intervals import (
    _DIFF,
    _TINY,
    _boot_summary,
    _boot_totals,
    _compact,
    _rng,
    cluster_se,
    difference_interval,
    zero_disagreement_bound,
)
from hrbench.stats._records import Comparison, NoIntervalWarning
from hrbench.stats._table import (
    Method,
    _arm_code,
    _check,
    _Items,
    _items,
    _Table,
    _table,
    _too_few,
    _warn_method,
)
from hrbench.stats._unscored import complete_items, pair_note
from hrbench.stats._wilson import _t_sf


def _blank(
    t: _Table,
    a: int,
    b: int,
    n_items: int,
    level: float,
    method: str,
    descriptive: bool,
    metric: str,
    pass_k: int | None,
) -> dict[str, Any]:
    """A comparison's fields before any estimate: every number ``None``, ``n_items`` items in common."""
    return dict(
        arm_a=t.arms[a],
        arm_b=t.arms[b],
        diff=None,
        se=None,
        ci_low=None,
        ci_high=None,
        p_value=None,
        p_holm=None,
        df=None,
        n_items=n_items,
        n_clusters=0,
        accuracy_a=None,
        accuracy_b=None,
        se_unpaired=None,
        level=level,
        method=method,
        descriptive=descriptive,
        metric=metric,
        pass_k_runs=pass_k if metric == "pass^k" else None,
    )


def _paired(
    t: _Table,
    a: int,
    b: int,
    level: float,
    method: str,
    descriptive: bool,
    seed: int,
    n_boot: int,
    cache: dict[int, _Items] | None = None,
    metric: str = "accuracy",
    pass_k: int | None = None,
) -> Comparison:
    cache = {} if cache is None else cache
    ia = cache[a] if a in cache else cache.setdefault(a, _items(t, a))
    ib = cache[b] if b in cache else cache.setdefault(b, _items(t, b))
    common, pa, pb = np.intersect1d(ia.idx, ib.idx, assume_unique=True, return_indices=True)
    keep, left_runs, shared = complete_items(t, a, b, common)  # never a one-sided difference of unscored runs
    flag = pair_note(int(keep.sum()), int(common.size), left_runs, shared)
    common, pa, pb = common[keep], pa[keep], pb[keep]
    out = _blank(t, a, b, int(common.size), level, method, descriptive, metric, pass_k)
    out["unscored_note"] = flag
    if common.size == 0:
        never = [t.arms[x] for x in (a, b) if not _scored(t, x)]
        out["note"] = (
            "no interval: no labelled item was run by both arms"
            if not left_runs
            else f"no interval: {no_scored_run_note(t, never[0])}"
            if never
            else "no interval: no item has as many runs of both arms scored"
        )
        return Comparison(**out)
    if metric == "pass^k":  # at most the fewest labelled runs of an item both ran
        pass_k = min(int(pass_k or 1), int(min(ia.k[pa].min(), ib.k[pb].min())))
        out["pass_k_runs"] = pass_k
    ya = item_values(ia.y[pa], ia.k[pa], metric, pass_k)
    yb = item_values(ib.y[pb], ib.k[pb], metric, pass_k)
    if metric == "flip_rate" and (np.isnan(ya).any() or np.isnan(yb).any()):
        out["note"] = "no interval: the flip rate needs at least 2 runs of every item"
        return Comparison(**out)
    d = ya - yb
    g, n_g = _compact(t.item_cluster[common])
    diff = float(d.mean())
    out.update(
        diff=diff,
        n_clusters=n_g,
        df=n_g - 1,
        accuracy_a=float(ya.mean()),
        accuracy_b=float(yb.mean()),
        n_clusters_disagree=int(np.count_nonzero(np.bincount(g, weights=np.abs(d) > 0, minlength=n_g))),
    )
    unscored = [t.arms[x] for x in (a, b) if not _scored(t, x)]
    if unscored or n_g < 2:
        why = (
            no_scored_run_note(t, unscored[0])
            if unscored
            else one_cluster_note(int(common.size), "items both arms ran")
        )
        out.update(note=f"no interval: {why}", df=None if n_g < 2 else out["df"])
        return Comparison(**out)
    se_a, se_b = cluster_se(ya, g, n_g), cluster_se(yb, g, n_g)
    if se_a is not None and se_b is not None:
        out["se_unpaired"] = math.hypot(se_a, se_b)
    runs = float(np.minimum(ia.k[pa], ib.k[pb]).sum()) if metric == "accuracy" else None  # 0/1 runs only
    iv = difference_interval(ya, yb, g, n_g, level, runs)
    se, lo, hi, p = iv.se, iv.low, iv.high, iv.p_value
    df = n_g - 1 if iv.df is None else iv.df  # fewer than clusters - 1 when clusters are unequal
    out["df"] = df
    if method == "bootstrap":
        parts = np.column_stack([d, np.ones_like(d)])
        tot = _boot_totals(parts, g, n_g, _rng(seed, t.arms[a], t.arms[b]), n_boot)
        b_se, b_lo, b_hi = _boot_summary(tot[:, 0] / tot[:, 1], level, _DIFF)
        if b_se > 0:  # every resample alike: keep the boundary-aware interval, which has width
            se, lo, hi = b_se, b_lo, b_hi
            p = max(_TINY, 2 * _t_sf(abs(diff) / b_se, df)) if diff else 1.0
    out.update(se=se, ci_low=lo, ci_high=hi, p_value=p, note=_reading_note(out, level, p))
    return Comparison(**out)


FEW_DISAGREE = 5
"""Clusters holding a disagreement at or below which the exact sign-flip test cannot reject at 0.05 (``2 / 2**5 > 0.05``)."""


def _reading_note(c: dict[str, Any], level: float, p: float | None = None) -> str | None:
    """How to read a comparison with an interval: no disagreement at all, or a p-value below what its clusters allow.

    Rule: with ``k`` clusters holding an item scored differently, the exact sign-flip test
    (which assumes nothing about how clusters vary) cannot give a p-value below ``2 / 2**k``
    (:func:`~hrbench.stats.difference_interval`); the note is said only when the t test's
    ``p`` is below that floor, so it never sits beside a p-value it does not qualify. "only"
    is said only when some clusters hold no such item.

    Example:
        >>> print(_reading_note({"n_clusters_disagree": 4, "n_items": 16, "n_clusters": 4}, 0.95, 0.005))
        all 4 of 4 cluster(s) hold an item scored differently, and p = 0.005 rests on the t model of how clusters vary: the exact sign-flip test, which assumes nothing about how clusters vary, cannot go below p = 0.125 with 4 such clusters
        >>> _reading_note({"n_clusters_disagree": 4, "n_items": 16, "n_clusters": 4}, 0.95, 0.3) is None
        True
    """
    k, n, g = c["n_clusters_disagree"], c["n_items"], c["n_clusters"]
    if k == 0:
        where = f"{n} items" + (f" in {g} clusters" if g < n else "")
        return (
            f"no item scored differently: the difference is 0 and the interval is not a measured spread but how "
            f"large a difference {where} that all agreed still leave possible at {level:.0%} (never wider than "
            f"+-{zero_disagreement_bound(g, level):.3f}, the exact bound for no disagreement in {g} clusters)"
        )
    floor = 2.0 / 2.0**k
    if p is None or p >= floor:
        return None
    p_said = "p < 0.001" if p < 0.001 else f"p = {p:.3f}"
    if k == 1:  # one such cluster: the sign-flip test's p is 1, it cannot reject at any level
        return (
            f"only 1 of {g} clusters holds any item scored differently, so {p_said} rests on the t model of how "
            "clusters vary alone: the exact sign-flip test, which assumes nothing about how clusters vary, has p = 1 "
            "with a single such cluster and cannot reject at any level"
        )
    said = f"only {k} of {g} cluster(s) hold any item" if k < g else f"all {k} of {g} cluster(s) hold an item"
    return (
        f"{said} scored differently, and {p_said} rests on the t model of how clusters vary: the exact "
        f"sign-flip test, which assumes nothing about how clusters vary, cannot go below p = {floor:.3f} with {k} "
        "such clusters"
    )


def reading_note(c: Comparison) -> str | None:
    """The note :func:`compare` gives ``c`` on how to read its interval and p-value (``None``: none).

    A stopped benchmark's report withholds that interval and p-value
    (:func:`~hrbench.stats._stopped.apply_stop`), and with them this note.
    """
    return _reading_note(
        {"n_clusters_disagree": c.n_clusters_disagree, "n_items": c.n_items, "n_clusters": c.n_clusters},
        c.level,
        c.p_value,
    )


def _scored(t: _Table, arm: int) -> bool:
    """Whether any labelled reportable run of the arm reached its scorer (did not end in an error or a budget stop)."""
    m = (t.arm == arm) & t.reportable & ~np.isnan(t.correct)
    return bool(np.any(~np.isin(t.failure[m], _UNSCORED)))


_UNSCORED = np.array([FAILURE_KINDS.index("error"), FAILURE_KINDS.index("budget_stop")])


def no_scored_run_note(t: _Table, arm: str) -> str:
    """Why an arm whose every labelled run ended in an error or a budget stop has no interval."""
    m = (t.arm == t.arms.index(arm)) & t.reportable & ~np.isnan(t.correct)
    kinds = {FAILURE_KINDS[int(k)] for k in np.unique(t.failure[m])}
    how = {
        frozenset({"error"}): "ended in an error",
        frozenset({"budget_stop"}): "was stopped by the budget",
    }.get(frozenset(kinds), "ended in an error or a budget stop")
    return (
        f"arm {arm!r} has no scored run: every one of its {int(m.sum())} run(s) {how}, so its accuracy of 0 "
        "says nothing about its answers"
    )


def one_cluster_note(items: int, what: str = "items") -> str:
    """Why one item, or one cluster, gives no interval."""
    if items == 1:
        return f"one item ({what}): an interval needs at least 2 items, in 2 or more clusters"
    return (
        f"all {items} {what} are in one cluster: an interval needs 2 or more clusters (how clusters vary cannot "
        "be estimated from one)"
    )


def _holm(p: Sequence[float | None]) -> list[float | None]:
    """Holm step-down adjusted p-values (``None`` entries are skipped and kept ``None``)."""
    known = [(i, v) for i, v in enumerate(p) if v is not None]
    out: list[float | None] = [None] * len(p)
    if not known:
        return out
    idx = np.array([i for i, _ in known])
    vals = np.array([v for _, v in known], dtype=float)
    order = np.argsort(vals, kind="stable")
    m = vals.size
    adj = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * vals[order]))
    for pos, j in enumerate(order):
        out[int(idx[j])] = float(adj[pos])
    return out


def _all_pairs(
    t: _Table, level: float, method: str, descriptive: bool, seed: int, n_boot: int
) -> list[Comparison]:
    cache: dict[int, _Items] = {}
    n = len(t.arms)
    comps = [
        _paired(t, a, b, level, method, descriptive, seed, n_boot, cache)
        for a in range(n)
        for b in range(a + 1, n)
    ]
    for c, adj in zip(comps, _holm([c.p_value for c in comps]), strict=True):
        c.p_holm = adj
    return comps


def family_p_holm(
    t: _Table,
    a: int,
    b: int,
    level: float,
    method: str,
    descriptive: bool,
    seed: int,
    n_boot: int,
    p: float | None,
) -> float | None:
    """The pair ``(a, b)``'s Holm-adjusted p-value over every pair of the table's arms (``p`` itself with two arms).

    Rule (Holm 1979, as :func:`compare_all` and the report adjust): testing every pair of
    several arms inflates the chance of a false difference, so a pair's ``p_holm`` is its place
    in the step-down over all of them, whichever function computed the pair.
    """
    if len(t.arms) < 3:
        return p
    pair = {a, b}
    return next(
        c.p_holm
        for c in _all_pairs(t, level, method, descriptive, seed, n_boot)
        if {t.arms.index(c.arm_a), t.arms.index(c.arm_b)} == pair
    )


def compare(
    bench: Any,
    arm_a: str,
    arm_b: str,
    level: float = 0.95,
    method: Method = "cluster",
    descriptive: bool = False,
    seed: int = 0,
    n_boot: int = 2000,
    *,
    grades: Any = None,
    warn: bool = True,
    metric: str = "accuracy",
    pass_k: int | None = None,
) -> Comparison:
    """The paired difference ``arm_a - arm_b`` on the items both arms ran.

    Each common item contributes the difference of its mean scores over runs; the mean of those
    differences gets the clustered (CR2) standard error, the boundary-aware MOVER interval and a
    two-sided p-value on t with ``clusters - 1`` degrees of freedom (Bell-McCaffrey's, fewer, when
    clusters are unequal)
    (:func:`~hrbench.stats.difference_interval`: it is the clustered t
    interval away from the boundary, has width even when the arms never disagree, and its
    p-value is never 0). Pairing removes the item difficulty both arms share, so the interval
    is far tighter than two separate intervals suggest (see ``se_unpaired``).

    Args:
        bench: as for :func:`report`.
        arm_a: the first arm's name (``diff`` is ``arm_a - arm_b``).
        arm_b: the second arm's name.
        level: the interval's level.
        method: ``"cluster"`` or ``"bootstrap"`` (the p-value then uses the bootstrap standard
            error in the t test, floored above 0).
        descriptive: allow fewer than 5 runs per item; the interval and p-value then cover
            the sampling of items only and the comparison is labelled ``descriptive``.
        seed: the bootstrap seed.
        n_boot: bootstrap resamples.
        grades: human grades of some rows (by default the benchmark's own,
            :func:`hrbench.human_grades`): the comparison then has ``human``, the difference as
            humans would grade it by PPI++ (:mod:`hrbench.stats._ppi`).
        warn: warn :class:`~hrbench.stats.NoIntervalWarning` when there is no interval (one
            cluster, one item, an arm with no scored run), and why; ``note`` says it too.
        metric: ``"accuracy"``, ``"pass^k"`` (the chance that ``pass_k`` runs of an item are
            all right) or ``"flip_rate"`` (the chance that two runs of an item disagree): each
            item's value (:mod:`hrbench.stats._consistency`), then the same paired interval.
        pass_k: the ``k`` of ``pass^k`` (default: the runs per item).

    Returns:
        A :class:`Comparison`; its ``p_holm`` (accuracy only) is Holm-adjusted over every
        pair of the benchmark's arms, the value :func:`report` and :func:`compare_all` give
        the pair (the p-value itself with two arms); its ``note`` says how to read it when no
        item scored differently or 5 or fewer clusters disagree.

    Raises:
        TooFewRunsError: fewer than 5 runs per item and ``descriptive`` is false.
        ConfigError: an unknown arm, the same arm twice (``--compare ask ask``), a bad
            ``level``/``method``/``metric``, or a ``pass_k`` that is not a whole number from 1 to
            the runs per item.

    Example:
        >>> from hrbench.records import Row
        >>> rows = [Row(cluster=f"c{i}", item=f"q{i}", arm=arm, run=r, split="test",
        ...             correct=(i < 4) or (arm == "b" and i < 6), outcome=None, failure_kind=None)
        ...         for i in range(8) for arm in ("a", "b") for r in range(5)]
        >>> c = compare(rows, "b", "a")
        >>> c.diff, c.n_items, c.df
        (0.25, 8, 7)
    """
    _check(level, method, n_boot)
    t = _table(bench)
    desc = _too_few(t, descriptive, "compare")
    if warn:
        _warn_method(t, method, "compare")
    if arm_a == arm_b:
        raise ConfigError("arm_b", arm_b, "compare needs two different arms (arm_a is the same arm)")
    a, b = _arm_code(t, arm_a, "arm_a"), _arm_code(t, arm_b, "arm_b")
    check_one_of("metric", metric, METRICS)
    k = pass_k_runs(pass_k, t.runs) if metric == "pass^k" else None
    c = _paired(t, a, b, level, method, desc, seed, n_boot, metric=metric, pass_k=k)
    if metric == "accuracy":  # its Holm value in the family of every pair, as the report gives it
        c.p_holm = family_p_holm(t, a, b, level, method, desc, seed, n_boot, c.p_value)
    if warn:
        warn_no_interval("compare", t, [], [c])
    c.human = human_pair(bench, grades, level, c)
    return c


def compare_all(
    bench: Any,
    level: float = 0.95,
    method: Method = "cluster",
    descriptive: bool = False,
    seed: int = 0,
    n_boot: int = 2000,
) -> list[Comparison]:
    """Paired differences for every pair of arms, with Holm-adjusted p-values.

    Pairs are ``(arms[i], arms[j])`` for ``i < j`` in the benchmark's arm order. Testing many
    pairs inflates the chance of a false difference; ``p_holm`` controls the family-wise error
    rate over all of them (Holm's step-down method) and is what to read.

    Args:
        bench: as for :func:`report`.
        level: as for :func:`compare`.
        method: as for :func:`compare`.
        descriptive: as for :func:`compare`.
        seed: as for :func:`compare`.
        n_boot: as for :func:`compare`.

    Returns:
        One :class:`Comparison` per pair, each with ``p_holm``.

    Raises:
        TooFewRunsError: fewer than 5 runs per item and ``descriptive`` is false.

    Example:
        >>> from hrbench.records import Row
        >>> rows = [Row(cluster=f"c{i}", item=f"q{i}", arm=arm, run=r, split="test",
        ...             correct=(i + r + len(arm)) % 2 == 0, outcome=None, failure_kind=None)
        ...         for i in range(6) for arm in ("a", "bb", "ccc") for r in range(5)]
        >>> [(c.arm_a, c.arm_b) for c in compare_all(rows)]
        [('a', 'bb'), ('a', 'ccc'), ('bb', 'ccc')]
    """
    _check(level, method, n_boot)
    t = _table(bench)
    desc = _too_few(t, descriptive, "compare_all")
    _warn_method(t, method, "compare_all")
    comps = _all_pairs(t, level, method, desc, seed, n_boot)
    warn_no_interval("compare_all", t, [], comps)
    return comps


def warn_no_interval(
    what: str, t: _Table, arms: list[tuple[str, str | None]], comps: Sequence[Comparison]
) -> None:
    """Warn, once per reason, what has no interval and why; :class:`NoLabelsWarning` when no run is labelled.

    Rule (never silent): an arm or a comparison with no interval
    says why in its ``note`` and in a :class:`~hrbench.stats.NoIntervalWarning`; a benchmark
    none of whose reportable runs is on a labelled item warns
    :class:`~hrbench.errors.NoLabelsWarning` instead (accuracy is NA for every arm).
    """
    if not np.any(t.reportable & ~np.isnan(t.correct)):
        warn_at_caller(
            f"{what}: no reportable run is on an item with a label, so every accuracy is NA and there is no "
            "interval (give each item a `label`)",
            NoLabelsWarning,
        )
        return
    said: dict[str, list[str]] = {}
    for name, note in arms:
        said.setdefault(note or "no interval", []).append(name)
    for c in comps:
        if c.ci_low is None:
            said.setdefault(c.note or "no interval", []).append(f"{c.arm_a} - {c.arm_b}")
    for note, names in said.items():
        warn_at_caller(f"{what}: {', '.join(names)}: {note}", NoIntervalWarning)
