"""Metrics made from other metrics or functions: a pass mark, feedback, and the run's trace."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from hrbench.errors import ConfigError
from hrbench.metrics._base import Metric, MetricResult, score_of
from hrbench.metrics._lookup import as_metric

__all__ = ["threshold", "with_feedback", "with_trace"]


def threshold(metric: Any, at: float = 0.5) -> Metric:
    """Turn a graded metric into pass/fail: 1.0 when its score is at least ``at``, else 0.0.

    Feedback from the inner metric is kept.

    Args:
        metric: the inner metric (anything :func:`as_metric` accepts).
        at: the pass mark.

    Returns:
        The metric.

    Example:
        >>> from hrbench.evaluation.modules import Example, Prediction
        >>> from hrbench.metrics import f1
        >>> m = threshold(f1("answer"), at=0.5)
        >>> m(Prediction(answer="Normans in France"), Example(answer="the Normans"))
        1.0
    """
    inner = as_metric(metric)

    def fn(prediction: Any, expected: Any, trace: Any = None) -> Any:
        score, feedback = score_of(inner(prediction, expected, trace))
        passed = 1.0 if score >= at else 0.0
        return passed if feedback is None else MetricResult(passed, feedback)

    return Metric(
        fn=fn,
        name=f"threshold({inner.name}, {at:g})",
        wants_trace=True,
        fields=inner.fields,
        columns=inner.columns,
        settings={"metric": inner.spec, "at": at},
        _rebind=None if inner._rebind is None else (lambda out: threshold(inner.bind([out]), at)),
    )


def with_feedback(
    metric: Any, feedback: Callable[[Any, Any, float], str | None] | None = None, name: str | None = None
) -> Metric:
    """A metric that explains its score; the text lands in ``Evaluation.feedbacks``.

    Either ``metric`` itself returns ``(score, feedback)`` (a 2-tuple, a ``{"score", "feedback"}``
    mapping or a :class:`MetricResult`), or ``feedback(prediction, expected, score)`` writes the
    text for an ordinary metric's score.

    Args:
        metric: the metric or function.
        feedback: optional ``fn(prediction, expected, score) -> str``.
        name: the metric's name.

    Returns:
        A metric returning :class:`MetricResult`.

    Example:
        >>> from hrbench.evaluation.modules import Example, Prediction
        >>> from hrbench.metrics import exact_match
        >>> m = with_feedback(exact_match("sentiment"), lambda p, e, s: "ok" if s else f"want {e.sentiment}")
        >>> m(Prediction(sentiment="negative"), Example(sentiment="positive"))
        MetricResult(score=0.0, feedback='want positive')
    """
    inner = metric if isinstance(metric, Metric) else None
    base = inner or Metric(fn=metric, name=getattr(metric, "__name__", "metric"))

    def fn(prediction: Any, expected: Any, trace: Any = None) -> MetricResult:
        out = base(prediction, expected, trace)
        if isinstance(out, tuple) and len(out) == 2:
            out = MetricResult(out[0], None if out[1] is None else str(out[1]))
        score, text = score_of(out)
        if feedback is not None:
            text = feedback(prediction, expected, score)
        return MetricResult(score, text)

    return Metric(
        fn=fn,
        name=name or base.name,
        wants_trace=True,
        fields=base.fields,
        columns=base.columns,
        settings={"metric": base.spec, "feedback": getattr(feedback, "__name__", None)},
        _rebind=None
        if base._rebind is None
        else (lambda out: with_feedback(base.bind([out]), feedback, name)),
    )


def with_trace(fn: Callable[[Any, Any, Any], Any], name: str | None = None) -> Metric:
    """A metric that also reads the row's execution trace: ``fn(prediction, expected, trace)``.

    The trace is the row's :class:`~hrbench.evaluation.modules.Trace` (inputs, outputs, model steps with
    prompts and replies, error).

    Args:
        fn: the function.
        name: the metric's name (default: the function's name).

    Returns:
        The metric.

    Example:
        >>> from hrbench.evaluation.modules import Example, Prediction, Trace
        >>> one_call = with_trace(lambda p, e, t: len(t.steps) <= 1, name="one_call")
        >>> one_call(Prediction(a="x"), Example(), Trace(ledger_id="r1", module="m", draw_index=1))
        True
    """
    if isinstance(fn, Metric):
        raise ConfigError("fn", fn, "with_trace() takes a function (prediction, expected, trace)")
    n_args = _n_positional(fn)
    if n_args is not None and n_args < 3:
        raise ConfigError("fn", fn, "a trace metric takes three arguments: (prediction, expected, trace)")
    return Metric(fn=fn, name=name or str(getattr(fn, "__name__", "metric")), wants_trace=True)


def _n_positional(fn: Callable[..., Any]) -> int | None:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    n = 0
    for p in sig.parameters.values():
        if p.kind is p.VAR_POSITIONAL:
            return None
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            n += 1
    return n
