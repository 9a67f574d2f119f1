"""Metrics for :func:`hrbench.evaluation.evaluate.evaluate` (seed 003): ``metric(prediction, expected)``.

A metric is called once per row with the module's ``prediction`` (a
:class:`~hrbench.evaluation.modules.Prediction`: the output fields, by key or attribute) and ``expected``,
the whole data row (an :class:`~hrbench.evaluation.modules.Example`). It returns a bool or a number (a
bool becomes 0 or 1), or a score with feedback: a ``{"score": ..., "feedback": ...}`` dict or a
:class:`MetricResult`. Metrics made with :func:`with_trace` also receive the row's
:class:`~hrbench.evaluation.modules.Trace`.

Built-ins take ``field`` (the output to score) and ``column`` (the data column holding the
reference; default: the column named like the field). ``field=None`` means the module's only
output field. A reference column may hold one answer or several (a list); the score is the best
over them, as in SQuAD.

``exact_match`` and ``f1`` reproduce the official SQuAD v2.0 evaluation script
(``evaluate-v2.0.py``) exactly, so a published SQuAD table can be reproduced:

- normalisation (:func:`normalize_answer`): lower case, ASCII punctuation (``string.punctuation``)
  removed, the words "a", "an", "the" removed, white space collapsed, in that order;
- reference answers that normalise to nothing are dropped; an item left with no reference is
  unanswerable and its only reference is ``""`` (so the empty prediction scores 1 on it, any other
  prediction 0); a missing reference (``None``, NaN, ``[]``) is unanswerable too;
- F1 is over whitespace tokens of the normalised strings (bag of tokens); when either side has
  no token, F1 is 1 if both have none, else 0;
- the score of an item is the maximum over its references.

What SQuAD normalisation does to other data (cases R09e, R09f, R10a, R10b, R11c): it removes
every punctuation mark, so ``"3.14"`` equals ``"314"`` and ``"-154"`` equals ``"154"`` (a sign
error scores 1); it removes the words "a", "an" and "the", so the one-letter answer ``"A"`` is
dropped as a reference and the item counts as unanswerable (an empty or failed prediction then
scores 1, and ``"An"`` equals ``"A"``); an answer of punctuation only (``") ] }"``) likewise
normalises to nothing. These are the official rules and stay the default, so published SQuAD
tables reproduce. For numbers, signs, multiple-choice letters or symbols pass
``normalise="numbers"`` (:func:`normalize_numbers`), score with ``answer_contains``
(:func:`hrbench.reading.answer_scorer`), or with the TAT-QA metric for financial answers.

Decided (the script is silent): a prediction of ``None`` is the empty answer ``""``; numbers are
written in plain digits before comparison (``3.0`` -> ``"3"``, see
:func:`hrbench.scoring.scorer.plain_number`); other non-string values are compared as ``str(value)``.

Example:
    >>> from hrbench.evaluation.modules import Example, Prediction
    >>> m = exact_match(field="sentiment")
    >>> m(Prediction(sentiment="Positive."), Example(text="I love it!", sentiment="positive"))
    1.0
    >>> f1("answer")(Prediction(answer="Normans in France"), Example(answer=["the Normans", "Normandy"]))
    0.5
    >>> f1("answer")(Prediction(answer=""), Example(answer=[]))   # no-answer item, empty prediction
    1.0
"""

from __future__ import annotations

import dataclasses
import inspect
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import msgspec

from hrbench.errors import ConfigError
from hrbench.scoring.squad import (
    _gold,
    _normaliser,
    _text,
    normalize_answer,
    normalize_numbers,
    references,
    squad_exact,
    squad_f1,
)
from hrbench.scoring.tatqa import tatqa_em_f1

__all__ = [
    "Metric",
    "MetricResult",
    "contains",
    "custom",
    "exact_match",
    "f1",
    "field_match",
    "normalize_answer",
    "normalize_numbers",
    "references",
    "squad_exact",
    "squad_f1",
    "threshold",
    "with_feedback",
    "with_trace",
]


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


# --------------------------------------------------------------------------- the Metric type


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


def _get(obj: Any, key: str, what: str) -> Any:
    try:
        return obj[key]
    except (KeyError, TypeError, IndexError):
        try:
            return getattr(obj, key)
        except AttributeError:
            raise KeyError(f"{what} has no field {key!r}") from None


