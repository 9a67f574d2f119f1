"""Rows as integer-coded numpy columns, per-item summaries, and the guards every call applies."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from hrbench._util.messages import not_an_arm
from hrbench._util.warn import warn_at_caller
from hrbench.errors import ConfigError, IntervalMethodWarning, TooFewRunsError
from hrbench.records import FAILURE_KINDS

MIN_RUNS = 5
"""Runs per item below which an interval report is refused unless labelled descriptive (seed 002)."""

_DESCRIPTIVE = (
    "Descriptive: fewer than 5 runs per item{here}, so run-to-run spread is not measured; "
    "intervals cover the sampling of items (and clusters) only."
)
DESCRIPTIVE_NOTE = _DESCRIPTIVE.format(here="")
"""Opens the ``note`` of a descriptive report (with the runs per item after "per item")."""

Method = Literal["cluster", "bootstrap"]

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
    runs: int  # the fewest runs of any arm x item cell
    max_runs: int  # the most
    fewest: str  # "arm 'a', item 'q3'": a cell with the fewest runs (for messages)
    most: str  # a cell with the most
    clusters: list[Any] = field(default_factory=list)  # cluster code -> the cluster's id


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
    arms, items = list(arm_codes), list(item_codes)

    def where(i: int) -> str:
        return f"row {i} (arm {arms[arm[i]]!r}, item {items[item[i]]!r}, run {int(run[i])})"

    cell = arm * len(items) + item
    per_cell = np.bincount(cell)
    _no_repeated_runs(cell, run, where)
    present = np.flatnonzero(per_cell)
    lo, hi = present[np.argmin(per_cell[present])], present[np.argmax(per_cell[present])]

    def name(c: int) -> str:
        return f"arm {arms[c // len(items)]!r}, item {items[c % len(items)]!r}"

    return _Table(
        arms=arms,
        arm=arm,
        item=item,
        item_cluster=item_cluster,
        n_items=len(item_codes),
        run=run,
        correct=_correct_column(cols["correct"], where),
        usd=_float_column(cols["usd"]),
        reportable=reportable,
        failure=failure,
        runs=int(per_cell[lo]),
        max_runs=int(per_cell[hi]),
        fewest=name(int(lo)),
        most=name(int(hi)),
        clusters=list(cluster_codes),
    )


def _no_repeated_runs(cell: np.ndarray, run: np.ndarray, where: Any) -> None:
    """Refuse two rows with the same arm, item and run number: a run is counted once."""
    span = int(run.max() - run.min()) + 1
    if int(cell.max() + 1) * span < 2**62:
        key = cell * span + (run - run.min())
    else:  # pragma: no cover - run numbers spread over more than 2**40
        key = np.unique(np.column_stack([cell, run]), axis=0, return_inverse=True)[1].ravel()
    uniq, first, counts = np.unique(key, return_index=True, return_counts=True)
    if uniq.size < key.size:
        dup = int(first[np.argmax(counts > 1)])
        raise ConfigError("run", int(run[dup]), f"appears more than once at {where(dup)}: a run is one row")


_CORRECT_TYPES = (bool, int, float, np.bool_, np.integer, np.floating)


def _correct_column(col: Any, where: Any) -> np.ndarray:
    """``correct`` as floats (1, 0, nan for ``None``), refusing anything else.

    Rule (seed 002 has ``correct`` TRUE, FALSE or NA): a value that is not a
    boolean, 0 or 1, or ``None``/NaN (an item with no label) raises :class:`ConfigError` naming
    the row, its arm, item and run, instead of being averaged as a score (2.0) or failing with
    a bare ``ValueError`` (a string).
    """
    if isinstance(col, np.ndarray) and col.dtype == bool:
        return col.astype(float)
    values = [None if type(v).__name__ == "NAType" else v for v in _tolist(col)]  # pandas.NA
    for i, v in enumerate(values):
        if not (v is None or isinstance(v, _CORRECT_TYPES)):
            raise ConfigError("correct", v, f"must be True/False (or 1/0), or None, at {where(i)}")
    out = np.asarray(values, dtype=float)
    bad = np.flatnonzero(~(np.isnan(out) | (out == 0.0) | (out == 1.0)))
    if bad.size:
        i = int(bad[0])
        raise ConfigError("correct", values[i], f"must be True/False (or 1/0), or None, at {where(i)}")
    return out


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


def _check(level: float, method: str, n_boot: int) -> None:
    if not (isinstance(level, (int, float)) and 0 < level < 1):
        raise ConfigError("level", level, "must be a number between 0 and 1, e.g. 0.95")
    if method not in ("cluster", "bootstrap"):
        raise ConfigError("method", method, "must be 'cluster' or 'bootstrap'")
    if not (isinstance(n_boot, int) and n_boot >= 100):
        raise ConfigError("n_boot", n_boot, "must be a whole number, at least 100")


BOOTSTRAP_MIN_CLUSTERS = 30
"""The fewest clusters on which ``method="bootstrap"`` is asked without :class:`~hrbench.errors.IntervalMethodWarning`."""


def _warn_method(t: _Table, method: str, what: str) -> None:
    """Warn :class:`~hrbench.errors.IntervalMethodWarning` when ``method`` may not hold its level on ``t``.

    ``"bootstrap"`` on 2 to 29 clusters: in ``bench/coverage.py`` its 95% intervals of an arm's
    accuracy and of a paired difference covered 0.82-0.84 with 5 clusters, 0.86-0.87 with 8,
    0.89 with 10 and 0.92 with 20, where the default method covered 0.93-0.96.
    """
    note = bootstrap_note(method, int(np.unique(t.item_cluster).size))
    if note is not None:
        warn_at_caller(f"{what}: {note}", IntervalMethodWarning)


def bootstrap_note(method: str, n_clusters: int) -> str | None:
    """Why ``method`` may not hold its level on ``n_clusters`` clusters (``None``: it does).

    The same words are the library's warning and the report's note (a report made through the
    daemon warns nothing: its notes say it).

    Example:
        >>> bootstrap_note("bootstrap", 40) is None, bootstrap_note("bootstrap", 5)[:32]
        (True, 'method="bootstrap" on 5 clusters')
    """
    if method != "bootstrap" or not 2 <= n_clusters < BOOTSTRAP_MIN_CLUSTERS:
        return None
    return (
        f'method="bootstrap" on {n_clusters} clusters: with fewer than {BOOTSTRAP_MIN_CLUSTERS} a cluster '
        "bootstrap's intervals are too narrow (95% intervals covered 0.82-0.92 with 5-20 clusters); leave "
        'method="cluster", which holds its level there'
    )


def _too_few(t: _Table, descriptive: bool, what: str) -> bool:
    """Apply the run-count rule; return whether to label the report descriptive.

    Seed 002: fewer than 5 runs cannot tell run-to-run spread from differences between arms,
    and interval reports refuse such a benchmark unless it is labelled descriptive. The rule is
    checked on every arm x item cell (rows counted, not run numbers): one arm with 1 run beside
    one with 5, or items with 3 runs beside items with 5, are refused too. Rule:
    unequal runs across cells are also refused unless ``descriptive`` (items with
    fewer runs carry more run noise into the mean of item means, unaccounted for).

    Raises:
        TooFewRunsError: a cell has fewer than 5 runs, or cells differ, and not ``descriptive``.
    """
    unequal = t.max_runs != t.runs
    if (t.runs < MIN_RUNS or unequal) and not descriptive:
        if t.runs < MIN_RUNS:
            why = (
                f"{t.fewest} has {t.runs} run(s); an interval report needs at least {MIN_RUNS} in "
                "every arm x item cell (with fewer, run-to-run spread cannot be told from differences "
                "between arms)."
            )
        else:
            why = (
                f"runs differ across arm x item cells: {t.runs} ({t.fewest}) to {t.max_runs} ({t.most}); "
                "an interval report needs the same runs in every cell."
            )
        raise TooFewRunsError(
            f"{what}: {why} For a report labelled descriptive, whose intervals cover the sampling of "
            "items only, pass descriptive=True (hrb report --descriptive).",
            runs=t.runs,
        )
    return descriptive and (t.runs < MIN_RUNS or unequal)


def _descriptive_note(t: _Table) -> str:
    """The opening of a descriptive report's note, with the runs seen."""
    if t.runs < MIN_RUNS:
        here = f" ({t.runs} here)" if t.runs == t.max_runs else f" ({t.runs}-{t.max_runs} here)"
        return _DESCRIPTIVE.format(here=here)
    return (
        f"Descriptive: unequal runs per item ({t.runs}-{t.max_runs} here), so each item's mean carries "
        "its own share of run noise; intervals cover the sampling of items (and clusters) only."
    )


def _arm_code(t: _Table, name: str, field: str) -> int:
    try:
        return t.arms.index(name)
    except ValueError:
        raise not_an_arm(field, name, t.arms) from None
