"""What :func:`~hrbench.evaluation.evaluate.evaluate` gives back.

The :class:`Evaluation`, its errors, and the empty-data warning.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import msgspec

from hrbench.evaluation.modules import Prediction, RowResult, Trace
from hrbench.records import usd_text

__all__ = ["EmptyDataWarning", "EvalError", "Evaluation"]


class EmptyDataWarning(UserWarning):
    """Warned when evaluate() is given a data set with no rows (seed 003); the mean is ``None``."""


class EvalError(msgspec.Struct, frozen=True, kw_only=True):
    """One failed row run or metric call.

    Attributes:
        row: the row's 0-based position in the data.
        epoch: the epoch (1-based; also the run's draw index).
        kind: ``"run"`` (the module failed) or ``"metric"`` (the metric raised or returned a
            value that is not a score).
        message: what went wrong.
        failure_kind: for a run error, ``"parse_failure"``, ``"refusal"``, ``"budget_stop"`` or
            ``"error"``; ``None`` for a metric error.
    """

    row: int
    epoch: int
    kind: str
    message: str
    failure_kind: str | None = None

    def __str__(self) -> str:
        return f"row {self.row} (epoch {self.epoch}) {self.kind} error: {self.message}"


_ABSENT_SIMPLE = ("metadata", "traces", "epoch_traces", "data")


_EPOCH_ONLY = ("epoch_scores", "score_std", "ci_95", "epoch_traces")


@dataclasses.dataclass(eq=False)
class Evaluation:
    """What :func:`evaluate` returns (seed 003's ``dsprrr_evaluation``).

    ``None`` plays the seed's ``NA``. Fields that the return format or the number of epochs
    leaves out are ``None`` here and absent from :meth:`to_dict`.

    Attributes:
        mean_score: the mean score with failed rows counted as 0; with epochs > 1 the mean over
            every row and epoch; ``None`` for an empty data set.
        scores: one score per row (a bool score is 0 or 1), ``None`` for a failed row; with
            epochs > 1 each row's mean across epochs, ``None`` if any epoch failed.
        predictions: one :class:`~hrbench.evaluation.modules.Prediction` per row (``None`` where the run
            failed), from the last epoch.
        n_evaluated: rows with a score.
        n_errors: rows where the run or the metric failed (in any epoch).
        errors: every failure, run and metric, as :class:`EvalError` (one per row and epoch).
        n_run_errors, run_errors: rows whose run failed, and those failures.
        n_metric_errors, metric_errors: rows whose metric failed, and those failures.
        total_cost: USD of the model calls over all epochs (cache hits cost 0; a plain-function
            module costs 0), ``None`` when any call's cost is unknown.
        feedbacks: one feedback text per row from metrics that give one, else ``None``; from
            the last epoch.
        program_artifact_id: the module's identity (``<name>-<hash prefix>``).
        trace_context: the caller's correlation context, returned as given.
        metadata: one dict of call metadata per row (last epoch); see
            :class:`~hrbench.evaluation.modules.RowResult`.
        traces: one :class:`~hrbench.evaluation.modules.Trace` per row (last epoch), as trace-aware metrics
            receive it. Traces can contain prompts, inputs and responses.
        data: the run as :func:`~hrbench.evaluation.modules.run_dataset` with ``return_format="structured"``
            gives it (last epoch).
        epochs: the number of epochs.
        epoch_scores: with epochs > 1, one list of row scores per epoch (``None`` for failures).
        score_std: with epochs > 1, the sample standard deviation (n - 1) of the epoch means.
        ci_95: with epochs > 1, a 95% interval for ``mean_score`` by the method
            :func:`hrbench.report` uses: rows are items, epochs their runs, each row's
            score its mean over epochs (failures 0); Wilson's interval on the effective sample
            size with t on ``rows - 1`` df, within [0, 1], covering the choice of rows as well as
            the re-sampling of the model. It has width even when every epoch scored the same.
            ``None`` with a single row; for scores outside [0, 1], the t interval of the row
            means.
        epoch_traces: with epochs > 1, one list of traces per epoch.
        metric: the metric's name.
        module: the module's name.
        return_format: ``"structured"`` or ``"simple"``.
    """

    mean_score: float | None
    scores: list[float | None]
    predictions: list[Prediction | None]
    n_evaluated: int
    n_errors: int
    errors: list[EvalError]
    n_run_errors: int
    run_errors: list[EvalError]
    n_metric_errors: int
    metric_errors: list[EvalError]
    total_cost: float | None
    feedbacks: list[str | None]
    program_artifact_id: str
    trace_context: Any = None
    metadata: list[dict[str, Any]] | None = None
    traces: list[Trace] | None = None
    data: list[RowResult] | None = None
    epochs: int = 1
    epoch_scores: list[list[float | None]] | None = None
    score_std: float | None = None
    ci_95: tuple[float, float] | None = None
    epoch_traces: list[list[Trace]] | None = None
    metric: str = ""
    module: str = ""
    return_format: str = "structured"

    def __repr__(self) -> str:
        return (
            f"Evaluation(mean_score={self.mean_score!r}, n_evaluated={self.n_evaluated}, "
            f"n_errors={self.n_errors}, epochs={self.epochs})"
        )

    def __str__(self) -> str:
        lines = ["", "── hrbench Evaluation Results"]  # seed 003: a blank line, then the header
        if self.mean_score is None:
            lines.append("! Mean Score: NA (no rows)")
        else:
            mark = "✔" if self.n_errors == 0 else "!"
            lines.append(f"{mark} Mean Score: {_num(self.mean_score)}")
        lines.append(f"Evaluated: {self.n_evaluated}")
        shown = self.scores[:20]
        more = f", … ({len(self.scores) - 20} more)" if len(self.scores) > 20 else ""
        lines.append("Scores: " + ", ".join("NA" if s is None else _num(s) for s in shown) + more)
        if self.n_errors:
            lines.append(
                f"Errors: {self.n_errors} (run: {self.n_run_errors}, metric: {self.n_metric_errors})"
            )
            for e in self.errors[:3]:
                lines.append(f"  {e}")
        if self.epochs > 1:
            ci = self.ci_95
            ci_text = "NA" if ci is None else f"[{_num(ci[0])}, {_num(ci[1])}]"
            std = "NA" if self.score_std is None else _num(self.score_std)
            lines.append(f"Epochs: {self.epochs} (std of epoch means {std}; 95% CI {ci_text})")
        if self.total_cost is not None and self.total_cost > 0:
            lines.append(f"Cost: ${usd_text(self.total_cost)}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """The evaluation as plain data (JSON-ready), without the fields it leaves out.

        ``return_format="simple"`` leaves out metadata, traces, epoch_traces and data; one epoch
        leaves out epoch_scores, score_std, ci_95 and epoch_traces.
        """
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            if self.return_format == "simple" and f.name in _ABSENT_SIMPLE:
                continue
            if self.epochs == 1 and f.name in _EPOCH_ONLY:
                continue
            out[f.name] = msgspec.to_builtins(getattr(self, f.name))
        return out


def _num(x: float) -> str:
    return f"{x:.4g}"
