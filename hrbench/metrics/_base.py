"""The metric contract.

:class:`Metric`, what a metric may return and how it is read as a score, and any callable made a
metric.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import msgspec

from hrbench.errors import ConfigError

__all__ = ["Metric", "MetricResult", "custom"]


Normalisation = Literal["squad", "numbers"]
"""Names of the normalisations :func:`exact_match`, :func:`f1` and :func:`contains` offer."""


class MetricResult(msgspec.Struct, frozen=True):
    """A score with feedback text (what :func:`with_feedback` metrics return).

    Attributes:
        score: the row's score (a bool counts as 0 or 1).
        feedback: text explaining the score, or ``None``.
    """

    score: float | bool
    feedback: str | None = None


@dataclasses.dataclass(frozen=True, eq=False)
class Metric:
    """A named metric: ``metric(prediction, expected)`` (or with the trace) -> score.

    Attributes:
        fn: the scoring function.
        name: the metric's name (recorded with the evaluation).
        wants_trace: ``True`` when ``fn`` takes the row's trace as a third argument.
        fields: the output fields the metric reads (``None`` in the tuple: the module's only
            output, filled in by :meth:`bind`); checked against the signature before running.
        columns: the data columns the metric reads; checked against the data before running.
        settings: the metric's settings, for its spec.
    """

    fn: Callable[..., Any]
    name: str
    wants_trace: bool = False
    fields: tuple[str | None, ...] = ()
    columns: tuple[str | None, ...] = ()
    settings: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    _rebind: Callable[[str], Metric] | None = dataclasses.field(default=None, repr=False)

    def __call__(self, prediction: Any, expected: Any, trace: Any = None) -> Any:
        if self.wants_trace:
            return self.fn(prediction, expected, trace)
        return self.fn(prediction, expected)

    @property
    def spec(self) -> dict[str, Any]:
        """The metric's name and settings, as plain data."""
        return {"name": self.name, **{k: v for k, v in self.settings.items() if _plain(v)}}

    def bind(self, output_fields: Sequence[str]) -> Metric:
        """Fill ``field=None`` with the signature's only output field.

        Args:
            output_fields: the module's output field names.

        Returns:
            This metric, or a copy with its field filled in.

        Raises:
            ConfigError: when ``field`` is ``None`` and there is not exactly one output field.
        """
        if self._rebind is None or None not in self.fields:
            return self
        if len(output_fields) != 1:
            raise ConfigError(
                "metric", self.name, f"name the field to score: the module has outputs {list(output_fields)}"
            )
        return self._rebind(output_fields[0])


def _plain(v: Any) -> bool:
    return v is None or isinstance(v, (str, int, float, bool, list, tuple, dict))


def get_field(obj: Any, key: str, what: str) -> Any:
    try:
        return obj[key]
    except (KeyError, TypeError, IndexError):
        try:
            return getattr(obj, key)
        except AttributeError:
            raise KeyError(f"{what} has no field {key!r}") from None


_NUMBERS = frozenset({bool, int, float})


def score_of(value: Any) -> tuple[float, str | None]:
    """Read a metric's return value as ``(score, feedback)``.

    Args:
        value: a bool, a number, a ``{"score", "feedback"}`` mapping or a :class:`MetricResult`.

    Returns:
        The score as a float (a bool as 0 or 1) and the feedback text or ``None``.

    Raises:
        TypeError: when the value is none of these, or the score is not a finite number.
    """
    if type(value) in _NUMBERS:
        if value != value:
            raise TypeError("metric returned NaN")
        return float(value), None
    feedback = None
    if isinstance(value, MetricResult):
        value, feedback = value.score, value.feedback
    elif isinstance(value, Mapping):
        if "score" not in value:
            raise TypeError(f"metric returned a mapping without 'score': {sorted(value)!r}")
        value, feedback = value["score"], value.get("feedback")
    if value is None or isinstance(value, (str, bytes)):
        raise TypeError(f"metric returned {value!r}; expected a bool, a number or {{'score', 'feedback'}}")
    try:
        score = float(value)
    except (TypeError, ValueError):
        raise TypeError(
            f"metric returned {type(value).__name__}; expected a bool, a number or {{'score', 'feedback'}}"
        ) from None
    if math.isnan(score):
        raise TypeError("metric returned NaN")
    return score, None if feedback is None else str(feedback)


def custom(fn: Callable[..., Any], name: str | None = None) -> Metric:
    """A metric from a plain function ``fn(prediction, expected) -> score``.

    Args:
        fn: the function; it may return a bool, a number or ``{"score", "feedback"}``.
        name: the metric's name (default: the function's name).

    Returns:
        The metric.

    Example:
        >>> from hrbench.evaluation.modules import Example, Prediction
        >>> same_label = custom(lambda p, e: p.sentiment == e.sentiment, name="same_label")
        >>> same_label(Prediction(sentiment="positive"), Example(sentiment="positive"))
        True
    """
    if isinstance(fn, Metric):
        return fn if name is None else dataclasses.replace(fn, name=name)
    return Metric(fn=fn, name=name or str(getattr(fn, "__name__", "custom")))
