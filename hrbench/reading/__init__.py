"""Document question answering: the ``answer_contains`` scorer, QA references, reading recipes.

An item is ``{"document", "question"}``; a label is the accepted answers or
``NOT_IN_DOCUMENT`` (SPEC section 3, seed 001).

- :func:`answer_scorer` (``answer_contains``) and :func:`is_not_found`, with the folding and
  whole-number matching of :func:`fold_answer` / :func:`contains_answer`;
- :func:`qa_reference` (SQuAD-style files and rows) and :func:`tatqa_reference` (TAT-QA);
- the official TAT-QA metric: :func:`tatqa_scorer` (EM as a benchmark scorer),
  :func:`tatqa_exact_match` and :func:`tatqa_f1` (``evaluate()`` metrics), :func:`tatqa_em_f1`;
- the official SQuAD v2.0 exact match as a benchmark scorer: :func:`squad_scorer`;
- benchmark metrics (graded scores beside the scorer's accuracy): :func:`tatqa_scores`,
  :func:`squad_scores` and :func:`answer_contains_scores`;
- :func:`outputs_arm` (existing predictions; :func:`tatqa_outputs` reads TAT-QA run files;
  :func:`check_outputs` refuses predictions for no item);
- reading recipes :func:`direct`, :func:`chunked`, :func:`retrieve`;
- :func:`example_document` and :func:`example_questions` for docs and tests.
"""

from hrbench.evaluation.metrics import tatqa_exact_match, tatqa_f1
from hrbench.reading._example import example_document, example_questions
from hrbench.reading._fold import contains_answer, fold_answer
from hrbench.reading._not_found import is_not_found
from hrbench.reading._outputs import check_outputs, outputs_arm, tatqa_outputs
from hrbench.reading._recipes import INSTRUCTIONS, RECIPES, chunk_document, chunked, direct, retrieve
from hrbench.reading._reference import document_id, qa_reference, read_rows, tatqa_reference
from hrbench.reading._scorer import LIMIT_NOTES, REFUSAL_REASONS, answer_scorer, stop_kind
from hrbench.reading._squad import answer_contains_scores, squad_scorer, squad_scores
from hrbench.reading._tatqa import tatqa_scorer, tatqa_scores
from hrbench.scoring.scorer import NOT_IN_DOCUMENT
from hrbench.scoring.tatqa import tatqa_answer_string, tatqa_em_f1, tatqa_normalize, tatqa_number

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
