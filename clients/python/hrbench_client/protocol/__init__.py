"""The hrbench wire protocol: every JSON-RPC method's params, result and notification.

This module imports only :mod:`msgspec`, so the daemon (``hrbench_server``) and every client
(``hrbench_client``, the ``hrb`` command) decode and encode the same Structs without pulling in
the core library. The JSON Schema in ``schema/`` is generated from these Structs::

    python -m hrbench_client.protocol schema/

Arms and clients cross the wire as *specs*, never code (SPEC §4). Each spec is a tagged union
on ``kind``:

- arms: ``{"kind": "prompt", ...}``, ``{"kind": "reading", ...}``, ``{"kind": "outputs", ...}``,
  ``{"kind": "import", "path": "package.module:function"}``;
- clients: ``{"kind": "openai" | "anthropic" | "replay" | "mock", ...}``. A model client names
  the environment variable holding its API key (``api_key_env``); the key itself is never sent,
  stored or logged.

Methods (``METHODS``) map a name to its params and result Structs; ``NOTIFICATIONS`` maps the
server-to-client notifications to theirs.

The Structs live in one module per method family, and every name is importable from here:
:mod:`~hrbench_client.protocol.records` (rows, steps), :mod:`~hrbench_client.protocol.specs`
(arms, clients, references, governor), :mod:`~hrbench_client.protocol.benchmark`,
:mod:`~hrbench_client.protocol.scoring` (``score``, ``evaluate``),
:mod:`~hrbench_client.protocol.stored` (references, recordings, cache, benchmarks, gc, report),
:mod:`~hrbench_client.protocol.browse` (``hrb view``), :mod:`~hrbench_client.protocol.grades`
(human grades), :mod:`~hrbench_client.protocol.interop`
(``benchmark/export``: Inspect logs), :mod:`~hrbench_client.protocol.stopping`
(the ``[stop]`` table), :mod:`~hrbench_client.protocol.batch` (the ``[batch]`` table, ``batch/list``,
``batch/cancel``), :mod:`~hrbench_client.protocol.session`
(initialize, auth, status, shutdown), :mod:`~hrbench_client.protocol.methods` (the tables),
:mod:`~hrbench_client.protocol.hints` and :mod:`~hrbench_client.protocol.schema`. The
constrained types (``Name``, ``ImportPath``, ``EnvName``, ``CallerEnv``, ``ItemId``, ``Prices``, ``FreePrice``,
``BilledAs``, ``Level``) and ``MAX_FINITE`` are importable from here too, outside ``__all__``.
"""

from __future__ import annotations

from hrbench_client.protocol._base import PROTOCOL_VERSION
from hrbench_client.protocol._base import CallerEnv as CallerEnv
from hrbench_client.protocol._base import EnvName as EnvName
from hrbench_client.protocol._base import ImportPath as ImportPath
from hrbench_client.protocol._base import ItemId as ItemId
from hrbench_client.protocol._base import Name as Name
from hrbench_client.protocol.batch import (
    BatchCancelParams,
    BatchCancelResult,
    BatchListParams,
    BatchListResult,
    BatchSpec,
    BatchState,
)
from hrbench_client.protocol.benchmark import (
    ArmInfo,
    ArmSummary,
    BenchmarkParams,
    BenchmarkResult,
    ProgressNotification,
    RowsNotification,
)
from hrbench_client.protocol.browse import (
    ArmView,
    BenchmarkCellParams,
    BenchmarkCellResult,
    BenchmarkCompareParams,
    BenchmarkCompareResult,
    BenchmarkMatrixParams,
    BenchmarkMatrixResult,
    BenchmarkViewParams,
    BenchmarkViewResult,
    CellRun,
    Difference,
    MatrixCell,
    MatrixItem,
)
from hrbench_client.protocol.browse import Level as Level
from hrbench_client.protocol.gate import GateParams, GateResult
from hrbench_client.protocol.grades import (
    GradesGetParams,
    GradesGetResult,
    GradesNextParams,
    GradesNextResult,
    GradeSpec,
    GradesPutParams,
    GradesPutResult,
    NextGrade,
)
from hrbench_client.protocol.hints import (
    broken_range,
    closest,
    enum_hint,
    plain_range,
    shown,
    unknown_field_hint,
)
from hrbench_client.protocol.interop import BenchmarkExportParams, BenchmarkExportResult
from hrbench_client.protocol.methods import ERROR_CODES, METHODS, NOTIFICATIONS, ErrorData
from hrbench_client.protocol.prices import ModelPrice, PricesParams, PricesResult, PriceTier
from hrbench_client.protocol.records import Row, Step, ToolCall, Usage
from hrbench_client.protocol.schema import schemas
from hrbench_client.protocol.scoring import (
    EvalMetricSpec,
    EvalModuleSpec,
    EvaluateParams,
    EvaluateResult,
    ScoreParams,
    ScoreResult,
)
from hrbench_client.protocol.session import (
    AuthParams,
    AuthResult,
    HrbenchCapabilities,
    InitializeParams,
    InitializeResult,
    ServerCapabilities,
    ServerExperimental,
    ServerInfo,
    ShutdownParams,
    ShutdownResult,
    StatusParams,
    StatusResult,
)
from hrbench_client.protocol.specs import MAX_FINITE as MAX_FINITE
from hrbench_client.protocol.specs import (
    AnthropicClientSpec,
    ArmSpec,
    ClientSpec,
    GovernorSpec,
    ImportArmSpec,
    MockClientSpec,
    OpenAIClientSpec,
    OutputsArmSpec,
    PriceSpec,
    PriceTierSpec,
    PromptArmSpec,
    RayExecutorSpec,
    ReadingArmSpec,
    ReferenceSpec,
    ReplayClientSpec,
    SweepSpec,
)
from hrbench_client.protocol.specs import BilledAs as BilledAs
from hrbench_client.protocol.specs import FreePrice as FreePrice
from hrbench_client.protocol.specs import Prices as Prices
from hrbench_client.protocol.stopping import StopPlanSpec, StopSpec
from hrbench_client.protocol.stored import (
    BenchmarkCancelParams,
    BenchmarkCancelResult,
    BenchmarkDeleteParams,
    BenchmarkDeleteResult,
    BenchmarkInfo,
    BenchmarkListing,
    BenchmarkListParams,
    BenchmarkListResult,
    BenchmarkRowsParams,
    BenchmarkRowsResult,
    CacheClearParams,
    CacheClearResult,
    CacheStatsParams,
    CacheStatsResult,
    GcParams,
    GcResult,
    RecordingExportParams,
    RecordingExportResult,
    RecordingImportParams,
    RecordingImportResult,
    ReferenceGetParams,
    ReferenceInfo,
    ReferenceListParams,
    ReferenceListResult,
    ReferencePutParams,
    ReportParams,
    ReportResult,
)

