"""hrbench: which of my arms is better, by how much, at what cost, and how sure can I be?

The everyday names live here; see the submodules for the rest. Each is imported on its first
use (:pep:`562`): ``import hrbench`` (or any submodule, which imports this package first) imports
none of them, so a process that needs one corner of the library (the daemon at its start) does
not pay for the rest (numpy, statistics, the model clients). Type checkers read the imports
under ``TYPE_CHECKING`` below; :data:`_LAZY` says where each name is, for the interpreter.
"""

from __future__ import annotations

import sys
import typing

if typing.TYPE_CHECKING:
    from hrbench import metrics, reading
    from hrbench.arm import Arm, Context, sweep
    from hrbench.errors import (
        ArmErrorWarning,
        BudgetRefused,
        BudgetStoppedWarning,
        CachedDrawsWarning,
        ConfigError,
        DrawsUncheckedWarning,
        DuplicateDrawError,
        FewRunsWarning,
        HrbenchError,
        MetricErrorWarning,
        ModelError,
        NoLabelsWarning,
        NotCachedWarning,
        NotFound,
        ReasoningExhausted,
        ReferenceLocked,
        ReferenceReboundWarning,
        ReferenceValueError,
        ReplayMiss,
        ResumedNewestWarning,
        ScorerError,
        SignatureError,
        TooFewRunsError,
        UnlabelledItemsWarning,
        UnpricedModelWarning,
        UsageEstimatedWarning,
    )
    from hrbench.evaluation.evaluate import EmptyDataWarning, EvalError, Evaluation, evaluate, evaluate_async
    from hrbench.evaluation.modules import (
        Example,
        Prediction,
        RowResult,
        Signature,
        Trace,
        module,
        module_fn,
        run,
        run_async,
        run_dataset,
        run_dataset_async,
        signature,
    )
    from hrbench.models._anthropic import AnthropicClient
    from hrbench.models._mock import MockClient
    from hrbench.models._openai import OpenAIClient
    from hrbench.models._pricing import Pricing, trace_cost
    from hrbench.reading import (
        answer_scorer,
        example_document,
        is_not_found,
        outputs_arm,
        qa_reference,
        squad_scorer,
        tatqa_reference,
        tatqa_scorer,
    )
    from hrbench.records import Answer, Request, Result, Row, Score, Step, ToolCall, Usage
    from hrbench.reference import Reference
    from hrbench.results._grades import Grade, human_grades
    from hrbench.runner import _ledger as ledger  # noqa: F401  # `hrbench.ledger.kept_ledger`, as the README shows
    from hrbench.runner._benchmark import Bench, benchmark, benchmark_async, benchmark_stream
    from hrbench.runner._cache import Cache, cache_key, request_hash
    from hrbench.runner._governor import Governor
    from hrbench.runner._limits import Options, options
    from hrbench.runner._replay import ReplayClient
    from hrbench.runner.batch._settings import Batch
    from hrbench.scoring._choice import choice_scorer
    from hrbench.scoring._judge import judge_scorer
    from hrbench.scoring._numeric import numeric_scorer
    from hrbench.scoring._pattern import pattern_scorer
    from hrbench.scoring._scorer import NOT_IN_DOCUMENT, Scorer, exact_scorer, scorer
    from hrbench.scoring._trajectory import (
        step_count_scorer,
        tool_args_scorer,
        tool_sequence_scorer,
        trajectory_judge,
    )
    from hrbench.specs._references import read_reference
    from hrbench.stats import ArmReport, Comparison, PowerPlan, Report, compare, compare_all, power, report
    from hrbench.stats._agreement import judge_agreement
    from hrbench.stats._gate import GateResult, gate
    from hrbench.stats._grading import next_grades
    from hrbench.stats._sequential import StopWhenSure
    from hrbench.store import Store
    from hrbench.tools import ToolLoop, tool_loop, tool_loop_async

__version__ = "0.1.0"

