"""The benchmark runner (the seed's ``hr_benchmark``): every arm on every item, ``runs`` times.

:func:`benchmark` is a thin sync wrapper over :func:`benchmark_async`, which runs on an anyio
task group with a concurrency limit; :func:`benchmark_stream` yields rows as they are scored.
Rows come back in the seed's order (cluster x item x arm x run) whatever order they finished in.
"""

from __future__ import annotations

import inspect
import uuid
from collections import defaultdict
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.to_thread
import msgspec

from hrbench._util.warn import warn_at_caller
from hrbench.arm import Arm
from hrbench.errors import (
    NO_OUTPUT,
    ArmErrorWarning,
    ConfigError,
    DrawsUncheckedWarning,
    DuplicateDrawError,
    FewRunsWarning,
    NoLabelsWarning,
    NotCachedWarning,
    UnlabelledItemsWarning,
    failure_cause,
    field_under,
)
from hrbench.models.pricing import Pricing, default_pricing
from hrbench.reference import SPLITS, Reference
from hrbench.results.records import ROW_COLUMNS, Result, Row, Step, list_usd, usd_text
from hrbench.runner import stopping
from hrbench.runner.cache import Cache
from hrbench.runner.governor import Governor, default_governor
from hrbench.runner.invoke import (
    Attempt,
    BenchMetric,
    Plan,
    failed,
    invoke_async,
    invoke_sync,
    judge,
    judge_pricing,
    judge_runtime,
    metric_values,
    score_row,
    scored,
)
from hrbench.runner.ledger import carry_prepaid, prepaid, unknown_sentence
from hrbench.runner.runtime import Drain, Runtime, heavy_scorer_threads, off_loop, unpriced_message
from hrbench.runner.stopping import StopRecord, kept
from hrbench.runner.tallies import DEFAULT_SEED, Sources, Stops, Unreported
from hrbench.scoring.scorer import Scorer, ScorerLike, exact_scorer
from hrbench.stats.stopped import stop_lines, stop_section
from hrbench.store import Store

__all__ = ["METRICS_SOURCE", "Bench", "benchmark", "benchmark_async", "benchmark_stream", "error_note"]
__all__ += ["stop_note", "trace_metrics"]

MIN_RUNS = 5
"""Fewer runs than this warn (seed 002: ``hr_few_runs``)."""

_PLAIN = frozenset({str, int, float, bool, type(None), dict, list, Result})
"""Output types that are never awaitable: the runner skips ``inspect.isawaitable`` for them."""


# --------------------------------------------------------------------------------------------
# The result: Bench
# --------------------------------------------------------------------------------------------
FAILED_LEGEND = (
    "  failed: runs that failed otherwise than wrong or budget_stop (error, refusal, parse_failure, "
    "not_in_document); report()'s failures counts every labelled run that was not right."
)
"""The printout's line saying what its ``failed`` column counts (decided, newcomer's finding:
report()'s ``failures`` column counts every not-right run, wrong and budget_stop included)."""


