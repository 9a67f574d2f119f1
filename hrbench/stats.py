"""Intervals, paired comparisons, variance components and power for a benchmark (issue 8).

The method is Miller (2024), "Adding Error Bars to Evals: A Statistical Approach to Language
Model Evaluations" (arXiv 2411.00640):

* An arm's **accuracy** is the mean over runs within each item, then over the labelled items
  (the seed-002 summary), on the reportable rows (``reportable`` true, ``correct`` not ``None``).
* Its **standard error** is clustered: items are nested in the reference's clusters and runs in
  items. With ``y_i`` the item means, ``n`` items and ``G`` clusters,
  ``se**2 = G / (G - 1) * sum_c (sum_{i in c} (y_i - mean(y)))**2 / n**2`` (the CR1 sandwich of
  an intercept-only regression on the item means; with one item per cluster it is the ordinary
  ``sd(y) / sqrt(n)``). The run-to-run noise is inside each item mean, so it is counted once.
  The interval is ``accuracy ± t(level, G - 1) * se``, clipped to the parameter space
  ([0, 1] for an accuracy, [-1, 1] for a paired difference): with few clusters the unclipped
  t interval can leave it. An arm with fewer than 10 clusters is flagged (``few_clusters``,
  and a note in the text): its interval is wide and only approximate.
* ``method="bootstrap"`` resamples whole clusters with replacement (``n_boot`` times, seeded);
  the standard error is the bootstrap standard deviation and the interval the percentile one.
  With few clusters it under-covers a little (93.7% for a nominal 95% at 60 clusters in a
  simulation where the clustered t interval covered 94.4%); prefer ``"cluster"``.
* **Variance components** (Miller §4): ``var_within`` is the mean over items of the run-to-run
  sample variance (``ddof=1``) and ``var_between`` the variance of the items' true scores,
  estimated by moments as ``var(y_i) - mean(s_i**2 / K_i)``, floored at 0.
* **Paired comparisons** (Miller §4.2) take the per-item differences of the mean scores on the
  items both arms ran and give them the same clustered standard error, interval and a two-sided
  t test; :func:`compare_all` adds Holm-adjusted p-values over all pairs.
* **Power** (Miller §5): items needed ``n = (z_{1-alpha/2} + z_{power})**2 * deff *
  (var_between + var_within / runs) / diff**2``.
* **Cost**: ``usd`` is what the arm's reportable rows cost; ``usd_per_run`` is the mean over
  labelled items of the USD per run (the same averaging as accuracy), with a clustered interval;
  ``accuracy_per_usd = accuracy / usd_per_run`` (correct answers per USD spent per run), with a
  delta-method interval (``z_i = (y_i - R c_i) / mean(c)`` given the clustered standard error
  of their mean) or, under ``method="bootstrap"``, the percentile interval of the resampled
  ratio.

Fewer than 5 runs per item raises :class:`~hrbench.errors.TooFewRunsError` unless
``descriptive=True`` (seed 002). A descriptive report still gives the clustered standard error,
the intervals, the paired comparisons and their p-values over items: one greedy prediction per
item (``runs=1``, e.g. scoring a file of existing predictions) says nothing about run-to-run
spread, but its intervals still tell how much the accuracy depends on which items (and
clusters) were sampled. ``var_within`` and ``var_between`` are ``None`` with a single run per
item (the run-to-run spread cannot be told from the spread between items). Each item's score
then holds whatever run noise there was, unseparated; the intervals are read as covering the
sampling of items only. Every output says the report is descriptive: its text (header and
note), its JSON and ``to_dict`` (``descriptive`` and ``note``) and its pandas frames (a
``descriptive`` column and ``attrs``). With 5 or more runs ``descriptive=True`` changes nothing:
the report is an ordinary interval report and is not labelled descriptive.

Example:
    >>> from hrbench.records import Row
    >>> rows = [Row(cluster=c, item=i, arm="ask", run=r, split="test",
    ...             correct=(i != "q3"), outcome=None, failure_kind=None if i != "q3" else "wrong")
    ...         for c, i in [("a", "q1"), ("a", "q2"), ("b", "q3"), ("b", "q4")] for r in range(1, 6)]
    >>> rep = report(rows)
    >>> rep.arms[0].accuracy, rep.arms[0].n_clusters, rep.arms[0].wrong
    (0.75, 2, 5)
"""

from __future__ import annotations

import math
import os
import textwrap
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import msgspec
import numpy as np

from hrbench.errors import ConfigError, TooFewRunsError
from hrbench.records import FAILURE_KINDS

__all__ = [
    "FEW_CLUSTERS",
    "MIN_RUNS",
    "ArmReport",
    "Comparison",
    "PowerPlan",
    "PowerPoint",
    "Report",
    "compare",
    "compare_all",
    "power",
    "report",
    "report_payload",
]

MIN_RUNS = 5
"""Runs per item below which an interval report is refused unless labelled descriptive (seed 002)."""

FEW_CLUSTERS = 10
"""Clusters below which an arm is flagged ``few_clusters``: its t interval is wide and approximate."""

_DESCRIPTIVE = (
    "Descriptive: fewer than 5 runs per item{here}, so run-to-run spread is not measured; "
    "intervals cover the sampling of items (and clusters) only."
)
DESCRIPTIVE_NOTE = _DESCRIPTIVE.format(here="")
"""Opens the ``note`` of a descriptive report (with the runs per item after "per item")."""

FEW_CLUSTERS_NOTE = (
    f"few clusters (fewer than {FEW_CLUSTERS}): the t interval with clusters-1 df is wide and approximate."
)

Method = Literal["cluster", "bootstrap"]

_BOOT_CELLS = 2_000_000  # resample-by-cluster cells held in memory at once (16 MB of float64)


# --------------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------------


