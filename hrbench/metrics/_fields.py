"""The built-in metrics that compare output fields with data columns.

Exact match, F1 and containment (the official SQuAD rules) and per-field match.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hrbench.errors import ConfigError
from hrbench.metrics._base import Metric, Normalisation, get_field
from hrbench.scoring import cell_text, gold_answers, normaliser, references, squad_exact, squad_f1

__all__ = ["contains", "exact_match", "f1", "field_match"]


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
            return compare(prediction[keys[0]], get_field(expected, c, "the data row"))

        fn: Callable[..., Any] = fn_unbound
    else:
        f: str = field
        c: str = col  # type: ignore[assignment]

        def fn(prediction: Any, expected: Any) -> float:
            return compare(get_field(prediction, f, "the prediction"), get_field(expected, c, "the data row"))

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
    norm = normaliser(normalise)

    def compare(pred: Any, ref: Any) -> float:
        if norm is not None:
            return squad_exact(pred, ref, norm)
        p = cell_text(pred)
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
    norm = normaliser(normalise)
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

    With ``normalise=True`` both sides are SQuAD-normalised and the reference must
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
    norm = normaliser(normalise)

    def compare(pred: Any, ref: Any) -> float:
        p = cell_text(pred)
        if norm is not None:
            p = norm(p)
            gold = [norm(g) for g in gold_answers(references(ref), norm)]
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

    norm = normaliser(normalise)

    def eq(pred: Any, ref: Any) -> float:
        if norm is not None:
            return squad_exact(pred, ref, norm)
        return float(cell_text(pred) == cell_text(ref))

    def fn(prediction: Any, expected: Any) -> float:
        use = pairs
        if use is None:
            use = [(k, k) for k in prediction if k in expected]
            if not use:
                raise KeyError("field_match: no output field has a column of the same name in the row")
        return sum(
            eq(get_field(prediction, f, "the prediction"), get_field(expected, c, "the data row"))
            for f, c in use
        ) / len(use)

    return Metric(
        fn=fn,
        name="field_match",
        fields=tuple(f for f, _ in pairs) if pairs else (),
        columns=tuple(c for _, c in pairs) if pairs else (),
        settings={"fields": dict(pairs) if pairs else None, "normalise": normalise},
    )
