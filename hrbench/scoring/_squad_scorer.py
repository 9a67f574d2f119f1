"""The official SQuAD v2.0 exact match and F1 of a benchmark run: a scorer and a metric."""

from __future__ import annotations

from typing import Any

from hrbench.records import Score
from hrbench.scoring._answer import _answer_contains, screen_folded, stop_kind, verdict
from hrbench.scoring._fold import fold_answer
from hrbench.scoring._not_found import _folded_not_found, is_not_found
from hrbench.scoring._scorer import (
    NOT_IN_DOCUMENT,
    Scorer,
    label_answers,
    output_failure,
    output_text,
)
from hrbench.scoring._squad import normalize_answer, squad_exact, squad_f1

__all__ = ["answer_contains_scores", "squad_scorer", "squad_scores"]


def _refs(label: Any) -> list[str] | None:
    """The SQuAD references of a label: ``[]`` for an unanswerable question, ``None`` for no label."""
    answers = label_answers(label)
    if answers is None:
        return None
    return [] if any(a.strip().upper() == NOT_IN_DOCUMENT for a in answers) else answers


def squad_scores(item: Any, output: Any, label: Any) -> dict[str, float]:
    """SQuAD v2.0 EM and F1 of one run, as a benchmark metric (``metrics = ["squad"]``).

    The rules are the official ``evaluate-v2.0.py`` ones of :func:`hrbench.metrics.squad_exact`
    and :func:`hrbench.metrics.squad_f1` (best over the accepted answers). The label is read as
    :func:`~hrbench.reading.qa_reference` builds it: ``NOT_IN_DOCUMENT`` is an unanswerable
    question (its only reference is the empty answer), otherwise the accepted answers.

    Rule (the script reads a prediction file, where abstaining is the empty string): a reply
    that reports the document lacks the answer (:func:`~hrbench.reading.is_not_found`, as
    ``answer_contains`` reads it: ``"NO ANSWER"``, ``"NOT_IN_DOCUMENT"``, "The text does not
    say.") is the empty answer; an output with no answer text or carrying a failure (a
    ``failure_kind``, a failed result) scores 0 and 0, also on an unanswerable question, as
    the official script scores a missing prediction.

    Args:
        item: the item's payload (not read).
        output: what the arm returned.
        label: the accepted answers, or ``NOT_IN_DOCUMENT``.

    Returns:
        ``{"squad_em": em, "squad_f1": f1}``.

    Example:
        >>> squad_scores(None, "the Normans", ["Normans"])
        {'squad_em': 1.0, 'squad_f1': 1.0}
        >>> squad_scores(None, "NO ANSWER", "NOT_IN_DOCUMENT")
        {'squad_em': 1.0, 'squad_f1': 1.0}
    """
    text = output_text(output)
    if text is None or output_failure(output) is not None:
        return {"squad_em": 0.0, "squad_f1": 0.0}
    refs = _refs(label) or []
    prediction = "" if is_not_found(text) else text
    return {"squad_em": squad_exact(prediction, refs), "squad_f1": squad_f1(prediction, refs)}


def _squad(item: Any, output: Any, label: Any) -> Score:
    text = screen_folded(output)
    if isinstance(text, Score):
        return text
    abstains = _folded_not_found(fold_answer(text))
    prediction = "" if abstains else text
    outcome = normalize_answer(prediction)
    refs = _refs(label)
    right = None if refs is None else squad_exact(prediction, refs) == 1.0
    return verdict(outcome, right, stop_kind(output), abstains)


def squad_scorer() -> Scorer:
    """The official SQuAD v2.0 exact match as a benchmark scorer (``squad``; seed 000's contract).

    A run is right when its SQuAD v2.0 EM is 1, read as :func:`squad_scores` reads it (the
    official ``evaluate-v2.0.py`` normalisation: case, punctuation, articles and white space
    dropped; best over the accepted answers; the label ``NOT_IN_DOCUMENT`` is an unanswerable
    question, whose only reference is the empty answer). Rule (the script reads a
    prediction file, where abstaining is the empty string): a reply saying the document lacks
    the answer (:func:`~hrbench.reading.is_not_found`: ``"NO ANSWER"``, "The text does not
    say.") is the empty answer, right only on an unanswerable question. The F1 is a graded
    score: ``metrics = ["squad"]`` reports it beside the accuracy.

    Failure kinds as ``answer_contains`` gives them (seed 001): an output carrying its own
    ``failure_kind`` keeps it, a failed result is ``"error"``, no answer text is
    ``"parse_failure"``; a wrong answer from a run a limit or a refusal stopped is
    ``"budget_stop"`` / ``"refusal"``; an abstention on an answerable question is
    ``"not_in_document"``; any other wrong answer is ``"wrong"``. The outcome is the prediction
    as the script normalises it (``""`` for an abstention).

    Returns:
        A :class:`~hrbench.scoring.Scorer` named ``"squad"``.

    Example:
        >>> s = squad_scorer()
        >>> s(None, "The Normans.", ["Normans", "Norman people"])
        Score(correct=True, outcome='normans', failure_kind=None)
        >>> s(None, "NO ANSWER", "NOT_IN_DOCUMENT").correct, s(None, "NO ANSWER", ["Rollo"]).failure_kind
        (True, 'not_in_document')
        >>> s(None, "Normans in France", ["Normans"]).failure_kind
        'wrong'
    """
    return Scorer(
        _squad, "squad", {"source": "SQuAD v2.0 evaluate-v2.0.py", "version": "1"}, reads_reply=True
    )


def answer_contains_scores(item: Any, output: Any, label: Any) -> dict[str, float]:
    """``answer_contains`` (seed 001) as a benchmark metric (``metrics = ["answer_contains"]``).

    1.0 when :func:`~hrbench.reading.answer_scorer` marks the run right, else 0.0: the share of
    runs whose reply contains an accepted answer, shown beside the accuracy of another scorer
    (the official metric of a data set). Seed 001's rules apply, with no rounding tolerance:
    a reply of ``-22.2222222222%`` does not contain the gold ``-22.22``.

    Args:
        item: the item's payload.
        output: what the arm returned.
        label: the item's label.

    Returns:
        ``{"answer_contains": 1.0 or 0.0}``.

    Example:
        >>> answer_contains_scores(None, "About 8,000 people.", 8000)
        {'answer_contains': 1.0}
        >>> answer_contains_scores(None, "-22.2222222222%", "-22.22")
        {'answer_contains': 0.0}
    """
    return {"answer_contains": 1.0 if _answer_contains(item, output, label).correct else 0.0}