class ArmReport(msgspec.Struct, kw_only=True):
    """One arm's line of a :class:`Report`.

    Attributes:
        arm: the arm's name.
        accuracy: mean over runs within each labelled item, then over items (a proportion in
            [0, 1]); ``None`` when the arm has no labelled reportable run.
        se: its standard error (clustered, or bootstrap) over items; ``None`` with a single
            cluster.
        ci_low, ci_high: the ``level`` interval, clipped to [0, 1]; ``None`` when ``se`` is.
        df: degrees of freedom of the t interval, ``n_clusters - 1``.
        n_items: labelled reportable items the arm ran.
        n_clusters: clusters those items fall in.
        few_clusters: fewer than 10 clusters (:data:`FEW_CLUSTERS`): the t interval with
            ``n_clusters - 1`` degrees of freedom is wide and approximate.
        runs: runs per item (the most any item had).
        n_runs: labelled reportable runs counted (the seed summary's ``runs`` column).
        var_within: mean run-to-run variance within an item (score units squared); ``None``
            with fewer than 2 runs per item.
        var_between: variance of the items' true scores across items (method of moments,
            floored at 0); ``None`` with fewer than 2 runs per item.
        usd: total USD of the arm's reportable rows (rows with no price count 0 here).
        usd_unpriced: reportable runs whose cost is unknown (``usd`` is ``None`` on the row).
        usd_per_run: mean USD per run over the labelled items (as accuracy averages).
        usd_per_run_low, usd_per_run_high: its interval (the low end clipped at 0).
        accuracy_per_usd: ``accuracy / usd_per_run`` (correct answers per USD); ``None`` when
            a run has no price or the arm cost nothing.
        accuracy_per_usd_low, accuracy_per_usd_high: its interval (delta method or bootstrap;
            the low end clipped at 0).
        failures: labelled reportable runs that were wrong, whatever the kind.
        parse_failure, refusal, not_in_document, wrong, budget_stop, error: those runs by
            ``failure_kind``.
        unlabelled_runs: reportable runs on items with no label (not counted anywhere above).
        dev_accuracy: accuracy on the non-reportable (dev) rows, descriptive; ``None`` if none.
    """

    arm: str
    accuracy: float | None
    se: float | None
    ci_low: float | None
    ci_high: float | None
    df: int | None
    n_items: int
    n_clusters: int
    few_clusters: bool = False
    runs: int
    n_runs: int
    var_within: float | None
    var_between: float | None
    usd: float
    usd_unpriced: int
    usd_per_run: float | None
    usd_per_run_low: float | None
    usd_per_run_high: float | None
    accuracy_per_usd: float | None
    accuracy_per_usd_low: float | None
    accuracy_per_usd_high: float | None
    failures: int
    parse_failure: int
    refusal: int
    not_in_document: int
    wrong: int
    budget_stop: int
    error: int
    unlabelled_runs: int
    dev_accuracy: float | None


class Comparison(msgspec.Struct, kw_only=True):
    """A paired difference ``arm_a - arm_b`` on the items both arms ran.

    Attributes:
        arm_a, arm_b: the arms compared; ``diff > 0`` means ``arm_a`` scored higher.
        diff: mean over common items of the per-item difference of mean scores.
        se: its standard error (clustered or bootstrap) over items; ``None`` with a single
            cluster.
        ci_low, ci_high: the ``level`` interval of ``diff``, clipped to [-1, 1].
        p_value: two-sided p-value of ``diff = 0`` (t with ``df`` degrees of freedom).
        p_holm: Holm-adjusted p-value over all the pairs compared together; ``None`` for a
            single comparison.
        df: ``n_clusters - 1``.
        n_items: items both arms ran (labelled, reportable).
        n_clusters: clusters of those items.
        accuracy_a, accuracy_b: each arm's accuracy on those common items.
        se_unpaired: the standard error of the difference if the two arms' clustered errors
            were combined as independent (``sqrt(se_a**2 + se_b**2)``): what comparing two
            separate intervals implies; larger than ``se`` when the arms are correlated.
        level: the interval's level.
        method: ``"cluster"`` or ``"bootstrap"``.
        descriptive: ``True`` when the benchmark has fewer than 5 runs per item (allowed by
            ``descriptive=True``): the interval covers the sampling of items only.
    """

    arm_a: str
    arm_b: str
    diff: float | None
    se: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    p_holm: float | None
    df: int | None
    n_items: int
    n_clusters: int
    accuracy_a: float | None
    accuracy_b: float | None
    se_unpaired: float | None
    level: float
    method: str
    descriptive: bool


class PowerPoint(msgspec.Struct, kw_only=True, frozen=True):
    """Items needed at one number of runs per item (a point of :attr:`PowerPlan.tradeoff`)."""

    runs: int
    n_items: int
    total_runs: int


class PowerPlan(msgspec.Struct, kw_only=True):
    """What :func:`power` returns: items needed to detect ``diff`` in a paired comparison.

    Attributes:
        diff: the difference in accuracy to detect (absolute, in proportion units).
        alpha: two-sided significance level.
        power: the probability of detecting ``diff`` when it is real.
        runs: runs per item assumed.
        n_items: items needed at ``runs`` runs per item.
        var_within: run-to-run variance of a per-run score difference (``sigma_a**2 +
            sigma_b**2``).
        var_between: variance across items of the true per-item difference (``omega**2``).
        design_effect: variance inflation from clustering (1 when items are independent).
        min_items: the floor as runs grow without bound: more runs cannot go below it.
        tradeoff: items (and total runs per arm) needed at other numbers of runs per item.
        source: ``"assumed"`` or ``"bench: A vs B"`` (where the variance components came from).
    """

    diff: float
    alpha: float
    power: float
    runs: int
    n_items: int
    var_within: float
    var_between: float
    design_effect: float
    min_items: int
    tradeoff: list[PowerPoint]
    source: str

    def __str__(self) -> str:
        lines = [
            f"Power plan: detect a difference of {self.diff:.3f} at alpha {self.alpha:g} "
            f"(two-sided) with power {self.power:g}",
            f"  var_between {self.var_between:.4f}, var_within {self.var_within:.4f}, "
            f"design effect {self.design_effect:.2f} ({self.source})",
            f"  needs {self.n_items} items at {self.runs} run(s) per item; never fewer than "
            f"{self.min_items} items however many runs",
            "  runs  items  total runs per arm",
        ]
        lines += [f"  {p.runs:>4}  {p.n_items:>5}  {p.total_runs:>18}" for p in self.tradeoff]
        return "\n".join(lines)