__all__ = [
    "AnthropicClientSpec",
    "ArmInfo",
    "ArmSpec",
    "ArmSummary",
    "ArmView",
    "AuthParams",
    "AuthResult",
    "BatchCancelParams",
    "BatchCancelResult",
    "BatchListParams",
    "BatchListResult",
    "BatchSpec",
    "BatchState",
    "BenchmarkCancelParams",
    "BenchmarkCancelResult",
    "BenchmarkCellParams",
    "BenchmarkCellResult",
    "BenchmarkCompareParams",
    "BenchmarkCompareResult",
    "BenchmarkDeleteParams",
    "BenchmarkDeleteResult",
    "BenchmarkExportParams",
    "BenchmarkExportResult",
    "BenchmarkInfo",
    "BenchmarkListParams",
    "BenchmarkListResult",
    "BenchmarkListing",
    "BenchmarkMatrixParams",
    "BenchmarkMatrixResult",
    "BenchmarkParams",
    "BenchmarkResult",
    "BenchmarkRowsParams",
    "BenchmarkRowsResult",
    "BenchmarkViewParams",
    "BenchmarkViewResult",
    "CacheClearParams",
    "CacheClearResult",
    "CacheStatsParams",
    "CacheStatsResult",
    "CellRun",
    "ClientSpec",
    "Difference",
    "ERROR_CODES",
    "ErrorData",
    "EvalMetricSpec",
    "EvalModuleSpec",
    "EvaluateParams",
    "EvaluateResult",
    "GateParams",
    "GateResult",
    "GcParams",
    "GcResult",
    "GovernorSpec",
    "GradeSpec",
    "GradesGetParams",
    "GradesGetResult",
    "GradesNextParams",
    "GradesNextResult",
    "GradesPutParams",
    "GradesPutResult",
    "HrbenchCapabilities",
    "ImportArmSpec",
    "InitializeParams",
    "InitializeResult",
    "METHODS",
    "MatrixCell",
    "MatrixItem",
    "MockClientSpec",
    "ModelPrice",
    "NOTIFICATIONS",
    "NextGrade",
    "OpenAIClientSpec",
    "OutputsArmSpec",
    "PROTOCOL_VERSION",
    "PriceSpec",
    "PriceTier",
    "PriceTierSpec",
    "PricesParams",
    "PricesResult",
    "ProgressNotification",
    "PromptArmSpec",
    "RayExecutorSpec",
    "ReadingArmSpec",
    "RecordingExportParams",
    "RecordingExportResult",
    "RecordingImportParams",
    "RecordingImportResult",
    "ReferenceGetParams",
    "ReferenceInfo",
    "ReferenceListParams",
    "ReferenceListResult",
    "ReferencePutParams",
    "ReferenceSpec",
    "ReplayClientSpec",
    "ReportParams",
    "ReportResult",
    "Row",
    "RowsNotification",
    "ScoreParams",
    "ScoreResult",
    "ServerCapabilities",
    "ServerExperimental",
    "ServerInfo",
    "ShutdownParams",
    "ShutdownResult",
    "StatusParams",
    "StatusResult",
    "Step",
    "StopPlanSpec",
    "StopSpec",
    "SweepSpec",
    "ToolCall",
    "Usage",
    "broken_range",
    "closest",
    "enum_hint",
    "plain_range",
    "schemas",
    "shown",
    "unknown_field_hint",
]
