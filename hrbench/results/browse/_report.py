"""A stored benchmark's report with its status and banner: what the daemon's ``report`` method returns.

Rule (docs/guides/shell.md, "Detached benchmarks, cancel and Ctrl-C" and "A benchmark that
ended early"): a benchmark still running, cancelled or interrupted has cells with unequal
runs, so its report is descriptive of the runs finished, never refused for them, and its
``stop_note`` says what state it is in and how to go on (:func:`~._listing.ended_note`); with no
run finished the report is the state alone.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from hrbench.errors import ConfigError
from hrbench.results.browse._listing import ENDED_EARLY, _record, benchmark_status, stop_limits
from hrbench.results.browse._view import judged_rows
from hrbench.runner import unknown_of, unknown_sentence
from hrbench.store import Store

__all__ = ["benchmark_report"]


def benchmark_report(
    store: Store, benchmark_id: str, running: Collection[str] = (), **settings: Any
) -> dict[str, Any]:
    """A stored benchmark's report payload, with its ``status``, ``stop_note`` and ``unknown_note``.

    Args:
        store: the store to read.
        benchmark_id: the benchmark's id.
        running: the ids of the benchmarks this process runs (as for
            :func:`~hrbench.results.browse.benchmark_list`).
        **settings: :func:`hrbench.stats.report_payload`'s settings (``level``, ``method``,
            ``descriptive``, ``compare_pair``, ``metric``, ``pass_k``, ``plot``, ...).

    Returns:
        :func:`hrbench.stats.report_payload`'s dict plus ``status`` and ``stop_note``
        (:func:`~hrbench.results.browse.benchmark_status`; for a running benchmark, that it
        runs) and ``unknown_note`` (what a crash or a cancel left unknown of the spend).

    Raises:
        NotFound: no benchmark has that id.
        ConfigError: a setting that is not a report setting, or a bad value of one.
        TooFewRunsError: a finished benchmark with fewer than 5 runs per item and no
            ``descriptive=True``.

    Example:
        >>> from hrbench.records import Row
        >>> s = Store(":memory:")
        >>> s.benchmark_put("b1", {"params": {"runs": 5}, "total": 20, "arms": [{"name": "a"}]}, "h")
        >>> s.rows_put("b1", [(i, Row(cluster="c", item=f"q{i}", arm="a", run=1, split="test", correct=True,
        ...                           outcome=None, failure_kind=None)) for i in range(3)])
        >>> s.benchmark_finish("b1", "cancelled", None)
        >>> r = benchmark_report(s, "b1")
        >>> r["status"], r["descriptive"], r["stop_note"]
        ('cancelled', True, 'benchmark b1 was cancelled with 3 of 20 runs finished: its report is descriptive of those runs; resume it with `hrb bench --resume b1`')
    """
    from hrbench import specs  # the registry, on the first report
    from hrbench.stats import report_payload

    rec = _record(store, benchmark_id)
    rows = store.rows_get(benchmark_id)
    traces = store.traces_get(benchmark_id)  # the list price per arm
    judged = judged_rows(store, rec, rows, traces)  # a judge's: its agreement too
    grades = store.grades_get(benchmark_id) or None  # human grades: the PPI++ section
    spec = rec.get("spec") or {}
    ledger = store.ledger_get(benchmark_id)
    head = benchmark_status(rec, len(rows), running, ledger, stop_limits(store, rec))
    still = head["status"] == "running"
    if (
        still or head["status"] in ENDED_EARLY
    ):  # what is there, labelled descriptive (cells have unequal runs)
        settings["descriptive"] = True
        if not rows:
            return _empty_report(benchmark_id, head, spec.get("total"))
    try:
        out = report_payload(
            judged,
            traces=traces,
            stop=spec.get("stop"),
            grades=grades,
            scorer=specs.stored_scorer(spec),
            **settings,
        )
    except TypeError as exc:
        raise ConfigError("settings", settings, f"not a report setting ({exc})") from None
    out["status"], out["stop_note"] = head["status"], head["stop_note"]
    if still:
        out["stop_note"] = running_note(benchmark_id, len(rows), spec.get("total"))
    out["unknown_note"] = unknown_sentence(unknown_of(ledger))  # what a crash or a cancel left unknown
    return out


def running_note(benchmark_id: str, done: int, total: int | None) -> str:
    """The banner of a benchmark still running: how far it is, and how to read what is there.

    Example:
        >>> running_note("b1", 0, 40)
        'benchmark b1 is still running (0 of 40 runs finished): no run has finished yet; `hrb ls` shows its progress, and `hrb report b1` once it is done gives the full report'
    """
    of = f"{done} of {total}" if total else f"{done}"
    said = "no run has finished yet" if not done else "this report is descriptive of the runs finished so far"
    return (
        f"benchmark {benchmark_id} is still running ({of} runs finished): {said}; `hrb ls` shows its progress, "
        f"and `hrb report {benchmark_id}` once it is done gives the full report"
    )


def _empty_report(benchmark_id: str, head: dict[str, Any], total: int | None) -> dict[str, Any]:
    """The report of a benchmark with no run finished: its state alone."""
    status = head["status"]
    if status == "running":
        line, note = "still running, no run finished yet", running_note(benchmark_id, 0, total)
    else:
        line, note = f"{status}, no run finished", head["stop_note"]
    text = f"<hrbench report> benchmark {benchmark_id}: {line}"
    return {
        "status": status,
        "stop_note": note,
        "arms": [],
        "comparisons": [],
        "text": text,
        "markdown": text + "\n",
    }
