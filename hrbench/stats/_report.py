"""Per-arm interval reports: :func:`report` and the daemon's :func:`report_payload`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import msgspec
import numpy as np

from hrbench.errors import ConfigError
from hrbench.records import FAILURE_KINDS, list_usd
from hrbench.stats._agreement import judge_section
from hrbench.stats._comparisons import (
    _all_pairs,
    _scored,
    compare,
    no_scored_run_note,
    one_cluster_note,
    warn_no_interval,
)
from hrbench.stats._consistency import arm_consistency, pass_k_runs
from hrbench.stats._frontier import frontier
from hrbench.stats._human import human_section
from hrbench.stats._intervals import (
    _POSITIVE,
    _UNIT,
    FEW_CLUSTERS,
    _boot_summary,
    _boot_totals,
    _compact,
    _components,
    _rng,
    cluster_se,
    proportion_interval,
    t_interval,
)
from hrbench.stats._records import ArmReport
from hrbench.stats._rendering import Report
from hrbench.stats._stopped import apply_stop, reported_rows
from hrbench.stats._table import (
    Method,
    _check,
    _descriptive_note,
    _Items,
    _items,
    _Table,
    _table,
    _too_few,
    _warn_method,
)
from hrbench.stats._unscored import arm_note


def _arm_report(
    t: _Table,
    a: int,
    level: float,
    method: str,
    seed: int,
    n_boot: int,
    listed: np.ndarray | None = None,
    pass_k: int | None = None,
) -> ArmReport:
    """One arm's record.

    ``listed`` is each row's list price (:func:`_list_prices`), which the cost per run and
    accuracy per USD use; ``None`` uses what was paid. ``pass_k``: the ``k`` of its ``pass^k``.
    """
    name = t.arms[a]
    it = _items(t if listed is None else replace(t, usd=listed), a)  # cost at list price
    rep = (t.arm == a) & t.reportable
    lab = rep & ~np.isnan(t.correct)
    kinds = np.bincount(t.failure[lab & (t.failure >= 0)], minlength=len(FAILURE_KINDS) + 1)
    fails = {k: int(kinds[i]) for i, k in enumerate(FAILURE_KINDS)}
    usd_rows = t.usd[rep]
    dev = _items(t, a, reportable=False)
    runs_per_item = int(it.k.max()) if it.k.size else 0
    var_within, var_between = _components(it)
    out: dict[str, Any] = dict(
        arm=name,
        accuracy=None,
        se=None,
        ci_low=None,
        ci_high=None,
        df=None,
        n_items=int(it.idx.size),
        n_clusters=0,
        few_clusters=False,
        runs=runs_per_item,
        n_runs=int(lab.sum()),
        var_within=var_within,
        var_between=var_between,
        usd=None if np.isnan(usd_rows).any() else float(usd_rows.sum()),
        usd_unpriced=int(np.isnan(usd_rows).sum()),
        usd_list=None if listed is None or np.isnan(listed[rep]).any() else float(listed[rep].sum()),
        usd_per_run=None,
        usd_per_run_low=None,
        usd_per_run_high=None,
        accuracy_per_usd=None,
        accuracy_per_usd_low=None,
        accuracy_per_usd_high=None,
        failures=int(((t.correct == 0) & lab).sum()),
        unlabelled_runs=int((rep & np.isnan(t.correct)).sum()),
        dev_accuracy=float(dev.y.mean()) if dev.y.size else None,
        unscored_note=arm_note(fails["budget_stop"], fails["error"], int(lab.sum())),
        **fails,
    )
    if it.idx.size == 0:
        out["note"] = "no interval: no labelled run (every run is on an item with no label)"
        return ArmReport(**out)
    g, n_g = _compact(it.cluster)
    acc = float(it.y.mean())
    priced = not np.isnan(it.cost).any()
    cost = float(it.cost.mean()) if priced else None
    ratio = acc / cost if (cost is not None and cost > 0) else None
    out.update(
        accuracy=acc,
        n_clusters=n_g,
        few_clusters=n_g < FEW_CLUSTERS,
        df=n_g - 1,
        usd_per_run=cost,
        accuracy_per_usd=ratio,
    )
    if _scored(t, a):  # repeat consistency: pass^k and the flip rate (an unscored arm has none)
        out.update(arm_consistency(it.y, it.k, g, n_g, level, pass_k))
    if n_g < 2 or not _scored(t, a):
        why = one_cluster_note(int(it.idx.size)) if n_g < 2 else no_scored_run_note(t, name)
        out.update(note=f"no interval: {why}", df=None if n_g < 2 else out["df"])
        return ArmReport(**out)
    iv = proportion_interval(it.y, g, n_g, level, float(it.k.sum()))
    df = n_g - 1 if iv.df is None else iv.df  # fewer than clusters - 1 when clusters are unequal
    out.update(se=iv.se, ci_low=iv.low, ci_high=iv.high, df=df)
    if method == "cluster":
        out.update(_cluster_costs(it, g, n_g, df, level, cost, ratio))
    else:
        out.update(_boot_costs(it, g, n_g, df, level, cost, ratio, _rng(seed, name), n_boot))
    return ArmReport(**out)


def _cluster_costs(
    it: _Items, g: np.ndarray, n_g: int, df: int, level: float, cost: float | None, ratio: float | None
) -> dict[str, Any]:
    """The clustered t intervals of an arm's ``usd_per_run`` and (delta method) ``accuracy_per_usd``."""
    out: dict[str, Any] = {}
    if cost is not None:
        c_lo, c_hi = t_interval(cost, cluster_se(it.cost, g, n_g), df, level, _POSITIVE)
        out.update(usd_per_run_low=c_lo, usd_per_run_high=c_hi)
    if ratio is not None and cost is not None:
        z = (it.y - ratio * it.cost) / cost  # delta-method linearisation of acc / cost
        r_lo, r_hi = t_interval(ratio, cluster_se(z, g, n_g), df, level, _POSITIVE)
        out.update(accuracy_per_usd_low=r_lo, accuracy_per_usd_high=r_hi)
        if _no_width(r_lo, r_hi):
            out.update(_ratio_box(it, g, n_g, df, level, cost))
    return out