class Report(msgspec.Struct, kw_only=True):
    """An interval report on a benchmark: one :class:`ArmReport` per arm, paired comparisons.

    ``str(report)`` is a table for a person, :meth:`to_pandas` a frame, :meth:`to_json` JSON
    bytes (``msgspec.to_builtins(report)`` a dict) and :meth:`plot` a PNG of accuracy against
    USD per run.

    Attributes:
        arms: one record per arm, in the benchmark's arm order.
        comparisons: paired differences for every pair of arms (Holm-adjusted together).
        level: the intervals' level (0.95 for 95%).
        method: ``"cluster"`` (clustered t interval) or ``"bootstrap"`` (cluster bootstrap).
        descriptive: ``True`` when the benchmark has fewer than 5 runs per item (allowed by
            ``descriptive=True``): run-to-run spread is not measured and the intervals cover the
            sampling of items (and clusters) only; ``note`` says so.
        runs: runs per item in the benchmark.
        n_boot: bootstrap resamples (``method="bootstrap"``).
        seed: the bootstrap seed.
        note: how to read the report (descriptive label, interval method, multiplicity).
        version: the record's version.
    """

    arms: list[ArmReport]
    comparisons: list[Comparison]
    level: float
    method: str
    descriptive: bool
    runs: int
    n_boot: int
    seed: int
    note: str
    version: int = 1

    def arm(self, name: str) -> ArmReport:
        """The record of the arm called ``name`` (``KeyError`` if there is none)."""
        for a in self.arms:
            if a.arm == name:
                return a
        raise KeyError(name)

    def __str__(self) -> str:
        return _render(self)

    def to_json(self) -> bytes:
        """The report as JSON bytes (``msgspec.json.encode``); ``null`` stands for ``None``."""
        return msgspec.json.encode(self)

    def to_dict(self) -> dict[str, Any]:
        """The report as builtins (``msgspec.to_builtins``), ready for any JSON encoder."""
        out: dict[str, Any] = msgspec.to_builtins(self)
        return out

    def to_pandas(self, table: Literal["arms", "comparisons"] = "arms") -> Any:
        """One row per arm (or per comparison) as a ``pandas.DataFrame``.

        The frame has a ``descriptive`` column and ``attrs`` holding ``descriptive``, ``note``,
        ``level`` and ``method``.

        Args:
            table: ``"arms"`` or ``"comparisons"``.

        Returns:
            A ``pandas.DataFrame``.

        Raises:
            ImportError: when pandas is not installed (``pip install 'hrbench[pandas]'``).
        """
        try:
            import pandas as pd
        except ImportError as e:  # pragma: no cover - pandas is a dev dependency
            raise ImportError("Report.to_pandas() needs pandas: pip install 'hrbench[pandas]'") from e
        if table == "arms":
            records: list[Any] = self.arms
            cols = list(ArmReport.__struct_fields__)
        elif table == "comparisons":
            records = self.comparisons
            cols = list(Comparison.__struct_fields__)
        else:
            raise ConfigError("table", table, "must be 'arms' or 'comparisons'")
        frame = pd.DataFrame([msgspec.to_builtins(r) for r in records], columns=cols)
        frame["descriptive"] = self.descriptive
        frame.attrs.update(descriptive=self.descriptive, note=self.note, level=self.level, method=self.method)
        return frame

    def plot(self, path: str | Any, *, title: str | None = None) -> Any:
        """Write a PNG of accuracy against USD per run, one point per arm with interval bars.

        Vertical bars are the accuracy interval, horizontal bars the USD-per-run interval; arms
        with no price are left out and named under the plot. When no arm has a positive USD per
        run (``outputs`` arms that score existing predictions cost nothing) the cost axis would
        be degenerate, so the plot is instead a horizontal dot plot of accuracy per arm with its
        interval, titled accordingly. The title names the level and method, and says when the
        report is descriptive (intervals over items only).

        Args:
            path: where to write the PNG (a path or a binary file object).
            title: the plot's title; a default names the level and method.

        Returns:
            ``path``.

        Raises:
            ImportError: when matplotlib is not installed (``pip install 'hrbench[plot]'``).
        """
        try:
            from matplotlib.backends.backend_agg import FigureCanvasAgg
            from matplotlib.figure import Figure
        except ImportError as e:
            raise ImportError(
                "Report.plot() needs matplotlib, an optional extra: pip install 'hrbench[plot]'"
            ) from e
        shown = [a for a in self.arms if a.accuracy is not None]
        priced = [a for a in shown if a.usd_per_run is not None]
        by_cost = any((a.usd_per_run or 0.0) > 0 for a in priced)

        def bar(est: float, lo: float | None, hi: float | None) -> list[list[float]] | None:
            return None if lo is None or hi is None else [[max(0.0, est - lo)], [max(0.0, hi - est)]]

        size = (6.4, 4.4) if by_cost else (6.4, max(2.8, 1.6 + 0.5 * len(shown)))
        fig = Figure(figsize=size, dpi=110)
        FigureCanvasAgg(fig)
        ax = fig.add_subplot(1, 1, 1)
        if by_cost:
            for a in priced:
                acc, x = float(a.accuracy or 0.0), float(a.usd_per_run or 0.0)
                ax.errorbar(
                    [x],
                    [acc],
                    yerr=bar(acc, a.ci_low, a.ci_high),
                    xerr=bar(x, a.usd_per_run_low, a.usd_per_run_high),
                    fmt="o",
                    capsize=4,
                )
                ax.annotate(a.arm, (x, acc), textcoords="offset points", xytext=(6, 6), fontsize=9)
            ax.margins(x=0.15, y=0.1)
            ax.set_xlabel("USD per run")
            ax.set_ylabel("accuracy")
            left_out = [a.arm for a in shown if a.usd_per_run is None]
            if left_out:
                fig.text(0.01, 0.01, "not plotted (no price): " + ", ".join(left_out), fontsize=8)
            head = "Accuracy vs USD per run"
        else:
            n = len(shown)
            for pos, a in enumerate(shown):
                acc, y = float(a.accuracy or 0.0), n - 1 - pos  # first arm on top
                ax.errorbar([acc], [y], xerr=bar(acc, a.ci_low, a.ci_high), fmt="o", capsize=4)
                label = f"{acc:.3f}  " + ("(no interval)" if a.ci_low is None else _ci(a.ci_low, a.ci_high))
                ax.annotate(
                    label, (acc, y), textcoords="offset points", xytext=(0, 7), ha="center", fontsize=8
                )
            ax.set_yticks(range(n), [a.arm for a in reversed(shown)])
            ax.set_ylim(-0.7, n - 0.3)
            ends = [v for a in shown for v in (a.accuracy, a.ci_low, a.ci_high) if v is not None]
            if ends:
                span = max(max(ends) - min(ends), 0.05)
                ax.set_xlim(max(-0.01, min(ends) - 0.15 * span), min(1.01, max(ends) + 0.15 * span))
            ax.set_xlabel("accuracy")
            head = "Accuracy per arm (no cost recorded)"
        ax.grid(True, alpha=0.3)
        if title is None:
            how = "clustered t" if self.method == "cluster" else "cluster bootstrap"
            title = f"{head}\n{self.level:.0%} {how} intervals, {self.runs} run(s) per item"
            if self.descriptive:
                title += f"\ndescriptive (fewer than {MIN_RUNS} runs): intervals over items only"
        ax.set_title(title, fontsize=10)
        fig.tight_layout()
        fig.savefig(path, format="png")
        return path


