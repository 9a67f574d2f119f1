"""``grades/put``, ``grades/next`` and ``grades/get``: human grades of a stored benchmark's rows.

:mod:`hrbench.results.browse._grading` does the work (in a worker thread); here the wire Structs
are converted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from hrbench_client import protocol as p
from hrbench_server.app import App
from hrbench_server.methods._handlers import absolute_path, async_handler, resolve, to_thread

__all__ = ["register_grades"]


def register_grades(feature: Callable[[str], Any], app: App) -> None:
    """Register the ``grades/*`` methods."""

    async def put(args: p.GradesPutParams) -> p.GradesPutResult:
        path = None
        if args.path is not None:  # over TCP, read only inside the exchange folders (hrbench._util.files)
            path = absolute_path(args.path, "path")

        def run() -> dict[str, Any]:
            from hrbench.results.browse import grades_put

            grades = None if args.grades is None else msgspec.to_builtins(args.grades)
            return grades_put(app.store, resolve(app, args.id), grades, path, args.grader)

        return msgspec.convert(await to_thread(run), p.GradesPutResult)

    async def next_(args: p.GradesNextParams) -> p.GradesNextResult:
        def run() -> dict[str, Any]:
            from hrbench.results.browse import grades_next

            return grades_next(app.store, resolve(app, args.id), args.k, args.seed)

        return msgspec.convert(await to_thread(run), p.GradesNextResult)

    async def get(args: p.GradesGetParams) -> p.GradesGetResult:
        def run() -> dict[str, Any]:
            from hrbench.results.browse import grades_get

            return grades_get(app.store, resolve(app, args.id))

        return msgspec.convert(await to_thread(run), p.GradesGetResult, from_attributes=True)

    feature("grades/put")(async_handler(p.GradesPutParams, put))
    feature("grades/next")(async_handler(p.GradesNextParams, next_))
    feature("grades/get")(async_handler(p.GradesGetParams, get))
