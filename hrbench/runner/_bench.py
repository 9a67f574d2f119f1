"""A finished benchmark: :class:`Bench`, its rows, summary, printout and exports.

:func:`hrbench.benchmark` returns one; its summary is :class:`~hrbench.runner._summary.Summary`'s
count, and its printout ends with the notes of :mod:`hrbench.runner._notes`.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator
from typing import Any, BinaryIO

import msgspec

from hrbench.errors import DuplicateDrawError
from hrbench.records import ROW_COLUMNS, Row, Step, usd_text
from hrbench.reference import Reference
from hrbench.runner._ledger import unknown_sentence
from hrbench.runner._notes import error_causes, error_note, stop_note
from hrbench.runner._stopping import StopRecord
from hrbench.runner._summary import Summary, summarise
from hrbench.stats import reported_rows, stop_lines, stop_section

__all__ = ["DESCRIPTIVE_LINE", "FAILED_LEGEND", "Bench"]

DESCRIPTIVE_LINE = (
    "  Descriptive only: accuracy is the mean over runs within each item, then over labelled items, "
    "with no interval."
)
"""The printout's line under the table, as seed 002 prints it: ``print()`` is descriptive only."""

FAILED_LEGEND = (
    "  failed: runs that failed otherwise than wrong or budget_stop (error, refusal, parse_failure, "
    "not_in_document, reasoning_exhausted); report()'s failures counts every labelled run that was not right."
)
"""The printout's line saying what its ``failed`` column counts, shown when an arm has failed runs
(report()'s ``failures`` column counts every not-right run, wrong and budget_stop included)."""


