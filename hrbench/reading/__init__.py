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

import typing

__all__ = [
    "INSTRUCTIONS",
    "LIMIT_NOTES",
    "NOT_IN_DOCUMENT",
    "NO_OUTPUT",
    "RECIPES",
    "REFUSAL_REASONS",
    "answer_contains_scores",
    "answer_scorer",
    "as_output",
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
    "json_lines",
    "missing_output",
    "outputs_arm",
    "qa_reference",
    "read_outputs",
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
    "with_check",
]


# -- tools/privatize.py: names other packages use, imported on first use (PEP 562)
if typing.TYPE_CHECKING:
    from hrbench.metrics import tatqa_exact_match, tatqa_f1
    from hrbench.reading._example import example_document, example_questions
    from hrbench.reading._outputs import (
        NO_OUTPUT,
        as_output,
        check_outputs,
        missing_output,
        outputs_arm,
        tatqa_outputs,
        with_check,
    )
    from hrbench.reading._outputs_file import read_outputs
    from hrbench.reading._recipes import (
        INSTRUCTIONS,
        RECIPES,
        chunk_document,
        chunked,
        direct,
        retrieve,
    )
    from hrbench.reading._reference import (
        document_id,
        json_lines,
        qa_reference,
        read_rows,
        tatqa_reference,
    )
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

_LAZY = {
    "INSTRUCTIONS": "hrbench.reading._recipes",
    "LIMIT_NOTES": "hrbench.scoring",
    "NOT_IN_DOCUMENT": "hrbench.scoring",
    "NO_OUTPUT": "hrbench.reading._outputs",
    "RECIPES": "hrbench.reading._recipes",
    "REFUSAL_REASONS": "hrbench.scoring",
    "answer_contains_scores": "hrbench.scoring",
    "answer_scorer": "hrbench.scoring",
    "as_output": "hrbench.reading._outputs",
    "check_outputs": "hrbench.reading._outputs",
    "chunk_document": "hrbench.reading._recipes",
    "chunked": "hrbench.reading._recipes",
    "contains_answer": "hrbench.scoring",
    "direct": "hrbench.reading._recipes",
    "document_id": "hrbench.reading._reference",
    "example_document": "hrbench.reading._example",
    "example_questions": "hrbench.reading._example",
    "fold_answer": "hrbench.scoring",
    "is_not_found": "hrbench.scoring",
    "json_lines": "hrbench.reading._reference",
    "missing_output": "hrbench.reading._outputs",
    "outputs_arm": "hrbench.reading._outputs",
    "qa_reference": "hrbench.reading._reference",
    "read_outputs": "hrbench.reading._outputs_file",
    "read_rows": "hrbench.reading._reference",
    "retrieve": "hrbench.reading._recipes",
    "squad_scorer": "hrbench.scoring",
    "squad_scores": "hrbench.scoring",
    "stop_kind": "hrbench.scoring",
    "tatqa_answer_string": "hrbench.scoring",
    "tatqa_em_f1": "hrbench.scoring",
    "tatqa_exact_match": "hrbench.metrics",
    "tatqa_f1": "hrbench.metrics",
    "tatqa_normalize": "hrbench.scoring",
    "tatqa_number": "hrbench.scoring",
    "tatqa_outputs": "hrbench.reading._outputs",
    "tatqa_reference": "hrbench.reading._reference",
    "tatqa_scorer": "hrbench.scoring",
    "tatqa_scores": "hrbench.scoring",
    "with_check": "hrbench.reading._outputs",
}

if not typing.TYPE_CHECKING:  # type checkers read the imports above; a typo stays an error
    from hrbench._util.lazy import lazy_names

    __getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)

# -- end of tools/privatize.py's block
