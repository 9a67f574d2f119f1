"""The TAT-QA scorer for benchmarks: the official TAT-QA exact match on each row.

The official metric itself (:func:`~hrbench.scoring.tatqa_em_f1` and its number reading
and normalisation) is in :mod:`hrbench.scoring._tatqa`; ``evaluate()``'s TAT-QA metrics
(:func:`~hrbench.metrics.tatqa_exact_match`, :func:`~hrbench.metrics.tatqa_f1`) in
:mod:`hrbench.metrics`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hrbench.errors import ConfigError
from hrbench.records import Score
from hrbench.scoring._answer import screen_folded, stop_kind, verdict
from hrbench.scoring._fold import fold_answer
from hrbench.scoring._not_found import _folded_not_found
from hrbench.scoring._scorer import Scorer, output_failure, output_text
from hrbench.scoring._tatqa import tatqa_answer_string, tatqa_em_f1, tatqa_normalize

__all__ = ["tatqa_scorer", "tatqa_scores"]


# -- an hrbench scorer -------------------------------------------------------------------------


def _gold_of(label: Any) -> tuple[Any, str, str]:
    """(answer, scale, answer_type) of a TAT-QA label (see :func:`tatqa_scorer`)."""
    if isinstance(label, Mapping):
        answer = label["answer"] if "answer" in label else label.get("answers")
        return answer, str(label.get("scale") or ""), str(label.get("answer_type") or "")
    return label, "", ""


def _prediction_of(output: Any, text: str) -> tuple[Any, str]:
    """(prediction, scale) of an output: a mapping's ``prediction`` (raw spans) and ``scale``."""
    if isinstance(output, Mapping):
        raw = output.get("prediction", text)
        return (text if raw is None else raw), str(output.get("scale") or "")
    return text, ""


def _tatqa(item: Any, output: Any, label: Any) -> Score:
    text = screen_folded(output)
    if isinstance(text, Score):
        return text
    answer, scale, answer_type = _gold_of(label)
    prediction, pred_scale = _prediction_of(output, text)
    try:
        em, _ = tatqa_em_f1(prediction, pred_scale, answer, scale, answer_type)
        seen = tatqa_normalize(
            tatqa_answer_string(prediction if isinstance(prediction, list) else [prediction], pred_scale)
        )
    except TypeError:  # spans the official script cannot sort: it fails, here the answer is wrong
        em, seen = 0.0, fold_answer(text)
    right = None if label is None else em == 1.0
    return verdict(seen, right, stop_kind(output), right is False and _folded_not_found(fold_answer(text)))


def tatqa_scorer() -> Scorer:
    """The official TAT-QA exact match as a benchmark scorer (``tatqa``; seed 000's contract).

    A run is right when its TAT-QA EM is 1 (:func:`tatqa_em_f1`; the F1 is a graded score, see
    :func:`tatqa_f1` and the benchmark's ``metrics``). The gold answer, its scale and its type
    come from the label as :func:`~hrbench.reading.tatqa_reference` builds it (a mapping with
    ``answer``, ``scale``, ``answer_type`` beside the accepted ``answers``; the item holds no
    part of the answer, since an arm sees it); a plain label is the gold answer, with no scale
    and no type. The prediction is the output's
    ``prediction`` (the run's raw answer: a string, a number or a list of spans) and ``scale``
    when the output is a mapping (as :func:`~hrbench.reading.outputs_arm` with ``scale_field``
    and :func:`~hrbench.reading.tatqa_outputs` give), else the output's text with no scale.

    Failure kinds as ``answer_contains`` gives them (seed 001): an output carrying its own
    ``failure_kind`` keeps it, a failed result is ``"error"``, no answer text is
    ``"parse_failure"``; a wrong answer from a run that a limit or a refusal stopped is
    ``"budget_stop"`` / ``"refusal"``; a wrong answer saying the document lacks it is
    ``"not_in_document"``; any other wrong answer is ``"wrong"``. Prediction spans the
    official script cannot sort (strings beside numbers) are wrong, not a crash. The outcome is
    the prediction's normalised answer string (``"1496500000.0"``).

    Returns:
        A :class:`~hrbench.scoring.Scorer` named ``"tatqa"``.

    Example:
        >>> s = tatqa_scorer()
        >>> label = {"answers": "-12.6", "answer": -12.6, "scale": "million", "answer_type": "arithmetic"}
        >>> s(None, {"text": "-12.6 million", "prediction": -12.6, "scale": "million"}, label)
        Score(correct=True, outcome='-12600000.0', failure_kind=None)
        >>> s(None, "-$12.6 million", label).correct
        True
        >>> s(None, "-12.6", label).failure_kind
        'wrong'
    """
    return Scorer(
        _tatqa, "tatqa", {"source": "NExTplusplus/TAT-QA@870accc", "version": "1"}, reads_reply=True
    )


