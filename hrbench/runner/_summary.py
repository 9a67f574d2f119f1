"""The per-arm summary of a benchmark, counted one row at a time; a run's metric values in its trace.

:class:`Summary` is what :meth:`hrbench.Bench.summary` returns the result of (a running count when
no rows are kept); :func:`summarise` counts a list of rows. :func:`trace_metrics` reads a run's
benchmark metric values back from its trace, where :func:`metrics_json` wrote them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import msgspec

from hrbench.records import Row, Step, list_usd
from hrbench.runner._notes import error_of
from hrbench.runner._runcaps import run_cap_of

__all__ = ["METRICS_SOURCE", "Summary", "metrics_json", "summarise", "trace_metrics"]


def _empty_counts() -> dict[str, Any]:
    """One arm's running counts before its first row."""
    return {
        "runs": 0,
        "wrong": 0,
        "failed": 0,
        "errors": 0,
        "budget_stop": 0,
        "reasoning_exhausted": 0,
        "run_capped": 0,
        "usd": 0.0,
        "usd_list": 0.0,
        "tokens_in": 0,
        "tokens_out": 0,
        "usd_from_log": 0,
        "dev": False,
        "error_causes": {},
    }


class Summary:
    """A running per-arm summary, fed one row at a time (memory grows with items, not rows)."""

    def __init__(self, arm_order: Sequence[str] = (), metrics: bool = False) -> None:
        self.order: list[str] = list(arm_order)
        self.per_item: dict[tuple[str, str, bool], list[int]] = {}  # (arm, item, dev) -> [correct, n]
        self.counts: dict[str, dict[str, Any]] = {}
        self.items: set[str] = set()  # of the rows reported (reportable, or on the dev split)
        self.clusters: set[str] = set()
        self.cancelled = 0  # rows of clusters cancelled at a stop: kept, not reportable, not reported
        self.n = 0
        self.metrics = metrics
        self.metric_names: list[str] = []
        self.metric_items: dict[
            tuple[str, str], dict[str, list[float]]
        ] = {}  # (arm, item) -> name -> [sum, n]
        self.unmeasured: set[str] = set()  # arms with a row that has no metric values (resumed)

    def add(
        self, r: Row, values: Mapping[str, float] | None = None, trace: Sequence[Step] | None = None
    ) -> None:
        """Count one row, with its metric values when the benchmark has metrics.

        ``trace`` gives the row's list price (:func:`~hrbench.records.list_usd`); without it
        (a resumed row) the list price is taken as what the row paid. It also gives the cause
        of a run that ended in an error (``"unknown"`` without it).
        """
        self.n += 1
        arm, item, correct, reportable = r.arm, r.item, r.correct, r.reportable
        dev = r.split == "dev"
        if self.metrics and reportable and correct is not None:
            if values is None:
                self.unmeasured.add(arm)
            else:
                per = self.metric_items.setdefault((arm, item), {})
                for name, v in values.items():
                    if name not in self.metric_names:
                        self.metric_names.append(name)
                    tally = per.setdefault(name, [0.0, 0])
                    tally[0] += v
                    tally[1] += 1
        if reportable or dev:
            self.items.add(item)
            self.clusters.add(r.cluster)
        else:  # a stop left its cluster out of the test (see hrbench.runner._stopping)
            self.cancelled += 1
        c = self.counts.get(arm)
        if c is None:
            if arm not in self.order:
                self.order.append(arm)
            c = self.counts[arm] = _empty_counts()
        usd = r.usd
        if (total := c["usd"]) is not None:
            c["usd"] = None if usd is None else total + usd
        if (total := c["usd_list"]) is not None:
            listed = usd if trace is None else list_usd(trace)
            c["usd_list"] = None if listed is None else total + listed
        c["tokens_in"] += r.tokens_in
        c["tokens_out"] += r.tokens_out
        c["usd_from_log"] += r.usd_provenance == "log"
        kind = r.failure_kind
        if kind == "error":  # every run that ended in an error, dev split included, by cause
            cause = error_of(list(trace))[1] if trace else "unknown"
            c["error_causes"][cause] = c["error_causes"].get(cause, 0) + 1
        if reportable:
            c["runs"] += 1
            if kind is not None:
                if kind == "wrong":
                    c["wrong"] += 1
                elif kind == "budget_stop":
                    c["budget_stop"] += 1
                    c["run_capped"] += trace is not None and run_cap_of(list(trace)) is not None
                else:
                    c["failed"] += 1
                    c["errors"] += kind == "error"
                    c["reasoning_exhausted"] += kind == "reasoning_exhausted"
        if dev:
            c["dev"] = True
        if correct is not None and (reportable or dev):
            key = (arm, item, not reportable)
            acc = self.per_item.get(key)
            if acc is None:
                acc = self.per_item[key] = [0, 0]
            acc[0] += bool(correct)
            acc[1] += 1

    def result(self) -> list[dict[str, Any]]:
        """Per arm: see :meth:`hrbench.Bench.summary`."""
        means: dict[tuple[str, bool], list[float]] = defaultdict(list)
        for (arm, _item, dev), (k, n) in self.per_item.items():
            means[(arm, dev)].append(k / n)
        metric_means: dict[tuple[str, str], list[float]] = defaultdict(list)
        for (arm, _item), per in self.metric_items.items():
            for metric, (total, count) in per.items():
                metric_means[(arm, metric)].append(total / count)
        out = []
        for name in self.order:
            c = self.counts.get(name) or _empty_counts()
            rep, dev_means = means.get((name, False)), means.get((name, True))
            out.append(
                {
                    "arm": name,
                    "accuracy": sum(rep) / len(rep) if rep else None,
                    "dev_accuracy": sum(dev_means) / len(dev_means) if dev_means else None,
                    **{
                        k: c[k]
                        for k in (
                            "runs",
                            "wrong",
                            "failed",
                            "errors",
                            "budget_stop",
                            "reasoning_exhausted",
                            "run_capped",
                            "usd",
                            "usd_list",
                            "tokens_in",
                            "tokens_out",
                            "usd_from_log",
                        )
                    },
                    "error_causes": dict(c["error_causes"]),
                    "metrics": {
                        m: None
                        if name in self.unmeasured or not metric_means.get((name, m))
                        else sum(metric_means[(name, m)]) / len(metric_means[(name, m)])
                        for m in self.metric_names
                    },
                }
            )
        return out