def _boot_costs(
    it: _Items,
    g: np.ndarray,
    n_g: int,
    df: int,
    level: float,
    cost: float | None,
    ratio: float | None,
    rng: np.random.Generator,
    n_boot: int,
) -> dict[str, Any]:
    """The cluster bootstrap's intervals of an arm's accuracy (when resamples differ) and its costs."""
    out: dict[str, Any] = {}
    parts = np.column_stack([it.y, np.ones_like(it.y), np.nan_to_num(it.cost)])
    tot = _boot_totals(parts, g, n_g, rng, n_boot)
    se, lo, hi = _boot_summary(tot[:, 0] / tot[:, 1], level, _UNIT)
    if se > 0:  # every resample alike: keep the boundary-aware interval, which has width
        out.update(se=se, ci_low=lo, ci_high=hi)
    if cost is not None:
        _, c_lo, c_hi = _boot_summary(tot[:, 2] / tot[:, 1], level, _POSITIVE)
        out.update(usd_per_run_low=c_lo, usd_per_run_high=c_hi)
    if ratio is not None and cost is not None:
        with np.errstate(divide="ignore", invalid="ignore"):
            _, r_lo, r_hi = _boot_summary(tot[:, 0] / tot[:, 2], level, _POSITIVE)
        out.update(accuracy_per_usd_low=r_lo, accuracy_per_usd_high=r_hi)
        if _no_width(r_lo, r_hi):  # every resample alike: no width to show
            out.update(_ratio_box(it, g, n_g, df, level, cost))
    return out


def _no_width(lo: float | None, hi: float | None) -> bool:
    """An interval that is a point, up to float rounding (1e-9 of its size), or not a number."""
    if lo is None or hi is None:
        return False
    return not hi - lo > 1e-9 * max(abs(lo), abs(hi))


