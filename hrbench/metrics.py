"""Metrics for :func:`hrbench.evaluate.evaluate` (seed 003): ``metric(prediction, expected)``.

A metric is called once per row with the module's ``prediction`` (a
:class:`~hrbench.modules.Prediction`: the output fields, by key or attribute) and ``expected``,
the whole data row (an :class:`~hrbench.modules.Example`). It returns a bool or a number (a
bool becomes 0 or 1), or a score with feedback: a ``{"score": ..., "feedback": ...}`` dict or a
:class:`MetricResult`. Metrics made with :func:`with_trace` also receive the row's
:class:`~hrbench.modules.Trace`.

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
:func:`hrbench.scorer.plain_number`); other non-string values are compared as ``str(value)``.

Example:
    >>> from hrbench.modules import Example, Prediction
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
import re
import string
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import msgspec

from hrbench.errors import ConfigError
from hrbench.scorer import fold, plain_number

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

_PUNCT = str.maketrans("", "", string.punctuation)

Normalisation = Literal["squad", "numbers"]
"""Names of the normalisations :func:`exact_match`, :func:`f1` and :func:`contains` offer."""
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)


class MetricResult(msgspec.Struct, frozen=True):
    """A score with feedback text (what :func:`with_feedback` metrics return).

    Attributes:
        score: the row's score (a bool counts as 0 or 1).
        feedback: text explaining the score, or ``None``.
    """

    score: float | bool
    feedback: str | None = None


# --------------------------------------------------------------------------- SQuAD v2.0


def normalize_answer(s: str) -> str:
    """Normalise an answer as the official SQuAD v2.0 script does.

    Lower case, then remove ``string.punctuation`` characters, then replace the whole words
    "a", "an", "the" by a space, then collapse white space.

    Args:
        s: the answer text.

    Returns:
        The normalised text.

    Example:
        >>> normalize_answer("The  Normans!")
        'normans'
        >>> normalize_answer("an apple, a day")
        'apple day'
    """
    return " ".join(_ARTICLES.sub(" ", s.lower().translate(_PUNCT)).split())


_NUM_THOUSANDS = re.compile(r"(?<![0-9.,])([0-9]{1,3})((?:,[0-9]{3})+)(?![0-9]|,[0-9])")
_NUM_ZEROS = re.compile(r"(?<![0-9.])([0-9]+)\.([0-9]*?)0+(?![0-9]|\.[0-9])")
_NUM_SIGN_CURRENCY = re.compile(r"(?<![0-9])-([$\u20ac\u00a3\u00a5])(?=[0-9.])")
_NUM_KEEP = re.compile(r"(?<![0-9])-(?=[0-9.])|(?<=[0-9])\.(?=[0-9])")
_NUM_BETWEEN = re.compile(f"(?<=[0-9])[{re.escape(string.punctuation)}]+(?=[0-9])")
_KEPT = str.maketrans({"\ue001": "-", "\ue002": "."})
_PUNCT_NUMBERS = str.maketrans("", "", string.punctuation)


def normalize_numbers(s: str) -> str:
    """Normalise an answer like SQuAD but keep numbers, signs and short answers intact.

    For non-SQuAD data (decided, SPEC section 6; cases R09e, R09f, R10a, R11c show what SQuAD
    normalisation does instead). Steps, in order:

    1. :func:`hrbench.scorer.fold`: NFKC, curly quotes, minus forms to ``-``, caseless matching
       in every script, white space collapsed.
    2. Numbers: thousands commas dropped (``"1,234"`` is ``1234``; the list ``"3,5,7"`` is not
       a grouped number), trailing zeros of a decimal dropped (``"29.00"`` is ``29``), a sign
       before a currency sign moved after it (``"-$12"`` holds ``-12``).
    3. Punctuation (``string.punctuation``) removed, except a minus sign before a number and a
       decimal point between digits; punctuation between two digits becomes a space, so
       ``"3.14"`` is not ``"314"``, ``"-154"`` is not ``"154"`` and ``"10-12"`` is ``"10 12"``.
    4. The words "a", "an", "the" removed, as in SQuAD, unless nothing else is left: the
       answer ``"A"`` stays ``"a"`` (and is not ``"an"``).
    5. If nothing is left (an answer of punctuation only), the folded text of step 1 is the
       answer, so ``") ] }"`` is not ``"} ] )"``.

    Args:
        s: the answer text.

    Returns:
        The normalised text; empty only for an empty or blank answer.

    Example:
        >>> normalize_numbers("The change was \u2212154."), normalize_numbers("About 3.14")
        ('change was -154', 'about 3.14')
        >>> normalize_numbers("A"), normalize_numbers("1,204.50 USD"), normalize_numbers(") ] }")
        ('a', '1204.5 usd', ') ] }')
    """
    folded = fold(s)
    t = folded
    if "," in t:
        t = _NUM_THOUSANDS.sub(lambda m: m.group(1) + m.group(2).replace(",", ""), t)
    if "." in t:
        t = _NUM_ZEROS.sub(lambda m: m.group(1) + ("." + m.group(2) if m.group(2) else ""), t)
    if "-" in t:
        t = _NUM_SIGN_CURRENCY.sub(r"\1-", t)
    t = _NUM_KEEP.sub(lambda m: "\ue001" if m.group() == "-" else "\ue002", t)
    t = _NUM_BETWEEN.sub(" ", t)
    t = t.translate(_PUNCT_NUMBERS).translate(_KEPT)
    words = t.split()
    kept = [w for w in words if w not in ("a", "an", "the")]
    return " ".join(kept or words) or folded


def _normaliser(normalise: Any) -> Callable[[str], str] | None:
    """The normalisation a metric's ``normalise`` setting names (``None``: compare as written)."""
    if normalise is True or normalise == "squad":
        return normalize_answer
    if normalise == "numbers":
        return normalize_numbers
    if normalise is False:
        return None
    raise ConfigError("normalise", normalise, 'expected True or "squad" (SQuAD v2.0), "numbers", or False')


