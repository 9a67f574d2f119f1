"""hrbench: which of my arms is better, by how much, at what cost, and how sure can I be?

The everyday names live here; see the submodules for the rest.
"""

from hrbench import reading
from hrbench.arm import Arm, Context
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
    ReferenceLocked,
    ReferenceReboundWarning,
    ReferenceValueError,
    ReplayMiss,
    ScorerError,
    SignatureError,
    TooFewRunsError,
    UnlabelledItemsWarning,
    UsageEstimatedWarning,
)
from hrbench.evaluation import metrics
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
from hrbench.models.anthropic import AnthropicClient
from hrbench.models.mock import MockClient
from hrbench.models.openai import OpenAIClient
from hrbench.models.pricing import Pricing, trace_cost
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
from hrbench.reference import Reference
from hrbench.results.records import Answer, Request, Result, Row, Score, Step, Usage
from hrbench.runner import ledger as ledger  # `hrbench.ledger.kept_ledger`, as the README shows
from hrbench.runner.benchmark import Bench, benchmark, benchmark_async, benchmark_stream
from hrbench.runner.cache import Cache, cache_key, request_hash
from hrbench.runner.governor import Governor
from hrbench.runner.limits import Options, options
from hrbench.runner.replay import ReplayClient
from hrbench.scoring.choice import choice_scorer
from hrbench.scoring.judge import judge_scorer
from hrbench.scoring.numeric import numeric_scorer
from hrbench.scoring.pattern import pattern_scorer
from hrbench.scoring.scorer import NOT_IN_DOCUMENT, Scorer, exact_scorer, scorer
from hrbench.stats import ArmReport, Comparison, PowerPlan, Report, compare, compare_all, power, report
from hrbench.stats.agreement import judge_agreement
from hrbench.stats.gate import GateResult, gate
from hrbench.stats.sequential import StopWhenSure
from hrbench.store import Store

__version__ = "0.1.0"

__all__ = [
    "Answer",
    "AnthropicClient",
    "Arm",
    "ArmErrorWarning",
    "ArmReport",
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
    "Reference",
    "ReferenceLocked",
    "ReferenceReboundWarning",
    "ReferenceValueError",
    "ReplayClient",
    "ReplayMiss",
    "Report",
    "Request",
    "Result",
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
    "Trace",
    "UnlabelledItemsWarning",
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
    "is_not_found",
    "judge_agreement",
    "judge_scorer",
    "metrics",
    "module",
    "module_fn",
    "numeric_scorer",
    "options",
    "outputs_arm",
    "pattern_scorer",
    "power",
    "qa_reference",
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
    "tatqa_reference",
    "tatqa_scorer",
    "trace_cost",
]
