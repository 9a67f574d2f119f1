"""Typed exceptions re-raised from the daemon's JSON-RPC errors.

The daemon sends each library error with a stable code and the class name in ``error.data``
(``{"name": "BudgetRefused", "limit": "call_cap_reached"}``); :func:`from_error` raises the
class of the same name here. These mirror ``hrbench.errors`` (same names, same codes, same
builtin bases: ``ConfigError`` is a ``ValueError``, ``ReplayMiss`` and ``NotFound`` a
``LookupError``) without importing the core library. Wire-level errors (bad JSON, unknown
method, bad params, cancelled) have their own classes under :class:`RpcError`::

    HrbenchError
    ├── ConfigError (ValueError)
    │   ├── ReferenceValueError
    │   ├── SignatureError
    │   └── CodeRefused                     an import path (code) sent where code is not allowed
    ├── ReferenceLocked, ScorerError, BudgetRefused, DuplicateDrawError, ModelError
    │   └── ReasoningExhausted               (of ModelError) a reply that is all reasoning
    ├── ReplayMiss (LookupError)
    ├── TooFewRunsError (ValueError)
    ├── NotFound (LookupError)               a stored benchmark/reference/recording is unknown
    ├── StoreError                           the daemon's database cannot be used (file, fix)
    │   └── StoreGone, StoreFull, StoreCorrupt, StoreReadOnly
    ├── BenchmarkRunning                     a second run (resume) of a benchmark running now
    ├── BenchmarkCancelled                   `hrb cancel` cancelled the benchmark while it ran
    ├── DaemonStopped                        the daemon was stopped while the benchmark ran
    ├── DaemonError (ConnectionError)        no daemon, or the connection broke
    └── RpcError
        ├── ParseError, InvalidRequest, MethodNotFound, InternalError, Unauthorized
        ├── InvalidParams (ValueError)       msgspec's message names the field path
        └── RequestCancelled
"""

from __future__ import annotations

TYPE_CHECKING = False  # `typing` is not imported at start-up (the `hrb` one-liners)
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "BenchmarkCancelled",
    "BenchmarkRunning",
    "BudgetRefused",
    "CodeRefused",
    "ConfigError",
    "DaemonError",
    "DaemonStopped",
    "DuplicateDrawError",
    "HrbenchError",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "MethodNotFound",
    "ModelError",
    "NotFound",
    "ParseError",
    "ReasoningExhausted",
    "ReferenceLocked",
    "ReferenceValueError",
    "ReplayMiss",
    "RequestCancelled",
    "RpcError",
    "ScorerError",
    "SignatureError",
    "StoreCorrupt",
    "StoreError",
    "StoreFull",
    "StoreGone",
    "StoreReadOnly",
    "TooFewRunsError",
    "Unauthorized",
    "from_error",
]


