"""Browsing stored benchmarks (``hrb view``): read-only, built by ``hrbench.browse``."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import Meta, Struct, field

from hrbench_client.protocol._base import _Spec
from hrbench_client.protocol.records import Row, Step
from hrbench_client.protocol.stored import BenchmarkListing

__all__ = [
    "ArmView",
    "BenchmarkCellParams",
    "BenchmarkCellResult",
    "BenchmarkCompareParams",
    "BenchmarkCompareResult",
    "BenchmarkMatrixParams",
    "BenchmarkMatrixResult",
    "BenchmarkViewParams",
    "BenchmarkViewResult",
    "CellRun",
    "Difference",
    "Level",
    "MatrixCell",
    "MatrixItem",
]


Level = Annotated[float, Meta(gt=0, lt=1, description="confidence level of the intervals, e.g. 0.95")]


class BenchmarkViewParams(_Spec):
    """Params of ``benchmark/view``: one benchmark's arm table and paired differences.

    ``against`` names the arm the others are compared with (default: the first arm).
    """

    id: str
    against: str | None = None
    level: Level = 0.95
    method: Literal["cluster", "bootstrap"] = "cluster"


class ArmView(Struct, kw_only=True):
    """One arm's line of the arm table: the report's numbers plus tokens and seconds.

    ``accuracy``/``ci_low``/``ci_high``/``se`` as in ``hrbench.stats.ArmReport``; ``failures``
    counts labelled reportable runs by failure kind (kinds with no run left out); ``usd`` in US
    dollars (``None`` when a run had no price, as in the report), ``usd_list`` the same at list
    price (each reply at what it cost when first paid: cache and recording hits included);
    ``usd_per_run`` (with its interval) and ``accuracy_per_usd`` are at that list price, so
    arms compare by cost whatever the cache held. ``seconds`` wall-clock summed over the arm's
    rows, tokens summed over its rows; ``usd_from_log`` the reportable runs whose tokens and list
    price come from another tool's log (an imported arm), not paid here.
    ``metrics``: the benchmark metrics' means from the stored summary (the spec's ``metrics``,
    e.g. SQuAD EM and F1; no interval; empty until the benchmark ends or without metrics).
    ``pass_k`` (the chance that ``pass_k_runs`` runs of an item are all right) and ``flip_rate``
    (that two runs of an item disagree), each with its clustered interval, as in the report;
    ``None`` without a labelled run (the flip rate: with fewer than 2 runs per item).
    ``unscored_note``: set when the accuracy and its interval rest on runs never scored (stopped
    by the budget or ended in an error, counted wrong; ``hrbench.stats.ArmReport.unscored_note``).
    """

    arm: str
    accuracy: float | None
    se: float | None
    ci_low: float | None
    ci_high: float | None
    n_items: int
    n_clusters: int
    runs: int
    n_runs: int
    failures: dict[str, int]
    tokens_in: int
    tokens_out: int
    usd: float | None
    usd_unpriced: int
    usd_per_run: float | None
    usd_per_run_low: float | None
    usd_per_run_high: float | None
    seconds: float
    dev_accuracy: float | None = None
    metrics: dict[str, float | None] = field(default_factory=dict)
    usd_list: float | None = None
    accuracy_per_usd: float | None = None
    accuracy_per_usd_low: float | None = None
    accuracy_per_usd_high: float | None = None
    pass_k: float | None = None
    pass_k_low: float | None = None
    pass_k_high: float | None = None
    pass_k_runs: int | None = None
    flip_rate: float | None = None
    flip_rate_low: float | None = None
    flip_rate_high: float | None = None
    usd_from_log: int = 0
    unscored_note: str | None = None


class Difference(Struct, kw_only=True):
    """A paired difference ``diff = arm - against`` on the items both ran.

    ``p_holm`` is Holm-adjusted over the pairs compared together (``None`` for a single one);
    ``descriptive``: fewer than 5 runs per item, the interval covers the sampling of items only;
    ``note``: how to read it, or why there is no interval (``hrbench.stats.Comparison.note``);
    ``unscored_note``: set when an arm had runs never scored (stopped by the budget or ended in an
    error): the difference is over the items where both arms have every run scored only.
    """

    arm: str
    against: str
    diff: float | None
    se: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    p_holm: float | None
    n_items: int
    n_clusters: int
    accuracy_a: float | None
    accuracy_b: float | None
    level: float
    descriptive: bool
    note: str | None = None
    unscored_note: str | None = None


class BenchmarkViewResult(Struct, kw_only=True):
    """One benchmark: header, arm table, differences against ``against``, the full report payload.

    ``report`` is ``hrbench.stats.report_payload``'s dict with ``descriptive=True`` (``None``
    while the benchmark has no rows); ``note`` and ``text`` are its note and text.
    """

    benchmark: BenchmarkListing
    arms: list[ArmView]
    against: str | None
    differences: list[Difference]
    descriptive: bool
    level: float
    method: str
    note: str
    text: str
    report: dict[str, Any] | None


class BenchmarkMatrixParams(_Spec):
    """Params of ``benchmark/matrix``: the item x arm matrix, filtered and paged.

    ``disagree`` keeps the items where the arms' mean correctness over runs differs;
    ``failure_kind`` those where some run failed with that kind. Of a benchmark that stopped
    when sure, only the items its report counts are shown unless ``cancelled`` keeps the items
    of the clusters cancelled at the stop too (their runs are kept and paid, not reported).
    """

    id: str
    cluster: str | None = None
    failure_kind: str | None = None
    split: str | None = None
    disagree: bool = False
    offset: Annotated[int, Meta(ge=0)] = 0
    limit: Annotated[int, Meta(ge=0)] | None = None
    cancelled: bool = False


class MatrixCell(Struct, kw_only=True):
    """One arm on one item: mean correctness over runs (``None`` if unlabelled), runs, kinds."""

    mean: float | None
    n: int
    failure_kinds: dict[str, int]


class MatrixItem(Struct, kw_only=True):
    """One item's line of the matrix; ``cells`` align with the result's ``arms`` (``None``: not run).

    ``reported`` is ``False`` only for an item of a cluster cancelled at a stop (shown when
    asked for with ``cancelled``): its runs are not in the report.
    """

    item: str
    cluster: str
    split: str
    disagree: bool
    cells: list[MatrixCell | None]
    reported: bool = True


class BenchmarkMatrixResult(Struct, kw_only=True):
    """The matrix page, ``n_items`` matching of ``n_items_total``, and the filters' choices.

    ``n_items_cancelled``: of a benchmark that stopped when sure, the items of the clusters
    cancelled at the stop, left out (not in ``n_items_total``) unless asked for with
    ``cancelled``; 0 otherwise.
    """

    arms: list[str]
    items: list[MatrixItem]
    n_items: int
    n_items_total: int
    n_items_cancelled: int = 0
    clusters: list[str]
    splits: list[str]
    failure_kinds: list[str]


class BenchmarkCellParams(_Spec):
    """Params of ``benchmark/cell``: every run of one arm on one item, with traces."""

    id: str
    item: str
    arm: str


class CellRun(Struct, kw_only=True):
    """One run and its trace (each request and reply, finish reason, usage, source)."""

    row: Row
    trace: list[Step]


class BenchmarkCellResult(Struct, kw_only=True):
    """One cell: the item's payload and label, every run, and the ``hrb rows`` line printing it."""

    benchmark: BenchmarkListing
    item: str
    arm: str
    cluster: str
    split: str
    payload: Any = None
    label: Any = None
    runs: list[CellRun]
    command: str


class BenchmarkCompareParams(_Spec):
    """Params of ``benchmark/compare``: two benchmarks on the same reference (hash), per arm."""

    a: str
    b: str
    level: Level = 0.95
    method: Literal["cluster", "bootstrap"] = "cluster"


class BenchmarkCompareResult(Struct, kw_only=True):
    """Per arm name in both benchmarks, the paired difference ``b - a`` (Holm over the arms)."""

    a: BenchmarkListing
    b: BenchmarkListing
    reference_hash: str
    differences: list[Difference]
    only_a: list[str]
    only_b: list[str]
    descriptive: bool