# --------------------------------------------------------------------------------------------
# The table: rows as integer-coded numpy columns
# --------------------------------------------------------------------------------------------

_COLUMNS = ("cluster", "item", "arm", "run", "correct", "failure_kind", "usd", "reportable")


@dataclass
class _Table:
    arms: list[str]
    arm: np.ndarray  # per row: arm code
    item: np.ndarray  # per row: item code
    item_cluster: np.ndarray  # per item: cluster code
    n_items: int
    run: np.ndarray
    correct: np.ndarray  # float, nan for None
    usd: np.ndarray  # float, nan for None
    reportable: np.ndarray  # bool
    failure: np.ndarray  # per row: index into FAILURE_KINDS, len(FAILURE_KINDS) for other, -1 none
    runs: int


def _codes(values: Iterable[Any], table: dict[Any, int]) -> np.ndarray:
    return np.fromiter((table.setdefault(v, len(table)) for v in values), dtype=np.intp)


def _float_column(col: Any) -> np.ndarray:
    if hasattr(col, "to_numpy"):
        try:
            return np.asarray(col.to_numpy(dtype=float, na_value=np.nan), dtype=float)
        except (TypeError, ValueError):
            col = col.to_numpy()
    try:
        return np.asarray(col, dtype=float)
    except (TypeError, ValueError):
        return np.array([np.nan if v is None or v != v else float(v) for v in col], dtype=float)


def _table(bench: Any) -> _Table:
    """Code a benchmark (a Bench, a list of Rows or dicts, or a frame/mapping of columns)."""
    arm_order = [
        a["name"] if isinstance(a, Mapping) else getattr(a, "name", a)
        for a in getattr(bench, "arms", []) or []
    ]
    is_frame = hasattr(bench, "columns") or isinstance(bench, Mapping)  # pandas/polars, dict of columns
    rows = bench if is_frame else getattr(bench, "rows", bench)
    cols: dict[str, Any] = {}
    if is_frame:
        for c in _COLUMNS:
            cols[c] = rows[c]
        n = len(cols["item"])
    else:
        rows = list(rows)
        n = len(rows)
        if n and isinstance(rows[0], Mapping):
            for c in _COLUMNS:
                cols[c] = [r.get(c) for r in rows]
        else:
            for c in _COLUMNS:
                cols[c] = [getattr(r, c) for r in rows]
    if n == 0:
        raise ConfigError("bench", bench, "has no rows")
    arm_codes: dict[Any, int] = {name: i for i, name in enumerate(arm_order)}
    arm = _codes(_tolist(cols["arm"]), arm_codes)
    item_codes: dict[Any, int] = {}
    item = _codes(_tolist(cols["item"]), item_codes)
    cluster_codes: dict[Any, int] = {}
    row_cluster = _codes(_tolist(cols["cluster"]), cluster_codes)
    item_cluster = np.empty(len(item_codes), dtype=np.intp)
    item_cluster[item[::-1]] = row_cluster[::-1]  # first row's cluster wins
    kinds = {k: i for i, k in enumerate(FAILURE_KINDS)}
    other = len(FAILURE_KINDS)
    failure = np.fromiter(
        (-1 if (k is None or k != k) else kinds.get(k, other) for k in _tolist(cols["failure_kind"])),
        dtype=np.intp,
        count=n,
    )
    run = np.asarray(_tolist(cols["run"]), dtype=np.int64)
    reportable = np.asarray([bool(v) for v in _tolist(cols["reportable"])], dtype=bool)
    runs = getattr(bench, "runs", None)
    if not isinstance(runs, int):
        runs = int(np.unique(run).size)
    return _Table(
        arms=list(arm_codes),
        arm=arm,
        item=item,
        item_cluster=item_cluster,
        n_items=len(item_codes),
        run=run,
        correct=_float_column(cols["correct"]),
        usd=_float_column(cols["usd"]),
        reportable=reportable,
        failure=failure,
        runs=runs,
    )


def _tolist(col: Any) -> list[Any]:
    if isinstance(col, list):
        return col
    if hasattr(col, "to_list"):
        out: list[Any] = col.to_list()
        return out
    if hasattr(col, "tolist"):
        out = col.tolist()
        return out
    return list(col)


@dataclass
class _Items:
    """One arm's per-item summary on the labelled reportable rows."""

    idx: np.ndarray  # item codes present
    y: np.ndarray  # mean score over runs
    k: np.ndarray  # runs counted
    s2: np.ndarray  # run-to-run sample variance (nan when k < 2)
    cost: np.ndarray  # mean USD per run (nan when a run has no price)
    cluster: np.ndarray  # cluster code per present item


def _items(t: _Table, arm: int, reportable: bool = True) -> _Items:
    m = (t.arm == arm) & (t.reportable == reportable) & ~np.isnan(t.correct)
    it = t.item[m]
    x = t.correct[m]
    k = np.bincount(it, minlength=t.n_items)
    s = np.bincount(it, weights=x, minlength=t.n_items)
    ss = np.bincount(it, weights=x * x, minlength=t.n_items)
    c = t.usd[m]
    csum = np.bincount(it, weights=np.nan_to_num(c), minlength=t.n_items)
    cnan = np.bincount(it, weights=np.isnan(c).astype(float), minlength=t.n_items)
    idx = np.flatnonzero(k)
    k = k[idx].astype(float)
    y = s[idx] / k
    with np.errstate(invalid="ignore", divide="ignore"):
        s2 = np.where(k > 1, np.maximum(ss[idx] - k * y * y, 0.0) / (k - 1), np.nan)
    cost = np.where(cnan[idx] > 0, np.nan, csum[idx] / k)
    return _Items(idx=idx, y=y, k=k, s2=s2, cost=cost, cluster=t.item_cluster[idx])


# --------------------------------------------------------------------------------------------
# Estimators (numpy/scipy only)
# --------------------------------------------------------------------------------------------


def _sps() -> Any:
    """``scipy.stats``, imported on first use: ``import hrbench`` must not pay ~0.4 s for scipy."""
    from scipy import stats

    return stats


def _compact(cluster: np.ndarray) -> tuple[np.ndarray, int]:
    uniq, inv = np.unique(cluster, return_inverse=True)
    return inv, int(uniq.size)


def _cluster_se(v: np.ndarray, g: np.ndarray, n_g: int) -> float | None:
    """CR1 clustered standard error of ``mean(v)``; ``None`` with fewer than 2 clusters."""
    if n_g < 2:
        return None
    n = v.size
    totals = np.bincount(g, weights=v - v.mean(), minlength=n_g)
    var = n_g / (n_g - 1) * float(totals @ totals) / (n * n)
    return math.sqrt(max(var, 0.0))


