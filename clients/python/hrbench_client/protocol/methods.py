"""The method table: every request method and notification by name, the error codes and ``error.data``."""

from __future__ import annotations

from typing import Any

from msgspec import Struct

from hrbench_client.protocol.batch import (
    BatchCancelParams,
    BatchCancelResult,
    BatchListParams,
    BatchListResult,
)
from hrbench_client.protocol.benchmark import (
    BenchmarkParams,
    BenchmarkResult,
    ProgressNotification,
    RowsNotification,
)
from hrbench_client.protocol.browse import (
    BenchmarkCellParams,
    BenchmarkCellResult,
    BenchmarkCompareParams,
    BenchmarkCompareResult,
    BenchmarkMatrixParams,
    BenchmarkMatrixResult,
    BenchmarkViewParams,
    BenchmarkViewResult,
)
from hrbench_client.protocol.gate import GateParams, GateResult
from hrbench_client.protocol.grades import (
    GradesGetParams,
    GradesGetResult,
    GradesNextParams,
    GradesNextResult,
    GradesPutParams,
    GradesPutResult,
)
from hrbench_client.protocol.interop import BenchmarkExportParams, BenchmarkExportResult
from hrbench_client.protocol.prices import PricesParams, PricesResult
from hrbench_client.protocol.scoring import EvaluateParams, EvaluateResult, ScoreParams, ScoreResult
from hrbench_client.protocol.session import (
    AuthParams,
    AuthResult,
    InitializeParams,
    InitializeResult,
    ShutdownParams,
    ShutdownResult,
    StatusParams,
    StatusResult,
)
from hrbench_client.protocol.specs import ReferenceSpec
from hrbench_client.protocol.stored import (
    BenchmarkCancelParams,
    BenchmarkCancelResult,
    BenchmarkDeleteParams,
    BenchmarkDeleteResult,
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

__all__ = ["ERROR_CODES", "ErrorData", "METHODS", "NOTIFICATIONS"]


class ErrorData(Struct, kw_only=True, omit_defaults=True):
    """``error.data`` of every hrbench JSON-RPC error: the exception's class name and context."""

    name: str
    field: str | None = None
    limit: str | None = None
    context: dict[str, Any] | None = None


METHODS: dict[str, tuple[type[Struct], type[Struct]]] = {
    "benchmark": (BenchmarkParams, BenchmarkResult),
    "score": (ScoreParams, ScoreResult),
    "evaluate": (EvaluateParams, EvaluateResult),
    "reference/put": (ReferencePutParams, ReferenceInfo),
    "reference/get": (ReferenceGetParams, ReferenceSpec),
    "reference/list": (ReferenceListParams, ReferenceListResult),
    "recording/import": (RecordingImportParams, RecordingImportResult),
    "recording/export": (RecordingExportParams, RecordingExportResult),
    "cache/stats": (CacheStatsParams, CacheStatsResult),
    "cache/clear": (CacheClearParams, CacheClearResult),
    "benchmark/rows": (BenchmarkRowsParams, BenchmarkRowsResult),
    "benchmark/list": (BenchmarkListParams, BenchmarkListResult),
    "benchmark/delete": (BenchmarkDeleteParams, BenchmarkDeleteResult),
    "benchmark/cancel": (BenchmarkCancelParams, BenchmarkCancelResult),
    "batch/list": (BatchListParams, BatchListResult),
    "batch/cancel": (BatchCancelParams, BatchCancelResult),
    "gc": (GcParams, GcResult),
    "report": (ReportParams, ReportResult),
    "benchmark/view": (BenchmarkViewParams, BenchmarkViewResult),
    "benchmark/matrix": (BenchmarkMatrixParams, BenchmarkMatrixResult),
    "benchmark/cell": (BenchmarkCellParams, BenchmarkCellResult),
    "benchmark/compare": (BenchmarkCompareParams, BenchmarkCompareResult),
    "benchmark/gate": (GateParams, GateResult),
    "grades/put": (GradesPutParams, GradesPutResult),
    "grades/next": (GradesNextParams, GradesNextResult),
    "grades/get": (GradesGetParams, GradesGetResult),
    "prices": (PricesParams, PricesResult),
    "benchmark/export": (BenchmarkExportParams, BenchmarkExportResult),
    "status": (StatusParams, StatusResult),
    "shutdown": (ShutdownParams, ShutdownResult),
    "auth": (AuthParams, AuthResult),
    "initialize": (InitializeParams, InitializeResult),
}
"""Every request method: ``name -> (params Struct, result Struct)``."""

NOTIFICATIONS: dict[str, type[Struct]] = {
    "hrbench/rows": RowsNotification,
    "hrbench/progress": ProgressNotification,
}
"""Every server-to-client notification: ``name -> params Struct``."""

ERROR_CODES: dict[str, int] = {
    "ParseError": -32700,
    "InvalidRequest": -32600,
    "MethodNotFound": -32601,
    "InvalidParams": -32602,
    "InternalError": -32603,
    "Unauthorized": -32098,
    "RequestCancelled": -32800,
    "HrbenchError": -32000,
    "ConfigError": -32001,
    "ReferenceValueError": -32002,
    "SignatureError": -32003,
    "ReferenceLocked": -32004,
    "ScorerError": -32005,
    "BudgetRefused": -32006,
    "DuplicateDrawError": -32007,
    "ReplayMiss": -32008,
    "ModelError": -32009,
    "TooFewRunsError": -32010,
    "NotFound": -32011,
    "CodeRefused": -32020,
    "StoreError": -32021,
    "StoreGone": -32022,
    "StoreFull": -32023,
    "StoreCorrupt": -32024,
    "StoreReadOnly": -32025,
    "BenchmarkRunning": -32026,
    "BenchmarkCancelled": -32028,
    "DaemonStopped": -32027,
    "ReasoningExhausted": -32029,
}
"""Stable JSON-RPC error codes by error name (library codes match ``hrbench.errors``)."""
