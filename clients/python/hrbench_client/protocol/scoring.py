"""The ``score`` and ``evaluate`` methods."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import Meta, Struct, field

from hrbench_client.protocol._base import CallerEnv, ImportPath, _Spec
from hrbench_client.protocol.specs import ClientSpec

__all__ = [
    "EvalMetricSpec",
    "EvalModuleSpec",
    "EvaluateParams",
    "EvaluateResult",
    "ScoreParams",
    "ScoreResult",
]


class ScoreParams(_Spec):
    """Params of ``score``: score one output against a label with a named scorer.

    ``scorer`` is a built-in name (``exact``, ``answer_contains``) or ``package.module:function``.
    """

    output: str | None
    label: Any = None
    item: Any = None
    scorer: str = "exact"
    settings: dict[str, Any] = field(default_factory=dict)


class ScoreResult(Struct, kw_only=True):
    """A scorer's verdict."""

    correct: bool | None
    outcome: str | None = None
    failure_kind: str | None = None
    scorer: str = ""


class EvalModuleSpec(_Spec):
    """The module of ``evaluate``: a signature, and a model or a function.

    A model module has ``instructions`` and sampling ``params``; a plain-function module has
    ``fn``, a ``package.module:function`` the daemon imports.
    """

    signature: Annotated[str, Meta(description="e.g. `text -> sentiment: enum('positive', 'negative')`")]
    instructions: str | None = None
    fn: ImportPath | None = None
    params: dict[str, Any] = field(default_factory=dict)
    name: str | None = None


class EvalMetricSpec(_Spec):
    """The metric of ``evaluate``: a built-in name or an import path.

    Built-ins: ``exact_match``, ``f1``, ``contains``, ``field_match``, ``tatqa_exact_match``,
    ``tatqa_f1`` (the official TAT-QA metric); ``threshold`` turns the metric into a pass mark.
    """

    name: str = "exact_match"
    field: str | None = None
    column: str | None = None
    fields: list[str] | None = None
    normalise: Annotated[
        bool | Literal["squad", "numbers"],
        Meta(
            description='`true`/`"squad"`: SQuAD v2.0 (drops signs, points, articles); `"numbers"`: keeps them'
        ),
    ] = True
    threshold: float | None = None


class EvaluateParams(_Spec):
    """Params of ``evaluate`` (seed 003): a module, data rows, a metric, epochs.

    Mirrors ``hrbench.evaluate.EvaluateSpec``; ``client`` answers a model module's calls;
    ``python_path`` as for ``benchmark``.
    """

    module: EvalModuleSpec
    data: list[dict[str, Any]]
    metric: str | EvalMetricSpec = "exact_match"
    client: ClientSpec | None = None
    epochs: Annotated[int, Meta(ge=1)] = 1
    concurrency: Annotated[int, Meta(ge=1)] = 8
    return_format: Literal["structured", "simple"] = "structured"
    cache: bool = True
    trace_context: Any = None
    python_path: list[str] = field(default_factory=list)
    env: CallerEnv = field(default_factory=dict)


class EvaluateResult(Struct, kw_only=True):
    """The seed-003 result fields, as JSON."""

    result: dict[str, Any]