def _missing(value: Any) -> bool:
    """``None``, NaN, or pandas' ``NA``/``NaT``."""
    if value is None:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    return type(value).__name__ in ("NAType", "NaTType")


def _text(value: Any) -> str:
    if _missing(value):
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, (int, float)):
        if isinstance(value, float) and math.isnan(value):
            return ""
        return plain_number(value)
    if hasattr(value, "item") and not hasattr(value, "__len__"):  # a numpy scalar
        return _text(value.item())
    return str(value)


def references(value: Any) -> list[str]:
    """The reference answers in a data cell, as strings.

    ``None``, NaN, pandas ``NA`` and an empty list give no reference (an unanswerable item); a
    string gives one; a list, tuple or array gives one per element (missing elements dropped).

    Args:
        value: the cell.

    Returns:
        The reference answers, before normalisation.

    Example:
        >>> references(["Normans", "the Normans"]), references("Paris"), references(None)
        (['Normans', 'the Normans'], ['Paris'], [])
    """
    if isinstance(value, str):
        return [value]
    if _missing(value):
        return []
    if hasattr(value, "tolist") and not isinstance(value, (int, float)):  # numpy / pandas / polars
        value = value.tolist()
    if isinstance(value, (list, tuple, set, frozenset)) or (
        isinstance(value, Sequence) and not isinstance(value, (str, bytes))
    ):
        return [_text(v) for v in value if not _missing(v)]
    return [_text(value)]


def _gold(refs: list[str], norm: Callable[[str], str] = normalize_answer) -> list[str]:
    gold = [a for a in refs if norm(a)]
    return gold or [""]


def _f1_one(gold: str, pred: str, norm: Callable[[str], str] = normalize_answer) -> float:
    gold_toks = norm(gold).split() if gold else []
    pred_toks = norm(pred).split() if pred else []
    if not gold_toks or not pred_toks:
        return float(gold_toks == pred_toks)
    num_same = sum((Counter(gold_toks) & Counter(pred_toks)).values())
    if num_same == 0:
        return 0.0
    precision = num_same / len(pred_toks)
    recall = num_same / len(gold_toks)
    return (2 * precision * recall) / (precision + recall)


def squad_exact(prediction: Any, refs: Any, norm: Callable[[str], str] = normalize_answer) -> float:
    """SQuAD v2.0 exact match of one prediction: the best over the references.

    Args:
        prediction: the predicted answer (``None`` is the empty answer).
        refs: one reference, a list of them, or ``None``/``[]`` for an unanswerable item.
        norm: the normalisation (default the official SQuAD one; :func:`normalize_numbers`
            keeps numbers, signs and one-letter answers).

    Returns:
        1.0 or 0.0.

    Example:
        >>> squad_exact("The Normans", ["Normans"]), squad_exact("", []), squad_exact("x", [])
        (1.0, 1.0, 0.0)
    """
    pred = norm(_text(prediction))
    gold = [g for g in map(norm, references(refs)) if g] or [""]
    return 1.0 if pred in gold else 0.0


def squad_f1(prediction: Any, refs: Any, norm: Callable[[str], str] = normalize_answer) -> float:
    """SQuAD v2.0 token F1 of one prediction: the best over the references.

    Args:
        prediction: the predicted answer (``None`` is the empty answer).
        refs: one reference, a list of them, or ``None``/``[]`` for an unanswerable item.
        norm: the normalisation (default the official SQuAD one).

    Returns:
        The F1 score in [0, 1].

    Example:
        >>> round(squad_f1("Normans in France", "the Normans"), 4)
        0.5
    """
    pred = _text(prediction)
    return max(_f1_one(g, pred, norm) for g in _gold(references(refs), norm))


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
        >>> from hrbench.modules import Example, Prediction
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
        >>> from hrbench.modules import Example, Prediction
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
        >>> from hrbench.modules import Example, Prediction
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
        >>> from hrbench.modules import Example, Prediction
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
        >>> from hrbench.modules import Example, Prediction
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
        from hrbench.reading import tatqa_exact_match, tatqa_f1

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
        >>> from hrbench.modules import Example, Prediction
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
        >>> from hrbench.modules import Example, Prediction
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

    The trace is the row's :class:`~hrbench.modules.Trace` (inputs, outputs, model steps with
    prompts and replies, error).

    Args:
        fn: the function.
        name: the metric's name (default: the function's name).

    Returns:
        The metric.

    Example:
        >>> from hrbench.modules import Example, Prediction, Trace
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
