"""The worker side.

One batch of cells run on a Ray worker, with the governor, ledger, cache and store as the driver's
proxies.
"""

from __future__ import annotations

import inspect
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread

from hrbench.errors import BudgetRefused
from hrbench.runner._reservation import Admitting, Reservation, booked
from hrbench.runner.ray._cluster import load_cloudpickle, load_ray

if TYPE_CHECKING:
    from hrbench.runner._invoke import Plan
    from hrbench.runner.runtime import Runtime


@dataclass
class _Ticket(Reservation):
    number: int = 0


class _LedgerProxy:
    """The driver's :class:`~hrbench.runner.Journal` as a worker sees it: billed replies go to it."""

    def __init__(self, hub: Any, remote: RemoteGovernor) -> None:
        self.hub, self.remote = hub, remote

    def paid(self, ledger_id: str, step: Any) -> None:
        """Keep a billed reply of a run in the driver's ledger (see :meth:`~hrbench.runner.Journal.paid`)."""
        self.remote.settling.append(self.hub.tell.remote([("lpaid", ledger_id, step)]))


class RemoteGovernor(Admitting):
    """The governor as a worker sees it: every reservation and settlement goes to the actor.

    ``reserve`` waits for the actor's answer (a request is never sent before it is admitted);
    ``settle`` does not (an unsettled reservation only holds more of the budget than was
    spent); a batch waits for its settlements with :meth:`settled` before it ends.

    With ``hub`` (the driver keeps the ledger per call, as the local runner does),
    ``reserve`` also waits until the driver has committed the reservation to the store's
    ledger, and every settlement and billed reply goes to that ledger too: a driver killed
    mid-run leaves its in-flight reservations open in the store, and the resume counts them as
    spent (the same ledger as the local runner).
    """

    def __init__(self, actor: Any, limits: dict[str, Any], from_defaults: bool, hub: Any = None) -> None:
        self.actor = actor
        self.hub = hub
        self.journal = None if hub is None else _LedgerProxy(hub, self)
        self.limits = limits
        self.max_calls, self.max_usd, self.max_tokens = (
            limits[k] for k in ("max_calls", "max_usd", "max_tokens")
        )
        self.per_run = {k: v for k, v in limits.items() if k.endswith("_per_run") and v is not None}
        """The per-run caps: each run's own budget is held on its worker (:mod:`hrbench.runner._runcaps`)."""
        self.from_defaults = from_defaults
        self.settling: list[Any] = []
        self._ray = load_ray()
        self._known: set[tuple[str, str]] = set()
        self._halted: str | None = None

    def halt(self, reason: str) -> None:
        """Stop the whole cluster's admissions at once (a reply dearer than reserved)."""
        self._ray.get(self.actor.halt.remote(reason))

    def reserve(self, usd: float = 0.0, tokens: int = 0, *, usd_known: bool = True) -> Reservation:
        out = self._ray.get(self.actor.reserve.remote(usd, tokens))
        if isinstance(out, (tuple, list)):
            raise BudgetRefused(out[1], limit=out[0])
        ticket = _Ticket(usd=usd, tokens=tokens, number=out, usd_known=usd_known)
        if self.hub is not None:  # in the store before it is sent, as locally
            failed = self._ray.get(self.hub.ask.remote("ledger", out, usd if usd_known else None, tokens))
            if failed is not None:  # the ledger cannot be written: not sent, and nothing more
                self._ray.get(self.actor.settle.remote(out, 0.0, 0, False))
                self.halt(failed)
                raise BudgetRefused(failed, limit="ledger_unwritable")
        return ticket

    poll_s = 0.1
    """How often a request waiting on the slow start asks the actor again (seconds): each ask is a
    round trip that holds the worker's event loop, so far less often than a local governor."""

    @property
    def halted(self) -> str | None:
        """Set once the actor answered a slow-start ask with its halt (read locally, no round trip)."""
        return self._halted

    def first_bill(self, key: tuple[str, str]) -> str:
        """Slow start until the bill is known, one for the whole cluster: the actor decides who probes.

        A pair once known is remembered here, so later requests ask nothing.
        """
        if key in self._known:
            return "known"
        state = str(self._ray.get(self.actor.first_bill.remote(key)))
        if state == "halted":
            self._halted = "the benchmark was stopped"
            return "wait"
        if state == "known":
            self._known.add(key)
        return state

    def bill_seen(self, key: tuple[str, str], confirmed: bool) -> None:
        self._ray.get(self.actor.bill_seen.remote(key, confirmed))
        if confirmed:
            self._known.add(key)

    def settle(
        self,
        reservation: Reservation,
        usd: float | None,
        tokens: int,
        *,
        sent: bool = True,
        lost: bool = False,
    ) -> None:
        if (
            not isinstance(reservation, _Ticket)
            or (amounts := booked(reservation, usd, tokens, lost)) is None
        ):
            return
        usd, tokens = amounts  # a reply lost after the write: its worst case
        self.settling.append(self.actor.settle.remote(reservation.number, usd, tokens, sent))
        if self.hub is not None:
            unpriced = int(lost and not reservation.usd_known)
            event = ("lsettle", reservation.number, usd or 0.0, tokens, int(sent), lost, unpriced)
            self.settling.append(self.hub.tell.remote([event]))

    def settled(self) -> None:
        """Wait until every settlement sent from here is in the actor's books."""
        self._ray.get(self.settling)
        self.settling.clear()

    def snapshot(self) -> dict[str, Any]:
        return {**self.limits, **self._ray.get(self.actor.use.remote())}


