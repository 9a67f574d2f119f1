"""Wire errors map back to typed exceptions with the library's names and codes."""

from __future__ import annotations

import inspect

import pytest

import hrbench.errors as lib
from hrbench_client import errors as wire
from hrbench_client.protocol import ERROR_CODES

LIBRARY_ERRORS = [c for _, c in inspect.getmembers(lib, inspect.isclass) if issubclass(c, lib.HrbenchError)]


@pytest.mark.parametrize("cls", LIBRARY_ERRORS, ids=lambda c: c.__name__)
def test_every_library_error_has_a_stable_code_and_a_client_twin(cls: type[lib.HrbenchError]) -> None:
    assert ERROR_CODES[cls.__name__] == cls.code
    twin = getattr(wire, cls.__name__)
    assert twin.code == cls.code
    for builtin in (ValueError, LookupError):
        assert issubclass(twin, builtin) == issubclass(cls, builtin)


def test_codes_are_unique() -> None:
    assert len(set(ERROR_CODES.values())) == len(ERROR_CODES)


@pytest.mark.parametrize(
    ("error", "cls"),
    [
        (
            {"code": -32006, "message": "m", "data": {"name": "BudgetRefused", "limit": "cost_cap_reached"}},
            wire.BudgetRefused,
        ),
        (
            {"code": -32602, "message": "Expected `int` - at `$.runs`", "data": {"name": "InvalidParams"}},
            wire.InvalidParams,
        ),
        ({"code": -32601, "message": "Method Not Found: x"}, wire.MethodNotFound),
        ({"code": -32800, "message": "cancelled"}, wire.RequestCancelled),
        (
            {"code": -32001, "message": "runs: bad", "data": {"name": "ConfigError", "field": "runs"}},
            wire.ConfigError,
        ),
        ({"code": -31999, "message": "odd"}, wire.RpcError),
    ],
)
def test_from_error(error: dict, cls: type) -> None:
    exc = wire.from_error(error)
    assert type(exc) is cls and str(exc) == error["message"] and exc.code == error["code"]
    if cls is wire.BudgetRefused:
        assert exc.limit == "cost_cap_reached"  # type: ignore[attr-defined]
    if cls is wire.ConfigError:
        assert exc.field == "runs" and isinstance(exc, ValueError)  # type: ignore[attr-defined]