def _t_interval(
    est: float, se: float | None, df: int, level: float, bounds: tuple[float, float] = (-math.inf, math.inf)
) -> tuple[float | None, float | None]:
    """``est ± t(level, df) * se``, clipped to ``bounds`` (the parameter space)."""
    if se is None or df < 1:
        return None, None
    half = float(_sps().t.ppf(0.5 + level / 2, df)) * se
    return _clip(est - half, bounds), _clip(est + half, bounds)


def _clip(v: float, bounds: tuple[float, float]) -> float:
    return min(max(v, bounds[0]), bounds[1])


_UNIT = (0.0, 1.0)  # an accuracy
_DIFF = (-1.0, 1.0)  # a difference of accuracies
_POSITIVE = (0.0, math.inf)  # a cost, or accuracy per USD


def _p_value(est: float, se: float | None, df: int) -> float | None:
    if se is None or df < 1:
        return None
    if se == 0.0:
        return 1.0 if est == 0.0 else 0.0
    return float(2 * _sps().t.sf(abs(est / se), df))


def _boot_totals(
    parts: np.ndarray, g: np.ndarray, n_g: int, rng: np.random.Generator, n_boot: int
) -> np.ndarray:
    """Resampled column totals: clusters drawn with replacement ``n_boot`` times.

    ``parts`` is (items, m); returns (n_boot, m) sums over the items of the drawn clusters.
    """
    cluster_totals = np.stack([np.bincount(g, weights=p, minlength=n_g) for p in parts.T], axis=1)
    out = np.empty((n_boot, parts.shape[1]))
    chunk = max(1, _BOOT_CELLS // n_g)
    for start in range(0, n_boot, chunk):
        b = min(chunk, n_boot - start)
        draws = rng.integers(0, n_g, size=(b, n_g))
        draws += (np.arange(b) * n_g)[:, None]
        counts = np.bincount(draws.ravel(), minlength=b * n_g).reshape(b, n_g).astype(float)
        out[start : start + b] = counts @ cluster_totals
    return out


def _rng(seed: int, *names: str) -> np.random.Generator:
    return np.random.default_rng([seed, *(zlib.crc32(n.encode()) for n in names)])


def _boot_summary(
    boot: np.ndarray, level: float, bounds: tuple[float, float] = (-math.inf, math.inf)
) -> tuple[float, float, float]:
    ok = boot[np.isfinite(boot)]
    lo, hi = np.quantile(ok, [0.5 - level / 2, 0.5 + level / 2])
    return float(ok.std(ddof=1)), _clip(float(lo), bounds), _clip(float(hi), bounds)


def _components(items: _Items) -> tuple[float | None, float | None]:
    """Within-item (run-to-run) and between-item variance components (Miller §4)."""
    has = items.k > 1
    if not has.any() or items.y.size < 2:
        return None, None
    within = float(np.mean(items.s2[has]))
    noise = float(np.mean(items.s2[has] / items.k[has]))
    between = max(float(np.var(items.y, ddof=1)) - noise, 0.0)
    return within, between


# --------------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------------


def _check(level: float, method: str, n_boot: int) -> None:
    if not (isinstance(level, (int, float)) and 0 < level < 1):
        raise ConfigError("level", level, "must be a number between 0 and 1, e.g. 0.95")
    if method not in ("cluster", "bootstrap"):
        raise ConfigError("method", method, "must be 'cluster' or 'bootstrap'")
    if not (isinstance(n_boot, int) and n_boot >= 100):
        raise ConfigError("n_boot", n_boot, "must be a whole number, at least 100")


def _too_few(t: _Table, descriptive: bool, what: str) -> bool:
    """Refuse fewer than 5 runs unless ``descriptive``; return whether to label it descriptive."""
    if t.runs < MIN_RUNS and not descriptive:
        raise TooFewRunsError(
            f"{what}: the benchmark has {t.runs} run(s) per item; an interval report needs at least "
            f"{MIN_RUNS} (with fewer, run-to-run spread cannot be told from differences between arms). "
            "For a report labelled descriptive, whose intervals cover the sampling of items only, "
            "pass descriptive=True (hrb report --descriptive).",
            runs=t.runs,
        )
    return descriptive and t.runs < MIN_RUNS


def _arm_report(t: _Table, a: int, level: float, method: str, seed: int, n_boot: int) -> ArmReport:
    name = t.arms[a]
    it = _items(t, a)
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
        usd=float(np.nansum(usd_rows)),
        usd_unpriced=int(np.isnan(usd_rows).sum()),
        usd_per_run=None,
        usd_per_run_low=None,
        usd_per_run_high=None,
        accuracy_per_usd=None,
        accuracy_per_usd_low=None,
        accuracy_per_usd_high=None,
        failures=int(((t.correct == 0) & lab).sum()),
        unlabelled_runs=int((rep & np.isnan(t.correct)).sum()),
        dev_accuracy=float(dev.y.mean()) if dev.y.size else None,
        **fails,
    )
    if it.idx.size == 0:
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
    if n_g < 2:
        return ArmReport(**out)
    if method == "cluster":
        se = _cluster_se(it.y, g, n_g)
        lo, hi = _t_interval(acc, se, n_g - 1, level, _UNIT)
        out.update(se=se, ci_low=lo, ci_high=hi)
        if cost is not None:
            c_lo, c_hi = _t_interval(cost, _cluster_se(it.cost, g, n_g), n_g - 1, level, _POSITIVE)
            out.update(usd_per_run_low=c_lo, usd_per_run_high=c_hi)
        if ratio is not None and cost is not None:
            z = (it.y - ratio * it.cost) / cost  # delta-method linearisation of acc / cost
            r_lo, r_hi = _t_interval(ratio, _cluster_se(z, g, n_g), n_g - 1, level, _POSITIVE)
            out.update(accuracy_per_usd_low=r_lo, accuracy_per_usd_high=r_hi)
    else:
        parts = np.column_stack([it.y, np.ones_like(it.y), np.nan_to_num(it.cost)])
        tot = _boot_totals(parts, g, n_g, _rng(seed, name), n_boot)
        se, lo, hi = _boot_summary(tot[:, 0] / tot[:, 1], level, _UNIT)
        out.update(se=se, ci_low=lo, ci_high=hi)
        if cost is not None:
            _, c_lo, c_hi = _boot_summary(tot[:, 2] / tot[:, 1], level, _POSITIVE)
            out.update(usd_per_run_low=c_lo, usd_per_run_high=c_hi)
        if ratio is not None:
            with np.errstate(divide="ignore", invalid="ignore"):
                _, r_lo, r_hi = _boot_summary(tot[:, 0] / tot[:, 2], level, _POSITIVE)
            out.update(accuracy_per_usd_low=r_lo, accuracy_per_usd_high=r_hi)
    return ArmReport(**out)


