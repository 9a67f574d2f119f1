"""Run a benchmark's cells on a Ray cluster, with one governor, one store and resume (issue 17).

``benchmark(..., executor="ray")`` (or ``{"kind": "ray", "address": ...}``, or a
:class:`RayExecutor`) hands the cells (arm x item, with the runs still to make) to this module
instead of the local task group; every other part of the runner is the local one. The rules
(decided, issue 17):

- **One driver.** Cells go out in batches, as Ray tasks; every scored row streams back to the
  driver, which alone emits rows (``on_row``: the daemon's streaming, its store, ``hrb ls``,
  reports and resume work unchanged) and alone touches the store.
- **One governor.** The benchmark's :class:`~hrbench.Governor` is wrapped in one Ray actor;
  every request on every worker reserves its worst-case estimate from it before it is sent and
  settles after the reply (case H13a's rule), so caps hold across the cluster. The driver's
  governor is kept up to date with the actor's use as rows come in. When the driver keeps the
  governor's ledger per call (the daemon always does; :func:`hrbench.runner.ledger.kept_ledger` from
  Python), every reservation is committed to it by the driver before its request is sent, and
  settled in it after the reply, as the local runner does: a driver killed mid-run leaves the
  requests in flight open in the store, and the resume counts them as spent (issue 13).
- **One store.** Cache lookups, cache writes and recordings go to the driver through a hub
  actor; the driver answers them from its :class:`~hrbench.Cache` and
  :class:`~hrbench.store.Store`. Keys and draw indices are the local ones, so a deterministic
  model gives the same rows locally and on Ray (except ``seconds``).
- **Faults.** A batch whose worker dies is retried by Ray (``max_retries``); the retry asks the
  hub which of its runs already reached the driver and makes only the others; the driver drops
  any row it already has (by arm, item, run). A call that finished before the death was
  written to the cache through the driver, so with a cache it is not paid again. A reservation
  held by a dead worker is never released: the governor errs on the side of the cap.
- **Concurrency.** ``worker_concurrency`` cells run at once in one task (one worker process);
  at most ``concurrency // worker_concurrency`` tasks are in flight, so the benchmark's
  ``concurrency`` is the global limit. By default each of the cluster's CPUs gets an equal
  share of ``concurrency``.

Ray is imported only when a Ray executor runs (the ``ray`` extra: ``pip install
'hrbench[ray]'``). Arms, the scorer and the client are shipped to workers with cloudpickle:
functions defined in a module are imported there by name (the driver's ``sys.path`` is
shipped along, which serves a cluster on one machine; a multi-machine cluster needs the code
installed or a Ray ``runtime_env``); closures (prompt arms, reading recipes) travel by value.

Not carried over (decided): a replay client (it reads recordings from the driver's store) is
refused; a provider response id repeated across two items of one arm is detected only when
both ran in the same batch; the caller's environment of a daemon request (API keys,
:mod:`hrbench._util.environ`) stays on the driver, and workers read keys from their own environment,
so that no key enters Ray's object store (which may spill to disk); a provider's quota refusal
stops the runs of the worker that saw it, the other workers at their own first refusal.

Example:
    >>> RayExecutor(address="local", num_cpus=2)
    RayExecutor(address='local', num_cpus=2, worker_concurrency=None, batch_size=None, max_retries=3)
    >>> resolve_executor("local") is None
    True
    >>> resolve_executor({"kind": "ray", "address": "auto"}).address
    'auto'
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import math
import os
import sys
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
import msgspec

from hrbench.errors import BudgetRefused, ConfigError
from hrbench.runner.governor import Gate, Reservation

if TYPE_CHECKING:
    from hrbench.arm import Arm
    from hrbench.results.records import Row, Step
    from hrbench.runner.invoke import Plan
    from hrbench.runner.runtime import Runtime

__all__ = ["RayExecutor", "resolve_executor"]

ADDRESSES = ("auto", "local")
"""The address forms besides ``ray://host:port`` (a Ray client) and ``host:port``."""

Work = tuple[int, str, str, "Arm", list[int]]
"""One cell sent out: (cell index, cluster, item, arm, runs still to make)."""