__all__ = [
    "Answer",
    "AnthropicClient",
    "Arm",
    "ArmErrorWarning",
    "ArmReport",
    "Batch",
    "Bench",
    "BudgetRefused",
    "BudgetStoppedWarning",
    "Cache",
    "CachedDrawsWarning",
    "Comparison",
    "ConfigError",
    "Context",
    "DrawsUncheckedWarning",
    "DuplicateDrawError",
    "EmptyDataWarning",
    "EvalError",
    "Evaluation",
    "Example",
    "FewRunsWarning",
    "GateResult",
    "Governor",
    "Grade",
    "HrbenchError",
    "MetricErrorWarning",
    "MockClient",
    "ModelError",
    "NOT_IN_DOCUMENT",
    "NoLabelsWarning",
    "NotCachedWarning",
    "NotFound",
    "OpenAIClient",
    "Options",
    "PowerPlan",
    "Prediction",
    "Pricing",
    "ReasoningExhausted",
    "Reference",
    "ReferenceLocked",
    "ReferenceReboundWarning",
    "ReferenceValueError",
    "ReplayClient",
    "ReplayMiss",
    "Report",
    "Request",
    "Result",
    "ResumedNewestWarning",
    "Row",
    "RowResult",
    "Score",
    "Scorer",
    "ScorerError",
    "Signature",
    "SignatureError",
    "Step",
    "StopWhenSure",
    "Store",
    "TooFewRunsError",
    "ToolCall",
    "ToolLoop",
    "Trace",
    "UnlabelledItemsWarning",
    "UnpricedModelWarning",
    "Usage",
    "UsageEstimatedWarning",
    "answer_scorer",
    "benchmark",
    "benchmark_async",
    "benchmark_stream",
    "cache_key",
    "choice_scorer",
    "compare",
    "compare_all",
    "evaluate",
    "evaluate_async",
    "exact_scorer",
    "example_document",
    "gate",
    "human_grades",
    "is_not_found",
    "judge_agreement",
    "judge_scorer",
    "metrics",
    "module",
    "module_fn",
    "next_grades",
    "numeric_scorer",
    "options",
    "outputs_arm",
    "pattern_scorer",
    "power",
    "qa_reference",
    "read_reference",
    "reading",
    "report",
    "request_hash",
    "run",
    "run_async",
    "run_dataset",
    "run_dataset_async",
    "scorer",
    "signature",
    "squad_scorer",
    "step_count_scorer",
    "sweep",
    "tatqa_reference",
    "tatqa_scorer",
    "tool_args_scorer",
    "tool_loop",
    "tool_loop_async",
    "tool_sequence_scorer",
    "trace_cost",
    "trajectory_judge",
]

