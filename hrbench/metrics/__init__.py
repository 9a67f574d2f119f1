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

Rule (the script is silent): a prediction of ``None`` is the empty answer ``""``; numbers are
written in plain digits before comparison (``3.0`` -> ``"3"``, see
:func:`hrbench.scoring.plain_number`); other non-string values are compared as ``str(value)``.

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

from hrbench.metrics._base import Metric, MetricResult, custom
from hrbench.metrics._base import Normalisation as Normalisation
from hrbench.metrics._base import score_of as score_of
from hrbench.metrics._fields import contains, exact_match, f1, field_match
from hrbench.metrics._lookup import as_metric as as_metric
from hrbench.metrics._tatqa import tatqa_exact_match as tatqa_exact_match
from hrbench.metrics._tatqa import tatqa_f1 as tatqa_f1
from hrbench.metrics._wrappers import threshold, with_feedback, with_trace
from hrbench.scoring import normalize_answer, normalize_numbers, references, squad_exact, squad_f1

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
