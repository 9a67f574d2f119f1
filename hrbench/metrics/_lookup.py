"""Any metric form made a :class:`~hrbench.metrics.Metric`.

A built-in's name, a metric, or a plain function.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hrbench._util.forms import check_one_of
from hrbench.errors import ConfigError
from hrbench.metrics._base import Metric, custom
from hrbench.metrics._fields import contains, exact_match, f1, field_match
from hrbench.metrics._tatqa import tatqa_exact_match, tatqa_f1


def as_metric(metric: Any) -> Metric:
    """Turn a metric-like value into a :class:`Metric`.

    Args:
        metric: a :class:`Metric`, a plain function ``fn(prediction, expected)``, or the name of a
            built-in (``"exact_match"``, ``"f1"``, ``"contains"``, ``"field_match"``) applied to the
            module's only output field, or ``"tatqa_exact_match"`` / ``"tatqa_f1"`` (the official
            TAT-QA metric, :mod:`hrbench.reading`, on the fields ``answer`` and ``scale``).

    Returns:
        The metric.

    Raises:
        ConfigError: when ``metric`` is none of these.
    """
    if isinstance(metric, Metric):
        return metric
    if isinstance(metric, str):
        makers: dict[str, Callable[[], Metric]] = {
            "exact_match": exact_match,
            "f1": f1,
            "contains": contains,
            "field_match": field_match,
            "tatqa_exact_match": tatqa_exact_match,
            "tatqa_f1": tatqa_f1,
        }
        check_one_of("metric", metric, sorted(makers), "unknown metric")
        return makers[metric]()
    if callable(metric):
        return custom(metric)
    raise ConfigError(
        "metric", metric, "expected a Metric, a function (prediction, expected) or a metric name"
    )
