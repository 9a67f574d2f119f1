"""``evaluate()``: score a module on a data set (seed 003).

:func:`evaluate` runs a module on every row (as :func:`~hrbench.evaluation.modules.run_dataset` does),
scores each output with a metric and returns an :class:`Evaluation`: the mean score with the
per-row scores, predictions and errors. :func:`evaluate_spec` runs one from plain data (for the
daemon's ``evaluate`` method and ``hrb eval``).

Example:
    >>> from hrbench.evaluation.modules import module_fn
    >>> from hrbench import metrics
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
    <BLANKLINE>
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

from hrbench.evaluation.evaluate._evaluating import evaluate, evaluate_async
from hrbench.evaluation.evaluate._result import EmptyDataWarning, EvalError, Evaluation
from hrbench.evaluation.evaluate._spec import EvaluateSpec, evaluate_spec, evaluate_spec_async
from hrbench.evaluation.evaluate._spec import MetricSpec as MetricSpec
from hrbench.evaluation.evaluate._spec import ModuleSpec as ModuleSpec
from hrbench.evaluation.evaluate._spec import build_from_spec as build_from_spec

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