def _ratio_box(it: Any, g: np.ndarray, n_g: int, df: int, level: float, cost: float) -> dict[str, Any]:
    """The ``accuracy_per_usd`` interval where the delta method's (or bootstrap's) has no width.

    Rule (SPEC section 6: an interval has zero width only when nothing was sampled, so never
    ``71428.6 [71428.6, 71428.6]`` beside accuracy [0.150, 0.998]): when every
    item's accuracy is the same multiple of its cost (each right run costs the same and a run
    the budget stopped costs 0 and is wrong, say), the linearised ratio has no spread at all and
    the delta method (and every bootstrap resample) gives a point. The ratio's uncertainty is
    then that of its two parts: the interval shown is the accuracy's Wilson interval over the
    ``usd_per_run`` clustered t interval, each at level ``1 - (1 - level) / 2``, so that both
    hold together with probability at least ``level`` (Bonferroni) and so does
    ``[acc_low / usd_high, acc_high / usd_low]``. When that ``usd_per_run`` interval reaches 0
    the ratio has no upper bound: no interval is given, and the note says why.
    """
    half = 1.0 - (1.0 - level) / 2.0
    acc = proportion_interval(it.y, g, n_g, half, float(it.k.sum()))
    a_lo, a_hi = acc.low, acc.high
    c_lo, c_hi = t_interval(cost, cluster_se(it.cost, g, n_g), df, half, _POSITIVE)
    same = (
        "every item's accuracy is the same multiple of its cost, so the delta method's interval has no width"
    )
    if a_lo is None or a_hi is None or c_lo is None or c_hi is None or c_lo <= 0:
        return dict(
            accuracy_per_usd_low=None,
            accuracy_per_usd_high=None,
            accuracy_per_usd_note=f"no interval: {same}, and at {half:.1%} the usd/run interval reaches 0, "
            "so accuracy per USD has no upper bound",
        )
    return dict(
        accuracy_per_usd_low=a_lo / c_hi,
        accuracy_per_usd_high=a_hi / c_lo,
        accuracy_per_usd_note=f"{same}; shown instead: the accuracy interval over the usd/run interval, "
        f"each at {half:.1%} (Bonferroni: together at least {level:.0%})",
    )


def _list_prices(bench: Any, traces: Any) -> np.ndarray:
    """Per row, in row order, its list price from its trace by ledger id (NaN: no price).

    A row with no trace counts what it paid.
    """
    out = []
    for r in getattr(bench, "rows", bench):
        get: Any = r.get if isinstance(r, Mapping) else lambda c, r=r: getattr(r, c, None)
        trace = traces.get(get("ledger_id") or "")
        price = get("usd") if trace is None else list_usd(trace)
        out.append(np.nan if price is None else float(price))
    return np.asarray(out, dtype=float)


def _from_log(bench: Any) -> dict[str, int]:
    """Per arm, its reportable rows whose usage is from another tool's log (``usd_provenance`` ``"log"``)."""
    out: dict[str, int] = {}
    if hasattr(bench, "columns") or isinstance(bench, Mapping):  # a frame (polars has a `rows` method)
        return out
    rows = getattr(bench, "rows", bench)
    for r in rows:
        get: Any = r.get if isinstance(r, Mapping) else lambda c, r=r: getattr(r, c, None)
        if get("usd_provenance") == "log" and get("reportable"):
            out[get("arm")] = out.get(get("arm"), 0) + 1
    return out


def _note(t: _Table, descriptive: bool, method: str, level: float, n_pairs: int) -> str:
    how = (
        "Wilson's interval on the effective sample size (CR2 clustered variance, t on clusters - 1 df, "
        "Bell-McCaffrey df when clusters are unequal)"
        if method == "cluster"
        else "cluster bootstrap, percentile interval (Wilson's where every resample agrees)"
    )
    note = ""
    if descriptive:
        note = _descriptive_note(t) + " "
    note += (
        f"{level:.0%} intervals: {how}, within [0, 1]; paired differences by MOVER over the two "
        "directions of disagreement; a p-value is the level at which that interval just reaches 0 (so it is not diff/se on t when the interval is asymmetric). Accuracy is the mean over runs within "
        "each item, then over labelled items."
    )
    if n_pairs > 1:
        note += (
            f" Paired differences are on the items both arms ran; {n_pairs} pairs were compared, so read "
            "p_holm (Holm-adjusted) rather than p_value."
        )
    return note


def _no_interval_note(arms: list[ArmReport]) -> str:
    """The note's sentences on arms with no interval, one per reason (said, never silent)."""
    said: dict[str, list[str]] = {}
    for a in arms:
        if a.ci_low is None and a.note:
            said.setdefault(a.note.removeprefix("no interval: "), []).append(repr(a.arm))
    return "".join(f" No interval for {', '.join(names)}: {why}." for why, names in said.items())


