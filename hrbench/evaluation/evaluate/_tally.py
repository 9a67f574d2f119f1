"""The steps of one evaluation.

The arguments checked, each run scored as it ends, and the scores, errors, cost and warnings summed
up.
"""

from __future__ import annotations

import inspect
import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from hrbench._util.forms import whole
from hrbench.errors import BudgetStoppedWarning, ConfigError, MetricErrorWarning
from hrbench.evaluation.evaluate._result import EvalError, Evaluation
from hrbench.evaluation.modules import (
    Example,
    FnModule,
    Module,
    Outcome,
    check_concurrency,
    check_inputs,
    rows_of,
)
from hrbench.metrics import Metric, as_metric, score_of

_PLAIN = frozenset({bool, int, float, dict})


def _check_metric_needs(metric: Metric, mod: Module, rows: Sequence[Mapping[str, Any]]) -> None:
    outs = mod.signature.output_names
    for f in metric.fields:
        if f is not None and f not in outs and not isinstance(mod, FnModule):
            raise ConfigError("metric", metric.name, f"scores field {f!r}, which is not an output of {outs}")
    for c in metric.columns:
        if c is None:
            continue
        for i, row in enumerate(rows):
            if c not in row:
                raise ConfigError(
                    f"data[{i}]", sorted(row), f"the row has no column {c!r}, which the metric reads"
                )


def checked_args(
    mod: Module, data: Any, metric: Any, epochs: int, concurrency: int, return_format: str, llm: Any
) -> tuple[Metric, list[dict[str, Any]], int, int]:
    """The bound metric, the rows, ``epochs`` and ``concurrency``, once every argument is checked (see :func:`evaluate`).

    ``epochs`` and ``concurrency`` are read as ``benchmark()`` reads its runs
    (:func:`hrbench._util.forms.whole`): numpy's and pandas' integers are taken, a bool or a
    float (``2.0``) refused.
    """
    if not isinstance(mod, Module):
        raise ConfigError("module", mod, "expected a module made by module() or module_fn()")
    epochs = whole("epochs", epochs, least=1)
    concurrency = check_concurrency(concurrency)
    if return_format not in ("structured", "simple"):
        raise ConfigError("return_format", return_format, "expected 'structured' or 'simple'")
    met = as_metric(metric).bind(mod.signature.output_names)
    rows = rows_of(data)
    _check_metric_needs(met, mod, rows)
    check_inputs(mod.signature, rows)
    if mod.uses_model and llm is None and getattr(mod, "client", None) is None:
        raise ConfigError(
            "llm", None, "the module has no model client; pass module(..., model=client) or llm="
        )
    return met, rows, epochs, concurrency


class Cells:
    """One slot per (epoch, row): the score (``None`` until scored), the feedback, the metric error."""

    def __init__(self, met: Metric, rows: list[dict[str, Any]], epochs: int) -> None:
        self.met = met
        self.examples = [Example(r) for r in rows]
        self.scores: list[list[float | None]] = [[None] * len(rows) for _ in range(epochs)]
        self.feedbacks: list[list[str | None]] = [[None] * len(rows) for _ in range(epochs)]
        self.errors: dict[tuple[int, int], str] = {}

    def failed(self, d: int, i: int, exc: Exception) -> None:
        self.errors[(d, i)] = f"{self.met.name}: {type(exc).__name__}: {exc}"

    def record(self, d: int, i: int, value: Any) -> None:
        try:
            self.scores[d][i], self.feedbacks[d][i] = score_of(value)
        except Exception as exc:  # not a score: a metric error
            self.failed(d, i, exc)

    async def finish(self, d: int, i: int, pending: Any) -> None:
        try:
            value = await pending
        except Exception as exc:
            self.failed(d, i, exc)
            return
        self.record(d, i, value)

    def after(self, d: int, i: int, outcome: Outcome) -> Any:
        """Score one run as it ends (an awaitable when the metric is async)."""
        if outcome.prediction is None:
            return None
        try:
            value = self.met(outcome.prediction, self.examples[i], outcome.trace)
        except Exception as exc:  # a metric error is recorded and warned, never a crash
            self.failed(d, i, exc)
            return None
        if type(value) not in _PLAIN and inspect.isawaitable(value):
            return self.finish(d, i, value)
        self.record(d, i, value)
        return None


