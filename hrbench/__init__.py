"""hrbench: which of my arms is better, by how much, at what cost, and how sure can I be?

The everyday names live here; see the submodules for the rest.
"""

from hrbench.arm import Arm, Context
from hrbench.benchmark import Bench, benchmark, benchmark_async, benchmark_stream
from hrbench.cache import Cache, cache_key, request_hash
from hrbench.errors import (
    BudgetRefused,
    BudgetStoppedWarning,
    ConfigError,
    DuplicateDrawError,
    FewRunsWarning,
    HrbenchError,
    MetricErrorWarning,
    ModelError,
    ReferenceLocked,
    ReferenceValueError,
    ReplayMiss,
    ScorerError,
    SignatureError,
    TooFewRunsError,
)
from hrbench.governor import Governor
from hrbench.models.mock import MockClient
from hrbench.pricing import Pricing
from hrbench import reading
from hrbench.reading import (
    answer_scorer,
    example_document,
    is_not_found,
    outputs_arm,
    qa_reference,
    tatqa_reference,
)
from hrbench.records import Answer, Request, Result, Row, Score, Step, Usage
from hrbench.reference import Reference
from hrbench.replay import ReplayClient
from hrbench.scorer import NOT_IN_DOCUMENT, Scorer, exact_scorer, scorer
from hrbench.stats import ArmReport, Comparison, PowerPlan, Report, compare, compare_all, power, report
from hrbench.store import Store

__version__ = "0.1.0"

__all__ = [
    "Answer",
    "Arm",
    "ArmReport",
    "Bench",
    "BudgetRefused",
    "BudgetStoppedWarning",
    "Cache",
    "Comparison",
    "ConfigError",
    "Context",
    "DuplicateDrawError",
    "FewRunsWarning",
    "Governor",
    "HrbenchError",
    "MetricErrorWarning",
    "MockClient",
    "ModelError",
    "NOT_IN_DOCUMENT",
    "PowerPlan",
    "Pricing",
    "Reference",
    "ReferenceLocked",
    "ReferenceValueError",
    "ReplayClient",
    "ReplayMiss",
    "Report",
    "Request",
    "Result",
    "Row",
    "Score",
    "Scorer",
    "ScorerError",
    "SignatureError",
    "Step",
    "Store",
    "TooFewRunsError",
    "Usage",
    "answer_scorer",
    "benchmark",
    "benchmark_async",
    "benchmark_stream",
    "cache_key",
    "compare",
    "compare_all",
    "exact_scorer",
    "example_document",
    "is_not_found",
    "outputs_arm",
    "power",
    "qa_reference",
    "reading",
    "report",
    "request_hash",
    "scorer",
    "tatqa_reference",
]