METRICS_SOURCE = "metrics"
"""The ``source`` of the trace step that keeps a run's benchmark metric values."""


def metrics_json(values: Mapping[str, float]) -> str:
    return msgspec.json.encode(dict(values)).decode()


def trace_metrics(trace: Iterable[Step]) -> dict[str, float] | None:
    """A run's benchmark metric values, as its trace keeps them; ``None`` when it keeps none.

    A resumed benchmark's metrics are computed over every run, the runs made before
    the interruption included, from these values (their outputs are not kept).

    Example:
        >>> trace_metrics([Step(ledger_id="r", kind="note", source="metrics", text='{"squad_em": 1.0}')])
        {'squad_em': 1.0}
        >>> trace_metrics([Step(ledger_id="r")]) is None
        True
    """
    for s in trace:
        if s.kind == "note" and s.source == METRICS_SOURCE and s.text is not None:
            return {str(k): float(v) for k, v in msgspec.json.decode(s.text).items()}
    return None


def summarise(
    rows: Iterable[Row],
    arm_order: Sequence[str] | None = None,
    traces: Mapping[str, Sequence[Step]] | None = None,
) -> list[dict[str, Any]]:
    """Per-arm summary of rows (see :meth:`hrbench.Bench.summary`); ``traces`` by ledger id give list prices."""
    acc = Summary(arm_order or ())
    for r in rows:
        acc.add(r, trace=None if traces is None else traces.get(r.ledger_id, ()))
    return acc.result()