def report(
    bench: Any,
    level: float = 0.95,
    method: Method = "cluster",
    descriptive: bool = False,
    seed: int = 0,
    n_boot: int = 2000,
    *,
    grades: Any = None,
    pairs: bool = True,
    traces: Mapping[str, Any] | None = None,
    warn: bool = True,
    stop: Any = None,
    pass_k: int | None = None,
    scorer: str | None = None,
) -> Report:
    """An interval report: accuracy, clustered interval, variance components and cost per arm.

    Args:
        bench: a benchmark (``.rows``, ``.arms``, ``.runs``), a list of
            :class:`~hrbench.records.Row` (or dicts with the same keys), or a frame or mapping
            of the row columns (``bench.to_pandas()``). A benchmark a judge scored
            (:func:`hrbench.judge_scorer`; or a stored one as
            :class:`~hrbench.stats.JudgedRows`) also gets the judge section
            (:attr:`Report.judge`): its agreement with the exact scorer on the same rows.
        level: the intervals' level (0.95 for 95%).
        method: ``"cluster"`` for the clustered Wilson interval, ``"bootstrap"`` for a seeded
            cluster bootstrap (percentile interval).
        descriptive: allow fewer than 5 runs per item. The report still has standard errors,
            intervals and paired comparisons over items, and every output labels it
            descriptive: run-to-run spread is not measured, so the intervals cover the sampling
            of items (and clusters) only. No effect with 5 or more runs.
        seed: the bootstrap's seed (each arm draws from ``(seed, arm name)``).
        n_boot: bootstrap resamples.
        grades: human grades of some rows (``item``, ``arm``, ``run``, ``correct``; by default
            the benchmark's own, :func:`hrbench.human_grades`): the report then has the
            human-graded section (:attr:`Report.human`), each arm's accuracy and each paired
            difference by PPI++ (:mod:`hrbench.stats._ppi`).
        pairs: also compare every pair of arms (:func:`compare_all`).
        traces: ``{ledger_id: [Step, ...]}`` for the list price (``ArmReport.usd_list``),
            which ``usd_per_run`` and ``accuracy_per_usd`` use too, so arms compare by cost
            whatever a cache or recording served; by default a benchmark's own ``traces``. A
            row with no trace counts what it paid, and so does every row of a frame.
        warn: warn :class:`~hrbench.stats.NoIntervalWarning` for each reason an arm or a pair
            has no interval (one cluster, one item, no scored run) and
            :class:`~hrbench.errors.NoLabelsWarning` when no run is on a labelled item; the
            records' ``note`` and the report's say the same whatever ``warn`` is.
        stop: the stop record of a benchmark run with a stop rule (a dict, or
            :attr:`hrbench.Bench.stop`, taken from ``bench`` by default): the report then says
            how it stopped (:attr:`Report.stop`), shows no fixed-sample interval or p for its
            comparisons, and marks the arms' intervals conditional on the clusters run (one that
            ran its most clusters undecided keeps them, labelled:
            :func:`~hrbench.stats._stopped.ran_through`).
        pass_k: the ``k`` of each arm's ``pass^k`` (the chance that ``k`` runs of an item are
            all right; default: the runs per item); each arm's flip rate comes with it
            (:mod:`hrbench.stats._consistency`), and the text shows both with 2 or more runs.
        scorer: the name of the scorer that scored the rows (:attr:`Report.scorer`); by default
            a benchmark's own (``scorer_name``), ``None`` for bare rows.

    Returns:
        A :class:`Report`.

    Raises:
        TooFewRunsError: fewer than 5 runs per item and ``descriptive`` is false.
        ConfigError: a bad ``level``, ``method``, ``n_boot`` or ``pass_k``, or a benchmark
            with no rows.

    Example:
        >>> from hrbench.records import Row
        >>> rows = [Row(cluster=f"c{i // 2}", item=f"q{i}", arm="ask", run=r, split="test",
        ...             correct=(i + r) % 3 != 0, outcome=None, failure_kind=None)
        ...         for i in range(6) for r in range(5)]
        >>> rep = report(rows)
        >>> round(rep.arms[0].accuracy, 3), rep.arms[0].df
        (0.667, 2)
        >>> one = [r for r in rows if r.run == 0]  # one run per item
        >>> d = report(one, descriptive=True)
        >>> d.descriptive, d.arms[0].se is not None, d.arms[0].var_within
        (True, True, None)
        >>> print(d.note.split(";")[0])
        Descriptive: fewer than 5 runs per item (1 here), so run-to-run spread is not measured
    """
    _check(level, method, n_boot)
    traces = traces if traces is not None else getattr(bench, "traces", None)
    stopped = _stop_of(bench, stop)
    whole = bench  # the judge section reads every judged row, a stop's cancelled clusters too
    bench = reported_rows(bench) if stopped else bench  # a stop's cancelled clusters are left out
    t = _table(bench)
    desc = _too_few(t, descriptive, "report")
    if warn:
        _warn_method(t, method, "report")
    listed = None
    if traces is not None and not (hasattr(bench, "columns") or isinstance(bench, Mapping)):
        listed = _list_prices(bench, traces)
    k = pass_k_runs(pass_k, _fewest_runs(t))
    arms = [_arm_report(t, a, level, method, seed, n_boot, listed, k) for a in range(len(t.arms))]
    logged = _from_log(bench)
    arms = [msgspec.structs.replace(a, usd_from_log=logged[a.arm]) if a.arm in logged else a for a in arms]
    comps = _all_pairs(t, level, method, desc, seed, n_boot) if pairs and len(t.arms) > 1 else []
    if warn:
        warn_no_interval("report", t, [(f"arm {a.arm!r}", a.note) for a in arms if a.ci_low is None], comps)
    rep = Report(
        arms=arms,
        comparisons=comps,
        level=float(level),
        method=method,
        descriptive=desc,
        runs=t.runs,
        n_boot=n_boot,
        seed=seed,
        note=_note(t, desc, method, level, len(comps)) + _no_interval_note(arms),
        scorer=scorer if scorer is not None else getattr(whole, "scorer_name", None),
        max_runs=t.max_runs,
    )
    rep.judge = judge_section(whole, level)  # a judged benchmark's agreement with exact
    rep.human = human_section(
        bench, grades if grades is not None else getattr(whole, "grades", None), level, rep
    )
    rep = apply_stop(rep, stopped)
    rep.frontier = frontier(rep.arms, rep.comparisons)  # each step with the comparison shown
    return rep


