"""The official SQuAD v2.0 exact match and F1 of a benchmark run (a benchmark metric)."""

from __future__ import annotations

from typing import Any

from hrbench.metrics import squad_exact, squad_f1
from hrbench.reading._not_found import is_not_found
from hrbench.scorer import NOT_IN_DOCUMENT, label_answers, output_failure, output_text

__all__ = ["squad_scores"]


def squad_scores(item: Any, output: Any, label: Any) -> dict[str, float]:
    """SQuAD v2.0 EM and F1 of one run, as a benchmark metric (``metrics = ["squad"]``).

    The rules are the official ``evaluate-v2.0.py`` ones of :func:`hrbench.metrics.squad_exact`
    and :func:`hrbench.metrics.squad_f1` (best over the accepted answers). The label is read as
    :func:`~hrbench.reading.qa_reference` builds it: ``NOT_IN_DOCUMENT`` is an unanswerable
    question (its only reference is the empty answer), otherwise the accepted answers.

    Decided (the script reads a prediction file, where abstaining is the empty string): a reply
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
    answers = label_answers(label) or []
    refs = [] if any(a.strip().upper() == NOT_IN_DOCUMENT for a in answers) else answers
    prediction = "" if is_not_found(text) else text
    return {"squad_em": squad_exact(prediction, refs), "squad_f1": squad_f1(prediction, refs)}
