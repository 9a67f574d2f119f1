"""The driver side.

Actors started or reused, batches sent out, and the workers' events (rows, cache reads and writes,
recordings, ledger entries) handled in order.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread

from hrbench.errors import BudgetRefused
from hrbench.runner.ray._actors import GovernorActor, Hub
from hrbench.runner.ray._cluster import Deliver, Work, load_ray
from hrbench.runner.ray._worker import Shipped, run_batch

if TYPE_CHECKING:
    from hrbench.arm import Arm
    from hrbench.runner.runtime import Runtime

_REMOTES: dict[str, Any] = {}


IDLE: dict[str, list[tuple[Any, Any]]] = {}
"""Per Ray job: (hub, governor) actor pairs of finished runs, reset and reused by the next run
(starting an actor starts a worker process: seconds, where a reset takes a round trip)."""


async def start_actors(
    ray: Any, remotes: dict[str, Any], limits: dict[str, Any], used: tuple[int, float, int, int]
) -> tuple[Any, Any]:
    job = ray.get_runtime_context().get_job_id()
    for other in [k for k in IDLE if k != job]:
        del IDLE[other]  # handles of a Ray session that ended
    idle = IDLE.setdefault(job, [])
    if idle:
        hub, gov = idle.pop()
        await asyncio.gather(hub.reset.remote(), gov.reset.remote(limits, used))
        return hub, gov
    return remotes["hub"].remote(), remotes["governor"].remote(limits, used)


def remote_classes() -> dict[str, Any]:
    """The actor classes and the task, made remote once per process."""
    if not _REMOTES:
        ray = load_ray()
        # the actors take no CPU, so every CPU serves batches; the governor's calls overlap in
        # Ray's transport, while the Governor's lock admits one reservation at a time
        _REMOTES["governor"] = ray.remote(num_cpus=0, max_concurrency=8)(GovernorActor)
        _REMOTES["hub"] = ray.remote(num_cpus=0, max_concurrency=10_000)(Hub)
        _REMOTES["batch"] = ray.remote(run_batch)
    return _REMOTES


async def drive(
    ray: Any,
    remotes: dict[str, Any],
    max_retries: int,
    rt: Runtime,
    hub: Any,
    gov_actor: Any,
    shipped: Shipped,
    work: list[Work],
    size: int,
    in_flight: int,
    deliver: Deliver,
) -> None:
    arm_index = {id(a): i for i, a in enumerate(_arms_of(work))}
    out = [(ci, c, i, arm_index[id(a)], list(todo)) for ci, c, i, a, todo in work]
    batches = [out[k : k + size] for k in range(0, len(out), size)]
    shipped_ref = ray.put(shipped)
    task = remotes["batch"].options(max_retries=max_retries, retry_exceptions=False)
    seen: set[int] = set()
    opened: dict[int, int] = {}  # the governor actor's reservation numbers -> the driver's ledger's
    finished = False

    async def serve() -> None:
        while True:
            last = finished
            events = await hub.take.remote(0.2)
            await _handle(events, rt, hub, seen, deliver, gov_actor, opened)
            if last and not events:
                return

    async def one(batch: list[Any], slots: anyio.Semaphore) -> None:
        async with slots:
            ref = task.remote(shipped_ref, hub, gov_actor, batch)
            try:
                await ref
            except BaseException:
                ray.cancel(ref, force=True)
                raise

    async with anyio.create_task_group() as outer:
        outer.start_soon(serve)
        slots = anyio.Semaphore(in_flight)
        async with anyio.create_task_group() as tg:
            for b in batches:
                tg.start_soon(one, b, slots)
        finished = True
    _sync_use(rt, await gov_actor.use.remote())


def _sync_use(rt: Runtime, use: dict[str, Any]) -> None:
    """The driver's governor takes the cluster's use (the daemon's ledger and resume read it)."""
    gov = rt.governor
    gov.calls, gov.usd, gov.tokens, gov.refused = use["calls"], use["usd"], use["tokens"], use["refused"]
    gov.halted = gov.halted or use["halted"]


def _arms_of(work: Sequence[Work]) -> list[Arm]:
    arms: dict[int, Arm] = {}
    for _, _, _, a, _ in work:
        arms.setdefault(id(a), a)
    return list(arms.values())


async def _handle(
    events: list[tuple[Any, ...]],
    rt: Runtime,
    hub: Any,
    seen: set[int],
    deliver: Deliver,
    gov_actor: Any,
    opened: dict[int, int] | None = None,
) -> None:
    """Serve one take of the hub on the driver: store traffic first in order, then the rows.

    The governor's ledger (as the local runner keeps it): a worker's reservation is
    written to the driver's :class:`~hrbench.runner.Journal` and answered once committed (the
    worker sends nothing before); settlements and billed replies are queued to it.
    """
    answers: dict[int, Any] = {}
    rows = False
    journal = getattr(rt.governor, "journal", None)
    opened = {} if opened is None else opened
    commits: list[tuple[int, int]] = []  # (ask, ledger number) answered once committed
    for e in events:
        kind = e[0]
        if kind == "get" and e[2] == "ledger":
            _, n, _, number, usd, tokens = e
            if journal is None:
                answers[n] = "the governor's ledger is not kept"
                continue
            opened[number] = journal.open(usd, tokens)
            commits.append((n, opened[number]))
        elif kind == "get":
            _, n, request, arm = e
            answers[n] = await anyio.to_thread.run_sync(rt.cache.get, request, arm) if rt.cache else None
        elif kind == "lsettle":
            _, number, usd, tokens, calls, lost, unpriced = e
            kept = opened.pop(number, None)
            if journal is not None and kept is not None:
                journal.settle(kept, usd, tokens, calls=calls, lost=lost, unpriced=unpriced)
        elif kind == "lpaid":
            if journal is not None:
                journal.paid(e[1], e[2])
        elif kind == "put":
            if rt.cache is not None and await rt.bill_kept(e[2]):  # a billed reply after its bill
                await anyio.to_thread.run_sync(rt.cache.put, *e[1:])
        elif kind == "rec":
            if rt.store is not None:
                await anyio.to_thread.run_sync(rt.store.recording_put, *e[1:])
        elif kind == "row":
            rows = True
    for n, number in commits:  # one group commit serves them all
        assert journal is not None
        try:
            pending = journal.durable(number)
            if pending is not None:
                await pending
            answers[n] = None
        except BudgetRefused as exc:
            answers[n] = str(exc)
    if answers:
        await hub.answer.remote(answers)
    if rows:
        _sync_use(rt, await gov_actor.use.remote())
    for e in events:
        if e[0] == "row":
            _, seq, ci, row, trace, dup, values = e
            if seq in seen:
                continue  # the driver keeps one row per (arm, item, run)
            seen.add(seq)
            await deliver(ci, row, trace, dup, values)