class Bench:
    """A finished benchmark: one row per cluster x item x arm x run (seed 002's ``hr_bench``).

    Attributes:
        id: the benchmark's id.
        rows: the rows (:class:`~hrbench.records.Row`), in cluster x item x arm x run order.
        arms: one record per arm: name, version, hash, derived_from.
        reference: the :class:`~hrbench.Reference`; ``reference_hash`` its hash.
        runs, split, seed: as passed.
        scorer_name: the scorer's name.
        traces: ``{ledger_id: [Step, ...]}``, one trace per run.
        governor: the governor's limits and use at the end (:meth:`Governor.snapshot`); its
            ``unknown`` is the spend crashes of earlier runs left unknown, which
            the printout states as "unknown, at most X USD / N calls".
        duplicates: the duplicate draws found (each a ``DuplicateDrawError``).
        stopped: how many runs the governor stopped (``budget_stop``), dev split included.
        stop: how a benchmark run with a stop rule (``stop=hb.StopWhenSure(...)``) ended, a
            :class:`~hrbench.runner._stopping.StopRecord` (reason, clusters run and of how many,
            e-values, the order's seed); ``None`` without a rule. (``stopped`` keeps its meaning.)
        errors: how many runs ended in an error (``failure_kind == "error"``: a failed model
            call, an arm or scorer that raised), dev split included.
        status: ``"budget_stopped"`` when any run was stopped, else ``"errors"`` when any run
            ended in an error, else ``"done"``.

    A benchmark a budget stopped is never shown as plainly done (seed 002 keeps stopped runs
    counted wrong). Its ``status`` is ``"budget_stopped"``, and its
    printout ends with :meth:`stop_note`. Likewise a benchmark with runs that ended in
    errors, all or some, has the status ``"errors"`` (a budget stop wins when both), and its
    printout says how many and the commonest cause (:meth:`error_note`).

    A benchmark run with ``keep_rows=False`` (rows streamed to ``on_row`` or a store) holds no
    rows or traces; its summary and printout come from a running count.

    The printout's header counts the items and clusters of the rows reported (reportable, or on
    the dev split), as its table counts runs; when a stop rule (``stop=``) cancelled clusters in
    flight, it says how many runs of theirs are kept, not reported (``reportable = False``).

    As ``hrb`` prints ``hrb bench --resume ID --retry-errors``, the printout of a
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
        """Per arm: accuracy, dev_accuracy, runs, wrong, failed, errors, budget_stop, reasoning_exhausted, usd, tokens.

        ``accuracy`` is the mean over runs within each item, then over labelled items, on the
        reportable rows (seed 002); ``None`` when no item is labelled. ``dev_accuracy`` is the
        same on the dev split. ``runs`` counts reportable rows; ``wrong`` those whose
        failure_kind is ``"wrong"``; ``failed`` those with another failure kind
        (``parse_failure``, ``refusal``, ``not_in_document``, ``error``) other than
        ``budget_stop``, which is counted apart; ``errors`` those of ``failed`` whose kind is
        ``"error"`` (a failed model call, an arm or scorer that raised), and
        ``reasoning_exhausted`` those of ``failed`` whose model spent its whole output limit
        reasoning and gave no answer (costed, never scored); ``run_capped`` those of
        ``budget_stop`` that the run's own cap stopped (``max_*_per_run``; the benchmark went
        on, so they do not make it ``budget_stopped``). ``usd`` sums every row
        (``None`` when a model had no price): what was paid, 0 for cache and recording hits.
        ``usd_list`` sums the same rows at list price, each reply at what it cost when first
        paid (:func:`~hrbench.records.list_usd`), so arms compare by cost whatever
        the cache served. ``usd_from_log`` counts the runs whose tokens and list price come from
        another tool's log (an imported arm: ``usd_provenance`` ``"log"``), not paid here; their
        ``usd_list`` is ``None`` when the log records no cost. ``error_causes`` counts every run
        that ended in an error (dev split included) by cause (``openai: HTTP 401``,
        ``RuntimeError``, ...; the
        status and banner name the commonest). ``metrics`` holds the mean of each benchmark
        metric (see :func:`benchmark`'s ``metrics``), averaged as ``accuracy`` is; ``{}``
        without metrics.
        """
        if self._summary is not None:
            return self._summary.result()
        return summarise(self.rows, [a["name"] for a in self.arms], self.traces)

    def __str__(self) -> str:
        # the items and clusters of the rows reported: a stop's cancelled clusters are not counted
        if self._summary is not None:
            n_items, n_clusters = len(self._summary.items), len(self._summary.clusters)
            cancelled = self._summary.cancelled
        else:
            shown = reported_rows(self.rows)
            n_items, n_clusters = len({r.item for r in shown}), len({r.cluster for r in shown})
            cancelled = len(self.rows) - len(shown)
        head = (
            f"<hr_bench> {len(self.arms)} arm(s) x {n_items} item(s) in {n_clusters} cluster(s) x {self.runs} run(s); "
            f"split {', '.join(self.split)}; scorer {self.scorer_name}"
        )
        if cancelled:
            head += f"; {cancelled} more run(s) of clusters cancelled at the stop are kept, not reported"
        summ = self.summary()
        has_dev = any(s["dev_accuracy"] is not None for s in summ)
        metric_names = list(dict.fromkeys(m for s in summ for m in s.get("metrics", {})))
        cols = (
            ["arm", "accuracy"]
            + (["dev"] if has_dev else [])
            + metric_names
            + ["runs", "wrong", "failed", "budget_stop", "usd"]
        )
        # the list price shows beside what was paid when they differ (a
        # cache or recording served a reply), so the seed-002 printout stays as it is otherwise
        listed = any(_differ(s["usd"], s.get("usd_list", s["usd"])) or s.get("usd_from_log") for s in summ)
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
        lines.append(DESCRIPTIVE_LINE)  # seed 002's text: the seed's example prints no more than this
        if any(s["failed"] for s in summ):
            lines.append(FAILED_LEGEND)
        if listed:
            lines += _list_price_notes(summ)
        note = self.stop_note()
        if note is not None:
            lines.append(f"  Budget stopped: {note}; a larger governor runs them.")
        failed = self.error_note(self._retry())
        if failed is not None:
            lines.append(f"  Runs failed: {failed}.")
        thought = [f"{s['arm']!r} {s['reasoning_exhausted']}" for s in summ if s.get("reasoning_exhausted")]
        if thought:
            lines.append(
                f"  Reasoning exhausted (in failed; costed, never scored): {', '.join(thought)} run(s) spent the whole "
                "output limit reasoning and gave no answer; raise max_tokens or lower the reasoning effort."
            )
        if metric_names:
            lines.append(
                f"  Beside accuracy (scorer {self.scorer_name}): the benchmark metrics "
                f"{', '.join(metric_names)}, averaged the same way."
            )
        if self.stop is not None:  # stopped when sure: how, after how many clusters, the e-values
            lines += stop_lines(stop_section(self.stop.to_dict()), pairs_follow=False)  # it shows no pairs
        crashed = unknown_sentence(self.governor.get("unknown") if isinstance(self.governor, dict) else None)
        if crashed is not None:  # what a crash left unknown, counted as spent
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
        """``"budget_stopped"``, ``"errors"`` or ``"done"`` (see the class).

        Example:
            >>> import warnings
            >>> from hrbench import Arm, Reference, benchmark
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
            >>> from hrbench import Arm, Reference, benchmark
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
        """Write the rows as JSON lines (the seed's columns, then ``scorer``); returns how many were written.

        ``scorer`` names the scorer that scored each row (:attr:`scorer_name`), as every file
        export does: a file has no attributes to keep it in. ``path``: the file (written whole or
        not at all; ``ConfigError`` naming it when it cannot be, a full disk included), or a
        binary file object.
        """
        scorer = {"scorer": self.scorer_name}
        data = msgspec.json.Encoder().encode_lines([{**d, **scorer} for d in self.to_dicts()])
        with _destination(path) as f:
            f.write(data)
        return len(self.rows)

    def to_csv(self, path: str | Any) -> int:
        """Write the rows as CSV with the seed's columns and ``scorer``; returns how many were written.

        A header line of the seed's columns in the seed's order, then ``scorer`` (the name of
        the scorer that scored each row, :attr:`scorer_name`: a file keeps no attributes),
        ``None`` (NA) as an empty cell, booleans as ``True``/``False`` (what
        ``pandas.read_csv`` reads back as booleans), UTF-8.

        Args:
            path: the file to write (overwritten, whole or not at all), or a binary file object.

        Returns:
            The number of rows written.

        Raises:
            ConfigError: the file cannot be written (naming it and why, a full disk included);
                nothing is left behind.

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

        with _destination(path) as out:
            f = io.TextIOWrapper(out, encoding="utf-8", newline="")
            w = csv.writer(f, lineterminator="\n")
            w.writerow((*ROW_COLUMNS, "scorer"))
            w.writerows(
                ["" if v is None else v for v in (*msgspec.structs.astuple(r), self.scorer_name)]
                for r in self.rows
            )
            f.flush()
            f.detach()  # `out` stays open for its owner
        return len(self.rows)

    def to_parquet(self, path: str | Any) -> int:
        """Write the rows as Parquet with the seed's columns and ``scorer``, typed; returns how many were written.

        Strings, int64, float64 and booleans, every column nullable (``None`` is null), so an
        all-NA column keeps its type; ``scorer`` (a string) names the scorer that scored each
        row (:attr:`scorer_name`).

        Args:
            path: the file to write (overwritten, whole or not at all), or a binary file object.

        Returns:
            The number of rows written.

        Raises:
            ImportError: pyarrow is not installed (it comes with the ``pandas`` and ``dev``
                extras: ``pip install 'hrbench[pandas]'``).
            ConfigError: the file cannot be written (naming it and why, a full disk included);
                nothing is left behind.
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
        fields.append(pa.field("scorer", pa.string()))
        rows = [{**d, "scorer": self.scorer_name} for d in self.to_dicts()]
        with _destination(path) as out:
            pq.write_table(pa.Table.from_pylist(rows, schema=pa.schema(fields)), out)
        return len(self.rows)

    def to_inspect(self, path: str | Any, name: str | None = None, log_format: str = "json") -> list[Any]:
        """Write one Inspect eval log per arm into folder ``path``, ``.json`` or ``.eval`` (``log_format``).

        See :func:`~hrbench.interop.bench_to_inspect`.
        """
        from hrbench.interop import bench_to_inspect

        return bench_to_inspect(self, path, name, log_format)

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


def _list_price_notes(summ: list[dict[str, Any]]) -> list[str]:
    """The printout's notes on ``usd_list``: what it is, and the arms whose runs it takes from a log.

    An arm from a log whose ``usd_list`` is ``None`` is named as NA (its log records no cost for
    a run); one whose log records a cost of 0 has a ``usd_list`` of 0, and is not.
    """
    lines = [
        "  usd is what was paid (0 for replies a cache or recording served); usd_list prices "
        "every reply at what it cost when first paid: compare arms by usd_list."
    ]
    logged = [f"{s['arm']} ({s['usd_from_log']} runs)" for s in summ if s.get("usd_from_log")]
    if logged:
        lines.append(
            f"  From the log, not paid here: the tokens and usd_list of {', '.join(logged)} are what "
            "the other tool's log records."
        )
    unrecorded = [s["arm"] for s in summ if s.get("usd_from_log") and s.get("usd_list") is None]
    if unrecorded:
        lines.append(
            f"  usd_list of {', '.join(unrecorded)} is NA: its log records no cost for some or all of "
            "its runs (a logged cost of 0 counts 0)."
        )
    return lines


@contextlib.contextmanager
def _destination(path: Any) -> Iterator[BinaryIO]:
    """A binary file to write into: ``path`` itself when it is a file object, else ``path`` written whole."""
    if hasattr(path, "write"):
        yield path
        return
    from hrbench._util.files import output_file

    with output_file(path, "path") as f:
        yield f


def _differ(paid: float | None, listed: float | None) -> bool:
    if paid is None or listed is None:
        return (paid is None) != (listed is None)
    return abs(paid - listed) > 1e-12
