"""One benchmark's page and the comparison of two benchmarks: the report's tables, shaped for the wire."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from hrbench.errors import ConfigError
from hrbench.records import Row
from hrbench.results.browse._cells import _price_traces
from hrbench.results.browse._listing import _head, _record, _summary
from hrbench.store import Store

__all__ = ["benchmark_compare", "benchmark_view", "judged_rows"]


def judged_rows(store: Store, rec: dict[str, Any], rows: list[Row], traces: Any = None) -> Any:
    """A stored benchmark's rows as its report reads them: a judged one's with what its judge section needs.

    A benchmark whose spec scored with ``scorer = "judge"`` comes back as a
    :class:`~hrbench.stats.JudgedRows` (its rows, its traces, its reference and the
    judge's pass mark), so :func:`hrbench.stats.report` adds the judge's agreement with the
    exact scorer; any other benchmark's rows come back as they are (nothing more is read).

    Args:
        store: the store holding the benchmark.
        rec: its record (:meth:`Store.benchmark_get`).
        rows: its rows.
        traces: its traces with the replies' text (:meth:`Store.traces_get`); ``None``: read
            here, and only for a judged benchmark.

    Returns:
        A :class:`~hrbench.stats.JudgedRows`, or ``rows``.

    Example:
        >>> s = Store(":memory:")
        >>> rows = [Row(cluster="c", item="q1", arm="a", run=1, split="test", correct=True,
        ...             outcome=None, failure_kind=None)]
        >>> judged_rows(s, {"id": "b1", "spec": {"params": {"scorer": "exact"}}}, rows) is rows
        True
    """
    from hrbench.stats import JudgedRows

    params = (rec.get("spec") or {}).get("params") or {}
    settings = params.get("scorer_settings") or {}
    if params.get("scorer") != "judge" or not rec.get("reference_hash"):
        return rows
    reference = store.reference_get(rec["reference_hash"])
    if reference is None:
        return rows
    mark = settings.get("pass_mark", 7)
    return JudgedRows(
        rows=rows,
        traces=store.traces_get(rec["id"]) if traces is None else traces,
        reference=reference,
        pass_mark=mark if isinstance(mark, int) and not isinstance(mark, bool) else 7,
        scorer_name=str(settings.get("name") or f"judge_{settings.get('kind') or 'correct'}"),
    )


def _flip(c: dict[str, Any]) -> dict[str, Any]:
    """``arm_a - arm_b`` as ``arm_b - arm_a``: the same test, the interval mirrored."""
    neg = {k: None if c[k] is None else 0.0 - c[k] for k in ("diff", "ci_low", "ci_high")}  # no -0.0
    return {
        **c,
        "arm_a": c["arm_b"],
        "arm_b": c["arm_a"],
        "accuracy_a": c["accuracy_b"],
        "accuracy_b": c["accuracy_a"],
        "diff": neg["diff"],
        "ci_low": neg["ci_high"],
        "ci_high": neg["ci_low"],
    }


def _difference(c: dict[str, Any]) -> dict[str, Any]:
    return {
        "arm": c["arm_a"],
        "against": c["arm_b"],
        **{
            k: c[k]
            for k in (
                "diff",
                "se",
                "ci_low",
                "ci_high",
                "p_value",
                "p_holm",
                "n_items",
                "n_clusters",
                "accuracy_a",
                "accuracy_b",
                "level",
                "descriptive",
                "note",
                "unscored_note",
            )
        },
    }


_ARM_FIELDS = (
    "arm",
    "accuracy",
    "se",
    "ci_low",
    "ci_high",
    "n_items",
    "n_clusters",
    "runs",
    "n_runs",
    "usd",
    "usd_list",
    "usd_unpriced",
    "usd_per_run",
    "usd_per_run_low",
    "usd_per_run_high",
    "accuracy_per_usd",
    "accuracy_per_usd_low",
    "accuracy_per_usd_high",
    "dev_accuracy",
    "pass_k",
    "pass_k_low",
    "pass_k_high",
    "pass_k_runs",
    "flip_rate",
    "flip_rate_low",
    "flip_rate_high",
    "usd_from_log",
    "unscored_note",
)
"""What a page's arm table keeps of each arm of the report."""

_FAILURE_KINDS = (
    "wrong",
    "not_in_document",
    "parse_failure",
    "refusal",
    "error",
    "budget_stop",
    "reasoning_exhausted",
)


def _arm_table(
    arms: list[dict[str, Any]], rows: list[Row], summary: list[dict[str, Any]] | None
) -> list[dict[str, Any]]:
    """The page's arm table: per arm its report numbers, failures, metrics, tokens and seconds.

    The metrics are the stored summary's means; tokens in/out and seconds are summed over the
    arm's rows.
    """
    extra: dict[str, dict[str, Any]] = {
        a["arm"]: {"tokens_in": 0, "tokens_out": 0, "seconds": 0.0} for a in arms
    }
    for r in rows:
        e = extra[r.arm]
        e["tokens_in"] += r.tokens_in
        e["tokens_out"] += r.tokens_out
        e["seconds"] += r.seconds
    metrics = {s["arm"]: s.get("metrics") or {} for s in summary or []}
    return [
        {
            **{k: a.get(k, 0) if k == "usd_from_log" else a[k] for k in _ARM_FIELDS},
            "failures": {k: a.get(k, 0) for k in _FAILURE_KINDS if a.get(k, 0)},
            "metrics": metrics.get(a["arm"], {}),
            **extra[a["arm"]],
        }
        for a in arms
    ]


def _differences(comparisons: list[dict[str, Any]], against: str, names: list[str]) -> list[dict[str, Any]]:
    """``arm - against`` for every other arm, from the report's all-pairs comparisons, in arm order."""
    out = []
    for c in comparisons:
        if c["arm_b"] == against:
            out.append(_difference(c))
        elif c["arm_a"] == against:
            out.append(_difference(_flip(c)))
    order = {n: i for i, n in enumerate(names)}
    out.sort(key=lambda d: order[d["arm"]])
    return out


def benchmark_view(
    store: Store,
    benchmark_id: str,
    against: str | None = None,
    *,
    level: float = 0.95,
    method: str = "cluster",
    running: Collection[str] = (),
) -> dict[str, Any]:
    """One benchmark's page: its header, the arm table and paired differences against one arm.

    Args:
        store: the store to read.
        benchmark_id: the benchmark.
        against: the arm the others are compared with; ``None`` for the first arm.
        level: the intervals' level, as for :func:`hrbench.stats.report`.
        method: ``"cluster"`` or ``"bootstrap"``, as for :func:`hrbench.stats.report`.
        running: as for :func:`benchmark_list`.

    Returns:
        A ``BenchmarkViewResult`` dict: ``benchmark`` (its summary), ``arms`` (per arm the
        report's accuracy, interval, runs, failures by kind, USD, plus tokens in/out and seconds
        summed over its rows), ``against``, ``differences`` (``arm - against`` for every other
        arm, Holm-adjusted as in the report), ``descriptive``, ``note``, ``text`` and the full
        ``report`` payload; ``metrics`` per arm are the benchmark metrics' means from the stored
        summary (no interval). A benchmark with no rows yet has empty tables and ``report`` None.

    Raises:
        NotFound: no benchmark has that id.
        ConfigError: ``against`` is not an arm of the benchmark, or a bad ``level``/``method``.

    Example:
        >>> s = Store(":memory:")
        >>> rows = [Row(cluster="c", item=f"q{i}", arm=a, run=1, split="test", correct=(i < 2 or a == "b"),
        ...             outcome=None, failure_kind=None if (i < 2 or a == "b") else "wrong")
        ...         for i in range(4) for a in ("a", "b")]
        >>> s.benchmark_put("b1", {"params": {"runs": 1}, "arms": [{"name": "a"}, {"name": "b"}]}, "h")
        >>> s.rows_put("b1", list(enumerate(rows)))
        >>> v = benchmark_view(s, "b1")
        >>> v["descriptive"], [(a["arm"], a["accuracy"], a["failures"]) for a in v["arms"]]
        (True, [('a', 0.5, {'wrong': 2}), ('b', 1.0, {})])
        >>> [(d["arm"], d["against"], d["diff"]) for d in v["differences"]]
        [('b', 'a', 0.5)]
    """
    from hrbench.stats import report

    rec = _record(store, benchmark_id)
    rows = store.rows_get(benchmark_id)
    head = _summary(_head(store, rec, len(rows)), running, store, rows)
    out: dict[str, Any] = {
        "benchmark": head,
        "arms": [],
        "against": against,
        "differences": [],
        "descriptive": (head["runs"] or 0) < 5,
        "level": level,
        "method": method,
        "note": "no rows yet",
        "text": "",
        "report": None,
    }
    if not rows:
        return out
    traces = _price_traces(store, benchmark_id)  # the list price per arm
    judged = judged_rows(store, rec, rows)  # a judge's benchmark: its agreement section too
    grades = store.grades_get(benchmark_id) or None  # human grades: the report's PPI++ section
    rep = report(
        judged,
        level,
        method,  # type: ignore[arg-type]
        True,
        traces=traces,
        warn=False,
        stop=rec["spec"].get("stop"),
        grades=grades,
    )
    names = [a.arm for a in rep.arms]
    if against is None:
        against = names[0]
    elif against not in names:
        raise ConfigError("against", against, f"not an arm of benchmark {benchmark_id} (arms: {names})")
    payload = rep.to_dict()
    payload["text"] = str(rep)
    out["arms"] = _arm_table(payload["arms"], rows, rec.get("summary"))
    out["differences"] = _differences(payload["comparisons"], against, names)
    out.update(
        against=against, descriptive=rep.descriptive, note=rep.note, text=payload["text"], report=payload
    )
    return out


def _holm(p: list[float | None]) -> list[float | None]:
    known = sorted((v, i) for i, v in enumerate(p) if v is not None)
    out: list[float | None] = [None] * len(p)
    run = 0.0
    for rank, (v, i) in enumerate(known):
        run = max(run, min(1.0, (len(known) - rank) * v))
        out[i] = run
    return out


def benchmark_compare(
    store: Store,
    a: str,
    b: str,
    *,
    level: float = 0.95,
    method: str = "cluster",
    running: Collection[str] = (),
) -> dict[str, Any]:
    """Two benchmarks on the same reference: per arm they share, the paired difference ``b - a``.

    Each arm name present in both is compared item by item (:func:`hrbench.stats.compare` on
    the union of the two benchmarks' rows, the arm renamed ``a:NAME`` and ``b:NAME``), so
    ``diff > 0`` means the arm scored higher in ``b``. The p-values are Holm-adjusted over the
    arms compared (``p_holm``). Descriptive when either benchmark has fewer than 5 runs.

    Args:
        store: the store to read.
        a: the first benchmark's id.
        b: the second benchmark's id.
        level: as for :func:`hrbench.stats.compare`.
        method: as for :func:`hrbench.stats.compare`.
        running: as for :func:`benchmark_list`.

    Returns:
        A ``BenchmarkCompareResult`` dict: ``a`` and ``b`` (their summaries), ``reference_hash``,
        ``differences`` (one per shared arm; ``arm`` and ``against`` are the arm's name),
        ``only_a`` and ``only_b`` (arms in one benchmark only) and ``descriptive``.

    Raises:
        NotFound: no benchmark has id ``a`` or ``b``.
        ConfigError: the two benchmarks do not share a reference hash.

    Example:
        >>> s = Store(":memory:")
        >>> for bid, right in (("b1", 2), ("b2", 3)):
        ...     s.benchmark_put(bid, {"params": {"runs": 1}, "arms": [{"name": "ask"}]}, "h")
        ...     s.rows_put(bid, [(i, Row(cluster=f"c{i}", item=f"q{i}", arm="ask", run=1, split="test",
        ...                              correct=i < right, outcome=None, failure_kind=None))
        ...                      for i in range(4)])
        >>> d = benchmark_compare(s, "b1", "b2")["differences"][0]
        >>> d["arm"], d["diff"], d["n_items"]
        ('ask', 0.25, 4)
    """
    from msgspec.structs import replace

    from hrbench.stats import compare

    rec_a, rec_b = _record(store, a, "a"), _record(store, b, "b")
    if rec_a.get("reference_hash") != rec_b.get("reference_hash"):
        raise ConfigError(
            "b",
            b,
            f"does not share the reference of benchmark {a} (reference hashes "
            f"{(rec_a.get('reference_hash') or '')[:12]} and {(rec_b.get('reference_hash') or '')[:12]})",
        )
    rows_a, rows_b = store.rows_get(a), store.rows_get(b)
    arms_a = list(dict.fromkeys(r.arm for r in rows_a))
    arms_b = list(dict.fromkeys(r.arm for r in rows_b))
    shared = [n for n in arms_a if n in arms_b]
    both = [replace(r, arm=f"a:{r.arm}") for r in rows_a] + [replace(r, arm=f"b:{r.arm}") for r in rows_b]
    diffs = []
    for name in shared:
        # the two arms' rows only: this pair's Holm family is the shared arms' pairs, adjusted below
        pair = [r for r in both if r.arm in (f"a:{name}", f"b:{name}")]
        c = compare(pair, f"b:{name}", f"a:{name}", level=level, method=method, descriptive=True, warn=False)  # type: ignore[arg-type]
        d = _difference({k: getattr(c, k) for k in c.__struct_fields__} | {"arm_a": name, "arm_b": name})
        diffs.append(d)
    for d, adj in zip(diffs, _holm([d["p_value"] for d in diffs]), strict=True):
        d["p_holm"] = adj if len(diffs) > 1 else None
    return {
        "a": _summary(_head(store, rec_a, len(rows_a)), running, store, rows_a),
        "b": _summary(_head(store, rec_b, len(rows_b)), running, store, rows_b),
        "reference_hash": rec_a.get("reference_hash") or "",
        "differences": diffs,
        "only_a": [n for n in arms_a if n not in arms_b],
        "only_b": [n for n in arms_b if n not in arms_a],
        "descriptive": any(d["descriptive"] for d in diffs),
    }
