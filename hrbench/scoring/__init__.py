"""Scoring: the official metrics that scorers and ``evaluate()``'s metrics share (SQuAD v2.0, TAT-QA)."""

import typing

__all__ = [
    "JUDGED_SOURCE",
    "JUDGE_SUFFIX",
    "LIMIT_NOTES",
    "NEEDS_A_CLIENT",
    "NOT_IN_DOCUMENT",
    "OUTSIDE_A_BENCHMARK",
    "REFUSAL_REASONS",
    "SCORERS",
    "Scorer",
    "ScorerLike",
    "answer_contains_scores",
    "answer_scorer",
    "cell_text",
    "choice_scorer",
    "contains_answer",
    "exact_scorer",
    "factory_of",
    "fold_answer",
    "gold_answers",
    "is_not_found",
    "label_answers",
    "normaliser",
    "normalize_answer",
    "normalize_numbers",
    "numeric_scorer",
    "output_text",
    "pattern_scorer",
    "plain_number",
    "read_numbers",
    "references",
    "scorer",
    "squad_exact",
    "squad_f1",
    "squad_scorer",
    "squad_scores",
    "stop_kind",
    "tatqa_answer_string",
    "tatqa_em_f1",
    "tatqa_normalize",
    "tatqa_number",
    "tatqa_scorer",
    "tatqa_scores",
]


# -- tools/privatize.py: names other packages use, imported on first use (PEP 562)
if typing.TYPE_CHECKING:
    from hrbench.scoring._answer import LIMIT_NOTES, REFUSAL_REASONS, answer_scorer, stop_kind
    from hrbench.scoring._choice import choice_scorer
    from hrbench.scoring._fold import contains_answer, fold_answer
    from hrbench.scoring._judge import JUDGE_SUFFIX, JUDGED_SOURCE, OUTSIDE_A_BENCHMARK
    from hrbench.scoring._names import NEEDS_A_CLIENT, SCORERS, factory_of
    from hrbench.scoring._not_found import is_not_found
    from hrbench.scoring._numeric import numeric_scorer, read_numbers
    from hrbench.scoring._pattern import pattern_scorer
    from hrbench.scoring._scorer import (
        NOT_IN_DOCUMENT,
        Scorer,
        ScorerLike,
        exact_scorer,
        label_answers,
        output_text,
        plain_number,
        scorer,
    )
    from hrbench.scoring._squad import (
        cell_text,
        gold_answers,
        normaliser,
        normalize_answer,
        normalize_numbers,
        references,
        squad_exact,
        squad_f1,
    )
    from hrbench.scoring._squad_scorer import answer_contains_scores, squad_scorer, squad_scores
    from hrbench.scoring._tatqa import (
        tatqa_answer_string,
        tatqa_em_f1,
        tatqa_normalize,
        tatqa_number,
    )
    from hrbench.scoring._tatqa_scorer import tatqa_scorer, tatqa_scores

_LAZY = {
    "JUDGED_SOURCE": "hrbench.scoring._judge",
    "JUDGE_SUFFIX": "hrbench.scoring._judge",
    "LIMIT_NOTES": "hrbench.scoring._answer",
    "NEEDS_A_CLIENT": "hrbench.scoring._names",
    "NOT_IN_DOCUMENT": "hrbench.scoring._scorer",
    "OUTSIDE_A_BENCHMARK": "hrbench.scoring._judge",
    "REFUSAL_REASONS": "hrbench.scoring._answer",
    "SCORERS": "hrbench.scoring._names",
    "Scorer": "hrbench.scoring._scorer",
    "ScorerLike": "hrbench.scoring._scorer",
    "answer_contains_scores": "hrbench.scoring._squad_scorer",
    "answer_scorer": "hrbench.scoring._answer",
    "cell_text": "hrbench.scoring._squad",
    "choice_scorer": "hrbench.scoring._choice",
    "contains_answer": "hrbench.scoring._fold",
    "exact_scorer": "hrbench.scoring._scorer",
    "factory_of": "hrbench.scoring._names",
    "fold_answer": "hrbench.scoring._fold",
    "gold_answers": "hrbench.scoring._squad",
    "is_not_found": "hrbench.scoring._not_found",
    "label_answers": "hrbench.scoring._scorer",
    "normaliser": "hrbench.scoring._squad",
    "normalize_answer": "hrbench.scoring._squad",
    "normalize_numbers": "hrbench.scoring._squad",
    "numeric_scorer": "hrbench.scoring._numeric",
    "output_text": "hrbench.scoring._scorer",
    "pattern_scorer": "hrbench.scoring._pattern",
    "plain_number": "hrbench.scoring._scorer",
    "read_numbers": "hrbench.scoring._numeric",
    "references": "hrbench.scoring._squad",
    "scorer": "hrbench.scoring._scorer",
    "squad_exact": "hrbench.scoring._squad",
    "squad_f1": "hrbench.scoring._squad",
    "squad_scorer": "hrbench.scoring._squad_scorer",
    "squad_scores": "hrbench.scoring._squad_scorer",
    "stop_kind": "hrbench.scoring._answer",
    "tatqa_answer_string": "hrbench.scoring._tatqa",
    "tatqa_em_f1": "hrbench.scoring._tatqa",
    "tatqa_normalize": "hrbench.scoring._tatqa",
    "tatqa_number": "hrbench.scoring._tatqa",
    "tatqa_scorer": "hrbench.scoring._tatqa_scorer",
    "tatqa_scores": "hrbench.scoring._tatqa_scorer",
}

if not typing.TYPE_CHECKING:  # type checkers read the imports above; a typo stays an error
    from hrbench._util.lazy import lazy_names

    __getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)

# -- end of tools/privatize.py's block
