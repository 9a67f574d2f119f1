"""``evaluate()`` and ``evaluate_async()``.

A module run on every row of a data set, each output scored, the whole summarised.
"""

from __future__ import annotations

import warnings
from typing import Any

import anyio

from hrbench.evaluation.evaluate._result import EmptyDataWarning, Evaluation
from hrbench.evaluation.evaluate._tally import (
    Cells,
    checked_args,
    cost_of,
    errors_of,
    summary_of,
    warnings_of,
)
from hrbench.evaluation.modules import Module, Outcome, row_result, run_rows, settings_of

__all__ = ["evaluate", "evaluate_async"]


async def run_evaluation(
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
    met, rows, epochs, concurrency = checked_args(mod, data, metric, epochs, concurrency, return_format, llm)
    found: list[Warning] = []
    n = len(rows)
    draws = list(range(1, epochs + 1))
    cells = Cells(met, rows, epochs)
    if n == 0:
        found.append(EmptyDataWarning("evaluate(): the data set has no rows; mean_score is None"))
        outcomes: list[list[Outcome]] = [[] for _ in draws]
    else:
        settings = settings_of(mod, llm, cache, governor)
        outcomes = await run_rows(mod, rows, settings, draws, concurrency, progress, cells.after)
    errors = errors_of(draws, outcomes, cells.errors)
    run_errors = [e for e in errors if e.kind == "run"]
    metric_errors = [e for e in errors if e.kind == "metric"]
    epoch_scores = cells.scores
    scores, mean_score, score_std, ci_95 = summary_of(epoch_scores, epochs, n)
    last = outcomes[-1]
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
        total_cost=cost_of(outcomes),
        feedbacks=cells.feedbacks[-1],
        program_artifact_id=mod.artifact_id,
        trace_context=trace_context,
        metadata=[o.metadata for o in last] if structured else None,
        traces=[o.trace for o in last] if structured else None,
        data=[row_result(i, o) for i, o in enumerate(last)] if structured else None,
        epochs=epochs,
        epoch_scores=epoch_scores if epochs > 1 else None,
        score_std=score_std,
        ci_95=ci_95,
        epoch_traces=[[o.trace for o in col_o] for col_o in outcomes] if epochs > 1 and structured else None,
        metric=met.name,
        module=mod.name,
        return_format=return_format,
    )
    return result, found + warnings_of(result)


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
    result, found = await run_evaluation(
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
            ``{"score": ..., "feedback": ...}``. Built-ins are in :mod:`hrbench.metrics`
            (``exact_match(field="sentiment")``); a built-in's name (``"exact_match"``) scores the
            module's only output.
        epochs: how many times to run every row (default 1).
        cache: ``None`` or ``False``: no response cache; ``True``: the default on-disk store; a
            :class:`~hrbench.runner.Cache` or a :class:`~hrbench.store.Store`.
        llm: the model client for model modules, overriding the module's own.
        concurrency: the most rows in flight.
        progress: show a tqdm progress bar on stderr.
        return_format: ``"structured"`` (the default) or ``"simple"``, which leaves out metadata,
            traces, epoch_traces and data.
        trace_context: the caller's correlation context, returned in the evaluation as given.
        governor: a :class:`~hrbench.runner.Governor` budget for the model calls; ``None``
            gives the benchmark's default (:func:`~hrbench.runner.default_governor`, 400 calls
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
        >>> from hrbench.metrics import exact_match
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
        return await run_evaluation(
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
