"""``benchmark/delete`` and ``gc``: removing what the store no longer needs."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from hrbench.errors import ConfigError
from hrbench_client import protocol as p
from hrbench_server.app import App
from hrbench_server.methods._handlers import async_handler, resolve, to_thread

__all__ = ["register_housekeeping"]


def register_housekeeping(feature: Callable[[str], Any], app: App) -> None:
    """Register ``benchmark/delete`` and ``gc`` (neither touches a running benchmark)."""

    async def benchmark_delete(args: p.BenchmarkDeleteParams) -> p.BenchmarkDeleteResult:
        def delete() -> p.BenchmarkDeleteResult:
            bid = resolve(app, args.id)
            if bid in app.running:
                raise ConfigError(
                    "id", args.id, f"this benchmark is running; cancel it first: hrb cancel {bid}"
                )
            n = app.store.benchmark_delete([bid])
            return p.BenchmarkDeleteResult(id=bid, rows=n["rows"], traces=n["traces"], locks=n["locks"])

        return await to_thread(delete)

    async def gc(args: p.GcParams) -> p.GcResult:
        out = await to_thread(
            functools.partial(
                app.store.gc,
                args.older_than_s,
                keep=list(app.running),
                cache=args.cache,
                recordings=args.recordings,
                vacuum=args.vacuum,
            )
        )
        return p.GcResult(**out)

    feature("benchmark/delete")(async_handler(p.BenchmarkDeleteParams, benchmark_delete))
    feature("gc")(async_handler(p.GcParams, gc))