def _arm_code(t: _Table, name: str, field: str) -> int:
    try:
        return t.arms.index(name)
    except ValueError:
        raise ConfigError(
            field, name, f"is not an arm of this benchmark (arms: {', '.join(t.arms)})"
        ) from None


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
) -> Comparison:
    cache = {} if cache is None else cache
    ia = cache[a] if a in cache else cache.setdefault(a, _items(t, a))
    ib = cache[b] if b in cache else cache.setdefault(b, _items(t, b))
    common, pa, pb = np.intersect1d(ia.idx, ib.idx, assume_unique=True, return_indices=True)
    out: dict[str, Any] = dict(
        arm_a=t.arms[a],
        arm_b=t.arms[b],
        diff=None,
        se=None,
        ci_low=None,
        ci_high=None,
        p_value=None,
        p_holm=None,
        df=None,
        n_items=int(common.size),
        n_clusters=0,
        accuracy_a=None,
        accuracy_b=None,
        se_unpaired=None,
        level=level,
        method=method,
        descriptive=descriptive,
    )
    if common.size == 0:
        return Comparison(**out)
    ya, yb = ia.y[pa], ib.y[pb]
    d = ya - yb
    g, n_g = _compact(t.item_cluster[common])
    diff = float(d.mean())
    out.update(
        diff=diff, n_clusters=n_g, df=n_g - 1, accuracy_a=float(ya.mean()), accuracy_b=float(yb.mean())
    )
    if n_g < 2:
        return Comparison(**out)
    se_a, se_b = _cluster_se(ya, g, n_g), _cluster_se(yb, g, n_g)
    if se_a is not None and se_b is not None:
        out["se_unpaired"] = math.hypot(se_a, se_b)
    if method == "cluster":
        se = _cluster_se(d, g, n_g)
        lo, hi = _t_interval(diff, se, n_g - 1, level, _DIFF)
    else:
        parts = np.column_stack([d, np.ones_like(d)])
        tot = _boot_totals(parts, g, n_g, _rng(seed, t.arms[a], t.arms[b]), n_boot)
        se, lo, hi = _boot_summary(tot[:, 0] / tot[:, 1], level, _DIFF)
    out.update(se=se, ci_low=lo, ci_high=hi, p_value=_p_value(diff, se, n_g - 1))
    return Comparison(**out)


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


def _note(t: _Table, descriptive: bool, method: str, level: float, n_pairs: int) -> str:
    how = (
        "t interval on the clustered (CR1) standard error, clusters - 1 degrees of freedom"
        if method == "cluster"
        else "cluster bootstrap, percentile interval"
    )
    note = ""
    if descriptive:
        note = _DESCRIPTIVE.format(here=f" ({t.runs} here)") + " "
    note += (
        f"{level:.0%} intervals: {how}, clipped to [0, 1] (differences to [-1, 1]); accuracy is the "
        "mean over runs within each item, then over labelled items."
    )
    if n_pairs > 1:
        note += (
            f" Paired differences are on the items both arms ran; {n_pairs} pairs were compared, so read "
            "p_holm (Holm-adjusted) rather than p_value."
        )
    return note


def report(
    bench: Any,
    level: float = 0.95,
    method: Method = "cluster",
    descriptive: bool = False,
    seed: int = 0,
    n_boot: int = 2000,
    *,
    pairs: bool = True,
) -> Report:
    """An interval report: accuracy, clustered interval, variance components and cost per arm.

    Args:
        bench: a benchmark (``.rows``, ``.arms``, ``.runs``), a list of
            :class:`~hrbench.records.Row` (or dicts with the same keys), or a frame or mapping
            of the row columns (``bench.to_pandas()``).
        level: the intervals' level (0.95 for 95%).
        method: ``"cluster"`` for the clustered t interval, ``"bootstrap"`` for a seeded
            cluster bootstrap (percentile interval).
        descriptive: allow fewer than 5 runs per item. The report still has standard errors,
            intervals and paired comparisons over items, and every output labels it
            descriptive: run-to-run spread is not measured, so the intervals cover the sampling
            of items (and clusters) only. No effect with 5 or more runs.
        seed: the bootstrap's seed (each arm draws from ``(seed, arm name)``).
        n_boot: bootstrap resamples.
        pairs: also compare every pair of arms (:func:`compare_all`).

    Returns:
        A :class:`Report`.

    Raises:
        TooFewRunsError: fewer than 5 runs per item and ``descriptive`` is false.
        ConfigError: a bad ``level``, ``method`` or ``n_boot``, or a benchmark with no rows.

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
    t = _table(bench)
    desc = _too_few(t, descriptive, "report")
    arms = [_arm_report(t, a, level, method, seed, n_boot) for a in range(len(t.arms))]
    comps = _all_pairs(t, level, method, desc, seed, n_boot) if pairs and len(t.arms) > 1 else []
    return Report(
        arms=arms,
        comparisons=comps,
        level=float(level),
        method=method,
        descriptive=desc,
        runs=t.runs,
        n_boot=n_boot,
        seed=seed,
        note=_note(t, desc, method, level, len(comps)),
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
) -> Comparison:
    """The paired difference ``arm_a - arm_b`` on the items both arms ran.

    Each common item contributes the difference of its mean scores over runs; the mean of those
    differences gets the clustered standard error, a t interval with ``clusters - 1`` degrees of
    freedom and a two-sided p-value. Pairing removes the item difficulty both arms share, so
    the interval is far tighter than two separate intervals suggest (see ``se_unpaired``).

    Args:
        bench: as for :func:`report`.
        arm_a: the first arm's name (``diff`` is ``arm_a - arm_b``).
        arm_b: the second arm's name.
        level: the interval's level.
        method: ``"cluster"`` or ``"bootstrap"`` (the p-value then uses the bootstrap standard
            error in the t test).
        descriptive: allow fewer than 5 runs per item; the interval and p-value then cover
            the sampling of items only and the comparison is labelled ``descriptive``.
        seed: the bootstrap seed.
        n_boot: bootstrap resamples.

    Returns:
        A :class:`Comparison` (``p_holm`` is ``None``: use :func:`compare_all` for many pairs).

    Raises:
        TooFewRunsError: fewer than 5 runs per item and ``descriptive`` is false.
        ConfigError: an unknown arm, or a bad ``level``/``method``.

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
    a, b = _arm_code(t, arm_a, "arm_a"), _arm_code(t, arm_b, "arm_b")
    return _paired(t, a, b, level, method, desc, seed, n_boot)


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
    return _all_pairs(t, level, method, desc, seed, n_boot)


