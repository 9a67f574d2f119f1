"""hrbench_client: talk to the hrbench daemon (standard library and msgspec only).

>>> import hrbench_client as hc
>>> with hc.connect() as hb:  # starts a daemon in your state dir  # doctest: +SKIP
...     hb.score("  paris ", label="Paris").correct
True

See :mod:`hrbench_client.client` for the client, :mod:`hrbench_client.protocol` for the wire
Structs and :mod:`hrbench_client.errors` for the typed exceptions.
"""

from __future__ import annotations

TYPE_CHECKING = False  # `typing` is not imported at start-up (the `hrb` one-liners)
if TYPE_CHECKING:
    from typing import Any

    from hrbench_client.client import (
        BenchmarkStream,
        Client,
        connect,
        daemon_status,
        start_daemon,
        stop_daemon,
    )
    from hrbench_client.errors import (
        BenchmarkRunning,
        BudgetRefused,
        CodeRefused,
        ConfigError,
        DaemonError,
        DaemonStopped,
        DuplicateDrawError,
        HrbenchError,
        InvalidParams,
        MethodNotFound,
        ModelError,
        NotFound,
        ReplayMiss,
        RequestCancelled,
        ScorerError,
        StoreCorrupt,
        StoreError,
        StoreFull,
        StoreGone,
        StoreReadOnly,
        TooFewRunsError,
    )
    from hrbench_client.protocol import BenchmarkParams, BenchmarkResult, Row, ScoreResult

_HOMES = {
    "hrbench_client.client": ("BenchmarkStream", "Client", "connect", "daemon_status", "start_daemon", "stop_daemon"),
    "hrbench_client.errors": (
        "BenchmarkRunning", "BudgetRefused", "CodeRefused", "ConfigError", "DaemonError", "DaemonStopped", "DuplicateDrawError",
        "HrbenchError",
        "InvalidParams", "MethodNotFound", "ModelError", "NotFound", "ReplayMiss", "RequestCancelled",
        "ScorerError", "StoreCorrupt", "StoreError", "StoreFull", "StoreGone", "StoreReadOnly",
        "TooFewRunsError",
    ),
    "hrbench_client.protocol": ("BenchmarkParams", "BenchmarkResult", "Row", "ScoreResult"),
}  # fmt: skip
_WHERE = {name: module for module, names in _HOMES.items() for name in names}


def __getattr__(name: str) -> Any:
    """Import the public names on first use (``python -m hrbench_client.protocol`` stays clean)."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'hrbench_client' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "BenchmarkParams",
    "BenchmarkResult",
    "BenchmarkStream",
    "BenchmarkRunning",
    "BudgetRefused",
    "Client",
    "CodeRefused",
    "ConfigError",
    "DaemonError",
    "DaemonStopped",
    "DuplicateDrawError",
    "HrbenchError",
    "InvalidParams",
    "MethodNotFound",
    "ModelError",
    "NotFound",
    "ReplayMiss",
    "RequestCancelled",
    "Row",
    "ScoreResult",
    "ScorerError",
    "StoreCorrupt",
    "StoreError",
    "StoreFull",
    "StoreGone",
    "StoreReadOnly",
    "TooFewRunsError",
    "connect",
    "daemon_status",
    "start_daemon",
    "stop_daemon",
]
