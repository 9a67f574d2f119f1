"""The official TAT-QA exact match and F1 as :func:`~hrbench.evaluation.evaluate.evaluate` metrics."""

from __future__ import annotations

from typing import Any

from hrbench.metrics._base import Metric, get_field
from hrbench.scoring import tatqa_em_f1


def _tatqa_metric(
    name: str,
    which: int,
    field: str | None,
    column: str | None,
    scale_field: str | None,
    scale_column: str,
    type_column: str,
) -> Metric:
    out_field = field if field is not None else "answer"
    col = column if column is not None else out_field

    def fn(prediction: Any, expected: Any) -> float:
        pred = get_field(prediction, out_field, "the prediction")
        p_scale = ""
        if scale_field is not None:
            try:
                p_scale = str(get_field(prediction, scale_field, "the prediction") or "")
            except KeyError:
                p_scale = ""
        gold = get_field(expected, col, "the data row")
        scale = str(_opt(expected, scale_column) or "")
        kind = str(_opt(expected, type_column) or "")
        if not kind and isinstance(gold, (int, float)) and not isinstance(gold, bool):
            kind = "arithmetic"
        return tatqa_em_f1(pred, p_scale, gold, scale, kind)[which]

    settings = {
        "field": out_field,
        "column": col,
        "scale_field": scale_field,
        "scale_column": scale_column,
        "type_column": type_column,
    }
    return Metric(fn=fn, name=name, fields=(out_field,), columns=(col,), settings=settings)


def _opt(row: Any, key: str) -> Any:
    try:
        return get_field(row, key, "the data row")
    except KeyError:
        return None


def tatqa_exact_match(
    field: str | None = None,
    column: str | None = None,
    *,
    scale_field: str | None = "scale",
    scale_column: str = "scale",
    type_column: str = "answer_type",
) -> Metric:
    """The official TAT-QA exact match as an :func:`~hrbench.evaluation.evaluate.evaluate` metric.

    Scores ``prediction[field]`` (a string, a number or a list of spans) with the prediction's
    scale ``prediction[scale_field]`` against the row's ``column`` (the gold answer), with the
    row's ``scale_column`` and ``type_column`` (:func:`tatqa_em_f1`). A missing scale
    field or column is no scale; a row without an answer type is ``arithmetic`` when its answer
    is a number, else spans.

    Args:
        field: the output field holding the answer (default ``"answer"``).
        column: the data column with the gold answer (default: ``field``).
        scale_field: the output field with the predicted scale, or ``None`` for none.
        scale_column: the data column with the gold scale.
        type_column: the data column with the answer type.

    Returns:
        A metric scoring 1.0 or 0.0.

    Example:
        >>> from hrbench.evaluation.modules import Example, Prediction
        >>> row = Example(answer=["$1,496.5"], scale="million", answer_type="span")
        >>> tatqa_exact_match()(Prediction(answer="1496.5", scale="million"), row)
        1.0
    """
    return _tatqa_metric("tatqa_exact_match", 0, field, column, scale_field, scale_column, type_column)


def tatqa_f1(
    field: str | None = None,
    column: str | None = None,
    *,
    scale_field: str | None = "scale",
    scale_column: str = "scale",
    type_column: str = "answer_type",
) -> Metric:
    """The official TAT-QA F1 as an :func:`~hrbench.evaluation.evaluate.evaluate` metric.

    As :func:`tatqa_exact_match`, scoring the F1 of :func:`tatqa_em_f1` (the token-set F1 of
    the answer strings, rounded to 2 decimals; EM for arithmetic and count questions).

    Example:
        >>> from hrbench.evaluation.modules import Example, Prediction
        >>> row = Example(answer=["2019", "2018"], scale="", answer_type="multi-span")
        >>> tatqa_f1()(Prediction(answer=["2019"]), row)
        0.67
    """
    return _tatqa_metric("tatqa_f1", 1, field, column, scale_field, scale_column, type_column)
