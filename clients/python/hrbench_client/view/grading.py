"""The grading page's endpoints: the rows to grade next, and the grades a person gives, kept by the daemon.

``GET /api/benchmark/{id}/grades/next?k=&seed=`` is ``grades/next`` (each row with its item,
label and the arm's output); ``POST /api/benchmark/{id}/grades`` with a JSON body
``{"grades": [{"item", "arm", "run", "correct", "pi"?}], "grader": "..."}`` is ``grades/put``
(the daemon stores them in SQLite with the grader). The POST takes JSON only (a cross-site
form cannot send it, and the access cookie is SameSite=Strict) and at most :data:`MAX_BODY`
bytes; a malformed body is 400 naming the field.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import msgspec
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from hrbench_client.errors import HrbenchError
from hrbench_client.protocol.grades import GradeSpec
from hrbench_client.view.api import Call, _status, endpoint

__all__ = ["MAX_BODY", "grading_routes"]

MAX_BODY = 4 << 20
"""The most bytes a POST of grades may carry (4 MiB: some 40,000 grades)."""


class GradesBody(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """The body of ``POST /api/benchmark/{id}/grades``."""

    grades: Annotated[list[GradeSpec], msgspec.Meta(min_length=1, max_length=50_000)]
    grader: Annotated[str, msgspec.Meta(min_length=1, max_length=200)] | None = None


def _int(request: Request, name: str, default: int) -> int:
    from hrbench_client.errors import ConfigError

    value = request.query_params.get(name) or ""
    if not value:
        return default
    try:
        return int(value)
    except ValueError:
        raise ConfigError(f"{name}: not a whole number: {value!r}") from None


def _next(r: Request) -> Call:
    bid, k, seed = r.path_params["id"], _int(r, "k", 20), _int(r, "seed", 0)
    return lambda c: c.grades_next(bid, k, seed)


def _error(status: int, message: str, name: str = "ConfigError") -> Response:
    return JSONResponse({"error": message, "name": name}, status)


def grading_routes(run: Callable[[Call], Any]) -> list[Route]:
    """The grading page's API routes, each daemon call run by ``run`` (the view's connection pool)."""

    async def put(request: Request) -> Response:
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            return _error(415, "grades are posted as JSON (content-type: application/json)")
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_BODY:
                return _error(413, f"the body is larger than {MAX_BODY} bytes: post fewer grades at a time")
        try:
            got = msgspec.json.decode(bytes(body), type=GradesBody)
        except msgspec.DecodeError as exc:
            return _error(400, f"not grades: {exc}")
        bid = request.path_params["id"]
        grades = msgspec.to_builtins(got.grades)
        try:
            result = await run_in_threadpool(run, lambda c: c.grades_put(bid, grades, grader=got.grader))
        except HrbenchError as exc:
            return _error(_status(exc), str(exc), type(exc).__name__)
        return Response(msgspec.json.encode(result), media_type="application/json")

    return [
        Route("/api/benchmark/{id}/grades/next", endpoint(run, _next)),
        Route("/api/benchmark/{id}/grades", put, methods=["POST"]),
    ]