_LAZY: dict[str, tuple[str, ...]] = {
    "hrbench.arm": ("Arm", "Context", "sweep"),
    "hrbench.errors": (
        "ArmErrorWarning",
        "BudgetRefused",
        "BudgetStoppedWarning",
        "CachedDrawsWarning",
        "ConfigError",
        "DrawsUncheckedWarning",
        "DuplicateDrawError",
        "FewRunsWarning",
        "HrbenchError",
        "MetricErrorWarning",
        "ModelError",
        "NoLabelsWarning",
        "NotCachedWarning",
        "NotFound",
        "ReasoningExhausted",
        "ReferenceLocked",
        "ReferenceReboundWarning",
        "ReferenceValueError",
        "ReplayMiss",
        "ResumedNewestWarning",
        "ScorerError",
        "SignatureError",
        "TooFewRunsError",
        "UnlabelledItemsWarning",
        "UnpricedModelWarning",
        "UsageEstimatedWarning",
    ),
    "hrbench.evaluation.evaluate": (
        "EmptyDataWarning",
        "EvalError",
        "Evaluation",
        "evaluate",
        "evaluate_async",
    ),
    "hrbench.evaluation.modules": (
        "Example",
        "Prediction",
        "RowResult",
        "Signature",
        "Trace",
        "module",
        "module_fn",
        "run",
        "run_async",
        "run_dataset",
        "run_dataset_async",
        "signature",
    ),
    "hrbench.models._anthropic": ("AnthropicClient",),
    "hrbench.models._mock": ("MockClient",),
    "hrbench.models._openai": ("OpenAIClient",),
    "hrbench.models._pricing": ("Pricing", "trace_cost"),
    "hrbench.reading": (
        "answer_scorer",
        "example_document",
        "is_not_found",
        "outputs_arm",
        "qa_reference",
        "squad_scorer",
        "tatqa_reference",
        "tatqa_scorer",
    ),
    "hrbench.reference": ("Reference",),
    "hrbench.results._grades": ("Grade", "human_grades"),
    "hrbench.records": ("Answer", "Request", "Result", "Row", "Score", "Step", "ToolCall", "Usage"),
    "hrbench.runner.batch._settings": ("Batch",),
    "hrbench.runner._benchmark": ("Bench", "benchmark", "benchmark_async", "benchmark_stream"),
    "hrbench.runner._cache": ("Cache", "cache_key", "request_hash"),
    "hrbench.runner._governor": ("Governor",),
    "hrbench.runner._limits": ("Options", "options"),
    "hrbench.runner._replay": ("ReplayClient",),
    "hrbench.scoring._choice": ("choice_scorer",),
    "hrbench.specs._references": ("read_reference",),
    "hrbench.scoring._judge": ("judge_scorer",),
    "hrbench.scoring._numeric": ("numeric_scorer",),
    "hrbench.scoring._pattern": ("pattern_scorer",),
    "hrbench.scoring._scorer": ("NOT_IN_DOCUMENT", "Scorer", "exact_scorer", "scorer"),
    "hrbench.scoring._trajectory": (
        "step_count_scorer",
        "tool_args_scorer",
        "tool_sequence_scorer",
        "trajectory_judge",
    ),
    "hrbench.stats": (
        "ArmReport",
        "Comparison",
        "PowerPlan",
        "Report",
        "compare",
        "compare_all",
        "power",
        "report",
    ),
    "hrbench.stats._agreement": ("judge_agreement",),
    "hrbench.stats._gate": ("GateResult", "gate"),
    "hrbench.stats._grading": ("next_grades",),
    "hrbench.stats._sequential": ("StopWhenSure",),
    "hrbench.store": ("Store",),
    "hrbench.tools": ("ToolLoop", "tool_loop", "tool_loop_async"),
}
"""Where each name of :data:`__all__` is defined: module -> names (the imports above, for type checkers)."""

_SUBMODULES: dict[str, str] = {
    "reading": "hrbench.reading",
    "metrics": "hrbench.metrics",
    "ledger": "hrbench.runner._ledger",
}
"""The submodules offered under another name or place: ``hrbench.metrics``, ``hrbench.ledger``."""

_WHERE = {name: module for module, names in _LAZY.items() for name in names}


def _module(path: str) -> typing.Any:
    """The module ``path``, imported as an ``import`` statement does (``python -X importtime`` names it)."""
    __import__(path)
    return sys.modules[path]


if not typing.TYPE_CHECKING:  # type checkers read the imports above; `hb.typo` stays an error for them

    def __getattr__(name: str) -> typing.Any:
        """Import a public name on first use (:pep:`562`), and keep it as an attribute.

        A submodule not imported yet is imported too: ``import hrbench`` then
        ``hrbench.stats.report(...)`` works, as ``import os`` then ``os.path`` does.

        Raises:
            AttributeError: no such name or submodule.
        """
        if name in _SUBMODULES:
            value = _module(_SUBMODULES[name])
        elif name in _WHERE:
            value = getattr(_module(_WHERE[name]), name)
        elif not name.startswith("__"):
            try:
                value = _module(f"{__name__}.{name}")
            except ModuleNotFoundError as exc:
                if exc.name != f"{__name__}.{name}":
                    raise
                raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
        else:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *__all__})
