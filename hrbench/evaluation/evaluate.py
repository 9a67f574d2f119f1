"""``evaluate()``: score a module on a data set (seed 003).

:func:`evaluate` runs a module on every row (as :func:`~hrbench.evaluation.modules.run_dataset` does),
scores each output with a metric and returns an :class:`Evaluation`: the mean score with the
per-row scores, predictions and errors. :func:`evaluate_spec` runs one from plain data (for the
daemon's ``evaluate`` method and ``hrb eval``).

Example:
    >>> from hrbench.evaluation.modules import module_fn
    >>> from hrbench.evaluation import metrics
    >>> rule = module_fn("text -> sentiment",
    ...                  lambda text: "positive" if "love" in text.lower() or "great" in text.lower()
    ...                  else "negative")
    >>> testset = [
    ...     {"text": "I love it!", "sentiment": "positive"},
    ...     {"text": "Awful.", "sentiment": "negative"},
    ...     {"text": "Great value", "sentiment": "positive"},
    ...     {"text": "Not great", "sentiment": "negative"},
    ... ]
    >>> result = evaluate(rule, testset, metric=metrics.exact_match(field="sentiment"))
    >>> print(result)
    ── hrbench Evaluation Results
    ✔ Mean Score: 0.75
    Evaluated: 4
    Scores: 1, 1, 1, 0
    >>> result.scores
    [1.0, 1.0, 1.0, 0.0]
    >>> def same_label(prediction, expected):
    ...     return prediction.sentiment == expected.sentiment
    >>> evaluate(rule, testset, metric=same_label).mean_score
    0.75
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import statistics
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import anyio
import msgspec

from hrbench.errors import BudgetStoppedWarning, ConfigError, MetricErrorWarning
from hrbench.evaluation.metrics import Metric, as_metric, score_of
from hrbench.evaluation.modules import (
    Example,
    FnModule,
    Module,
    Prediction,
    RowResult,
    Trace,
    _check_concurrency,
    _check_inputs,
    _Outcome,
    _row_result,
    _run_rows,
    _settings,
    rows_of,
)
from hrbench.results.records import usd_text

__all__ = [
    "EmptyDataWarning",
    "EvalError",
    "EvaluateSpec",
    "Evaluation",
    "evaluate",
    "evaluate_async",
    "evaluate_spec",
    "evaluate_spec_async",
]


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
            :func:`hrbench.report` uses (issue 14): rows are items, epochs their runs, each row's
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
        lines = ["── hrbench Evaluation Results"]
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


# --------------------------------------------------------------------------- core


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


async def _evaluate(
    mod: Module,
    data: Any,
    metric: Any,
    epochs: int,
    cache: Any,
    llm: Any,
    concurrency: int,
    progress: bool,
    return_format: str,
    trace_context: Any,
    governor: Any,
) -> tuple[Evaluation, list[Warning]]:
    if not isinstance(mod, Module):
        raise ConfigError("module", mod, "expected a module made by module() or module_fn()")
    if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1:
        raise ConfigError("epochs", epochs, "expected a whole number >= 1")
    _check_concurrency(concurrency)
    if return_format not in ("structured", "simple"):
        raise ConfigError("return_format", return_format, "expected 'structured' or 'simple'")
    met = as_metric(metric).bind(mod.signature.output_names)
    rows = rows_of(data)
    _check_metric_needs(met, mod, rows)
    _check_inputs(mod.signature, rows)
    if mod.uses_model and llm is None and getattr(mod, "client", None) is None:
        raise ConfigError(
            "llm", None, "the module has no model client; pass module(..., model=client) or llm="
        )
    found: list[Warning] = []
    n = len(rows)
    draws = list(range(1, epochs + 1))
    examples = [Example(r) for r in rows]
    # one slot per (epoch, row): the score (None until scored), the feedback, the metric error
    score_of_cell: list[list[float | None]] = [[None] * n for _ in draws]
    feedback_of_cell: list[list[str | None]] = [[None] * n for _ in draws]
    metric_error: dict[tuple[int, int], str] = {}

    def failed(d: int, i: int, exc: Exception) -> None:
        metric_error[(d, i)] = f"{met.name}: {type(exc).__name__}: {exc}"

    def record(d: int, i: int, value: Any) -> None:
        try:
            score_of_cell[d][i], feedback_of_cell[d][i] = score_of(value)
        except Exception as exc:  # not a score: a metric error
            failed(d, i, exc)

    async def finish(d: int, i: int, pending: Any) -> None:
        try:
            value = await pending
        except Exception as exc:
            failed(d, i, exc)
            return
        record(d, i, value)

    def after(d: int, i: int, outcome: _Outcome) -> Any:
        if outcome.prediction is None:
            return None
        try:
            value = met(outcome.prediction, examples[i], outcome.trace)
        except Exception as exc:  # a metric error is recorded and warned, never a crash
            failed(d, i, exc)
            return None
        if type(value) not in _PLAIN and inspect.isawaitable(value):
            return finish(d, i, value)
        record(d, i, value)
        return None

    if n == 0:
        found.append(EmptyDataWarning("evaluate(): the data set has no rows; mean_score is None"))
        outcomes: list[list[_Outcome]] = [[] for _ in draws]
    else:
        settings = _settings(mod, llm, cache, governor)
        outcomes = await _run_rows(mod, rows, settings, draws, concurrency, progress, after)

    errors: list[EvalError] = []
    epoch_scores: list[list[float | None]] = []
    for d, epoch in enumerate(draws):
        col = score_of_cell[d]
        for i, o in enumerate(outcomes[d]):
            if o.error is not None:
                errors.append(
                    EvalError(row=i, epoch=epoch, kind="run", message=o.error, failure_kind=o.failure_kind)
                )
        for (dd, i), message in metric_error.items():
            if dd == d:
                errors.append(EvalError(row=i, epoch=epoch, kind="metric", message=message))
        epoch_scores.append(col)
    errors.sort(key=lambda e: (e.row, e.epoch))
    run_errors = [e for e in errors if e.kind == "run"]
    metric_errors = [e for e in errors if e.kind == "metric"]

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

    last = outcomes[-1]
    total_cost: float | None = 0.0
    for col_o in outcomes:
        for o in col_o:
            usd = o.metadata.get("usd")
            if usd is None:
                total_cost = None
                break
            total_cost += usd
        if total_cost is None:
            break

    structured = return_format == "structured"
    result = Evaluation(
        mean_score=mean_score,
        scores=scores,
        predictions=[o.prediction for o in last],
        n_evaluated=sum(s is not None for s in scores),
        n_errors=len({e.row for e in errors}),
        errors=errors,
        n_run_errors=len({e.row for e in run_errors}),
        run_errors=run_errors,
        n_metric_errors=len({e.row for e in metric_errors}),
        metric_errors=metric_errors,
        total_cost=total_cost,
        feedbacks=feedback_of_cell[-1],
        program_artifact_id=mod.artifact_id,
        trace_context=trace_context,
        metadata=[o.metadata for o in last] if structured else None,
        traces=[o.trace for o in last] if structured else None,
        data=[_row_result(i, o) for i, o in enumerate(last)] if structured else None,
        epochs=epochs,
        epoch_scores=epoch_scores if epochs > 1 else None,
        score_std=score_std,
        ci_95=ci_95,
        epoch_traces=[[o.trace for o in col_o] for col_o in outcomes] if epochs > 1 and structured else None,
        metric=met.name,
        module=mod.name,
        return_format=return_format,
    )
    if metric_errors:
        first = metric_errors[0]
        found.append(
            MetricErrorWarning(
                f"the metric failed on {result.n_metric_errors} row(s); their scores are None and count 0 in "
                f"mean_score. First: {first}"
            )
        )
    stopped = [e for e in run_errors if e.failure_kind == "budget_stop"]
    if stopped:
        found.append(
            BudgetStoppedWarning(f"the governor refused requests on {len({e.row for e in stopped})} row(s)")
        )
    return result, found


def _ci_95(row_means: Sequence[float], epochs: int = 1) -> tuple[float, float] | None:
    """The 95% interval of ``mean_score`` over rows: the one :func:`hrbench.stats.report` uses.

    Issue 14 (one interval method behind report(), compare() and ci_95): each row is an item
    in a cluster of its own and its epochs are its runs, so scores in [0, 1] get Wilson's
    interval on the effective sample size with t on ``rows - 1`` df, ``rows * epochs`` runs behind it
    (:func:`hrbench.stats.intervals.proportion_interval`), always within [0, 1]. Scores outside
    [0, 1] (a numeric metric on another scale) get the t interval of the row means instead.
    ``None`` with a single row (no degrees of freedom).
    """
    n = len(row_means)
    if n < 2:
        return None
    import numpy as np

    from hrbench.stats.intervals import _t_interval, proportion_interval

    y = np.asarray(row_means, dtype=float)
    if y.min() >= 0.0 and y.max() <= 1.0:
        iv = proportion_interval(y, np.arange(n), n, 0.95, float(n * epochs))
        lo, hi = iv.low, iv.high
    else:
        lo, hi = _t_interval(float(y.mean()), float(y.std(ddof=1)) / math.sqrt(n), n - 1, 0.95)
    return None if lo is None or hi is None else (lo, hi)


def _emit(found: list[Warning]) -> None:
    for w in found:
        warnings.warn(w, stacklevel=3)


async def evaluate_async(
    module: Module,
    data: Any,
    metric: Any,
    epochs: int = 1,
    cache: Any = None,
    llm: Any = None,
    concurrency: int = 8,
    progress: bool = False,
    return_format: str = "structured",
    *,
    trace_context: Any = None,
    governor: Any = None,
) -> Evaluation:
    """Score a module on a data set (the async twin of :func:`evaluate`; same arguments)."""
    result, found = await _evaluate(
        module,
        data,
        metric,
        epochs,
        cache,
        llm,
        concurrency,
        progress,
        return_format,
        trace_context,
        governor,
    )
    _emit(found)
    return result


def evaluate(
    module: Module,
    data: Any,
    metric: Any,
    epochs: int = 1,
    cache: Any = None,
    llm: Any = None,
    concurrency: int = 8,
    progress: bool = False,
    return_format: str = "structured",
    *,
    trace_context: Any = None,
    governor: Any = None,
) -> Evaluation:
    """Score a module on a data set: run it on every row, score each output, and summarise.

    Rules (seed 003):

    - A row whose run fails (a failed request, a refusal, an unparseable reply, an exception in
      a :func:`~hrbench.evaluation.modules.module_fn` function, a request the governor refused) or whose
      metric raises gets a ``None`` score and counts in ``n_errors``; ``mean_score`` counts it as
      0, so failures lower the score instead of disappearing from it. Run and metric errors are
      kept apart (``run_errors``, ``metric_errors``, with their messages); metric errors also
      warn :class:`~hrbench.errors.MetricErrorWarning` (one warning per call, naming the count
      and the first error).
    - Epoch ``e`` runs every row with draw index ``e``, so each epoch has its own cache partition
      and samples fresh replies, while repeating the same call with the same cache replays every
      epoch; ``cache=False`` samples again.
    - An empty data set warns :class:`EmptyDataWarning` and gives ``mean_score=None``.

    Args:
        module: a module made by :func:`~hrbench.evaluation.modules.module` or
            :func:`~hrbench.evaluation.modules.module_fn`.
        data: a list of dicts, a pandas or a polars DataFrame (or a dict of columns): one column
            per signature input, plus the columns the metric compares against.
        metric: ``metric(prediction, expected)`` where ``prediction`` is the row's
            :class:`~hrbench.evaluation.modules.Prediction` and ``expected`` the whole data row (an
            :class:`~hrbench.evaluation.modules.Example`); it returns a bool, a number or
            ``{"score": ..., "feedback": ...}``. Built-ins are in :mod:`hrbench.evaluation.metrics`
            (``exact_match(field="sentiment")``); a built-in's name (``"exact_match"``) scores the
            module's only output.
        epochs: how many times to run every row (default 1).
        cache: ``None`` or ``False``: no response cache; ``True``: the default on-disk store; a
            :class:`~hrbench.runner.cache.Cache` or a :class:`~hrbench.store.Store`.
        llm: the model client for model modules, overriding the module's own.
        concurrency: the most rows in flight.
        progress: show a tqdm progress bar on stderr.
        return_format: ``"structured"`` (the default) or ``"simple"``, which leaves out metadata,
            traces, epoch_traces and data.
        trace_context: the caller's correlation context, returned in the evaluation as given.
        governor: a :class:`~hrbench.runner.governor.Governor` budget for the model calls; ``None``
            gives the benchmark's default (:func:`~hrbench.runner.governor.default_governor`, 400 calls
            and 5 USD unless the environment says otherwise), shared by every epoch. A refused
            request is a run error (``budget_stop``) and warns
            :class:`~hrbench.errors.BudgetStoppedWarning`. A plain-function module makes no
            calls and needs no budget.

    Returns:
        The :class:`Evaluation`. Printing it shows the seed's summary.

    Raises:
        ConfigError: for a bad argument, a row without a column the module or the metric needs,
            or a model module with no client.

    Example:
        >>> from hrbench.evaluation.modules import module_fn
        >>> from hrbench.evaluation.metrics import exact_match
        >>> rule = module_fn("text -> sentiment",
        ...                  lambda text: "positive" if "love" in text.lower() or "great" in text.lower()
        ...                  else "negative")
        >>> testset = {"text": ["I love it!", "Awful.", "Great value", "Not great"],
        ...            "sentiment": ["positive", "negative", "positive", "negative"]}
        >>> result = evaluate(rule, testset, metric=exact_match(field="sentiment"))
        >>> result.mean_score, result.scores
        (0.75, [1.0, 1.0, 1.0, 0.0])
    """

    async def go() -> tuple[Evaluation, list[Warning]]:
        return await _evaluate(
            module,
            data,
            metric,
            epochs,
            cache,
            llm,
            concurrency,
            progress,
            return_format,
            trace_context,
            governor,
        )

    result, found = anyio.run(go)
    _emit(found)
    return result


# --------------------------------------------------------------------------- from plain data


class ModuleSpec(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """A module as plain data.

    Attributes:
        signature: the signature string.
        instructions: the instructions for a model module.
        fn: an import path ``package.module:function`` for a plain-function module; when absent
            the module is a model module (it needs ``client``).
        params: sampling parameters for a model module.
        name: the module's name.
    """

    signature: str
    instructions: str | None = None
    fn: str | None = None
    params: dict[str, Any] = msgspec.field(default_factory=dict)
    name: str | None = None


class MetricSpec(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """A metric as plain data.

    Attributes:
        name: ``"exact_match"``, ``"f1"``, ``"contains"``, ``"field_match"``, or an import path
            ``package.module:function`` of a custom metric ``fn(prediction, expected)``.
        field: the output field (built-ins; default: the module's only output).
        column: the data column (built-ins; default: the field's name).
        fields: the fields of ``field_match``.
        normalise: ``True``/``"squad"`` (SQuAD v2.0, the default), ``"numbers"`` (numbers, signs
            and one-letter answers intact: :func:`~hrbench.evaluation.metrics.normalize_numbers`) or
            ``False``, for ``exact_match``, ``f1``, ``contains``, ``field_match``.
        threshold: when set, the pass mark of :func:`~hrbench.evaluation.metrics.threshold` around the metric.
    """

    name: str = "exact_match"
    field: str | None = None
    column: str | None = None
    fields: list[str] | None = None
    normalise: bool | Literal["squad", "numbers"] = True
    threshold: float | None = None


class EvaluateSpec(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """An evaluate() call as plain data (the daemon's ``evaluate`` params, ``hrb eval``).

    Attributes:
        module: the module.
        data: the rows.
        metric: the metric: a name, or a :class:`MetricSpec`.
        client: the model client spec of a model module, as :func:`hrbench.specs.build_client`
            reads it (``{"kind": "mock", "reply": ...}``, ``{"kind": "openai", "model": ...,
            "base_url": ..., "api_key_env": ...}``, ``anthropic``, ``replay``).
        epochs, concurrency, return_format: as in :func:`evaluate`.
        cache: use the cache passed to :func:`evaluate_spec` (``False`` bypasses it).
        trace_context: the caller's correlation context, returned as given.
    """

    module: ModuleSpec
    data: list[dict[str, Any]]
    metric: str | MetricSpec = "exact_match"
    client: dict[str, Any] | None = None
    epochs: int = 1
    concurrency: int = 8
    return_format: str = "structured"
    cache: bool = True
    trace_context: Any = None


def _as_spec(spec: Any) -> EvaluateSpec:
    """An :class:`EvaluateSpec` from itself, a dict, or another Struct with the same fields."""
    if isinstance(spec, EvaluateSpec):
        return spec
    if not isinstance(spec, Mapping):
        spec = msgspec.to_builtins(spec)
    return msgspec.convert(spec, EvaluateSpec)


def _metric_from(spec: str | MetricSpec) -> Metric:
    from hrbench.evaluation import metrics as m
    from hrbench.reading import tatqa_exact_match, tatqa_f1
    from hrbench.specs import load_object

    if isinstance(spec, str):
        spec = MetricSpec(name=spec)
    sp = spec
    builtins: dict[str, Any] = {
        "exact_match": lambda: m.exact_match(sp.field, sp.column, normalise=sp.normalise),
        "f1": lambda: m.f1(sp.field, sp.column, normalise=sp.normalise),
        "contains": lambda: m.contains(sp.field, sp.column, normalise=sp.normalise),
        "field_match": lambda: m.field_match(sp.fields, normalise=sp.normalise),
        "tatqa_exact_match": lambda: tatqa_exact_match(sp.field, sp.column),
        "tatqa_f1": lambda: tatqa_f1(sp.field, sp.column),
    }
    met: Metric
    if sp.name in builtins:
        met = builtins[sp.name]()
    elif ":" in sp.name:
        met = m.custom(load_object(sp.name, "metric.name"))
    else:
        raise ConfigError(
            "metric.name", sp.name, f"expected one of {sorted(builtins)} or 'package.module:function'"
        )
    if sp.threshold is not None:
        met = m.threshold(met, sp.threshold)
    return met


def build_from_spec(spec: Mapping[str, Any] | EvaluateSpec, store: Any = None) -> tuple[Module, Metric, Any]:
    """The module, metric and client an :class:`EvaluateSpec` describes.

    Args:
        spec: the spec, as a dict or a struct.
        store: the :class:`~hrbench.store.Store` a ``replay`` client reads.

    Returns:
        ``(module, metric, client or None)``.

    Raises:
        msgspec.ValidationError: when the dict does not match :class:`EvaluateSpec` (the message
            gives the path, e.g. ``Object missing required field `signature` - at `$.module```).
        ConfigError: for an unknown metric, client kind or import path, or a bad signature.
    """
    from hrbench.evaluation.modules import module, module_fn
    from hrbench.specs import build_client, load_object

    s = _as_spec(spec)
    client = None if s.client is None else build_client(s.client, store)
    ms = s.module
    if ms.fn is not None:
        mod: Module = module_fn(ms.signature, load_object(ms.fn, "module.fn"), name=ms.name)
    else:
        mod = module(ms.signature, instructions=ms.instructions, params=ms.params, name=ms.name)
    return mod, _metric_from(s.metric), client


async def evaluate_spec_async(
    spec: Mapping[str, Any] | EvaluateSpec,
    *,
    cache: Any = None,
    governor: Any = None,
    store: Any = None,
    progress: bool = False,
) -> dict[str, Any]:
    r"""Run an evaluate() described by plain data; return the evaluation as plain data.

    For the daemon's ``evaluate`` method and ``hrb eval``: the wire carries no code, so the
    module is a signature (a model module) or an import path (a function module), the client a
    spec, the metric a built-in name or an import path.

    Args:
        spec: an :class:`EvaluateSpec` or a dict of its fields, e.g.
            ``{"module": {"signature": "text -> sentiment"}, "client": {"kind": "mock",
            "reply": "{\"sentiment\": \"positive\"}"}, "data": [...], "metric": "exact_match"}``.
        cache: the daemon's :class:`~hrbench.runner.cache.Cache` (used unless the spec says
            ``"cache": false``).
        governor: the daemon's budget for these calls.
        store: the daemon's :class:`~hrbench.store.Store`, read by a ``replay`` client (default:
            the cache's store).
        progress: show a progress bar on stderr.

    Returns:
        :meth:`Evaluation.to_dict`, plus ``"warnings"``: the warning messages raised.

    Raises:
        msgspec.ValidationError: for a malformed spec (the message gives the path).
        ConfigError: for a bad value.
    """
    s = _as_spec(spec)
    mod, met, client = build_from_spec(s, store if store is not None else getattr(cache, "store", None))
    result, found = await _evaluate(
        mod, s.data, met, s.epochs, cache if s.cache else False, client, s.concurrency, progress,
        s.return_format, s.trace_context, governor,
    )  # fmt: skip
    out = result.to_dict()
    out["warnings"] = [f"{type(w).__name__}: {w}" for w in found]
    return out


def evaluate_spec(spec: Mapping[str, Any] | EvaluateSpec, **kwargs: Any) -> dict[str, Any]:
    """Sync wrapper of :func:`evaluate_spec_async` (same arguments).

    Example:
        >>> out = evaluate_spec({
        ...     "module": {"signature": "text -> sentiment: enum('positive', 'negative')"},
        ...     "client": {"kind": "mock", "reply": '{"sentiment": "positive"}'},
        ...     "data": [{"text": "I love it!", "sentiment": "positive"},
        ...              {"text": "Awful.", "sentiment": "negative"}],
        ...     "metric": {"name": "exact_match", "field": "sentiment"},
        ...     "return_format": "simple",
        ... })
        >>> out["mean_score"], out["scores"]
        (0.5, [1.0, 0.0])
    """

    async def go() -> dict[str, Any]:
        return await evaluate_spec_async(spec, **kwargs)

    return anyio.run(go)