def _field_metric(
    name: str,
    compare: Callable[[Any, Any], float],
    factory: Callable[..., Metric],
    field: str | None,
    column: str | None,
    **settings: Any,
) -> Metric:
    col = column if column is not None else field
    if field is None:
        # the field is filled in by bind(); called unbound, use the prediction's only field

        def fn_unbound(prediction: Any, expected: Any) -> float:
            keys = list(prediction)
            if len(keys) != 1:
                raise KeyError(f"{name}: name the field to score; the prediction has {keys}")
            c = column if column is not None else keys[0]
            return compare(prediction[keys[0]], _get(expected, c, "the data row"))

        fn: Callable[..., Any] = fn_unbound
    else:
        f: str = field
        c: str = col  # type: ignore[assignment]

        def fn(prediction: Any, expected: Any) -> float:
            return compare(_get(prediction, f, "the prediction"), _get(expected, c, "the data row"))

    return Metric(
        fn=fn,
        name=name,
        fields=(field,),
        columns=(col,) if col is not None or field is not None else (),
        settings={"field": field, "column": column, **settings},
        _rebind=lambda out: factory(field=out, column=column, **settings),
    )


def exact_match(
    field: str | None = None, column: str | None = None, *, normalise: bool | Normalisation = True
) -> Metric:
    """Exact match of an output field against a data column, SQuAD v2.0 style.

    Warning:
        The default SQuAD v2.0 normalisation removes punctuation and articles: ``"3.14"``
        matches ``"314"``, ``"-154"`` matches ``"154"``, and a one-letter gold ``"A"`` is
        dropped, so an empty prediction matches it (cases R09e, R09f, R10a; this module's
        docstring). Use ``normalise="numbers"`` for numbers, signs and letters.

    Args:
        field: the output field (default: the module's only output).
        column: the data column with the reference answer(s) (default: ``field``).
        normalise: ``True`` or ``"squad"`` (the default) compares SQuAD-normalised answers
            (:func:`normalize_answer`); ``"numbers"`` compares :func:`normalize_numbers`
            (numbers, signs, decimal points and one-letter answers intact); ``False`` compares
            the strings as they are (still the best over several references, and ``""`` for an
            unanswerable item).

    Raises:
        ConfigError: when ``normalise`` is none of these.

    Returns:
        A metric scoring 1.0 or 0.0.

    Example:
        >>> from hrbench.evaluation.modules import Example, Prediction
        >>> exact_match("answer")(Prediction(answer="The Normans"), Example(answer=["Normans"]))
        1.0
    """
    norm = _normaliser(normalise)

    def compare(pred: Any, ref: Any) -> float:
        if norm is not None:
            return squad_exact(pred, ref, norm)
        p = _text(pred)
        return float(any(p == r for r in (references(ref) or [""])))

    def factory(**kw: Any) -> Metric:
        return exact_match(**kw)

    return _field_metric("exact_match", compare, factory, field, column, normalise=normalise)


def f1(
    field: str | None = None, column: str | None = None, *, normalise: bool | Normalisation = True
) -> Metric:
    """SQuAD v2.0 token F1 of an output field against a data column (best over references).

    Warning:
        The default SQuAD v2.0 normalisation drops signs, decimal points and articles, so
        ``"-154"`` has F1 1 against ``"154"`` (case R09f; this module's docstring). Use
        ``normalise="numbers"`` for non-SQuAD data.

    Args:
        field: the output field (default: the module's only output).
        column: the data column with the reference answer(s) (default: ``field``).
        normalise: ``True`` or ``"squad"`` (the default): tokens of :func:`normalize_answer`;
            ``"numbers"``: tokens of :func:`normalize_numbers`.

    Raises:
        ConfigError: when ``normalise`` is neither (token F1 needs a normalisation).

    Returns:
        A metric scoring in [0, 1].

    Example:
        >>> from hrbench.evaluation.modules import Example, Prediction
        >>> round(f1("answer")(Prediction(answer="in Normandy"), Example(answer=["Normandy"])), 3)
        0.667
    """
    norm = _normaliser(normalise)
    if norm is None:
        raise ConfigError("normalise", normalise, 'f1 needs True or "squad" (SQuAD v2.0), or "numbers"')
    n: Callable[[str], str] = norm

    def compare(pred: Any, ref: Any) -> float:
        return squad_f1(pred, ref, n)

    def factory(**kw: Any) -> Metric:
        return f1(**kw)

    return _field_metric("f1", compare, factory, field, column, normalise=normalise)


