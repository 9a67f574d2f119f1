"""The ``/api/...`` endpoints of ``hrb view``: each reads its request into one daemon call.

A builder reads a request's path and query parameters into a call on a connected
:class:`~hrbench_client.client.Client`; :func:`endpoint` runs that call in a worker thread (on a
pooled connection of :mod:`hrbench_client.view.server`) and answers JSON. An error is JSON
``{"error", "name"}`` with 404 (unknown benchmark, item or arm), 400 (bad parameter) or 502
(daemon unreachable).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from hrbench_client.errors import ConfigError, DaemonError, HrbenchError, InvalidParams, NotFound

__all__ = ["ROUTES", "Call", "endpoint"]

Call = Callable[[Any], Any]
"""One daemon call: takes a connected client, returns what is sent back as JSON."""


def endpoint(run: Callable[[Call], Any], build: Callable[[Request], Call]) -> Callable[[Request], Any]:
    """An ASGI handler that builds the call from the request, runs it in a worker thread and answers JSON.

    Args:
        run: runs one call on a connection (the view's pool: ``_Daemon.call``).
        build: reads the request into the call; raises :class:`ConfigError` for a bad parameter.
    """

    async def handler(request: Request) -> Response:
        try:
            call = build(request)
            result = await run_in_threadpool(run, call)
        except HrbenchError as exc:
            return JSONResponse({"error": str(exc), "name": type(exc).__name__}, _status(exc))
        return Response(msgspec.json.encode(result), media_type="application/json")

    return handler


def _status(exc: HrbenchError) -> int:
    if isinstance(exc, NotFound):
        return 404
    if isinstance(exc, (ConfigError, InvalidParams)):
        return 400
    return 502 if isinstance(exc, DaemonError) else 500


def _float(request: Request, name: str, default: float) -> float:
    value = request.query_params.get(name)
    if value is None or value == "":
        return default
    try:
        return float(value)
    except ValueError:
        raise ConfigError(f"{name}: not a number: {value!r}") from None


def _q(request: Request, name: str) -> str | None:
    return request.query_params.get(name) or None


def _required(request: Request, name: str) -> str:
    value = _q(request, name)
    if value is None:
        raise ConfigError(f"{name}: missing (give ?{name}=...)")
    return value


def _settings(request: Request) -> dict[str, Any]:
    out: dict[str, Any] = {"level": _float(request, "level", 0.95)}
    if _q(request, "method"):
        out["method"] = _q(request, "method")
    return out


def _benchmarks(r: Request) -> Call:
    search = _q(r, "search")
    return lambda c: {"benchmarks": c.benchmarks(search=search)}


def _view(r: Request) -> Call:
    bid, against, kw = r.path_params["id"], _q(r, "against"), _settings(r)
    return lambda c: c.view(bid, against, **kw)


def _matrix(r: Request) -> Call:
    bid = r.path_params["id"]
    filters: dict[str, Any] = {k: _q(r, k) for k in ("cluster", "failure_kind", "split")}
    filters["disagree"] = _q(r, "disagree") in ("1", "true", "on")
    return lambda c: c.matrix(bid, **filters)


def _cell(r: Request) -> Call:
    bid, item, arm = r.path_params["id"], _required(r, "item"), _required(r, "arm")
    return lambda c: c.cell(bid, item, arm)


def _batches(r: Request) -> Call:
    bid = r.path_params["id"]
    return lambda c: c.batches(bid, all=True)


def _compare(r: Request) -> Call:
    a, b, kw = _required(r, "a"), _required(r, "b"), _settings(r)
    return lambda c: c.compare_benchmarks(a, b, **kw)


ROUTES: tuple[tuple[str, Callable[[Request], Call]], ...] = (
    ("/api/benchmarks", _benchmarks),
    ("/api/benchmark/{id}", _view),
    ("/api/benchmark/{id}/matrix", _matrix),
    ("/api/benchmark/{id}/cell", _cell),
    ("/api/benchmark/{id}/batches", _batches),
    ("/api/compare", _compare),
)
"""Each endpoint's path and the builder of its call (``?search=``; ``?against=&level=&method=``;
``?cluster=&failure_kind=&split=&disagree=``; ``?item=&arm=``; none: a batch-mode benchmark's
provider batches; ``?a=&b=&level=&method=``)."""