def _fewest_runs(t: _Table) -> int:
    """The fewest labelled reportable runs of any item of any arm (the most ``pass^k`` can look at)."""
    counts = [int(it.k.min()) for it in (_items(t, a) for a in range(len(t.arms))) if it.k.size]
    return min(counts, default=0)


def _stop_of(bench: Any, stop: Any) -> Mapping[str, Any] | None:
    """The stop record given, or the benchmark's own (``Bench.stop``); ``None`` without one."""
    stop = stop if stop is not None else getattr(bench, "stop", None)
    if stop is not None and not isinstance(stop, Mapping):
        stop = stop.to_dict()
    return stop


def report_payload(
    bench_rows: Any,
    *,
    level: float = 0.95,
    method: Method = "cluster",
    descriptive: bool = False,
    seed: int = 0,
    n_boot: int = 2000,
    compare_pair: tuple[str, str] | None = None,
    grades: Any = None,
    plot: str | os.PathLike[str] | None = None,
    traces: Mapping[str, Any] | None = None,
    stop: Any = None,
    pass_k: int | None = None,
    metric: str = "accuracy",
    scorer: str | None = None,
) -> dict[str, Any]:
    """The report as a msgspec-encodable dict, for the daemon's ``report`` method and ``hrb report``.

    Args:
        bench_rows: a benchmark, its rows (:class:`~hrbench.records.Row` or dicts), a
            frame, or a stored judged benchmark (:class:`~hrbench.stats.JudgedRows`,
            whose report has the judge section).
        level: as for :func:`report`.
        method: as for :func:`report`.
        descriptive: as for :func:`report`.
        seed: as for :func:`report`.
        n_boot: as for :func:`report`.
        compare_pair: ``(arm_a, arm_b)`` to put only that paired comparison in
            ``comparisons`` (``hrb report --compare A B``); by default all pairs. Its
            ``p_holm`` is its Holm-adjusted p-value in the family of every pair of the
            benchmark's arms (the same number the full report gives it; the p-value itself with
            two arms); ``None`` for ``metric`` other than accuracy (no family is compared).
        grades: as for :func:`report` (the daemon passes the stored human grades).
        plot: a path to write the accuracy-vs-USD-per-run PNG to (:meth:`Report.plot`;
            ``hrb report --plot out.png``). Give an absolute path: through the daemon a
            relative one is taken from the daemon's working directory. The file is overwritten.
        traces: as for :func:`report` (the daemon passes the stored traces).
        stop: as for :func:`report` (the daemon passes the stored stop record).
        pass_k: as for :func:`report`.
        metric: what ``compare_pair``'s comparison compares, as for :func:`compare`
            (``hrb report --compare A B --metric pass^k``).
        scorer: as for :func:`report` (the daemon passes the stored benchmark's scorer).

    It warns nothing: what has no interval, and why, is in the payload's notes (the daemon
    builds it for a client that reads them).

    Returns:
        The :class:`Report`'s fields as builtins, plus ``text`` (``str(report)``), ``markdown``
        (:meth:`Report.to_markdown`, for ``hrb report --format markdown``) and, when
        ``plot`` is given, ``plot``: the absolute path of the PNG written.

    Raises:
        TooFewRunsError: fewer than 5 runs per item and ``descriptive`` is false.
        ConfigError: an unknown arm in ``compare_pair``, a bad argument, or a ``plot`` that
            cannot be written (no such directory, or matplotlib is not installed).

    Example:
        >>> from hrbench.records import Row
        >>> rows = [Row(cluster="a", item=f"q{i}", arm="ask", run=1, split="test",
        ...             correct=True, outcome=None, failure_kind=None) for i in range(3)]
        >>> p = report_payload(rows, descriptive=True)
        >>> p["descriptive"], p["arms"][0]["accuracy"], sorted(p)[:3]
        (True, 1.0, ['arms', 'comparisons', 'descriptive'])
    """
    traces = traces if traces is not None else getattr(bench_rows, "traces", None)
    stopped = _stop_of(bench_rows, stop)
    whole = bench_rows  # report() leaves out a stop's cancelled clusters itself
    bench_rows = reported_rows(bench_rows) if stopped else bench_rows
    rep = report(
        whole,
        level,
        method,
        descriptive,
        seed,
        n_boot,
        grades=grades,
        pairs=True,  # a single pair's p_holm is its Holm value in the family of every pair
        traces=traces,
        warn=False,
        stop=stopped,
        pass_k=pass_k,
        scorer=scorer,
    )
    if compare_pair is not None:
        family = {frozenset((c.arm_a, c.arm_b)): c.p_holm for c in rep.comparisons}
        rep.comparisons = [
            compare(
                bench_rows,
                compare_pair[0],
                compare_pair[1],
                level,
                method,
                descriptive,
                seed,
                n_boot,
                grades=grades if grades is not None else getattr(whole, "grades", None),
                warn=False,
                metric=metric,
                pass_k=pass_k,
            )
        ]
        if metric == "accuracy":  # the text's p_holm and the JSON's agree: Holm over every pair
            rep.comparisons[0].p_holm = family.get(frozenset(compare_pair))
        rep = apply_stop(rep, stopped)
        rep.frontier = frontier(rep.arms, rep.comparisons)  # the one pair's step, when it is one
    out = apply_stop(rep, stopped).to_dict()
    out["text"] = str(rep)
    out["markdown"] = rep.to_markdown()
    if plot is not None:
        if not isinstance(plot, (str, os.PathLike)) or not os.fspath(plot):
            raise ConfigError("plot", plot, "must be the path of the PNG to write")
        where = os.fspath(plot)  # kept as given: a confined caller's `..` is refused
        if not os.path.isabs(where):
            where = os.path.abspath(where)
        try:
            rep.plot(where)
        except ImportError as e:
            raise ConfigError("plot", plot, f"cannot be drawn: {e}") from None
        except OSError as e:
            raise ConfigError("plot", plot, f"cannot be written: {e.strerror or e}") from None
        out["plot"] = where
        out["text"] += f"\nPlot: {where}"
    return out