def contains(
    field: str | None = None, column: str | None = None, *, normalise: bool | Normalisation = True
) -> Metric:
    """Whether an output field contains a reference answer.

    Decided: with ``normalise=True`` both sides are SQuAD-normalised and the reference must
    appear as whole tokens ("cat" is not in "concatenate"); with ``normalise=False`` it is a plain
    substring test. The score is the best over several references; an unanswerable item (no
    reference) scores 1 only for an empty prediction.

    Args:
        field: the output field (default: the module's only output).
        column: the data column with the reference answer(s) (default: ``field``).
        normalise: normalise both sides first: ``True`` or ``"squad"`` (the default),
            ``"numbers"`` (:func:`normalize_numbers`), or ``False`` for a plain substring test.

    Returns:
        A metric scoring 1.0 or 0.0.

    Example:
        >>> from hrbench.evaluation.modules import Example, Prediction
        >>> contains("answer")(Prediction(answer="It was Paris, France."), Example(answer="paris"))
        1.0
    """
    norm = _normaliser(normalise)

    def compare(pred: Any, ref: Any) -> float:
        p = _text(pred)
        if norm is not None:
            p = norm(p)
            gold = [norm(g) for g in _gold(references(ref), norm)]
            if gold == [""]:
                return float(p == "")
            padded = f" {p} "
            return float(any(f" {g} " in padded for g in gold))
        refs = references(ref)
        if not refs:
            return float(p == "")
        return float(any(r in p for r in refs))

    def factory(**kw: Any) -> Metric:
        return contains(**kw)

    return _field_metric("contains", compare, factory, field, column, normalise=normalise)


def field_match(
    fields: Sequence[str] | Mapping[str, str] | None = None, *, normalise: bool | Normalisation = True
) -> Metric:
    """The share of output fields equal to their data columns.

    Args:
        fields: the output fields to compare, each with the column of the same name; or a mapping
            ``{field: column}``; ``None`` compares every output field that has a column of the
            same name in the row.
        normalise: compare SQuAD-normalised text (the default, or ``"squad"``), text
            normalised by :func:`normalize_numbers` (``"numbers"``), or the plain text (``False``).

    Returns:
        A metric scoring in [0, 1] (1 when every field matches).

    Example:
        >>> from hrbench.evaluation.modules import Example, Prediction
        >>> m = field_match(["city", "country"])
        >>> m(Prediction(city="Paris", country="Spain"), Example(city="paris", country="France"))
        0.5
    """
    pairs: list[tuple[str, str]] | None
    if fields is None:
        pairs = None
    elif isinstance(fields, Mapping):
        pairs = [(str(k), str(v)) for k, v in fields.items()]
    elif isinstance(fields, str):
        pairs = [(fields, fields)]
    else:
        pairs = [(str(f), str(f)) for f in fields]
    if pairs is not None and not pairs:
        raise ConfigError("fields", fields, "name at least one field")

    norm = _normaliser(normalise)

    def eq(pred: Any, ref: Any) -> float:
        if norm is not None:
            return squad_exact(pred, ref, norm)
        return float(_text(pred) == _text(ref))

    def fn(prediction: Any, expected: Any) -> float:
        use = pairs
        if use is None:
            use = [(k, k) for k in prediction if k in expected]
            if not use:
                raise KeyError("field_match: no output field has a column of the same name in the row")
        return sum(
            eq(_get(prediction, f, "the prediction"), _get(expected, c, "the data row")) for f, c in use
        ) / len(use)

    return Metric(
        fn=fn,
        name="field_match",
        fields=tuple(f for f, _ in pairs) if pairs else (),
        columns=tuple(c for _, c in pairs) if pairs else (),
        settings={"fields": dict(pairs) if pairs else None, "normalise": normalise},
    )


# --------------------------------------------------------------------------- combinators


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
        if metric not in makers:
            raise ConfigError("metric", metric, f"unknown metric; expected one of {sorted(makers)}")
        return makers[metric]()
    if callable(metric):
        return custom(metric)
    raise ConfigError(
        "metric", metric, "expected a Metric, a function (prediction, expected) or a metric name"
    )


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


# --------------------------------------------------------------------------- TAT-QA


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
        pred = _get(prediction, out_field, "the prediction")
        p_scale = ""
        if scale_field is not None:
            try:
                p_scale = str(_get(prediction, scale_field, "the prediction") or "")
            except KeyError:
                p_scale = ""
        gold = _get(expected, col, "the data row")
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
        return _get(row, key, "the data row")
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
    row's ``scale_column`` and ``type_column`` (:func:`tatqa_em_f1`). Decided: a missing scale
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