def errors_of(
    draws: list[int], outcomes: list[list[Outcome]], metric_error: dict[tuple[int, int], str]
) -> list[EvalError]:
    """Every run and metric error, by row then epoch."""
    errors: list[EvalError] = []
    for d, epoch in enumerate(draws):
        for i, o in enumerate(outcomes[d]):
            if o.error is not None:
                errors.append(
                    EvalError(row=i, epoch=epoch, kind="run", message=o.error, failure_kind=o.failure_kind)
                )
        for (dd, i), message in metric_error.items():
            if dd == d:
                errors.append(EvalError(row=i, epoch=epoch, kind="metric", message=message))
    errors.sort(key=lambda e: (e.row, e.epoch))
    return errors


def summary_of(
    epoch_scores: list[list[float | None]], epochs: int, n: int
) -> tuple[list[float | None], float | None, float | None, tuple[float, float] | None]:
    """Each row's score over the epochs, the mean score, its spread over epochs and its 95% interval."""
    if epochs == 1:
        scores = epoch_scores[0]
    else:
        scores = [
            None
            if any(col[i] is None for col in epoch_scores)
            else sum(col[i] for col in epoch_scores) / epochs  # type: ignore[misc]
            for i in range(n)
        ]
    epoch_means = [sum(s or 0.0 for s in col) / n for col in epoch_scores] if n else []
    mean_score = sum(epoch_means) / epochs if n else None
    score_std = ci_95 = None
    if epochs > 1 and n:
        score_std = statistics.stdev(epoch_means)
        ci_95 = _ci_95([sum(col[i] or 0.0 for col in epoch_scores) / epochs for i in range(n)], epochs)
    return scores, mean_score, score_std, ci_95


def cost_of(outcomes: list[list[Outcome]]) -> float | None:
    """What every run cost, in USD (``None`` when one run's cost is unknown)."""
    total = 0.0
    for col in outcomes:
        for o in col:
            usd = o.metadata.get("usd")
            if usd is None:
                return None
            total += usd
    return total


def warnings_of(result: Evaluation) -> list[Warning]:
    """The warnings an evaluation gives: failed metrics, refused requests."""
    found: list[Warning] = []
    if result.metric_errors:
        first = result.metric_errors[0]
        found.append(
            MetricErrorWarning(
                f"the metric failed on {result.n_metric_errors} row(s); their scores are None and count 0 in "
                f"mean_score. First: {first}"
            )
        )
    stopped = [e for e in result.run_errors if e.failure_kind == "budget_stop"]
    if stopped:
        found.append(
            BudgetStoppedWarning(f"the governor refused requests on {len({e.row for e in stopped})} row(s)")
        )
    return found


def _ci_95(row_means: Sequence[float], epochs: int = 1) -> tuple[float, float] | None:
    """The 95% interval of ``mean_score`` over rows: the one :func:`hrbench.stats.report` uses.

    One interval method behind report(), compare() and ci_95: each row is an item
    in a cluster of its own and its epochs are its runs, so scores in [0, 1] get Wilson's
    interval on the effective sample size with t on ``rows - 1`` df, ``rows * epochs`` runs behind it
    (:func:`hrbench.stats.proportion_interval`), always within [0, 1]. Scores outside
    [0, 1] (a numeric metric on another scale) get the t interval of the row means instead.
    ``None`` with a single row (no degrees of freedom).
    """
    n = len(row_means)
    if n < 2:
        return None
    import numpy as np

    from hrbench.stats import proportion_interval, t_interval

    y = np.asarray(row_means, dtype=float)
    if y.min() >= 0.0 and y.max() <= 1.0:
        iv = proportion_interval(y, np.arange(n), n, 0.95, float(n * epochs))
        lo, hi = iv.low, iv.high
    else:
        lo, hi = t_interval(float(y.mean()), float(y.std(ddof=1)) / math.sqrt(n), n - 1, 0.95)
    return None if lo is None or hi is None else (lo, hi)