Deliver = Callable[[int, "Row", "list[Step]", "str | None", "dict[str, float] | None"], Awaitable[None]]
"""How the runner takes a row back: ``deliver(cell index, row, trace, duplicate message,
metric values)``."""


@dataclass(frozen=True)
class RayExecutor:
    """Where and how a benchmark's cells run on Ray (see the module docstring for the rules).

    Args:
        address: ``"auto"`` (a running cluster, as ``ray start`` made it), ``"local"`` (a
            cluster started for this run and stopped after it), ``"ray://host:port"`` (a Ray
            client) or ``"host:port"``. When Ray is already initialised in this process, that
            cluster is used whatever the address.
        num_cpus: CPUs of a cluster started for the run (``address="local"``); ``None`` for all.
        worker_concurrency: cells run at once in one task; by default ``concurrency`` shared
            equally among the cluster's CPUs.
        batch_size: cells per task; by default enough for about four tasks per slot, and at
            least ``worker_concurrency``.
        max_retries: how often Ray retries a task whose worker died (issue 17: faults).

    Raises:
        ConfigError: a bad field, named with its value.
    """

    address: str = "auto"
    num_cpus: int | None = None
    worker_concurrency: int | None = None
    batch_size: int | None = None
    max_retries: int = 3

    def __post_init__(self) -> None:
        if not isinstance(self.address, str) or not (
            self.address in ADDRESSES or self.address.startswith("ray://") or ":" in self.address
        ):
            raise ConfigError(
                "executor.address", self.address, 'expected "auto", "local", "ray://host:port" or "host:port"'
            )
        for name in ("num_cpus", "worker_concurrency", "batch_size"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ConfigError(f"executor.{name}", value, "expected a whole number >= 1 or None")
        if (
            isinstance(self.max_retries, bool)
            or not isinstance(self.max_retries, int)
            or self.max_retries < 0
        ):
            raise ConfigError("executor.max_retries", self.max_retries, "expected a whole number >= 0")

    async def run(
        self, plan: Plan, rt: Runtime, work: list[Work], concurrency: int, deliver: Deliver
    ) -> None:
        """Run ``work`` on the cluster; each new row is handed to ``deliver`` on the driver."""
        if not work:
            return
        if getattr(rt.client, "provider", "") == "replay":
            raise ConfigError("executor", "ray", "a replay client reads the driver's store: run it locally")
        ray = _ray()
        try:  # before any cluster starts: what cannot travel is a configuration error
            blob = _cloudpickle().dumps((plan, rt.client, rt.pricing))
        except Exception as exc:
            raise ConfigError(
                "executor",
                "ray",
                f"the arms, scorer, metrics and client must be picklable to run on Ray workers: {exc}",
            ) from None
        started = _connect(ray, self)
        actors = None
        clean = False
        try:
            remotes = _remotes()
            gov = rt.governor
            actors = await _actors(ray, remotes, gov.limits, (gov.calls, gov.usd, gov.tokens, gov.refused))
            hub, gov_actor = actors
            cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
            per_task = min(self.worker_concurrency or max(1, concurrency // cpus), concurrency)
            in_flight = max(1, concurrency // per_task)
            size = self.batch_size or max(per_task, math.ceil(len(work) / (4 * in_flight)))
            shipped = _Shipped(
                key=uuid.uuid4().hex,
                blob=blob,
                sys_path=[p or os.getcwd() for p in sys.path],
                cache=None if rt.cache is None else (rt.cache.read, rt.cache.write),
                record=rt.record if rt.store is not None else None,
                concurrency=per_task,
                limits=dict(gov.limits),
                from_defaults=gov.from_defaults,
                ledger=getattr(gov, "journal", None) is not None,
            )
            await _drive(ray, remotes, self, rt, hub, gov_actor, shipped, work, size, in_flight, deliver)
            clean = True
        finally:
            if actors is not None and clean and not started:
                _IDLE[ray.get_runtime_context().get_job_id()].append(actors)
            elif actors is not None:
                for actor in actors:
                    ray.kill(actor)
            if started:
                _IDLE.clear()
                ray.shutdown()


def resolve_executor(value: Any) -> RayExecutor | None:
    """The executor a benchmark's ``executor=`` names; ``None`` for the local runner.

    Accepts ``None`` or ``"local"`` (local), ``"ray"`` (Ray, ``address="auto"``), a mapping or
    a msgspec Struct with ``kind="ray"`` and the fields of :class:`RayExecutor` (the TOML
    spec and the wire), or a :class:`RayExecutor`.

    Raises:
        ConfigError: anything else, or a bad field (named with its value).

    Example:
        >>> resolve_executor("ray")
        RayExecutor(address='auto', num_cpus=None, worker_concurrency=None, batch_size=None, max_retries=3)
    """
    if value is None or value == "local":
        return None
    if value == "ray":
        return RayExecutor()
    if isinstance(value, RayExecutor):
        return value
    if hasattr(value, "__struct_fields__"):
        value = msgspec.to_builtins(value)
    if isinstance(value, dict):
        fields = dict(value)
        kind = fields.pop("kind", None)
        if kind == "local" and not fields:
            return None
        if kind != "ray":
            raise ConfigError("executor.kind", kind, 'expected "local" or "ray"')
        unknown = sorted(set(fields) - set(RayExecutor.__dataclass_fields__))
        if unknown:
            raise ConfigError(f"executor.{unknown[0]}", fields[unknown[0]], "unknown field of a Ray executor")
        return RayExecutor(**fields)
    raise ConfigError("executor", value, 'expected "local", "ray", {"kind": "ray", ...} or a RayExecutor')


# --------------------------------------------------------------------------------------------
# Ray, imported only when asked
# --------------------------------------------------------------------------------------------
def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise ConfigError(
            "executor", "ray", "the Ray executor needs Ray: pip install 'hrbench[ray]'"
        ) from exc
    return ray


def _cloudpickle() -> Any:
    from ray import cloudpickle

    return cloudpickle


def _connect(ray: Any, ex: RayExecutor) -> bool:
    """Initialise Ray unless it is; ``True`` when this run started it (and must stop it)."""
    if ray.is_initialized():
        return False
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
    if ex.address == "local":
        ray.init(address="local", num_cpus=ex.num_cpus, **kwargs)
    else:
        ray.init(address=ex.address, **kwargs)
    return True


_REMOTES: dict[str, Any] = {}


_IDLE: dict[str, list[tuple[Any, Any]]] = {}
"""Per Ray job: (hub, governor) actor pairs of finished runs, reset and reused by the next run
(starting an actor starts a worker process: seconds, where a reset takes a round trip)."""


async def _actors(
    ray: Any, remotes: dict[str, Any], limits: dict[str, Any], used: tuple[int, float, int, int]
) -> tuple[Any, Any]:
    job = ray.get_runtime_context().get_job_id()
    for other in [k for k in _IDLE if k != job]:
        del _IDLE[other]  # handles of a Ray session that ended
    idle = _IDLE.setdefault(job, [])
    if idle:
        hub, gov = idle.pop()
        await asyncio.gather(hub.reset.remote(), gov.reset.remote(limits, used))
        return hub, gov
    return remotes["hub"].remote(), remotes["governor"].remote(limits, used)


def _remotes() -> dict[str, Any]:
    """The actor classes and the task, made remote once per process."""
    if not _REMOTES:
        ray = _ray()
        # the actors take no CPU, so every CPU serves batches; the governor's calls overlap in
        # Ray's transport, while the Governor's lock admits one reservation at a time
        _REMOTES["governor"] = ray.remote(num_cpus=0, max_concurrency=8)(_GovernorActor)
        _REMOTES["hub"] = ray.remote(num_cpus=0, max_concurrency=10_000)(_Hub)
        _REMOTES["batch"] = ray.remote(_run_batch)
    return _REMOTES


# --------------------------------------------------------------------------------------------
# The actors
# --------------------------------------------------------------------------------------------
class _GovernorActor:
    """The benchmark's governor, one for the cluster: an :class:`~hrbench.Governor` in an actor."""

    def __init__(self, limits: dict[str, Any], used: tuple[int, float, int, int]) -> None:
        # numbers are never reused, so a late settlement of an earlier run cannot hit a new
        # reservation; next() on a count is atomic, so the actor's threads share it safely
        self.numbers = itertools.count(1)
        self.reset(limits, used)

    def reset(self, limits: dict[str, Any], used: tuple[int, float, int, int]) -> None:
        from hrbench.runner.governor import Governor

        self.gov = Governor(**limits)
        self.gov.calls, self.gov.usd, self.gov.tokens, self.gov.refused = used
        self.open: dict[int, Reservation] = {}

    def reserve(self, usd: float, tokens: int) -> int | tuple[str, str]:
        """A reservation's number, or ``(limit, message)`` when refused."""
        try:
            r = self.gov.reserve(usd, tokens)
        except BudgetRefused as exc:
            return (exc.limit, str(exc))
        number = next(self.numbers)
        self.open[number] = r
        return number

    def settle(self, number: int, usd: float | None, tokens: int, sent: bool = True) -> None:
        r = self.open.pop(number, None)
        if r is not None:
            self.gov.settle(r, usd, tokens, sent=sent)

    def halt(self, reason: str) -> None:
        self.gov.halt(reason)

    def first_bill(self, key: tuple[str, str]) -> str:
        """The cluster's one slow start (:meth:`hrbench.Governor.first_bill`), or ``"halted"``."""
        if self.gov.halted is not None:
            return "halted"
        return self.gov.first_bill((key[0], key[1]))

    def bill_seen(self, key: tuple[str, str], confirmed: bool) -> None:
        self.gov.bill_seen((key[0], key[1]), confirmed)

    def use(self) -> dict[str, Any]:
        g = self.gov
        return {
            "calls": g.calls,
            "usd": g.usd,
            "tokens": g.tokens,
            "refused": g.refused,
            "halted": g.halted,
            "open": len(self.open),
        }


class _Hub:
    """The driver's post box: rows, cache and recording traffic from workers, in order.

    Workers ``tell`` (rows, cache writes, recordings) and ``ask`` (cache reads, answered by the
    driver); the driver ``take``s everything in arrival order and ``answer``s the asks. The hub
    remembers which runs reached it, so a retried batch makes only the others (``todo``).
    """

    def __init__(self) -> None:
        self.n = 0
        self.wake = asyncio.Event()
        self.events: list[tuple[Any, ...]] = []
        self.futures: dict[int, asyncio.Future[Any]] = {}
        self.delivered: set[int] = set()

    async def reset(self) -> None:
        self.events, self.futures, self.delivered = [], {}, set()
        self.wake.clear()

    def _push(self, event: tuple[Any, ...]) -> None:
        self.events.append(event)
        self.wake.set()

    async def todo(self, seqs: list[int]) -> list[int]:
        return [s for s in seqs if s not in self.delivered]

    async def tell(self, events: list[tuple[Any, ...]]) -> None:
        for e in events:
            if e[0] == "row":
                if e[1] in self.delivered:
                    continue  # a retried batch's run that already came in
                self.delivered.add(e[1])
            self._push(e)

    async def ask(self, *args: Any) -> Any:
        self.n += 1
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.futures[self.n] = fut
        self._push(("get", self.n, *args))
        return await fut

    async def take(self, wait_s: float) -> list[tuple[Any, ...]]:
        if not self.events:
            try:
                await asyncio.wait_for(self.wake.wait(), wait_s)
            except TimeoutError:
                pass
        out, self.events = self.events, []
        self.wake.clear()
        return out

    async def answer(self, answers: dict[int, Any]) -> None:
        for n, value in answers.items():
            fut = self.futures.pop(n, None)
            if fut is not None and not fut.done():
                fut.set_result(value)


# --------------------------------------------------------------------------------------------
# The worker side
# --------------------------------------------------------------------------------------------
@dataclass
class _Ticket(Reservation):
    number: int = 0


class _LedgerProxy:
    """The driver's :class:`~hrbench.runner.ledger.Journal` as a worker sees it: billed replies go to it."""

    def __init__(self, hub: Any, remote: _RemoteGovernor) -> None:
        self.hub, self.remote = hub, remote

    def paid(self, ledger_id: str, step: Any) -> None:
        """Keep a billed reply of a run in the driver's ledger (see :meth:`~hrbench.runner.ledger.Journal.paid`)."""
        self.remote.settling.append(self.hub.tell.remote([("lpaid", ledger_id, step)]))


class _RemoteGovernor:
    """The governor as a worker sees it: every reservation and settlement goes to the actor.

    ``reserve`` waits for the actor's answer (a request is never sent before it is admitted);
    ``settle`` does not (an unsettled reservation only holds more of the budget than was
    spent); a batch waits for its settlements with :meth:`settled` before it ends.

    With ``hub`` (the driver keeps the ledger per call, as the local runner does: issue 13),
    ``reserve`` also waits until the driver has committed the reservation to the store's
    ledger, and every settlement and billed reply goes to that ledger too: a driver killed
    mid-run leaves its in-flight reservations open in the store, and the resume counts them as
    spent (decided: the same ledger as the local runner).
    """

    def __init__(self, actor: Any, limits: dict[str, Any], from_defaults: bool, hub: Any = None) -> None:
        self.actor = actor
        self.hub = hub
        self.journal = None if hub is None else _LedgerProxy(hub, self)
        self.limits = limits
        self.max_calls, self.max_usd, self.max_tokens = (
            limits[k] for k in ("max_calls", "max_usd", "max_tokens")
        )
        self.from_defaults = from_defaults
        self.settling: list[Any] = []
        self._ray = _ray()
        self._known: set[tuple[str, str]] = set()
        self._halted: str | None = None

    def halt(self, reason: str) -> None:
        """Stop the whole cluster's admissions at once (issue 12: a reply dearer than reserved)."""
        self._ray.get(self.actor.halt.remote(reason))

    def reserve(self, usd: float = 0.0, tokens: int = 0, *, usd_known: bool = True) -> Reservation:
        out = self._ray.get(self.actor.reserve.remote(usd, tokens))
        if isinstance(out, (tuple, list)):
            raise BudgetRefused(out[1], limit=out[0])
        ticket = _Ticket(usd=usd, tokens=tokens, number=out, usd_known=usd_known)
        if self.hub is not None:  # in the store before it is sent (issue 13), as locally
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

    def try_reserve(self, usd: float = 0.0, tokens: int = 0) -> Reservation | None:
        try:
            return self.reserve(usd, tokens)
        except BudgetRefused:
            return None

    def settle(
        self,
        reservation: Reservation,
        usd: float | None,
        tokens: int,
        *,
        sent: bool = True,
        lost: bool = False,
    ) -> None:
        if reservation.settled or not isinstance(reservation, _Ticket):
            return
        reservation.settled = True
        if lost:  # a reply lost after the write: booked at its worst case (newcomer finding 4)
            usd, tokens = reservation.usd, reservation.tokens
        self.settling.append(self.actor.settle.remote(reservation.number, usd, tokens, sent))
        if self.hub is not None:
            unpriced = int(lost and not reservation.usd_known)
            event = ("lsettle", reservation.number, usd or 0.0, tokens, int(sent), lost, unpriced)
            self.settling.append(self.hub.tell.remote([event]))

    def settled(self) -> None:
        """Wait until every settlement sent from here is in the actor's books."""
        self._ray.get(self.settling)
        self.settling.clear()

    def gate(self, usd: float = 0.0, tokens: int = 0, durable: bool = True, usd_known: bool = True) -> Gate:
        gate = Gate(self, usd, tokens, durable)  # type: ignore[arg-type]
        gate.usd_known = usd_known
        return gate

    def snapshot(self) -> dict[str, Any]:
        return {**self.limits, **self._ray.get(self.actor.use.remote())}


class _CacheProxy:
    """The driver's cache as a worker sees it (blocking calls: made from worker threads)."""

    def __init__(self, hub: Any, read: bool, write: bool) -> None:
        self.hub, self.read, self.write = hub, read, write
        self._ray = _ray()

    def get(self, request: Any, arm: str = "") -> Any:
        return self._ray.get(self.hub.ask.remote(request, arm))

    def put(self, request: Any, result: Any, arm: str = "") -> bool:
        self._ray.get(self.hub.tell.remote([("put", request, result, arm)]))
        return True


class _StoreProxy:
    """The driver's store as a worker sees it: recordings only."""

    def __init__(self, hub: Any) -> None:
        self.hub = hub
        self._ray = _ray()

    def recording_put(self, *args: Any) -> None:
        self._ray.get(self.hub.tell.remote([("rec", *args)]))


@dataclass
class _Shipped:
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
    """Whether the driver keeps the governor's ledger per call (a :class:`~hrbench.runner.ledger.Journal`)."""


_LOADED: dict[str, Any] = {}


def _run_batch(
    shipped: _Shipped, hub: Any, gov_actor: Any, work: list[tuple[int, str, str, int, list[int]]]
) -> int:
    """A Ray task: make the runs of ``work`` not yet at the driver; returns how many were made."""
    from hrbench.runner.runtime import Runtime

    for p in reversed(shipped.sys_path):
        if p not in sys.path:
            sys.path.insert(0, p)
    if shipped.key not in _LOADED:
        _LOADED.clear()  # a worker process serves one benchmark at a time
        _LOADED[shipped.key] = _cloudpickle().loads(shipped.blob)
    plan, client, pricing = _LOADED[shipped.key]
    ray = _ray()
    runs = plan.runs
    wanted = [ci * runs + r - 1 for ci, _, _, _, todo in work for r in todo]
    left = set(ray.get(hub.todo.remote(wanted)))
    work = [(ci, c, i, a, [r for r in todo if ci * runs + r - 1 in left]) for ci, c, i, a, todo in work]
    work = [w for w in work if w[4]]
    gov = _RemoteGovernor(gov_actor, shipped.limits, shipped.from_defaults, hub if shipped.ledger else None)
    cache = None if shipped.cache is None else _CacheProxy(hub, *shipped.cache)
    store = None if shipped.record is None else _StoreProxy(hub)
    rt = Runtime(client, gov, cache, shipped.record, store, pricing)  # type: ignore[arg-type]
    anyio.run(_batch, plan, rt, hub, work, shipped.concurrency)
    gov.settled()  # the driver reads the governor's use when the batch is done
    return sum(len(w[4]) for w in work)


async def _batch(
    plan: Plan, rt: Runtime, hub: Any, work: list[tuple[int, str, str, int, list[int]]], concurrency: int
) -> None:
    from hrbench.runner.invoke import failed, invoke_async, invoke_sync, metric_values, score_row

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
                values = metric_values(plan, item, att) if plan.metrics else None
                row = score_row(plan, cluster, item, arm, run, att)
                events.append(("row", ci * plan.runs + run - 1, ci, row, att.ctx.trace, att.dup, values))
            rt.cells.pop((arm.name, item), None)
        await send(events)

    async with anyio.create_task_group() as tg:
        for w in work:
            tg.start_soon(cell, *w)


# --------------------------------------------------------------------------------------------
# The driver side
# --------------------------------------------------------------------------------------------
async def _drive(
    ray: Any,
    remotes: dict[str, Any],
    ex: RayExecutor,
    rt: Runtime,
    hub: Any,
    gov_actor: Any,
    shipped: _Shipped,
    work: list[Work],
    size: int,
    in_flight: int,
    deliver: Deliver,
) -> None:
    arm_index = {id(a): i for i, a in enumerate(_arms_of(work))}
    out = [(ci, c, i, arm_index[id(a)], list(todo)) for ci, c, i, a, todo in work]
    batches = [out[k : k + size] for k in range(0, len(out), size)]
    shipped_ref = ray.put(shipped)
    task = remotes["batch"].options(max_retries=ex.max_retries, retry_exceptions=False)
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

    The governor's ledger (issue 13, as the local runner keeps it): a worker's reservation is
    written to the driver's :class:`~hrbench.runner.ledger.Journal` and answered once committed (the
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
            if rt.cache is not None:
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
