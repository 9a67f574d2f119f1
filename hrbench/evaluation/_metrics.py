"""``evaluate()``'s metrics under this package's name: the names of :mod:`hrbench.metrics`.

Example:
    >>> from hrbench.evaluation import metrics
    >>> from hrbench.metrics import exact_match
    >>> metrics.exact_match is exact_match
    True
"""

from hrbench.metrics import (
    Metric,
    MetricResult,
    Normalisation,
    as_metric,
    contains,
    custom,
    exact_match,
    f1,
    field_match,
    normalize_answer,
    normalize_numbers,
    references,
    score_of,
    squad_exact,
    squad_f1,
    tatqa_exact_match,
    tatqa_f1,
    threshold,
    with_feedback,
    with_trace,
)

__all__ = [
    "Metric",
    "MetricResult",
    "Normalisation",
    "as_metric",
    "contains",
    "custom",
    "exact_match",
    "f1",
    "field_match",
    "normalize_answer",
    "normalize_numbers",
    "references",
    "score_of",
    "squad_exact",
    "squad_f1",
    "tatqa_exact_match",
    "tatqa_f1",
    "threshold",
    "with_feedback",
    "with_trace",
]