_TRADEOFF_RUNS = (1, 2, 3, 5, 10, 20)


def power(
    diff: float,
    alpha: float = 0.05,
    power: float = 0.8,
    *,
    var_within: float | None = None,
    var_between: float | None = None,
    runs: int | None = None,
    bench: Any = None,
    arm_a: str | None = None,
    arm_b: str | None = None,
    design_effect: float | None = None,
) -> PowerPlan:
    """Items needed to detect a difference ``diff`` between two arms in a paired comparison.

    Miller (2024) §5: with ``K`` runs per item the variance of one item's difference is
    ``var_between + var_within / K``, so a two-sided test at ``alpha`` has power ``power`` with
    ``n = ceil((z_{1-alpha/2} + z_{power})**2 * design_effect * (var_between + var_within / K)
    / diff**2)`` items (normal approximation; at least 2). More runs per item shrink only the
    second term: ``min_items`` is the floor as ``K`` grows.

    The variance components are stated (``var_within``, ``var_between``) or taken from
    ``bench``: with ``arm_a`` and ``arm_b`` (by default its first two arms) from their paired
    per-item differences (``var_within`` is the sum of the two arms' run-to-run variances,
    ``var_between`` the moment estimate of the true differences' variance, ``design_effect`` the
    ratio of the clustered to the independent variance of the mean difference, at least 1);
    with a single arm, as if comparing two uncorrelated arms like it (twice its components: a
    conservative plan). Stated values override the benchmark's.

    Args:
        diff: the difference in accuracy to detect (proportion units, e.g. 0.03).
        alpha: two-sided significance level.
        power: the probability of detecting ``diff`` when it is real.
        var_within: run-to-run variance of a per-run score difference (for two arms with
            run-to-run variances ``s_a**2`` and ``s_b**2``, their sum).
        var_between: variance across items of the true per-item difference.
        runs: runs per item (default: the benchmark's, else 5).
        bench: a benchmark (as for :func:`report`) to estimate the components from.
        arm_a: the first arm of ``bench`` to plan for (default: its first arm).
        arm_b: the second arm (default: the next arm; none when ``bench`` has one arm).
        design_effect: variance inflation from clusters (default: from ``bench``, else 1).

    Returns:
        A :class:`PowerPlan` with ``n_items`` and the runs-per-item trade-off.

    Raises:
        ConfigError: ``diff`` is 0, ``alpha``/``power`` are not in (0, 1), or the variance
            components are missing (no ``bench``) or negative.

    Example:
        >>> plan = power(0.05, var_within=0.2, var_between=0.04, runs=5)
        >>> plan.n_items, plan.min_items
        (252, 126)
    """
    if not diff or not math.isfinite(diff):
        raise ConfigError("diff", diff, "must be a non-zero difference in accuracy, e.g. 0.03")
    for field, v in (("alpha", alpha), ("power", power)):
        if not 0 < v < 1:
            raise ConfigError(field, v, "must be strictly between 0 and 1")
    source = "assumed"
    if bench is not None:
        t = _table(bench)
        if arm_a is None:
            arm_a = t.arms[0]
        if arm_b is None and arm_a != t.arms[-1] and len(t.arms) > 1:
            arm_b = next(a for a in t.arms if a != arm_a)
        bw, bb, deff = _bench_components(t, arm_a, arm_b)
        source = f"bench: {arm_a} vs {arm_b}" if arm_b else f"bench: {arm_a} (x2, as two uncorrelated arms)"
        var_within = bw if var_within is None else var_within
        var_between = bb if var_between is None else var_between
        design_effect = deff if design_effect is None else design_effect
        runs = t.runs if runs is None else runs
    if var_within is None or var_between is None:
        raise ConfigError(
            "var_within/var_between", (var_within, var_between), "state both, or pass bench= to estimate them"
        )
    if var_within < 0 or var_between < 0:
        raise ConfigError("var_within/var_between", (var_within, var_between), "must not be negative")
    runs = MIN_RUNS if runs is None else int(runs)
    if runs < 1:
        raise ConfigError("runs", runs, "must be at least 1")
    deff = 1.0 if design_effect is None else float(design_effect)
    z = float(_sps().norm.ppf(1 - alpha / 2) + _sps().norm.ppf(power))
    scale = z * z * deff / (diff * diff)

    def need(k: float) -> int:
        return max(2, math.ceil(scale * (var_between + var_within / k) - 1e-9))

    tradeoff = [
        PowerPoint(runs=k, n_items=need(k), total_runs=k * need(k)) for k in sorted({*_TRADEOFF_RUNS, runs})
    ]
    return PowerPlan(
        diff=abs(float(diff)),
        alpha=float(alpha),
        power=float(power),
        runs=runs,
        n_items=need(runs),
        var_within=float(var_within),
        var_between=float(var_between),
        design_effect=deff,
        min_items=need(math.inf),
        tradeoff=tradeoff,
        source=source,
    )


def _bench_components(t: _Table, arm_a: str, arm_b: str | None) -> tuple[float, float, float]:
    """(var_within, var_between, design_effect) of a paired difference, from a benchmark."""
    ia = _items(t, _arm_code(t, arm_a, "arm_a"))
    if arm_b is None:
        w, b = _components(ia)
        if w is None or b is None:
            raise ConfigError(
                "bench", t.runs, "needs at least 2 runs per item to estimate variance components"
            )
        return 2 * w, 2 * b, 1.0
    ib = _items(t, _arm_code(t, arm_b, "arm_b"))
    common, pa, pb = np.intersect1d(ia.idx, ib.idx, assume_unique=True, return_indices=True)
    ka, kb = ia.k[pa], ib.k[pb]
    has = (ka > 1) & (kb > 1)
    if common.size < 2 or not has.any():
        raise ConfigError("bench", t.runs, "needs at least 2 common items with 2 or more runs each")
    sa, sb = ia.s2[pa][has], ib.s2[pb][has]
    d = ia.y[pa] - ib.y[pb]
    within = float(np.mean(sa) + np.mean(sb))
    between = max(float(np.var(d, ddof=1)) - float(np.mean(sa / ka[has] + sb / kb[has])), 0.0)
    g, n_g = _compact(t.item_cluster[common])
    iid = float(np.var(d, ddof=1)) / d.size
    cl = _cluster_se(d, g, n_g)
    deff = max(1.0, (cl * cl) / iid) if (cl is not None and iid > 0) else 1.0
    return within, between, deff


