"""``benchmark/export``: a stored benchmark as Inspect eval logs (:mod:`hrbench.interop`)."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import Any

import anyio.to_thread

from hrbench.errors import ConfigError, NotFound
from hrbench_client import protocol as p
from hrbench_server.app import App

__all__ = ["register_export"]


def register_export(
    feature: Callable[[str], Any],
    app: App,
    wrap: Callable[..., Any],
    resolve: Callable[[App, str], str],
) -> None:
    """Register ``benchmark/export`` with ``feature``; ``wrap(Params, fn)`` makes the handler.

    ``resolve(app, ref)`` is the daemon's lookup of a benchmark id, prefix or name. The logs
    are built from the stored rows, traces and reference, in a worker thread, and written
    whole or not at all by :func:`hrbench.interop.write_inspect_logs`: over TCP only inside the
    state folder's ``exports`` folder, as every file a TCP client asks the daemon to write
    (:mod:`hrbench._util.files`).
    """

    async def export(args: p.BenchmarkExportParams) -> p.BenchmarkExportResult:
        from hrbench.interop import stored_to_inspect
        from hrbench.specs import stored_scorer

        def run() -> p.BenchmarkExportResult:
            if not os.path.isabs(os.path.expanduser(args.path)):
                raise ConfigError(
                    "path",
                    args.path,
                    "the daemon needs an absolute path (its working directory is not yours)",
                )
            bid = resolve(app, args.id)
            rec = app.store.benchmark_get(bid)
            if rec is None:
                raise NotFound(f"no stored benchmark has the id {bid!r}", benchmark=bid)
            rows = app.store.rows_get(bid)
            if not rows:
                raise ConfigError("id", args.id, "this benchmark has no stored rows yet: nothing to export")
            ref = app.store.reference_get(rec["reference_hash"]) if rec.get("reference_hash") else None
            paths = stored_to_inspect(
                {**rec, "id": bid},
                rows,
                os.path.expanduser(args.path),
                reference=ref,
                traces=app.store.traces_get(bid),
                name=args.name,
                scorer=stored_scorer(rec.get("spec") or {}),
                log_format=args.log_format,
            )
            return p.BenchmarkExportResult(id=bid, paths=[str(x) for x in paths])

        out: Awaitable[p.BenchmarkExportResult] = anyio.to_thread.run_sync(run)
        return await out

    feature("benchmark/export")(wrap(p.BenchmarkExportParams, export))
