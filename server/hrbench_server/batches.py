"""``batch/list`` and ``batch/cancel``: the provider batches of benchmarks run in batch mode.

The batches are read from the store's batch ledger (:mod:`hrbench.store._batches`), which the
running benchmarks keep current: a batch is live until its results are read. A batch of a
running benchmark is cancelled through it (its collector follows the cancel, and the lines
answered before are billed and kept); a batch whose benchmark is not running (a daemon killed,
a benchmark cancelled) is cancelled at the provider directly, with the key named by its
benchmark's client (the daemon's environment), and its state kept.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio.to_thread

from hrbench.errors import NotFound
from hrbench_client import protocol as p
from hrbench_server.app import App

__all__ = ["batch_state", "register_batches", "watch_batches"]

T = TypeVar("T")


def to_thread(fn: Callable[..., T], *args: Any) -> Awaitable[T]:
    """``fn(*args)`` in a worker thread (SQLite), awaited."""
    return anyio.to_thread.run_sync(functools.partial(fn, *args))


def batch_state(kept: dict[str, Any], now: float | None = None) -> p.BatchState:
    """A kept batch (a :meth:`~hrbench.store.Store.batch_list` row) as the wire shows it.

    Example:
        >>> row = {"tag": "t", "benchmark_id": "b", "provider": "openai", "state": "in_progress", "lines": 4,
        ...        "batch_id": "batch_1", "done": 1, "failed": 0, "created": 100.0, "usd_reserved": 0.5,
        ...        "usd_billed": 0.0, "ended": None}
        >>> batch_state(row, now=130.0).age_s
        30.0
    """
    now = time.time() if now is None else now
    return p.BatchState(
        tag=kept["tag"],
        benchmark=kept["benchmark_id"],
        provider=kept["provider"],
        state=kept["state"],
        lines=int(kept["lines"]),
        id=kept["batch_id"],
        done=int(kept["done"] or 0),
        failed=int(kept["failed"] or 0),
        age_s=round(max(0.0, now - float(kept["created"] or now)), 3),
        usd_reserved=float(kept["usd_reserved"] or 0.0),
        usd_billed=float(kept["usd_billed"] or 0.0),
        live=kept["ended"] is None,
    )


def watch_batches(app: App, bench_id: str, sink: Any) -> Callable[[Any], None]:
    """The ``on_batch`` of a running benchmark: registered for ``batch/cancel``, its states in progress."""

    def changed(batching: Any) -> None:
        app.batching[bench_id] = batching
        now = time.time()
        sink.batches = [
            p.BatchState(
                tag=b.tag,
                benchmark=bench_id,
                provider=b.provider,
                state=b.state,
                lines=b.lines,
                id=b.id,
                done=b.done,
                failed=b.failed,
                age_s=round(max(0.0, now - b.created), 3),
                usd_reserved=b.usd_reserved,
                live=b.state not in ("completed", "expired", "cancelled", "failed"),
            )
            for b in batching.batches
        ]
        sink.progress()

    return changed


def register_batches(feature: Callable[[str], Any], app: App, async_handler: Any, resolve: Any) -> None:
    """Register ``batch/list`` and ``batch/cancel`` (``async_handler`` and ``resolve``: the methods' own)."""

    async def batch_list(args: p.BatchListParams) -> p.BatchListResult:
        bid = None if args.benchmark is None else await to_thread(resolve, app, args.benchmark)
        kept = await to_thread(lambda: app.store.batch_list(bid, live=not args.all))
        return p.BatchListResult(batches=[batch_state(k) for k in kept])

    feature("batch/list")(async_handler(p.BatchListParams, batch_list))

    async def batch_cancel(args: p.BatchCancelParams) -> p.BatchCancelResult:
        kept = await to_thread(app.store.batch_get, args.id)
        if kept is None:
            raise NotFound(
                f"no batch has the tag or provider id {args.id!r} (`hrb batches --all` lists them)"
            )
        running = app.batching.get(kept["benchmark_id"])
        if kept["batch_id"] is not None and not (running is not None and await running.cancel(kept["tag"])):
            await _cancel_at_provider(app, kept)
        again = await to_thread(app.store.batch_get, kept["tag"])
        return p.BatchCancelResult(batch=batch_state(again or kept))

    feature("batch/cancel")(async_handler(p.BatchCancelParams, batch_cancel))


async def _cancel_at_provider(app: App, kept: dict[str, Any]) -> None:
    """Cancel a batch no running benchmark follows, with a client of its provider, and keep its state."""
    from hrbench.models import AnthropicClient, OpenAIClient
    from hrbench.runner.batch import batch_api

    make = {"openai": OpenAIClient, "anthropic": AnthropicClient}[kept["provider"]]
    api = batch_api(make("-", base_url=kept["base_url"], api_key_env=kept["key_env"]))
    try:
        status = await api.cancel(kept["batch_id"])
    finally:
        await api.aclose()
    await to_thread(
        lambda: app.store.batch_update(
            kept["tag"], state=status.state, done=status.done, failed=status.failed
        )
    )