def tatqa_scores(item: Any, output: Any, label: Any) -> dict[str, float]:
    """The official TAT-QA EM and F1 of one run, as a benchmark metric (``metrics = ["tatqa"]``).

    Reads the gold answer and the prediction as :func:`tatqa_scorer` does. Rule (the
    official script scores a question without a prediction 0): an output with no answer text,
    or one carrying a failure (a ``failure_kind``, a failed result), scores 0 and 0; so do
    prediction spans the official script cannot sort.

    Args:
        item: the item's payload (not read: the gold is in the label).
        output: what the arm returned.
        label: the item's label: a mapping with ``answer``, ``scale``, ``answer_type`` (as
            :func:`~hrbench.reading.tatqa_reference` builds it), or the gold answer itself.

    Returns:
        ``{"tatqa_em": em, "tatqa_f1": f1}``.

    Example:
        >>> label = {"answers": ["2019", "2018"], "answer": ["2019", "2018"], "answer_type": "multi-span"}
        >>> tatqa_scores(None, "2019", label)
        {'tatqa_em': 0.0, 'tatqa_f1': 0.67}
    """
    text = output_text(output)
    if text is None or output_failure(output) is not None:
        return {"tatqa_em": 0.0, "tatqa_f1": 0.0}
    answer, scale, answer_type = _gold_of(label)
    prediction, pred_scale = _prediction_of(output, text)
    try:
        em, f1 = tatqa_em_f1(prediction, pred_scale, answer, scale, answer_type)
    except TypeError:
        em = f1 = 0.0
    return {"tatqa_em": em, "tatqa_f1": f1}


def _tatqa_labels(labels: Mapping[str, Any]) -> None:
    """Refuse a benchmark whose labels lack the TAT-QA gold details the metric reads.

    Rule (``metrics = ["tatqa"]`` on SQuAD labels never runs silently, scoring
    ``"NOT_IN_DOCUMENT"`` as a TAT-QA span): in a benchmark, every labelled item must carry a
    mapping label with ``answer`` (or ``answers``) and ``answer_type``, as
    :func:`~hrbench.reading.tatqa_reference` builds it; items with no label are skipped.

    Raises:
        ConfigError: naming the first item whose label is not one, and its label.
    """
    for item_id, label in labels.items():
        if label is None:
            continue
        if not (
            isinstance(label, Mapping)
            and "answer_type" in label
            and ("answer" in label or "answers" in label)
        ):
            raise ConfigError(
                "metrics",
                "tatqa",
                f"item {item_id!r} has the label {label!r:.60}: the TAT-QA metric needs labels from a TAT-QA "
                'reference (format = "tatqa": a mapping with answer, scale, answer_type)',
            )


tatqa_scores.check_labels = _tatqa_labels  # type: ignore[attr-defined]
"""Called by :func:`hrbench.runner._benchmark` with the labels of the items it runs (before any run)."""