def report_payload(
    bench_rows: Any,
    *,
    level: float = 0.95,
    method: Method = "cluster",
    descriptive: bool = False,
    seed: int = 0,
    n_boot: int = 2000,
    compare_pair: tuple[str, str] | None = None,
    plot: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """The report as a msgspec-encodable dict, for the daemon's ``report`` method and ``hrb report``.

    Args:
        bench_rows: a benchmark, its rows (:class:`~hrbench.records.Row` or dicts) or a frame.
        level: as for :func:`report`.
        method: as for :func:`report`.
        descriptive: as for :func:`report`.
        seed: as for :func:`report`.
        n_boot: as for :func:`report`.
        compare_pair: ``(arm_a, arm_b)`` to put only that paired comparison in
            ``comparisons`` (``hrb report --compare A B``); by default all pairs.
        plot: a path to write the accuracy-vs-USD-per-run PNG to (:meth:`Report.plot`;
            ``hrb report --plot out.png``). Give an absolute path: through the daemon a
            relative one is taken from the daemon's working directory. The file is overwritten.

    Returns:
        The :class:`Report`'s fields as builtins, plus ``text`` (``str(report)``) and, when
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
    rep = report(bench_rows, level, method, descriptive, seed, n_boot, pairs=compare_pair is None)
    if compare_pair is not None:
        rep.comparisons = [
            compare(bench_rows, compare_pair[0], compare_pair[1], level, method, descriptive, seed, n_boot)
        ]
    out = rep.to_dict()
    out["text"] = str(rep)
    if plot is not None:
        if not isinstance(plot, (str, os.PathLike)) or not os.fspath(plot):
            raise ConfigError("plot", plot, "must be the path of the PNG to write")
        where = os.path.abspath(os.fspath(plot))
        try:
            rep.plot(where)
        except ImportError as e:
            raise ConfigError("plot", plot, f"cannot be drawn: {e}") from None
        except OSError as e:
            raise ConfigError("plot", plot, f"cannot be written: {e.strerror or e}") from None
        out["plot"] = where
        out["text"] += f"\nPlot: {where}"
    return out


# --------------------------------------------------------------------------------------------
# Text
# --------------------------------------------------------------------------------------------


def _f(v: float | None, digits: int = 3) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def _ci(lo: float | None, hi: float | None, digits: int = 3) -> str:
    return "-" if lo is None or hi is None else f"[{lo:.{digits}f}, {hi:.{digits}f}]"


def _p(v: float | None) -> str:
    if v is None:
        return "-"
    return "<0.001" if v < 0.001 else f"{v:.3f}"


def _grid(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    fmt = [
        f"{h:<{w}}" if i == 0 else f"{h:>{w}}" for i, (h, w) in enumerate(zip(header, widths, strict=True))
    ]
    out = [" " + "  ".join(fmt).rstrip()]
    for r in rows:
        cells = [
            f"{c:<{w}}" if i == 0 else f"{c:>{w}}" for i, (c, w) in enumerate(zip(r, widths, strict=True))
        ]
        out.append(" " + "  ".join(cells).rstrip())
    return out


def _render(rep: Report) -> str:
    n_items = max((a.n_items for a in rep.arms), default=0)
    n_clusters = max((a.n_clusters for a in rep.arms), default=0)
    head = (
        f"<hrbench report> {len(rep.arms)} arm(s) x {n_items} item(s) in {n_clusters} cluster(s) x "
        f"{rep.runs} run(s); "
    )
    how = "clustered t interval" if rep.method == "cluster" else f"cluster bootstrap ({rep.n_boot} resamples)"
    head += f"{rep.level:.0%} {how}"
    if rep.descriptive:
        head += f"; DESCRIPTIVE (fewer than {MIN_RUNS} runs: intervals over items only)"
    pct = f"{rep.level:.0%} CI"
    header = ["arm", "accuracy", "se", pct, "items", "clusters", "runs", "failures"]
    rows = [
        [
            a.arm,
            _f(a.accuracy),
            _f(a.se),
            _ci(a.ci_low, a.ci_high),
            str(a.n_items),
            f"{a.n_clusters}!" if a.few_clusters else str(a.n_clusters),
            str(a.n_runs),
            str(a.failures),
        ]
        for a in rep.arms
    ]
    cost_header = ["arm", "var_within", "var_between", "usd", "usd/run", pct, "acc/usd", pct]
    cost_rows = [
        [
            a.arm,
            _f(a.var_within, 4),
            _f(a.var_between, 4),
            f"{a.usd:.4f}" + ("*" if a.usd_unpriced else ""),
            _f(a.usd_per_run, 5),
            _ci(a.usd_per_run_low, a.usd_per_run_high, 5),
            _f(a.accuracy_per_usd, 1),
            _ci(a.accuracy_per_usd_low, a.accuracy_per_usd_high, 1),
        ]
        for a in rep.arms
    ]
    lines = [head, *_grid(header, rows)]
    if any(a.few_clusters for a in rep.arms):
        lines.append(f"  ! {FEW_CLUSTERS_NOTE}")
    lines.append("Variance components (score units squared) and cost:")
    lines += _grid(cost_header, cost_rows)
    if any(a.usd_unpriced for a in rep.arms):
        lines.append("  * some runs have no price; usd counts them as 0 and acc/usd is not given.")
    kinds = [k for k in FAILURE_KINDS if any(getattr(a, k) for a in rep.arms)]
    if kinds:
        lines.append(
            "  failures by kind: "
            + "; ".join(
                f"{a.arm}: " + ", ".join(f"{k} {getattr(a, k)}" for k in kinds if getattr(a, k))
                for a in rep.arms
            )
        )
    if rep.comparisons:
        lines.append("Paired differences (arm_a - arm_b, on the items both ran):")
        ch = ["pair", "diff", "se", pct, "p", "p_holm", "items", "se_unpaired"]
        crow = [
            [
                f"{c.arm_a} - {c.arm_b}",
                _f(c.diff),
                _f(c.se),
                _ci(c.ci_low, c.ci_high),
                _p(c.p_value),
                _p(c.p_holm),
                str(c.n_items),
                _f(c.se_unpaired),
            ]
            for c in rep.comparisons
        ]
        lines += _grid(ch, crow)
    lines += textwrap.wrap(rep.note, width=100, initial_indent="  ", subsequent_indent="  ")
    return "\n".join(lines)