class HrbenchError(Exception):
    """Raised for every error the daemon reports, and when it cannot be reached.

    Attributes:
        message: the daemon's message.
        code: the JSON-RPC error code.
        data: ``error.data`` (``name`` and the exception's context: field, limit, ...).
    """

    code = -32000

    def __init__(self, message: str, code: int | None = None, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.data = data or {}

    def __str__(self) -> str:
        return self.message

    @property
    def context(self) -> dict[str, Any]:
        """The library exception's context (arm, item, run, benchmark, ...)."""
        ctx = self.data.get("context")
        return dict(ctx) if isinstance(ctx, dict) else {}


class ConfigError(HrbenchError, ValueError):
    """Raised when an argument or spec is malformed; ``field`` names it."""

    code = -32001

    @property
    def field(self) -> str | None:
        """The field named by the daemon."""
        return self.data.get("field")


class ReferenceValueError(ConfigError):
    """Raised when a reference is malformed."""

    code = -32002


class SignatureError(ConfigError):
    """Raised when an evaluate() signature cannot be parsed."""

    code = -32003


class ReferenceLocked(HrbenchError):
    """Raised when a locked reference was changed."""

    code = -32004


class ScorerError(HrbenchError):
    """Raised when a scorer broke its contract."""

    code = -32005


class BudgetRefused(HrbenchError):
    """Raised when the governor refused a request; ``limit`` says which limit."""

    code = -32006

    @property
    def limit(self) -> str | None:
        """``call_cap_reached``, ``cost_cap_reached``, ``token_cap_reached`` or ``limit_refused``."""
        return self.data.get("limit")


class DuplicateDrawError(HrbenchError):
    """Raised when an arm's runs were not distinct draws; ``context["benchmark"]`` has the id."""

    code = -32007


class ReplayMiss(HrbenchError, LookupError):
    """Raised when a strict replay had no recorded reply."""

    code = -32008


class ModelError(HrbenchError):
    """Raised when a model client failed for good."""

    code = -32009


class ReasoningExhausted(ModelError):
    """Raised when a reply has no answer: the model spent its whole output limit reasoning."""

    code = -32029


class TooFewRunsError(HrbenchError, ValueError):
    """Raised when an interval report is asked of fewer than 5 runs."""

    code = -32010


class NotFound(HrbenchError, LookupError):
    """Raised when a stored benchmark, reference or recording does not exist."""

    code = -32011


class CodeRefused(ConfigError):
    """Raised when a spec named code (``module:function``) over TCP; see the README's trust model."""

    code = -32020


class StoreError(HrbenchError):
    """Raised when the daemon's database cannot be used; the message names the file and the fix."""

    code = -32021

    @property
    def path(self) -> str | None:
        """The database file."""
        path = self.context.get("path")
        return None if path is None else str(path)


class StoreGone(StoreError):
    """Raised when the database file was deleted or replaced under the running daemon."""

    code = -32022


class StoreFull(StoreError):
    """Raised when the daemon's disk (or quota) is full."""

    code = -32023


class StoreCorrupt(StoreError):
    """Raised when the database file is corrupt or not a database."""

    code = -32024


class StoreReadOnly(StoreError):
    """Raised when the database or its folder cannot be written."""

    code = -32025


class BenchmarkRunning(HrbenchError):
    """Raised when a benchmark id that is running now is asked to run again (a second resume)."""

    code = -32026


class BenchmarkCancelled(HrbenchError):
    """Raised when ``hrb cancel`` (``benchmark/cancel``) cancelled the benchmark while it ran.

    The message names the benchmark, the runs saved and the resume command; ``context`` has
    ``benchmark``, ``done`` and ``total``. The benchmark is resumable.
    """

    code = -32028


class DaemonStopped(HrbenchError):
    """Raised when the daemon was stopped (``hrb daemon stop``, a signal) while the benchmark ran.

    The message names the benchmark, the runs done and the resume command; ``context`` has
    ``benchmark``, ``done`` and ``total``. The benchmark is resumable.
    """

    code = -32027


class DaemonError(HrbenchError, ConnectionError):
    """Raised when no daemon answers, or the connection to it broke."""

    code = -32099


class RpcError(HrbenchError):
    """Raised for a JSON-RPC protocol error."""


class ParseError(RpcError):
    """Raised when the daemon could not parse a message as JSON."""

    code = -32700


class InvalidRequest(RpcError):
    """Raised when a message was not a valid JSON-RPC request (or was too large)."""

    code = -32600


class MethodNotFound(RpcError):
    """Raised when the method does not exist."""

    code = -32601


class InvalidParams(RpcError, ValueError):
    """Raised when params failed validation; the message ends with the field path."""

    code = -32602


class InternalError(RpcError):
    """Raised when the daemon failed unexpectedly (details are in the daemon's log)."""

    code = -32603


class Unauthorized(RpcError):
    """Raised when a TCP connection did not authenticate with the token."""

    code = -32098


class RequestCancelled(RpcError):
    """Raised when a request was cancelled (``$/cancelRequest``)."""

    code = -32800


_BY_NAME: dict[str, type[HrbenchError]] = {
    c.__name__: c
    for c in (
        HrbenchError,
        ConfigError,
        ReferenceValueError,
        SignatureError,
        ReferenceLocked,
        ScorerError,
        BudgetRefused,
        DuplicateDrawError,
        ReplayMiss,
        ModelError,
        ReasoningExhausted,
        TooFewRunsError,
        NotFound,
        CodeRefused,
        StoreError,
        StoreGone,
        StoreFull,
        StoreCorrupt,
        StoreReadOnly,
        BenchmarkRunning,
        BenchmarkCancelled,
        DaemonStopped,
        ParseError,
        InvalidRequest,
        MethodNotFound,
        InvalidParams,
        InternalError,
        Unauthorized,
        RequestCancelled,
    )
}
_BY_CODE: dict[int, type[HrbenchError]] = {c.code: c for c in _BY_NAME.values()}


def from_error(error: dict[str, Any]) -> HrbenchError:
    """The exception for a JSON-RPC ``error`` object: by ``data.name``, else by ``code``.

    Example:
        >>> e = from_error({"code": -32006, "message": "refused", "data": {"name": "BudgetRefused",
        ...                 "limit": "call_cap_reached"}})
        >>> type(e).__name__, e.limit
        ('BudgetRefused', 'call_cap_reached')
    """
    code = int(error.get("code", -32603))
    message = str(error.get("message", ""))
    data = error.get("data")
    data = data if isinstance(data, dict) else {}
    cls = _BY_NAME.get(str(data.get("name", ""))) or _BY_CODE.get(code) or RpcError
    return cls(message, code=code, data=data)
