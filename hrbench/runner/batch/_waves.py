"""A benchmark in batch mode: its cells run in waves, every run of a wave at once.

:func:`install` puts a benchmark's runtime in batch mode (its client's requests go to a
:class:`~hrbench.runner.batch.Collector` through a
:class:`~hrbench.runner.batch._client.BatchClient`, priced and reserved at the batch rate);
:meth:`Batching.run` runs its cells in place of the loop's workers:

- without a stop rule, the clusters in the seed's order, ``wave`` at a time: every run of
  every cell of the wave at once (a sync arm's in a worker thread of its own, at most
  :data:`SYNC_THREADS`), so that their requests go in one batch; the next wave once every run of
  this one is done;
- with a stop rule, its gate (:mod:`hrbench.runner._stopping`) starts the clusters of a wave
  together and the next wave once every cluster of this one is committed to its test, so that
  nothing is uploaded once it decided.

A judge scorer's requests are not batched: they go through its own client, as without batch mode.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.to_thread

from hrbench.arm import Arm, RunInfo
from hrbench.errors import ConfigError
from hrbench.models import BatchPricing
from hrbench.runner._invoke import invoke_async, invoke_sync
from hrbench.runner._replay import ReplayClient
from hrbench.runner.batch._client import BatchClient, batch_api
from hrbench.runner.batch._collector import Collector
from hrbench.runner.batch._ledger import BatchLedger
from hrbench.runner.batch._lines import BatchInfo
from hrbench.runner.batch._settings import Batch, batch_of

__all__ = ["Batching", "install"]

Cell = tuple[int, str, str, Arm]

SYNC_THREADS = 512
"""The most runs of a sync arm waiting on their lines at once, each in a worker thread of its own;
a wave with more goes out in batches of about this many (an ``async def`` arm has no such bound)."""


class Batching:
    """A benchmark's batch mode: its collector and its waves (made by :func:`install`)."""

    def __init__(self, settings: Batch, collector: Collector, client: BatchClient) -> None:
        self.settings, self.collector, self.client = settings, collector, client

    @property
    def batches(self) -> list[BatchInfo]:
        """The batches of this run and those it followed, oldest first."""
        return sorted(self.collector.batches.values(), key=lambda b: b.created)

    async def cancel(self, ref: str) -> bool:
        """Cancel a batch of this benchmark at the provider, by tag or batch id; whether it is one of them."""
        return await self.collector.cancel(ref)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Batching]:
        """Follow the batches while the benchmark runs; at its end, those still ending."""
        async with anyio.create_task_group() as tg:
            try:
                await self.collector.start(tg)
                yield self
                await self.collector.finish()
            finally:
                tg.cancel_scope.cancel()
                await self.collector.api.aclose()

    async def run(self, loop: Any) -> None:
        """Run every cell of ``loop`` (a :class:`~hrbench.runner._loop.Loop`) in waves."""
        gate = loop.gate
        if gate is not None:
            wave = self.settings.wave_for(len(gate.order), gate.rule)
            gate.wave, gate.window = wave, max(gate.window, wave)  # a whole wave in flight at once
            self.collector.starting = gate.startable
            per = max((len(cells) for cells in gate.by_cluster.values()), default=1)
            await gate.run(lambda group: self.run_cells(loop, group), max(1, wave * per), loop.emit)
            return
        by_cluster: dict[str, list[Cell]] = {}
        for ci, (cluster, item, arm) in enumerate(loop.cells):
            by_cluster.setdefault(cluster, []).append((ci, cluster, item, arm))
        clusters = list(by_cluster)
        wave = self.settings.wave_for(len(clusters))
        for start in range(0, len(clusters), wave):
            await self.run_cells(loop, [c for cl in clusters[start : start + wave] for c in by_cluster[cl]])

    async def run_cells(self, loop: Any, group: list[Cell]) -> None:
        """Make every run still to make of ``group``'s cells at once, and finish each."""
        rt = loop.rt
        todos: list[list[int]] = []
        try:
            todos = [loop.pending(ci, item, arm) for ci, _, item, arm in group]
            limiter = anyio.CapacityLimiter(max(1, min(SYNC_THREADS, sum(len(t) for t in todos))))
            async with anyio.create_task_group() as tg:
                for cell, todo in zip(group, todos, strict=True):
                    for run in todo:  # counted by the collector from now: it waits for its line
                        self.collector.started(RunInfo(cell[3].name, cell[2], run))
                        tg.start_soon(self._one, loop, cell, run, limiter)
        finally:
            for (_, _, item, arm), todo in zip(group, todos, strict=False):
                rt.cells.pop((arm.name, item), None)
                for run in todo:
                    self.collector.ended(RunInfo(arm.name, item, run))

    async def _one(self, loop: Any, cell: Cell, run: int, limiter: anyio.CapacityLimiter) -> None:
        ci, cluster, item, arm = cell
        plan, rt, collector = loop.plan, loop.rt, self.collector
        who = RunInfo(arm.name, item, run)
        try:
            if arm.is_async:
                att = await invoke_async(plan, rt, item, arm, run)
            else:
                att = await anyio.to_thread.run_sync(invoke_sync, plan, rt, item, arm, run, limiter=limiter)
        finally:
            collector.ended(who)
        await loop.finish(ci, cluster, item, arm, run, att)


def install(batch: Any, loop: Any, store: Any, benchmark_id: str) -> Batching | None:
    """Put a benchmark's runtime in batch mode; ``None`` when ``batch`` asks for none.

    With a replay client nothing is batched: its replies come from its recording (a replay of a
    batch run needs no provider).

    Raises:
        ConfigError: batch mode with no client, or with a client whose provider has no batch
            API (:func:`~hrbench.runner.batch.batch_api`).
    """
    settings = batch_of(batch)
    if settings is None:
        return None
    rt = loop.rt
    client = rt.client
    if client is None:
        raise ConfigError("batch", batch, "batch mode sends the arms' model calls in batches: give a client")
    if isinstance(client, ReplayClient):
        return None
    api = batch_api(client)
    list_pricing = rt.pricing
    pricing = BatchPricing(list_pricing, api.provider, settings.discount)
    gate = loop.gate
    collector = Collector(
        api,
        settings,
        BatchLedger(store, benchmark_id, api.provider, api.base_url, getattr(client, "api_key_env", None)),
        pricing=pricing,
        list_pricing=list_pricing,
        inner=client,
        decided=lambda: gate is not None and gate.reason is not None,
    )
    collector.drain = _DrainOf(rt)
    collector.retry_errors = bool(getattr(loop, "retry_errors", False))
    collector.cache = getattr(rt, "cache", None)
    wrapper = BatchClient(client, collector)
    rt.client = wrapper
    rt.pricing, rt.prices, rt._free, rt._zero_rated = pricing, {}, {}, {}
    return Batching(settings, collector, wrapper)


class _DrainOf:
    """The runtime's drain as it is when asked (a stop rule's gate may set it after install)."""

    def __init__(self, rt: Any) -> None:
        self.rt = rt

    @property
    def started(self) -> bool:
        drain = self.rt.drain
        return drain is not None and bool(drain.started)