class Bench:
    """A finished benchmark: one row per cluster x item x arm x run (seed 002's ``hr_bench``).

    Attributes:
        id: the benchmark's id.
        rows: the rows (:class:`~hrbench.results.records.Row`), in cluster x item x arm x run order.
        arms: one record per arm: name, version, hash, derived_from.
        reference: the :class:`~hrbench.Reference`; ``reference_hash`` its hash.
        runs, split, seed: as passed.
        scorer_name: the scorer's name.
        traces: ``{ledger_id: [Step, ...]}``, one trace per run.
        governor: the governor's limits and use at the end (:meth:`Governor.snapshot`); its
            ``unknown`` is the spend crashes of earlier runs left unknown (issue 13), which
            the printout states as "unknown, at most X USD / N calls".
        duplicates: the duplicate draws found (each a ``DuplicateDrawError``).
        stopped: how many runs the governor stopped (``budget_stop``), dev split included.
        stop: how a benchmark run with a stop rule (``stop=hb.StopWhenSure(...)``) ended, a
            :class:`~hrbench.runner.stopping.StopRecord` (reason, clusters run and of how many,
            e-values, the order's seed); ``None`` without a rule. (``stopped`` keeps its meaning.)
        errors: how many runs ended in an error (``failure_kind == "error"``: a failed model
            call, an arm or scorer that raised), dev split included.
        status: ``"budget_stopped"`` when any run was stopped, else ``"errors"`` when any run
            ended in an error, else ``"done"``.

    Decided (newcomer finding; seed 002 keeps stopped runs counted wrong): a benchmark a budget
    stopped is never shown as plainly done. Its ``status`` is ``"budget_stopped"``, and its
    printout ends with :meth:`stop_note`. Decided likewise (newcomer finding: a benchmark whose
    every run failed on a dead port showed ``done``): a benchmark with runs that ended in
    errors, all or some, has the status ``"errors"`` (a budget stop wins when both), and its
    printout says how many and the commonest cause (:meth:`error_note`).

    A benchmark run with ``keep_rows=False`` (rows streamed to ``on_row`` or a store) holds no
    rows or traces; its summary and printout come from a running count.

    Decided (as ``hrb`` prints ``hrb bench --resume ID --retry-errors``): the printout of a
    benchmark with runs that ended in errors says how to run only those again: :attr:`retry`,
    by default the library's ``benchmark(..., done=bench.as_done(), done_traces=bench.traces,
    retry_errors=True)`` (:meth:`as_done`), which keeps every other run and replaces the failed
    ones' rows (the kept runs' traces let the runs made again be checked for distinct draws).
    """

    retry: str | None = (
        "`hrbench.benchmark(..., done=bench.as_done(), done_traces=bench.traces, retry_errors=True)`"
    )
    """How the printout says to run only the runs that ended in errors again; ``None``: not said.
    The daemon sets its own command (``hrb bench --resume ID --retry-errors``)."""

    def __init__(
        self,
        *,
        id: str,
        rows: list[Row],
        arms: list[dict[str, Any]],
        reference: Reference,
        runs: int,
        split: list[str],
        seed: int,
        scorer_name: str,
        traces: dict[str, list[Step]],
        governor: dict[str, Any],
        duplicates: list[DuplicateDrawError] | None = None,
        summary: Summary | None = None,
        stopped: int = 0,
        stop: StopRecord | None = None,
    ) -> None:
        self.id = id
        self.stopped = stopped
        self.stop = stop
        self._summary = summary
        self.rows = rows
        self.arms = arms
        self.reference = reference
        self.reference_hash = reference.hash
        self.runs = runs
        self.split = split
        self.seed = seed
        self.scorer_name = scorer_name
        self.traces = traces
        self.governor = governor
        self.duplicates = duplicates or []

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Any:
        return iter(self.rows)

    @property
    def trace(self) -> list[Step]:
        """Every step of every run, in row order (the seed's ``attr(x, "trace")``)."""
        return [s for r in self.rows for s in self.traces.get(r.ledger_id, [])]

    def summary(self) -> list[dict[str, Any]]:
        """Per arm: accuracy, dev_accuracy, runs, wrong, failed, errors, budget_stop, usd, tokens.

        ``accuracy`` is the mean over runs within each item, then over labelled items, on the
        reportable rows (seed 002); ``None`` when no item is labelled. ``dev_accuracy`` is the
        same on the dev split. ``runs`` counts reportable rows; ``wrong`` those whose
        failure_kind is ``"wrong"``; ``failed`` those with another failure kind
        (``parse_failure``, ``refusal``, ``not_in_document``, ``error``) other than
        ``budget_stop``, which is counted apart; ``errors`` those of ``failed`` whose kind is
        ``"error"`` (a failed model call, an arm or scorer that raised). ``usd`` sums every row
        (``None`` when a model had no price): what was paid, 0 for cache and recording hits.
        ``usd_list`` sums the same rows at list price, each reply at what it cost when first
        paid (:func:`~hrbench.results.records.list_usd`; issue 18), so arms compare by cost whatever
        the cache served. ``error_causes`` counts every run that ended in an error (dev split
        included) by cause (``openai: HTTP 401``, ``RuntimeError``, ...; newcomer finding: the
        status and banner name the commonest). ``metrics`` holds the mean of each benchmark
        metric (see :func:`benchmark`'s ``metrics``), averaged as ``accuracy`` is; ``{}``
        without metrics.
        """
        if self._summary is not None:
            return self._summary.result()
        return summarise(self.rows, [a["name"] for a in self.arms], self.traces)

    def __str__(self) -> str:
        if self._summary is not None:
            n_items, n_clusters = len(self._summary.items), len(self._summary.clusters)
        else:
            n_items, n_clusters = len({r.item for r in self.rows}), len({r.cluster for r in self.rows})
        head = (
            f"<hr_bench> {len(self.arms)} arm(s) x {n_items} item(s) in {n_clusters} cluster(s) x {self.runs} run(s); "
            f"split {', '.join(self.split)}; scorer {self.scorer_name}"
        )
        summ = self.summary()
        has_dev = any(s["dev_accuracy"] is not None for s in summ)
        metric_names = list(dict.fromkeys(m for s in summ for m in s.get("metrics", {})))
        cols = (
            ["arm", "accuracy"]
            + (["dev"] if has_dev else [])
            + metric_names
            + ["runs", "wrong", "failed", "budget_stop", "usd"]
        )
        # decided, issue 18: the list price shows beside what was paid when they differ (a
        # cache or recording served a reply), so the seed-002 printout stays as it is otherwise
        listed = any(_differ(s["usd"], s.get("usd_list", s["usd"])) for s in summ)
        if listed:
            cols.append("usd_list")

        def fmt_acc(x: float | None) -> str:
            return "NA" if x is None else f"{x:.3f}"

        table = []
        for s in summ:
            vals = [s["arm"], fmt_acc(s["accuracy"])] + ([fmt_acc(s["dev_accuracy"])] if has_dev else [])
            vals += [fmt_acc(s.get("metrics", {}).get(m)) for m in metric_names]
            vals += [
                str(s["runs"]),
                str(s["wrong"]),
                str(s["failed"]),
                str(s["budget_stop"]),
                usd_text(s["usd"]),
            ]
            if listed:
                vals.append(usd_text(s["usd_list"]))
            table.append(vals)
        widths = [max(len(c), *(len(t[i]) for t in table)) if table else len(c) for i, c in enumerate(cols)]
        lines = [head, " " + " ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True))]
        lines += [" " + " ".join(v.ljust(w) for v, w in zip(t, widths, strict=True)) for t in table]
        lines.append(
            "  accuracy: the mean over runs within each item, then over labelled items; intervals are in hb.report() and hrb report."
        )
        lines.append(FAILED_LEGEND)
        if listed:
            lines.append(
                "  usd is what was paid (0 for replies a cache or recording served); usd_list prices "
                "every reply at what it cost when first paid: compare arms by usd_list."
            )
        note = self.stop_note()
        if note is not None:
            lines.append(f"  Budget stopped: {note}; a larger governor runs them.")
        failed = self.error_note(self._retry())
        if failed is not None:
            lines.append(f"  Runs failed: {failed}.")
        if metric_names:
            lines.append(
                f"  Beside accuracy (scorer {self.scorer_name}): the benchmark metrics "
                f"{', '.join(metric_names)}, averaged the same way."
            )
        if self.stop is not None:  # stopped when sure: how, after how many clusters, the e-values
            lines += stop_lines(stop_section(self.stop.to_dict()))
        crashed = unknown_sentence(self.governor.get("unknown") if isinstance(self.governor, dict) else None)
        if crashed is not None:  # issue 13: what a crash left unknown, counted as spent
            lines.append(f"  Governor: {crashed}; rows show what finished calls cost.")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<Bench {self.id} {len(self.rows)} rows>"

    @property
    def errors(self) -> int:
        """How many runs ended in an error, dev split included (the summary's ``error_causes``)."""
        return sum(sum(s.get("error_causes", {}).values()) for s in self.summary())

    @property
    def status(self) -> str:
        """``"budget_stopped"``, ``"errors"`` or ``"done"`` (newcomer findings; see the class).

        Example:
            >>> import warnings
            >>> from hrbench import Arm, Reference
            >>> def broken(item, ctx):
            ...     raise RuntimeError("no model")
            >>> with warnings.catch_warnings():
            ...     warnings.simplefilter("ignore")
            ...     b = benchmark(Arm("a", broken), Reference({"q1": "x"}, labels=["x"]), runs=5)
            >>> b.status, b.errors
            ('errors', 5)
            >>> b.error_note()
            "5 of 5 runs ended in errors and count as wrong; commonest cause: RuntimeError (5 runs, arm 'a')"
        """
        if self.stopped:
            return "budget_stopped"
        return "errors" if self.errors else "done"

    def error_note(self, resume: str | None = None) -> str | None:
        """What runs that ended in errors did to the table, or ``None`` when none did.

        Args:
            resume: how to run them again (a command), or ``None``.

        Example: see :attr:`status`.
        """
        causes, arms = error_causes(self.summary())
        n = self._summary.n if self._summary is not None else len(self.rows)
        return error_note(causes, n, resume, arms=arms)

    def _retry(self) -> str | None:
        """:attr:`retry`; with no rows kept (``keep_rows=False``), the rows kept elsewhere are named."""
        if self.retry is None or self.rows or "bench.as_done()" not in self.retry:
            return self.retry
        kept = self.retry.replace("bench.as_done()", "{(arm, item, run): row}")
        kept = kept.replace("bench.traces", "{ledger_id: trace}")
        return f"{kept} with the rows and traces on_row or the store kept"

    def as_done(self) -> dict[tuple[str, str, int], Row]:
        """The rows as :func:`benchmark`'s ``done`` takes them: keyed by ``(arm, item, run)``.

        With ``retry_errors=True`` a run again of the same arms and reference keeps every run
        but those that ended in errors, which it runs again (the printout says so).

        Example:
            >>> import warnings
            >>> from hrbench import Arm, Reference
            >>> ref = Reference({"q1": "x", "q2": "y"}, labels=["x", "y"])
            >>> with warnings.catch_warnings():
            ...     warnings.simplefilter("ignore")
            ...     b = benchmark(Arm("a", lambda item, ctx: item if item == "x" else 1 / 0), ref, runs=1)
            ...     print(str(b).splitlines()[-1])
            ...     again = benchmark(Arm("a", lambda item, ctx: item), ref, runs=1,
            ...                       done=b.as_done(), done_traces=b.traces, retry_errors=True)
              Runs failed: 1 of 2 runs ended in errors and count as wrong; commonest cause: ZeroDivisionError (1 run, arm 'a'); fix it, then run them again with `hrbench.benchmark(..., done=bench.as_done(), done_traces=bench.traces, retry_errors=True)`.
            >>> sorted(b.as_done()), again.status
            ([('a', 'q1', 1), ('a', 'q2', 1)], 'done')
        """
        return {(r.arm, r.item, r.run): r for r in self.rows}

    def stop_note(self) -> str | None:
        """What a budget stop did to the table, or ``None`` when no run was stopped.

        Example:
            >>> stop_note(240, 250)
            '240 of 250 runs were stopped by the budget and count as wrong'
        """
        n = self._summary.n if self._summary is not None else len(self.rows)
        return stop_note(self.stopped, n)

    def to_dicts(self) -> list[dict[str, Any]]:
        """The rows as dicts with the seed's columns."""
        return [msgspec.structs.asdict(r) for r in self.rows]

    def to_pandas(self) -> Any:
        """The rows as a pandas DataFrame with the seed's columns (needs the ``pandas`` extra).

        Attributes (``df.attrs``) record the arms, reference hash, runs, split, seed and scorer.
        """
        import pandas as pd

        df = pd.DataFrame(self.to_dicts(), columns=list(ROW_COLUMNS))
        df.attrs.update(self.attributes())
        return df

    def to_arrow(self) -> Any:
        """The rows as a pyarrow Table (needs the ``pandas`` extra, which brings pyarrow)."""
        import pyarrow as pa

        return pa.Table.from_pylist(self.to_dicts())

    def to_jsonl(self, path: str | Any) -> int:
        """Write the rows as JSON lines (the seed's columns); returns how many were written."""
        data = msgspec.json.Encoder().encode_lines(self.rows)
        with open(path, "wb") as f:
            f.write(data)
        return len(self.rows)

    def to_csv(self, path: str | Any) -> int:
        """Write the rows as CSV with the seed's columns; returns how many were written.

        Decided (seed silent), issue 18: a header line of the seed's columns in the seed's
        order, ``None`` (NA) as an empty cell, booleans as ``True``/``False`` (what
        ``pandas.read_csv`` reads back as booleans), UTF-8.

        Args:
            path: the file to write (overwritten).

        Returns:
            The number of rows written.

        Raises:
            OSError: the file cannot be written.

        Example:
            >>> import pathlib, tempfile
            >>> from hrbench import Arm, Reference, benchmark
            >>> b = benchmark(Arm("a", lambda item, ctx: item), Reference({"q1": "x"}, labels=["x"]), runs=5)
            >>> path = pathlib.Path(tempfile.mkdtemp()) / "rows.csv"
            >>> b.to_csv(path)
            5
            >>> path.read_text().splitlines()[1].split(",")[:9]
            ['q1', 'q1', 'a', '1', 'test', 'True', 'x', '', '0']
        """
        import csv

        with open(path, "w", encoding="utf-8", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(ROW_COLUMNS)
            w.writerows(["" if v is None else v for v in msgspec.structs.astuple(r)] for r in self.rows)
        return len(self.rows)

    def to_parquet(self, path: str | Any) -> int:
        """Write the rows as Parquet with the seed's columns, typed; returns how many were written.

        Strings, int64, float64 and booleans, every column nullable (``None`` is null), so an
        all-NA column keeps its type.

        Args:
            path: the file to write (overwritten), or a binary file object.

        Returns:
            The number of rows written.

        Raises:
            ImportError: pyarrow is not installed (it comes with the ``pandas`` and ``dev``
                extras: ``pip install 'hrbench[pandas]'``).
        """
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError as e:
            raise ImportError("Bench.to_parquet() needs pyarrow: pip install 'hrbench[pandas]'") from e
        mi = msgspec.inspect
        kinds: dict[Any, Any] = {
            mi.StrType: pa.string(),
            mi.IntType: pa.int64(),
            mi.FloatType: pa.float64(),
            mi.BoolType: pa.bool_(),
        }
        info = mi.type_info(Row)
        assert isinstance(info, mi.StructType)
        fields = []
        for f in info.fields:
            kind: Any = next(t for t in getattr(f.type, "types", (f.type,)) if t != mi.NoneType())
            fields.append(pa.field(f.name, kinds[type(kind)]))
        pq.write_table(pa.Table.from_pylist(self.to_dicts(), schema=pa.schema(fields)), path)
        return len(self.rows)

    def to_inspect(self, path: str | Any, name: str | None = None) -> list[Any]:
        """Write one Inspect eval log per arm into folder ``path``; see :func:`~hrbench.results.inspect_log.bench_to_inspect`."""
        from hrbench.results.inspect_log import bench_to_inspect

        return bench_to_inspect(self, path, name)

    def to_polars(self) -> Any:
        """The rows as a polars DataFrame (needs the ``polars`` extra)."""
        import polars as pl

        return pl.DataFrame(self.to_dicts())

    def attributes(self) -> dict[str, Any]:
        """The seed's attributes: arms, reference hash, runs, split, seed, scorer, governor."""
        return {
            "id": self.id,
            "arms": self.arms,
            "reference_hash": self.reference_hash,
            "runs": self.runs,
            "split": self.split,
            "seed": self.seed,
            "scorer": self.scorer_name,
            "governor": self.governor,
        }


def _differ(paid: float | None, listed: float | None) -> bool:
    if paid is None or listed is None:
        return (paid is None) != (listed is None)
    return abs(paid - listed) > 1e-12


class Summary:
    """A running per-arm summary, fed one row at a time (memory grows with items, not rows)."""

    def __init__(self, arm_order: Sequence[str] = (), metrics: bool = False) -> None:
        self.order: list[str] = list(arm_order)
        self.per_item: dict[tuple[str, str, bool], list[int]] = {}  # (arm, item, dev) -> [correct, n]
        self.counts: dict[str, dict[str, Any]] = {}
        self.items: set[str] = set()
        self.clusters: set[str] = set()
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

        ``trace`` gives the row's list price (:func:`~hrbench.results.records.list_usd`); without it
        (a resumed row) the list price is taken as what the row paid. It also gives the cause
        of a run that ended in an error (``"unknown"`` without it).
        """
        self.n += 1
        if self.metrics and r.reportable and r.correct is not None:
            if values is None:
                self.unmeasured.add(r.arm)
            else:
                per = self.metric_items.setdefault((r.arm, r.item), {})
                for name, v in values.items():
                    if name not in self.metric_names:
                        self.metric_names.append(name)
                    tally = per.setdefault(name, [0.0, 0])
                    tally[0] += v
                    tally[1] += 1
        self.items.add(r.item)
        self.clusters.add(r.cluster)
        c = self.counts.get(r.arm)
        if c is None:
            if r.arm not in self.order:
                self.order.append(r.arm)
            c = self.counts[r.arm] = {
                "runs": 0,
                "wrong": 0,
                "failed": 0,
                "errors": 0,
                "budget_stop": 0,
                "usd": 0.0,
                "usd_list": 0.0,
                "tokens_in": 0,
                "tokens_out": 0,
                "dev": False,
                "error_causes": {},
            }
        usd = r.usd
        if c["usd"] is not None:
            c["usd"] = None if usd is None else c["usd"] + usd
        if c["usd_list"] is not None:
            listed = usd if trace is None else list_usd(trace)
            c["usd_list"] = None if listed is None else c["usd_list"] + listed
        c["tokens_in"] += r.tokens_in
        c["tokens_out"] += r.tokens_out
        kind = r.failure_kind
        if kind == "error":  # every run that ended in an error, dev split included, by cause
            cause = _error_of(list(trace))[1] if trace else "unknown"
            c["error_causes"][cause] = c["error_causes"].get(cause, 0) + 1
        if r.reportable:
            c["runs"] += 1
            if kind is not None:
                if kind == "wrong":
                    c["wrong"] += 1
                elif kind == "budget_stop":
                    c["budget_stop"] += 1
                else:
                    c["failed"] += 1
                    c["errors"] += kind == "error"
        if r.split == "dev":
            c["dev"] = True
        if r.correct is not None and (r.reportable or r.split == "dev"):
            acc = self.per_item.get((r.arm, r.item, not r.reportable))
            if acc is None:
                acc = self.per_item[(r.arm, r.item, not r.reportable)] = [0, 0]
            acc[0] += bool(r.correct)
            acc[1] += 1

    def result(self) -> list[dict[str, Any]]:
        """Per arm: see :meth:`Bench.summary`."""
        means: dict[tuple[str, bool], list[float]] = defaultdict(list)
        for (arm, _item, dev), (k, n) in self.per_item.items():
            means[(arm, dev)].append(k / n)
        metric_means: dict[tuple[str, str], list[float]] = defaultdict(list)
        for (arm, _item), per in self.metric_items.items():
            for metric, (total, count) in per.items():
                metric_means[(arm, metric)].append(total / count)
        out = []
        for name in self.order:
            c = self.counts.get(name) or {
                "runs": 0,
                "wrong": 0,
                "failed": 0,
                "errors": 0,
                "budget_stop": 0,
                "usd": 0.0,
                "usd_list": 0.0,
                "tokens_in": 0,
                "tokens_out": 0,
                "dev": False,
                "error_causes": {},
            }
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
                            "usd",
                            "usd_list",
                            "tokens_in",
                            "tokens_out",
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


def stop_note(stopped: int, runs: int, resume: str | None = None) -> str | None:
    """The sentence that says a budget stopped ``stopped`` of ``runs`` runs (newcomer finding).

    Seed 002 counts a stopped run wrong; this says so wherever the benchmark is shown, so that
    an accuracy a budget lowered is never read as the arm's. ``resume`` is appended as the way
    to finish the runs.

    Args:
        stopped: runs stopped by the governor.
        runs: runs in the benchmark.
        resume: how to run the rest (a command), or ``None``.

    Returns:
        The sentence, or ``None`` when ``stopped`` is 0.

    Example:
        >>> stop_note(240, 250, "`hrb bench --resume b1 --max-calls N`")
        '240 of 250 runs were stopped by the budget and count as wrong; resume with `hrb bench --resume b1 --max-calls N`'
        >>> stop_note(0, 250) is None
        True
    """
    if not stopped:
        return None
    note = f"{stopped} of {runs} runs were stopped by the budget and count as wrong"
    return note if resume is None else f"{note}; resume with {resume}"


def error_causes(summary: Iterable[Mapping[str, Any]] | None) -> tuple[dict[str, int], dict[str, list[str]]]:
    """Runs that ended in errors by cause over the arms of a summary, and the arms of each cause.

    A summary stored before causes were kept gives its ``errors`` count as cause ``"unknown"``.

    Args:
        summary: per-arm dicts (:meth:`Bench.summary`, or one stored with a benchmark) with
            ``arm`` and ``error_causes`` (or only ``errors``); ``None`` while it runs.

    Returns:
        ``(causes, arms)``: cause -> runs, summed over arms; cause -> the arms that had it, in
        the summary's order.

    Example:
        >>> error_causes([{"arm": "a", "error_causes": {"x": 2}}, {"arm": "b", "error_causes": {"x": 1}}])
        ({'x': 3}, {'x': ['a', 'b']})
        >>> error_causes([{"arm": "a", "errors": 3}])
        ({'unknown': 3}, {'unknown': ['a']})
    """
    causes: dict[str, int] = {}
    arms: dict[str, list[str]] = {}
    for s in summary or []:
        by_cause = s.get("error_causes")
        if by_cause is None:
            by_cause = {"unknown": int(s.get("errors") or 0)} if s.get("errors") else {}
        for cause, k in by_cause.items():
            causes[cause] = causes.get(cause, 0) + int(k)
            if k and s.get("arm") is not None:
                arms.setdefault(cause, []).append(str(s["arm"]))
    return causes, arms


def error_note(
    causes: Mapping[str, int],
    runs: int,
    resume: str | None = None,
    *,
    arms: Mapping[str, Sequence[str]] | None = None,
) -> str | None:
    """The sentence that says how many of ``runs`` runs ended in errors, and the commonest cause.

    Decided (newcomer finding: every run failed on a dead port and the benchmark showed
    ``done``): wherever a benchmark with such runs is shown, it says how many there are (seed
    002 counts them wrong) and the cause most of them had, so that a broken endpoint is never
    read as a bad arm. ``resume`` is appended as the way to run them again. Decided (the
    TAT-QA demo's missing answer read "LookupError (5 runs)"): the arms whose runs had the
    commonest cause are named with it, up to 5, so a cause such as ``no output for item 'q3'``
    says where the output is missing.

    Args:
        causes: runs that ended in errors, by cause (:meth:`Bench.summary`'s ``error_causes``
            summed over arms: :func:`error_causes`).
        runs: runs in the benchmark.
        resume: how to run them again (a command), or ``None``.
        arms: cause -> the arms that had it (:func:`error_causes`), or ``None`` to name none.

    Returns:
        The sentence, or ``None`` when no run ended in an error. Of causes tied for the
        commonest, the first met is named.

    Example:
        >>> error_note({"openai: cannot connect to http://127.0.0.1:9/v1": 19, "RuntimeError": 1}, 20,
        ...            "`hrb bench --resume b1 --retry-errors`")
        '20 of 20 runs ended in errors and count as wrong; commonest cause: openai: cannot connect to http://127.0.0.1:9/v1 (19 runs); fix it, then run them again with `hrb bench --resume b1 --retry-errors`'
        >>> note = error_note({"no output for item 'q3'": 2}, 8, "R", arms={"no output for item 'q3'": ["a", "b"]})
        >>> note.split("; ")[1]
        "commonest cause: no output for item 'q3' (2 runs, arms 'a', 'b')"
        >>> "reads the same outputs and fails the same way" in note, "run them again with R" in note
        (True, False)
        >>> error_note({}, 20) is None
        True
        >>> "`--retry-errors` serves them the same replies" in error_note({"duplicate_draw": 4}, 5, "R")
        True

    Runs refused as duplicate draws (cause ``duplicate_draw``) are counted, but ``resume`` is not
    advised for them (newcomer finding 1): :data:`DUPLICATE_ADVICE` says what helps instead. Nor
    for runs whose item the arm's outputs leave out (newcomer finding 16):
    :data:`MISSING_OUTPUT_ADVICE`.
    """
    n = sum(causes.values())
    if not n:
        return None
    cause, k = max(causes.items(), key=lambda kv: kv[1])
    where = list((arms or {}).get(cause, ()))
    if where:
        shown = ", ".join(map(repr, where[:5])) + (f" and {len(where) - 5} more" if len(where) > 5 else "")
        where_text = f", arm{'s' if len(where) != 1 else ''} {shown}"
    else:
        where_text = ""
    note = (
        f"{n} of {runs} runs ended in errors and count as wrong; "
        f"commonest cause: {cause} ({k} run{'s' if k != 1 else ''}{where_text})"
    )
    dup = causes.get(DUPLICATE_CAUSE, 0)
    if dup:  # newcomer finding 1: --retry-errors cannot make them distinct draws
        note = f"{note}; {dup} of them {'were' if dup != 1 else 'was'} not distinct draws: {DUPLICATE_ADVICE}"
    missing = sum(k for c, k in causes.items() if c.startswith(MISSING_OUTPUT_CAUSE))
    if missing:  # newcomer finding 16: a retry reads the same outputs and fails the same way
        note = f"{note}; {missing} of them had no output to score: {MISSING_OUTPUT_ADVICE}"
    if resume is None or dup + missing == n:
        return note
    return f"{note}; fix {'the other causes' if dup or missing else 'it'}, then run them again with {resume}"


MISSING_OUTPUT_CAUSE = "no output for item "
"""How the cause of a run whose arm's outputs leave its item out begins (:data:`hrbench.errors.NO_OUTPUT`)."""

MISSING_OUTPUT_ADVICE = (
    "a resume or `--retry-errors` reads the same outputs and fails the same way; add the missing "
    "outputs to the arm's outputs (file or mapping) and run the benchmark anew, or leave those items "
    "out of the reference"
)
"""What to do about missing outputs (newcomer finding 16: the TAT-QA demo advised ``--retry-errors``,
which cannot supply an answer the outputs file lacks)."""

DUPLICATE_CAUSE = "duplicate_draw"
"""The cause of a run refused because its reply repeated an earlier run's draw (seed 002)."""

DUPLICATE_ADVICE = (
    "a resume or `--retry-errors` serves them the same replies and refuses them again; what helps is a "
    "provider that gives distinct draws (not one that repeats a response id: a caching proxy, a fixed "
    "seed) and arms whose every request carries the run's draw index, then the benchmark run anew "
    "with the cache off (`cache = false` in the spec, `cache=None` in Python; or `hrb cache clear`)"
)
"""What to do about duplicate draws (newcomer finding 1: the refusal note advised ``--retry-errors``,
which accepted one more duplicate per retry)."""


METRICS_SOURCE = "metrics"
"""The ``source`` of the trace step that keeps a run's benchmark metric values."""


def _enc_json(values: Mapping[str, float]) -> str:
    return msgspec.json.encode(dict(values)).decode()


def trace_metrics(trace: Iterable[Step]) -> dict[str, float] | None:
    """A run's benchmark metric values, as its trace keeps them; ``None`` when it keeps none.

    newcomer finding: a resumed benchmark's metrics are computed over every run, the runs made before
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
    """Per-arm summary of rows (see :meth:`Bench.summary`); ``traces`` by ledger id give list prices."""
    acc = Summary(arm_order or ())
    for r in rows:
        acc.add(r, trace=None if traces is None else traces.get(r.ledger_id, ()))
    return acc.result()


# --------------------------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------------------------
def _check_arms(arms: Arm | Sequence[Arm]) -> list[Arm]:
    arm_list = [arms] if isinstance(arms, Arm) else list(arms)
    if not arm_list:
        raise ConfigError("arms", arms, "a benchmark needs at least one arm")
    for i, a in enumerate(arm_list):
        if not isinstance(a, Arm):
            raise ConfigError(f"arms[{i}]", a, "expected an hrbench.Arm")
    names = [a.name for a in arm_list]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None:
        raise ConfigError("arms", dup, "arm names must be unique")
    return arm_list


def _check_scorer(scorer: Any) -> ScorerLike:
    if scorer is None:
        return exact_scorer()
    if isinstance(scorer, Scorer) or (callable(scorer) and isinstance(getattr(scorer, "name", None), str)):
        return scorer  # type: ignore[no-any-return]
    if callable(scorer):
        return Scorer(scorer, getattr(scorer, "__name__", "scorer"))
    raise ConfigError("scorer", scorer, "expected an hrbench scorer (see hrbench.scorer())")


"""A benchmark metric: ``fn(item, output, label)`` -> a number, or a mapping of names to numbers."""


def _check_metrics(metrics: Any) -> list[tuple[str, BenchMetric]]:
    """The benchmark metrics as ``(name, fn)``; a name is the function's ``name`` or ``__name__``."""
    if metrics is None:
        return []
    if callable(metrics) or isinstance(metrics, (str, bytes)):
        metrics = [metrics]
    out: list[tuple[str, BenchMetric]] = []
    for i, fn in enumerate(metrics):
        if not callable(fn):
            raise ConfigError(f"metrics[{i}]", fn, "expected a function fn(item, output, label) -> number")
        name = getattr(fn, "name", None) or getattr(fn, "__name__", None) or f"metric_{i + 1}"
        out.append((str(name), fn))
    return out


def _run_ids(reference: Reference, splits: Sequence[str]) -> list[str]:
    """The ids of the reference's items on ``splits``, in the reference's order."""
    ref_splits = reference.splits
    return [i for i in reference.ids if ref_splits[i] in splits]


def _plan(
    arms: Any, reference: Any, runs: Any, scorer: Any, split: Any, seed: Any, bench_id: str | None
) -> Plan:
    arm_list = _check_arms(arms)
    if not isinstance(reference, Reference):
        raise ConfigError("reference", reference, "expected an hrbench.Reference")
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise ConfigError("runs", runs, "expected a whole number >= 1")
    splits = [split] if isinstance(split, str) else list(split)
    for s in splits:
        if s not in SPLITS:
            raise ConfigError("split", s, f"unknown split; expected some of {SPLITS}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ConfigError("seed", seed, "expected a whole number")
    item_ids = _run_ids(reference, splits)
    if not item_ids:
        raise ConfigError("split", split, "no item of the reference is on this split")
    return Plan(
        arm_list,
        reference,
        item_ids,
        runs,
        splits,
        seed,
        _check_scorer(scorer),
        bench_id or uuid.uuid4().hex[:16],
    )


RowCallback = Callable[[int, Row, list[Step]], Awaitable[None] | None]


def _refuse_spec(
    arms: Sequence[Arm],
    reference: Reference,
    item_ids: Sequence[str],
    metrics: Any,
    client: Any,
    runs: int = 1,
    scorer: Any = None,
) -> None:
    """Refuse a spec error once, before the first run, rather than in every run.

    Each arm's ``check`` sees the run items, the ids an output may name (the reference's, or
    its source's: :attr:`~hrbench.reference.Reference.source_ids`) and the runs (a template
    naming a field the items lack, a prompt arm with no client, an outputs arm that leaves a
    run without an output), each metric's ``check_labels`` their labels, and a scorer's
    ``check_items`` the run items (a judge template naming ``{document}`` that an item lacks:
    :meth:`hrbench.scoring.judge.JudgeScorer.check_items`). An arm's error names its place,
    ``arms[i].field`` (decided, newcomer finding); a scorer's, ``scorer_settings.field``.
    """
    items, labels = reference.items, reference.labels
    run_items = {i: items[i] for i in item_ids}
    known = reference.source_ids or items.keys()
    for n, arm in enumerate(arms):
        if arm.check is not None:
            with field_under(f"arms[{n}]"):
                arm.check(run_items, client, known, runs)
    for _, fn in metrics:  # a metric that needs labels of one form says so up front
        check_labels = getattr(fn, "check_labels", None)
        if callable(check_labels):
            check_labels({i: labels[i] for i in item_ids})
    check_items = getattr(scorer, "check_items", None)
    if callable(check_items):  # a judge whose template names a field the items lack
        with field_under("scorer_settings"):
            check_items(run_items)


def same_items(items: Mapping[str, Any], item_ids: Iterable[str]) -> list[list[str]]:
    """Groups of item ids whose payloads are identical, each in the reference's order.

    Two payloads are the same when their canonical JSON is (mapping keys sorted); a payload
    JSON cannot hold is compared by its ``repr``.

    Example:
        >>> same_items({"q1": "France", "q2": "Peru", "q3": "France"}, ["q1", "q2", "q3"])
        [['q1', 'q3']]
        >>> same_items({"a": {"x": 1, "y": 2}, "b": {"y": 2, "x": 1}}, ["a", "b"])
        [['a', 'b']]
    """
    seen: dict[bytes, list[str]] = {}
    for i in item_ids:
        try:
            canon = _canon_json.encode(items[i])
        except (TypeError, ValueError, msgspec.EncodeError):
            canon = repr(items[i]).encode()
        seen.setdefault(canon, []).append(i)
    return [ids for ids in seen.values() if len(ids) > 1]


_canon_json = msgspec.json.Encoder(order="sorted")


def _refuse_same_items(items: Mapping[str, Any], item_ids: Sequence[str], client: Any, cached: bool) -> None:
    """Refuse items with identical payloads under a cache or a replay (newcomer finding 8).

    Decided (seeds silent on equal payloads; seed 002 refuses runs that are not distinct
    draws): two items with the same payload send the same requests, so under a draw-keyed
    cache or a replay the later item is served the first one's draws, and the benchmark used to
    be refused as duplicate draws only after the calls were made, blaming the arm. With a
    client and a cache or replay this is now a :class:`~hrbench.errors.ConfigError` on
    ``reference.items`` before any call, naming the ids. Without a cache or replay each item
    gets its own draws, so nothing is refused (a reference may hold one input twice, as
    many test sets do); arms that call no model (``client is None``) are not concerned.
    """
    if client is None or not cached:
        return
    groups = same_items(items, item_ids)
    if not groups:
        return
    shown = "; ".join(" = ".join(repr(i) for i in g) for g in groups[:5])
    if len(groups) > 5:
        shown += f"; and {len(groups) - 5} more group(s)"
    raise ConfigError(
        "reference.items",
        shown,
        "items with the same payload send the same requests, so under the cache (or a replay) the "
        "later ones are served the first one's draws and refused as duplicate draws after "
        "their calls; give each item its own payload (drop the repeats), or run without a cache "
        "(`cache = false` in a spec, cache=None in Python)",
    )


def refuse_before_start(
    client: Any,
    governor: Governor,
    pricing: Pricing | None = None,
    *,
    arms: Sequence[Arm] | None = None,
    reference: Reference | None = None,
    split: str | Sequence[str] = "test",
    metrics: Any = None,
    runs: int = 1,
    cached: bool = False,
    scorer: Any = None,
) -> None:
    """Refuse a benchmark that could make no call or has a spec error, before anything runs or is stored.

    The daemon calls this before it stores a new benchmark, so a refusal leaves no empty
    benchmark behind (decided, newcomer's finding); :func:`benchmark_async` calls it too.

    Args:
        client: the benchmark's model client (``None``: no client).
        governor: its governor.
        pricing: the price table (default: the shipped one; reading it blocks on first use).
        arms: with ``reference``, the arms whose spec is checked against the run items
            (templates, clients) as :func:`benchmark_async` checks them.
        reference: the reference, for ``arms`` and ``metrics``.
        split: the split(s) run, as for :func:`benchmark`.
        metrics: the benchmark's metrics, whose label needs are checked.
        runs: the runs per item (an outputs arm must have an output for each).
        cached: the benchmark reads a cache: items with the same payload are refused
            (:func:`_refuse_same_items`, newcomer finding 8).
        scorer: the benchmark's scorer, whose ``check_items`` (a judge's template fields) sees
            the run items.

    Raises:
        ConfigError: a hosted API's key set nowhere (``client.api_key_env``, issue 15), or,
            under an explicit USD cap, a model or ``billed_as`` model with no price
            (``client.model``, case R04a), or a spec error of an arm or a metric.

    Example:
        >>> from hrbench.models.openai import OpenAIClient
        >>> refuse_before_start(OpenAIClient("no-such-model", "http://127.0.0.1:9", None), Governor(max_usd=1.0))
        Traceback (most recent call last):
        ...
        hrbench.errors.ConfigError: client.model: unpriced_model: model 'no-such-model' has no price, ...
    """
    if arms is not None and reference is not None:
        ids = _run_ids(reference, [split] if isinstance(split, str) else list(split))
        _refuse_spec(_check_arms(arms), reference, ids, _check_metrics(metrics), client, runs, scorer)
        replays = getattr(client, "provider", "") == "replay"
        _refuse_same_items(reference.items, ids, client, cached or replays)
    require_key = getattr(client, "require_key", None)
    if callable(require_key):  # a hosted API's key set nowhere: refused before the first call
        require_key()
    strict_usd = governor.max_usd is not None and not governor.from_defaults
    if getattr(client, "bills", False) and strict_usd:  # case R04a: refused before the first call
        pricing = default_pricing() if pricing is None else pricing
        m = pricing.unpriced(getattr(client, "model", None), getattr(client, "billed_as", ()))
        if m is not None:  # a router priced by its billed_as models passes (README)
            raise ConfigError("client.model", m, unpriced_message(m, governor.max_usd))
    judge = getattr(scorer, "client", None) if getattr(scorer, "needs_context", False) else None
    if getattr(judge, "bills", False) and strict_usd:  # a judge too, before the arms' first call
        priced = judge_pricing(scorer, default_pricing() if pricing is None else pricing)
        m = priced.unpriced(getattr(judge, "model", None), getattr(judge, "billed_as", ()))
        if m is not None:
            raise ConfigError(
                "scorer_settings.client.model", m, unpriced_message(m, governor.max_usd, who="judge")
            )


def _warn_plan(plan: Plan, reference: Reference, runs: int) -> None:
    """Warn, before the first run, of too few runs and of items with no label."""
    if runs < MIN_RUNS:
        warn_at_caller(
            f"{runs} run(s) per item: with fewer than {MIN_RUNS}, run-to-run spread cannot be told from the "
            "differences between arms; interval reports will refuse this benchmark unless it is labelled descriptive",
            FewRunsWarning,
        )
    unlabelled = [i for i in plan.item_ids if plan.unlabelled[i]]
    omitted = [i for i in unlabelled if i in getattr(reference, "labels_omitted", ())]
    if plan.item_ids and len(unlabelled) == len(plan.item_ids):
        warn_at_caller(
            f"no item of reference {reference.hash[:12]} on split(s) {', '.join(plan.split)} has a label: "
            "every run is NA and accuracy is NA (give each item a `label`)",
            NoLabelsWarning,
        )
    elif omitted:  # newcomer finding: a labels table that left an item out, with no count shown
        more = f" and {len(omitted) - 5} more" if len(omitted) > 5 else ""
        warn_at_caller(
            f"{len(omitted)} of {len(plan.item_ids)} items on split(s) {', '.join(plan.split)} are left out "
            f"of the `labels` table ({', '.join(map(repr, omitted[:5]))}{more}): they have no label, their "
            f"runs are NA and accuracy averages the {len(plan.item_ids) - len(unlabelled)} labelled items "
            "(give them a label, or a null label to say so, or leave them out of the reference)",
            UnlabelledItemsWarning,
        )


async def benchmark_async(
    arms: Arm | Sequence[Arm],
    reference: Reference,
    runs: int = 5,
    client: Any = None,
    scorer: Any = None,
    split: str | Sequence[str] = "test",
    governor: Governor | None = None,
    seed: int = 1,
    *,
    cache: Cache | None = None,
    record: str | None = None,
    store: Store | None = None,
    concurrency: int = 16,
    pricing: Pricing | None = None,
    benchmark_id: str | None = None,
    on_row: RowCallback | None = None,
    done: dict[tuple[str, str, int], Row] | None = None,
    raise_duplicates: bool = True,
    keep_rows: bool = True,
    executor: Any = None,
    metrics: Sequence[BenchMetric] | None = None,
    done_metrics: Mapping[str, Mapping[str, float]] | None = None,
    done_traces: Mapping[str, Sequence[Step]] | None = None,
    retry_errors: bool = False,
    drain: Drain | None = None,
    stop: Any = None,
) -> Bench:
    """Run every arm on every item of the chosen split(s), ``runs`` times, and score each run.

    The async twin of :func:`benchmark`; see it for the rules.

    Args:
        arms: an :class:`~hrbench.Arm` or a list of them, with unique names.
        reference: the :class:`~hrbench.Reference`.
        runs: runs per arm per item, a whole number >= 1.
        client: the model client, or ``None``.
        scorer: a scorer; ``exact_scorer()`` by default.
        split: the split or splits to run on.
        governor: the :class:`~hrbench.Governor`; the defaults when ``None``.
        seed: the seed of the arms' private random streams (``ctx.rng``, seed 002). Not sent
            to the model and not part of the cache key (newcomer finding 11): a reply is
            selected by its request and draw index, so an arm that does not use ``ctx.rng``
            gets the same replies under any seed; a provider seed is a request param
            (``ctx.call(..., seed=n)``), which is in the key.
        cache: a :class:`~hrbench.Cache` (draw-keyed), or ``None``.
        record: the name of a recording to record every live reply into (needs ``store``).
        concurrency: how many (arm, item) pairs run at once.
        benchmark_id: the benchmark's id (a fresh one by default); ledger ids start with it.
        on_row: called as ``on_row(seq, row, trace)`` as each row is scored (``seq`` is the
            row's place in the seed's order); may be async.
        done: rows already finished, keyed by ``(arm, item, run)``: they are kept and not run
            again (resuming an interrupted benchmark).
        done_metrics: the metric values of ``done`` rows by ledger id, as each run's trace
            keeps them (:func:`trace_metrics`); a done row without them makes its arm's
            metrics ``None``.
        done_traces: the traces of ``done`` rows by ledger id: the summary names the causes
            of those that ended in an error (``error_causes``; ``"unknown"`` without them),
            and the runs made again are checked against every kept run's draws (request keys,
            provider response ids; seed 002, newcomer finding): a run whose reply repeats a
            kept run's is refused again as a duplicate draw. A kept run without its trace
            cannot be checked against (:class:`~hrbench.errors.DrawsUncheckedWarning`).
        retry_errors: run again the ``done`` runs that ended in an error (``failure_kind ==
            "error"``) instead of keeping them; their new rows replace the old ones (newcomer
            finding: a resume ran only budget-stopped runs again, so a benchmark whose runs
            failed on a dead endpoint could not be finished once it was fixed). What the
            failed attempts spent stays spent: the governor starts from its ledger as given.
        drain: a :class:`~hrbench.runner.runtime.Drain` that a clean cancel begins before cancelling
            the benchmark (newcomer finding): the requests sent finish and their runs are saved.
        stop: a :class:`~hrbench.StopWhenSure` rule: the clusters run in its seeded order and the
            benchmark stops as soon as its sequential test is sure (:mod:`hrbench.runner.stopping`);
            its record is :attr:`Bench.stop`. To go on after a stop, a budget stop or a cancel,
            pass ``done=bench.as_done()`` and ``stop=bench.stop.resume()``: the same order and
            e-process continue. Not with another ``executor``.
        store: where recordings go (``record=``), and where the cache lives when ``cache`` is
            ``True``.
        pricing: the price table; the shipped one by default.
        raise_duplicates: raise :class:`~hrbench.errors.DuplicateDrawError` at the end when an
            arm's runs were not distinct draws (the rows are on ``error.bench``).
        keep_rows: ``False`` keeps no rows or traces in memory (stream them with ``on_row``):
            memory then does not grow with the number of rows.
        metrics: graded scores reported beside the scorer's accuracy (issue 11, decided: one
            scorer decides right or wrong; metrics such as the official TAT-QA or SQuAD F1
            are means beside it). Each is ``fn(item, output, label)`` returning a number (named
            by the function's ``name`` or ``__name__``), a mapping of names to numbers (e.g.
            :func:`hrbench.reading.tatqa_scores`: ``tatqa_em`` and ``tatqa_f1``), a
            :class:`~hrbench.results.records.Score` (its ``correct`` as 1 or 0) or ``None`` (no value).
            A run that raised or was stopped is scored on the output ``None``. A metric with a
            ``check_labels`` attribute gets the run items' labels (id -> label) before the
            first run and may refuse them (``tatqa_scores`` refuses labels that are not
            TAT-QA's: decided, issue). Each name's
            mean is taken over runs within an item, then over labelled reportable items, and
            shown in ``summary()["metrics"]`` and the printout. Each run's values are kept in its
            trace as a ``note`` step (source ``"metrics"``), so a resume counts them (issue
            19); an arm with a resumed row whose trace holds none has ``None`` (NA). A metric
            that raises is recorded
            in the run's trace and gives no value for that run; rows are not changed.
        executor: where the cells run: ``None`` or ``"local"`` (here), or a Ray cluster
            (``"ray"``, ``{"kind": "ray", "address": ...}``, a
            :class:`~hrbench.runner.ray.RayExecutor`; issue 17): same rows, one governor,
            the store and ``on_row`` on this process.
    """
    plan = _plan(arms, reference, runs, scorer, split, seed, benchmark_id)
    plan.metrics = _check_metrics(metrics)
    _refuse_spec(plan.arms, plan.reference, plan.item_ids, plan.metrics, client, plan.runs, plan.scorer)
    remote = None
    if executor is not None and executor != "local":
        if getattr(plan.scorer, "needs_context", False):  # issue 18: the judge's runtime lives here
            raise ConfigError(
                "executor", executor, f"scorer {plan.scorer.name!r} calls a judge model: run it locally"
            )
        from hrbench.runner.ray import resolve_executor  # Ray itself is imported only when it runs

        remote = resolve_executor(executor)
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ConfigError("concurrency", concurrency, "expected a whole number >= 1")
    if governor is not None and not isinstance(governor, Governor):
        raise ConfigError("governor", governor, "expected an hrbench.Governor or None")
    gov = governor if governor is not None else default_governor()
    if cache is True:  # type: ignore[comparison-overlap]
        cache = Cache(store or Store())
    if record is not None and store is None:
        store = cache.store if cache is not None else Store()
    if (
        cache is not None
        and getattr(client, "cacheable", True) is False
        and not getattr(client, "warned", True)
    ):
        client.warned = True
        warn_at_caller(
            f"{client!r}: its function cannot be fingerprinted ({getattr(client, 'not_cacheable_why', '')}), "
            "so its replies are not cached: every request calls it",
            NotCachedWarning,
        )
    replays = getattr(client, "provider", "") == "replay"
    cached = replays or (cache is not None and cache.read and getattr(client, "cacheable", True) is not False)
    _refuse_same_items(reference.items, plan.item_ids, client, cached)
    _warn_plan(plan, reference, runs)
    reference.lock()
    if pricing is None:  # the first load reads the shipped price table: not on the event loop
        pricing = await anyio.to_thread.run_sync(default_pricing)
    rt = Runtime(client, gov, cache, record, store, pricing)
    rt.drain = drain
    judge_rt = judge_runtime(plan.scorer, rt)
    if judge_rt is not None:
        judge_rt.drain = drain
    refuse_before_start(client, gov, pricing, scorer=plan.scorer)
    cells = plan.cells()
    total = len(cells) * runs
    rows: list[Row | None] = [None] * total if keep_rows else []
    traces: dict[str, list[Step]] = {}
    with_metrics = bool(plan.metrics)
    # the running count is the summary when rows are not kept, or when only it sees metric values
    running = Summary([a.name for a in plan.arms], with_metrics) if (not keep_rows or with_metrics) else None
    stops = Stops()
    errors = _Errors()
    sources = Sources(active=seed != DEFAULT_SEED)
    unreported = Unreported(bool(getattr(client, "bills", False)))  # a mock's replies carry no usage
    duplicates: list[DuplicateDrawError] = []
    thread_limiter = anyio.CapacityLimiter(max(1, min(concurrency, 64)))
    score_limiter = anyio.CapacityLimiter(min(concurrency, heavy_scorer_threads()))  # see off_loop
    done = kept(done)  # a row a stop left out of its test (not reportable on a reportable split) runs again
    gate = stopping.gate(stop, plan, runs, done, rt, judge_rt, store, concurrency, remote)
    _seed_kept_draws(rt, done, done_traces, retry_errors, total, client is not None)
    paid_before: dict[str, list[Step]] = {}  # bills of runs made again (a resume): rows match the bill
    if store is not None and benchmark_id is not None and getattr(gov, "journal", None) is not None:
        kept_ids = [r.ledger_id for r in done.values() if not (retry_errors and r.failure_kind == "error")]
        paid_before = await anyio.to_thread.run_sync(prepaid, store, plan.bench_id, kept_ids)

    async def emit(seq: int, row: Row, trace: list[Step], values: dict[str, float] | None) -> None:
        if gate is not None and gate.hold(seq, row, trace, values):
            return  # given on when its cluster is committed (or at the end, not reportable)
        if paid_before:
            row = carry_prepaid(paid_before, row, trace)
        if values is not None:  # kept with the run, for a resume (newcomer finding)
            trace.append(
                Step(ledger_id=row.ledger_id, kind="note", source=METRICS_SOURCE, text=_enc_json(values))
            )
        stops.add(seq, row, trace)
        errors.add(seq, row, trace)
        sources.add(trace)
        unreported.add(row)
        if keep_rows:
            rows[seq] = row
            traces[row.ledger_id] = trace
        if running is not None:
            running.add(row, values, trace)
        if on_row is not None:
            out = on_row(seq, row, trace)
            if out is not None and inspect.isawaitable(out):
                await out

    async def finish(ci: int, cluster: str, item: str, arm: Arm, run: int, att: Attempt) -> None:
        if type(att.output) not in _PLAIN and inspect.isawaitable(att.output):  # a sync arm's awaitable
            try:
                att.output = await att.output
            except Exception as exc:
                failed(att, exc)
        values = metric_values(plan, item, att) if with_metrics else None
        if judge_rt is not None and att.forced is None:
            await judge(plan, judge_rt, item, arm, run, att)
        elif att.forced is None and off_loop(plan.scorer, att.output, plan.labels[item]):  # issue 24
            att.score = await anyio.to_thread.run_sync(scored, plan, item, att, limiter=score_limiter)
        row = score_row(plan, cluster, item, arm, run, att)
        if att.dup is not None:
            duplicates.append(DuplicateDrawError(att.dup, arm=arm.name, item=item, run=run))
        await emit(ci * runs + run - 1, row, att.ctx.trace, values)
        if drain is not None:  # its row is out: a clean cancel need not wait for it
            drain.finished(row.ledger_id)

    def pending(ci: int, item: str, arm: Arm) -> list[int]:
        """The runs of a cell still to make; finished ones (resume) are counted as they are."""
        todo = []
        kept_here = []
        for run in range(1, runs + 1):
            prior = done.get((arm.name, item, run))
            if prior is None or (retry_errors and prior.failure_kind == "error"):
                todo.append(run)
                continue
            kept_here.append(prior)
            # an error's trace names its cause; other kept rows keep their list price as paid
            kept = (done_traces or {}).get(prior.ledger_id) if prior.failure_kind == "error" else None
            if keep_rows:
                rows[ci * runs + run - 1] = prior
                if kept is not None:
                    traces[prior.ledger_id] = list(kept)
            if running is not None:  # its trace's metric values (none: the arm's metrics are NA)
                running.add(prior, (done_metrics or {}).get(prior.ledger_id) if with_metrics else None, kept)
        if todo and done_traces:  # the runs made again are checked against the kept runs' draws
            for prior in kept_here:
                if (trace := done_traces.get(prior.ledger_id)) is not None:
                    rt.kept(arm.name, item, prior.run, trace)
        return todo

    Cell = tuple[int, str, str, Arm]

    async def run_cells(group: list[Cell]) -> None:
        try:
            todos = [pending(ci, item, arm) for ci, _, item, arm in group]
            if group[0][3].is_async:
                for (ci, cluster, item, arm), todo in zip(group, todos, strict=True):
                    for run in todo:
                        await finish(
                            ci, cluster, item, arm, run, await invoke_async(plan, rt, item, arm, run)
                        )
            elif any(todos):
                # a sync arm's runs, on a group of items, take one trip to a worker thread, in order
                atts = await anyio.to_thread.run_sync(
                    lambda: [
                        [invoke_sync(plan, rt, item, arm, run) for run in todo]
                        for (_, _, item, arm), todo in zip(group, todos, strict=True)
                    ],
                    limiter=thread_limiter,
                )
                for (ci, cluster, item, arm), todo, cell_atts in zip(group, todos, atts, strict=True):
                    for run, att in zip(todo, cell_atts, strict=True):
                        await finish(ci, cluster, item, arm, run, att)
        finally:
            for _, _, item, arm in group:
                rt.cells.pop((arm.name, item), None)

    # A sync arm's consecutive cells are grouped (up to 8) when there are many more cells than
    # slots: one worker-thread trip then serves several items, which saves the thread hand-offs
    # that dominate an instantly answering arm.
    size = max(1, min(8, len(cells) // (4 * concurrency)))

    def groups() -> Iterator[list[Cell]]:
        group: list[Cell] = []
        for ci, (cluster, item, arm) in enumerate(cells):
            if group and (arm.is_async or group[0][3].is_async or len(group) >= size):
                yield group
                group = []
            group.append((ci, cluster, item, arm))
        if group:
            yield group

    async def worker(queue: Iterator[list[Cell]]) -> None:
        for group in queue:  # shared by every worker: each takes the next group when it is free
            await run_cells(group)

    # `concurrency` workers take groups of cells from one queue in the seed's order: a cell's
    # runs are made in order, cells start in the seed's order, and at most `concurrency` cells
    # run at once; memory does not grow with the number of cells, and no task is made per cell.
    if gate is not None:
        await gate.run(run_cells, concurrency, emit)
    elif remote is None:
        queue = groups()
        async with anyio.create_task_group() as tg:
            for _ in range(min(concurrency, len(cells))):
                tg.start_soon(worker, queue)
    if remote is not None:  # the cells go to another executor; their rows come back here, once each

        async def deliver(
            ci: int, row: Row, trace: list[Step], dup: str | None, values: dict[str, float] | None
        ) -> None:
            if dup is not None:
                duplicates.append(DuplicateDrawError(dup, arm=row.arm, item=row.item, run=row.run))
            await emit(ci * runs + row.run - 1, row, trace, values)

        work = [(ci, c, i, a, todo) for ci, (c, i, a) in enumerate(cells) if (todo := pending(ci, i, a))]
        await remote.run(plan, rt, work, concurrency, deliver)

    final = [r for r in rows if r is not None]
    bench = Bench(
        id=plan.bench_id,
        rows=final,
        arms=[{k: v for k, v in a.spec.items() if k != "settings"} for a in plan.arms],
        reference=reference,
        runs=runs,
        split=plan.split,
        seed=seed,
        scorer_name=plan.scorer.name,
        traces=traces,
        governor=gov.snapshot(),
        duplicates=duplicates,
        summary=running,
        stopped=stops.n + sum(1 for r in done.values() if r.failure_kind == "budget_stop"),
        stop=None if gate is None else gate.record,
    )
    stops.warn(gov)
    errors.warn()
    unreported.warn()
    sources.warn(seed)
    if duplicates and raise_duplicates:
        first = min(duplicates, key=lambda e: (e.arm or "", e.item or "", e.run or 0))
        arms_hit = sorted({e.arm for e in duplicates if e.arm})
        err = DuplicateDrawError(
            f"arm(s) {', '.join(map(repr, arms_hit))} refused: {len(duplicates)} run(s) were not distinct draws; "
            f"first: {first.message}; {DUPLICATE_ADVICE}",
            arm=first.arm,
            item=first.item,
            run=first.run,
            key=first.key,
        )
        err.bench = bench
        raise err
    return bench


def _seed_kept_draws(
    rt: Runtime,
    done: Mapping[tuple[str, str, int], Row],
    done_traces: Mapping[str, Sequence[Step]] | None,
    retry_errors: bool,
    total: int,
    calls: bool,
) -> None:
    """Seed the distinct-draw check with the kept runs' response ids before a resume runs (seed 002).

    Newcomer finding: ``--retry-errors`` after a benchmark refused as not distinct draws
    accepted one more duplicate per retry, from the cache, because a resumed runtime had
    forgotten the kept runs' draws. Every kept run's provider response ids are remembered for
    its arm (a reply repeating one, on any item, is refused again); its request keys are
    remembered when its item runs (``pending``). Kept runs with no trace in ``done_traces``
    cannot be checked against: :class:`~hrbench.errors.DrawsUncheckedWarning` says how many
    (decided: loud, never silent), when a run is to be made and the arms have a client.
    """
    kept = [r for r in done.values() if not (retry_errors and r.failure_kind == "error")]
    if not kept or len(kept) >= total:
        return  # nothing kept, or nothing to run again
    traces = done_traces or {}
    missing = 0
    for row in kept:
        trace = traces.get(row.ledger_id)
        if trace is None:
            missing += 1
        else:
            rt.kept(row.arm, row.item, row.run, trace, cell=False)
    if missing and calls:
        warn_at_caller(
            f"{missing} of {len(kept)} kept run(s) came without their traces (done_traces): a run made again "
            "whose reply repeats one of their draws cannot be refused as a duplicate draw; "
            "pass done_traces= the first run's traces (Bench.traces, or the store's)",
            DrawsUncheckedWarning,
        )


@dataclass
class _Errors:
    """Runs that ended in errors, counted per arm and cause as rows are scored (issue 12)."""

    per_arm: dict[str, list[int]] = field(default_factory=dict)  # arm -> [errors, runs]
    causes: dict[str, dict[str, int]] = field(default_factory=dict)  # arm -> cause -> runs
    first: dict[str, tuple[int, Row, str]] = field(default_factory=dict)

    def add(self, seq: int, row: Row, trace: list[Step]) -> None:
        counts = self.per_arm.setdefault(row.arm, [0, 0])
        counts[1] += 1
        if row.failure_kind != "error":
            return
        message, cause = _error_of(trace)
        if message.startswith(DUPLICATE_CAUSE):
            return  # reported by the DuplicateDrawError the benchmark raises
        counts[0] += 1
        by_cause = self.causes.setdefault(row.arm, {})
        by_cause[cause] = by_cause.get(cause, 0) + 1
        if row.arm not in self.first or seq < self.first[row.arm][0]:
            self.first[row.arm] = (seq, row, message)

    def text(self) -> str | None:
        """One line per arm with failed runs: how many, by cause, and the first message."""
        parts = []
        for arm, (n, total) in self.per_arm.items():
            if n:
                _, row, message = self.first[arm]
                causes = ", ".join(
                    f"{k} x {c}" for c, k in sorted(self.causes[arm].items(), key=lambda x: -x[1])
                )
                parts.append(
                    f"arm {arm!r}: {n} of {total} run(s) raised or failed ({causes}); "
                    f"first: item {row.item!r}, run {row.run}: {message}"
                )
        if not parts:
            return None
        return "runs ended in errors and are counted wrong as 'error': " + "; ".join(parts)

    def warn(self) -> None:
        text = self.text()
        if text is not None:
            warn_at_caller(text, ArmErrorWarning)


_MODEL_ERROR_PREFIX = "ModelError: the model call failed, so it has no text: "


def _error_of(trace: list[Step]) -> tuple[str, str]:
    """The message and short cause of a run that ended in an error, from its trace."""
    arm_step = next((s.error for s in trace if s.kind == "error" and s.source == "arm" and s.error), None)
    if arm_step is not None:
        if arm_step.startswith(_MODEL_ERROR_PREFIX):  # the arm read the text of a failed reply
            inner = arm_step[len(_MODEL_ERROR_PREFIX) :]
            return inner, failure_cause(inner)
        if NO_OUTPUT.match(arm_step):  # an outputs arm's file lacks the item (missing = "error")
            return arm_step, failure_cause(arm_step)
        head = arm_step.split(": ", 1)[0]
        return arm_step, head[:80]
    failed = next((s.error for s in reversed(trace) if s.kind == "request" and s.error), None)
    if failed is not None:  # the arm returned a failed reply as its output
        return failed, failure_cause(failed)
    return "the scorer called the output an error", "error output"


def benchmark(
    arms: Arm | Sequence[Arm],
    reference: Reference,
    runs: int = 5,
    client: Any = None,
    scorer: Any = None,
    split: str | Sequence[str] = "test",
    governor: Governor | None = None,
    seed: int = 1,
    **kwargs: Any,
) -> Bench:
    """Run every arm on every item of the chosen split(s), ``runs`` times (seed 002).

    Run ``r`` of each arm on each item gets ``ctx.draw_index = r``, so with a cache or a
    recording each run is its own draw. Runs are started in the seed's order, cluster x item x
    arm x run: the runs of one arm on one item are made one after another, and up to
    ``concurrency`` (arm, item) pairs run at once (with ``concurrency=1`` the whole benchmark
    runs in row order). Rows come back in that order whatever order they finished in (clusters
    in order of first appearance in the reference).

    Rules (seed 002):

    - Every request is checked against ``governor`` before it is sent, for the benchmark as a
      whole; a run ends at its first refused request and is recorded ``budget_stop`` and counted
      wrong; later runs are still started, so every row exists. With ``governor=None`` the
      limits of :data:`hrbench.runner.limits` apply to the whole benchmark. When any
      run is stopped, a :class:`~hrbench.errors.BudgetStoppedWarning` says how many, by which
      limits, how many count against an arm, and the first one.
    - An arm that raises has that run recorded as ``"error"`` with the message in its trace;
      so has a run whose model call failed (reading ``.text`` of a failed reply raises
      :class:`~hrbench.errors.ModelError`, and a failed reply returned as the output is an
      error too). The benchmark ends with one :class:`~hrbench.errors.ArmErrorWarning` that
      says, per arm, how many runs ended in errors, by cause (``openai: HTTP 401``,
      ``RuntimeError``, ...), and the first message (decided, issue 12: a 401 or a typo in
      an arm must not pass silently for a bad arm).
    - So has a run whose scorer raised or returned something that is not a score (``None``
      from a function that forgot its ``return``: :class:`~hrbench.scoring.scorer.Scorer`), its cause
      naming the scorer and the value (decided, newcomer finding: it was a silent NA).
    - Every run on an item with no label has ``correct=None`` whatever its failure kind.
    - Rows on the ``dev`` split are ``reportable=False``.
    - An arm whose runs are not distinct draws is refused with
      :class:`~hrbench.errors.DuplicateDrawError` (raised after the run, the rows on
      ``error.bench``): a request answered from a cache or a recording with the same request
      and draw index as a request of an earlier run; a reply whose provider response id was
      seen in an earlier run; a recording served without its own draw key. Each such run is
      recorded ``"error"`` with ``duplicate_draw`` in its trace (case H12c, decided). A mock
      client keeps no cache, so without a cache an arm that leaves the draw index out is not
      refused.
    - A reply served from a cache or a recording costs the run ``usd = 0`` and no governor call;
      its trace step keeps the nominal cost (case H14a).
    - Fewer than 5 runs warns :class:`~hrbench.errors.FewRunsWarning`.
    - No item with a label warns :class:`~hrbench.errors.NoLabelsWarning` (decided, seed silent);
      some items without one warn :class:`~hrbench.errors.UnlabelledItemsWarning`, counting them.
    - The reference is locked when scoring starts.
    - ``ctx.rng`` is seeded from (seed, arm, item, run); the global random state is untouched.

    Args:
        arms: an :class:`~hrbench.Arm` or a list of them, with unique names.
        reference: the :class:`~hrbench.Reference`.
        runs: runs per arm per item, a whole number >= 1 (5 or more expected).
        client: the model client passed to the arms as ``ctx.client``, or ``None``.
        scorer: a scorer; ``exact_scorer()`` by default.
        split: the split or splits to run on.
        governor: the :class:`~hrbench.Governor` the whole benchmark is held to.
        seed: the seed of the arms' private random streams.
        **kwargs: ``cache``, ``record``, ``store``, ``concurrency``, ``pricing``,
            ``benchmark_id``, ``on_row``, ``done`` (rows kept from an interrupted run: a resume),
            ``done_metrics``, ``done_traces``, ``retry_errors`` (run the ``done`` runs that
            ended in errors again), ``raise_duplicates``, ``keep_rows``,
            ``metrics`` (graded scores shown beside the accuracy), ``executor`` (``"local"``, or
            a Ray cluster: issue 17), ``stop`` (a :class:`~hrbench.StopWhenSure` rule: stop as
            soon as the comparison is sure; :attr:`Bench.stop` says how it ended): see
            :func:`benchmark_async`.

    Returns:
        A :class:`Bench`.

    Raises:
        ConfigError: a bad argument (named with its value).
        DuplicateDrawError: an arm's runs were not distinct draws.

    Example:
        >>> import warnings
        >>> from hrbench import Arm, MockClient, Reference
        >>> ref = Reference({"q1": "France", "q2": "Peru", "q3": "Chad", "q4": "Fiji"},
        ...                 labels=["Paris", "Lima", "N'Djamena", "Suva"], cluster=["a", "a", "b", "b"])
        >>> capitals = {"France": "Paris", "Peru": "Lima", "Chad": "Ndjamena", "Fiji": "Suva"}
        >>> cl = MockClient(lambda messages, params: capitals[messages[0]["content"].removeprefix("Capital of ")])
        >>> ask = Arm("ask", lambda item, ctx: ctx.call(f"Capital of {item}").text)
        >>> bench = benchmark(ask, ref, runs=5, client=cl)
        >>> print(bench)  # doctest: +NORMALIZE_WHITESPACE
        <hr_bench> 1 arm(s) x 4 item(s) in 2 cluster(s) x 5 run(s); split test; scorer exact_normalised
         arm accuracy runs wrong failed budget_stop usd
         ask 0.750    20   5     0      0           0.0000
          accuracy: the mean over runs within each item, then over labelled items; intervals are in hb.report() and hrb report.
          failed: runs that failed otherwise than wrong or budget_stop (error, refusal, parse_failure, not_in_document); report()'s failures counts every labelled run that was not right.
    """
    return anyio.run(
        lambda: benchmark_async(arms, reference, runs, client, scorer, split, governor, seed, **kwargs)
    )


async def benchmark_stream(
    arms: Arm | Sequence[Arm],
    reference: Reference,
    runs: int = 5,
    client: Any = None,
    scorer: Any = None,
    split: str | Sequence[str] = "test",
    governor: Governor | None = None,
    seed: int = 1,
    **kwargs: Any,
) -> AsyncIterator[Row]:
    """Yield rows as they are scored (in completion order); same arguments as :func:`benchmark`.

    Duplicate draws are not raised here; each such run's row carries ``failure_kind="error"``.
    """
    send, receive = anyio.create_memory_object_stream[Row](max_buffer_size=1024)

    async def on_row(seq: int, row: Row, trace: list[Step]) -> None:
        await send.send(row)

    async def produce() -> None:
        async with send:
            await benchmark_async(
                arms,
                reference,
                runs,
                client,
                scorer,
                split,
                governor,
                seed,
                on_row=on_row,
                raise_duplicates=False,
                **kwargs,
            )

    async with anyio.create_task_group() as tg:
        tg.start_soon(produce)
        async with receive:
            async for row in receive:
                yield row
