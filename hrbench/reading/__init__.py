"""Document question answering: QA references, reading recipes, arms over existing outputs.

An item is ``{"document", "question"}``; a label is the accepted answers or
``NOT_IN_DOCUMENT`` (SPEC section 3, seed 001).

- :func:`qa_reference` (SQuAD-style files and rows) and :func:`tatqa_reference` (TAT-QA);
- :func:`outputs_arm` (existing predictions; :func:`tatqa_outputs` reads TAT-QA run files;
  :func:`check_outputs` refuses predictions for no item);
- reading recipes :func:`direct`, :func:`chunked`, :func:`retrieve`;
- :func:`example_document` and :func:`example_questions` for docs and tests.

The scorers a document QA benchmark uses are offered here too; they live in
:mod:`hrbench.scoring`, beside the other scorers: :func:`answer_scorer` (``answer_contains``)
and :func:`is_not_found` with the folding and whole-number matching of :func:`fold_answer` /
:func:`contains_answer` (:mod:`hrbench.scoring._answer`, :mod:`hrbench.scoring._fold`); the
official TAT-QA metric (:func:`tatqa_scorer`, :func:`tatqa_em_f1`, and ``evaluate()``'s
:func:`tatqa_exact_match` and :func:`tatqa_f1` from :mod:`hrbench.metrics`); the official
SQuAD v2.0 exact match as a scorer (:func:`squad_scorer`); and graded side columns
(:func:`tatqa_scores`, :func:`squad_scores`, :func:`answer_contains_scores`).
"""

from hrbench.metrics import tatqa_exact_match, tatqa_f1
from hrbench.reading._example import example_document, example_questions
from hrbench.reading._outputs import check_outputs, outputs_arm, tatqa_outputs
from hrbench.reading._recipes import INSTRUCTIONS, RECIPES, chunk_document, chunked, direct, retrieve
from hrbench.reading._reference import document_id, qa_reference, read_rows, tatqa_reference
from hrbench.scoring import (
    LIMIT_NOTES,
    NOT_IN_DOCUMENT,
    REFUSAL_REASONS,
    answer_contains_scores,
    answer_scorer,
    contains_answer,
    fold_answer,
    is_not_found,
    squad_scorer,
    squad_scores,
    stop_kind,
    tatqa_answer_string,
    tatqa_em_f1,
    tatqa_normalize,
    tatqa_number,
    tatqa_scorer,
    tatqa_scores,
)

__all__ = [
    "INSTRUCTIONS",
    "LIMIT_NOTES",
    "NOT_IN_DOCUMENT",
    "RECIPES",
    "REFUSAL_REASONS",
    "answer_contains_scores",
    "answer_scorer",
    "check_outputs",
    "chunk_document",
    "chunked",
    "contains_answer",
    "direct",
    "document_id",
    "example_document",
    "example_questions",
    "fold_answer",
    "is_not_found",
    "outputs_arm",
    "qa_reference",
    "read_rows",
    "retrieve",
    "squad_scorer",
    "squad_scores",
    "stop_kind",
    "tatqa_answer_string",
    "tatqa_em_f1",
    "tatqa_exact_match",
    "tatqa_f1",
    "tatqa_normalize",
    "tatqa_number",
    "tatqa_outputs",
    "tatqa_reference",
    "tatqa_scorer",
    "tatqa_scores",
]