class _CacheProxy:
    """The driver's cache as a worker sees it (blocking calls: made from worker threads)."""

    def __init__(self, hub: Any, read: bool, write: bool) -> None:
        self.hub, self.read, self.write = hub, read, write
        self._ray = load_ray()

    def get(self, request: Any, arm: str = "") -> Any:
        return self._ray.get(self.hub.ask.remote(request, arm))

    def put(self, request: Any, result: Any, arm: str = "") -> bool:
        self._ray.get(self.hub.tell.remote([("put", request, result, arm)]))
        return True


class _StoreProxy:
    """The driver's store as a worker sees it: recordings only."""

    def __init__(self, hub: Any) -> None:
        self.hub = hub
        self._ray = load_ray()

    def recording_put(self, *args: Any) -> None:
        self._ray.get(self.hub.tell.remote([("rec", *args)]))


@dataclass
class Shipped:
    """What every batch of one benchmark needs, sent once."""

    key: str
    blob: bytes
    sys_path: list[str]
    cache: tuple[bool, bool] | None
    record: str | None
    concurrency: int
    limits: dict[str, Any]
    from_defaults: bool
    ledger: bool = False
    """Whether the driver keeps the governor's ledger per call (a :class:`~hrbench.runner.Journal`)."""


_LOADED: dict[str, Any] = {}


def run_batch(
    shipped: Shipped, hub: Any, gov_actor: Any, work: list[tuple[int, str, str, int, list[int]]]
) -> int:
    """A Ray task: make the runs of ``work`` not yet at the driver; returns how many were made."""
    from hrbench.runner.runtime import Runtime

    for p in reversed(shipped.sys_path):
        if p not in sys.path:
            sys.path.insert(0, p)
    if shipped.key not in _LOADED:
        _LOADED.clear()  # a worker process serves one benchmark at a time
        _LOADED[shipped.key] = load_cloudpickle().loads(shipped.blob)
    plan, client, pricing = _LOADED[shipped.key]
    ray = load_ray()
    runs = plan.runs
    wanted = [ci * runs + r - 1 for ci, _, _, _, todo in work for r in todo]
    left = set(ray.get(hub.todo.remote(wanted)))
    work = [(ci, c, i, a, [r for r in todo if ci * runs + r - 1 in left]) for ci, c, i, a, todo in work]
    work = [w for w in work if w[4]]
    gov = RemoteGovernor(gov_actor, shipped.limits, shipped.from_defaults, hub if shipped.ledger else None)
    cache = None if shipped.cache is None else _CacheProxy(hub, *shipped.cache)
    store = None if shipped.record is None else _StoreProxy(hub)
    rt = Runtime(client, gov, cache, shipped.record, store, pricing)  # type: ignore[arg-type]
    anyio.run(_batch, plan, rt, hub, work, shipped.concurrency)
    gov.settled()  # the driver reads the governor's use when the batch is done
    return sum(len(w[4]) for w in work)


async def _batch(
    plan: Plan, rt: Runtime, hub: Any, work: list[tuple[int, str, str, int, list[int]]], concurrency: int
) -> None:
    from hrbench.runner._invoke import (
        checked,
        failed,
        invoke_async,
        invoke_sync,
        metric_values,
        score_row,
    )

    limiter = anyio.Semaphore(concurrency)
    threads = anyio.CapacityLimiter(max(1, min(concurrency, 64)))
    outbox: list[tuple[Any, ...]] = []
    sending = anyio.Lock()

    async def send(events: list[tuple[Any, ...]]) -> None:
        # rows finished while a send is under way go together in the next one
        outbox.extend(events)
        async with sending:
            if outbox:
                out = outbox[:]
                outbox.clear()
                await hub.tell.remote(out)

    async def cell(ci: int, cluster: str, item: str, arm_index: int, todo: list[int]) -> None:
        arm = plan.arms[arm_index]
        async with limiter:
            if arm.is_async:
                atts = [await invoke_async(plan, rt, item, arm, run) for run in todo]
            else:
                atts = await anyio.to_thread.run_sync(
                    lambda: [invoke_sync(plan, rt, item, arm, run) for run in todo], limiter=threads
                )
            events: list[tuple[Any, ...]] = []
            for run, att in zip(todo, atts, strict=True):
                if inspect.isawaitable(att.output):  # a sync arm that returned an awaitable
                    try:
                        att.output = await att.output
                    except Exception as exc:
                        failed(att, exc)
                checked(att, arm)  # a failed call reaches no scorer; a prompt arm's output is its text
                values = metric_values(plan, item, att) if plan.metrics else None
                row = score_row(plan, cluster, item, arm, run, att)
                events.append(("row", ci * plan.runs + run - 1, ci, row, att.ctx.trace, att.dup, values))
            rt.cells.pop((arm.name, item), None)
        await send(events)

    async with anyio.create_task_group() as tg:
        for w in work:
            tg.start_soon(cell, *w)
