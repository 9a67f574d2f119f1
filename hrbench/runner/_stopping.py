"""Stop when sure, in the runner: clusters in a seeded order, committed in order, a stop that cancels.

:func:`~hrbench.benchmark` with ``stop=hb.StopWhenSure(...)`` runs the reference's clusters in
the rule's seeded order (:meth:`~hrbench.stats.StopWhenSure.order`) instead of the
reference's. A cluster runs whole: every item, every run, every arm still active, the arms
interleaved per item. Several clusters may be in flight at once (at most :attr:`Gate.window`
ahead of the last one committed), but a cluster is committed to the sequential test only when
it and every cluster before it in the order are complete, so a cluster that fails fast cannot
enter the test before a slow one that came first.

Rows are held until their cluster is committed, then given to ``on_row`` (and the store) in
that order. When the test stops (``"decided"``, ``"tolerance"`` or ``"max_clusters"``: ``REASONS``), no
new cluster starts; the requests already sent may finish within the cancel grace
(:func:`~hrbench.runner.runtime.cancel_grace_s`), then the clusters still in flight are
cancelled. Their finished rows are kept, with ``reportable = False``, and what they cost stays
counted by the governor and in :attr:`StopRecord.unreported_usd`. A row of a reportable split
that is not reportable is run again by a resume (it never entered the test).

The record of the stop (:class:`StopRecord`: reason, clusters run and of how many, e-values,
the order and its seed, the test's state) is :attr:`hrbench.Bench.stop`, and is stored with the
benchmark (``spec.stop``) when the benchmark has a store and an id. A resume continues the same
order and e-process: from the stored state when there is one
(:meth:`~hrbench.stats.SequentialTest.from_state`), else by committing again, in
order, the kept clusters that are complete.
"""

from __future__ import annotations

import collections
import math
import threading
import time
import types
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
import msgspec

from hrbench.errors import ConfigError
from hrbench.records import Row, Step
from hrbench.runner._stop_warnings import warn_fit, warn_undecidable
from hrbench.runner.runtime import Drain, cancel_grace_s

if TYPE_CHECKING:
    from hrbench.arm import Arm
    from hrbench.runner._invoke import Plan
    from hrbench.runner.runtime import Runtime

__all__ = ["REASONS", "Gate", "Resume", "StopRecord", "gate", "kept", "rule_dict", "rule_from"]

REASONS = ("decided", "equivalent", "tolerance", "max_clusters", "budget", "cancelled")
"""Why a benchmark with a stop rule ended (the record stored as it starts says ``"running"``): ``"decided"`` (every pair of interest decided, or one
arm best), ``"equivalent"`` (every pair decided or shown no different by more than the rule's
margin, some of them that), ``"tolerance"`` (every difference known within the tolerance), ``"max_clusters"``
(its most clusters, or every cluster, ran without either), ``"budget"`` (the governor stopped
runs), ``"cancelled"`` (cancelled from outside)."""

_KEEP_EVERY, _KEEP_EVERY_S = 10.0, 1.0
"""A running record is stored again no sooner than 10 times as long as the last took, and 1 s, after
it: its summary's sequences cost time in proportion to the clusters committed (the symmetric one's)."""

Cell = tuple[int, str, str, "Arm"]
Emit = Callable[[int, Row, list[Step], "dict[str, float] | None"], Awaitable[None]]


@dataclass
class StopRecord:
    """How a benchmark run with a stop rule ended (:attr:`hrbench.Bench.stop`).

    Attributes:
        reason: one of :data:`REASONS`.
        clusters: clusters committed to the test (their rows are reportable).
        of: clusters in the reference on the run split(s).
        planned: the test's most clusters (``summary()["of"]``).
        order_seed: the seed of the clusters' order.
        order: the cluster ids in the order they ran.
        winner: the arm decided better than every other it is compared with, or ``None``; a pair
            decided along the way stays decided whatever ``reason`` ended the benchmark
            (``"max_clusters"`` included).
        pairs: per pair, as the test's summary gives it (``a``, ``b``, ``e_value``,
            ``p_anytime``, ``diff``, ``cs_low``, ``cs_high``, ``decided``).
        summary: the test's whole ``summary()``.
        state: the test's ``state()``, for a resume.
        rows: rows of the benchmark (reportable or not), kept ones included.
        full_rows: rows a full run would have (every cluster, item, arm and run).
        unreported_rows: rows of clusters cancelled at the stop (``reportable = False``).
        unreported_usd: what those rows cost, in USD (counted in the governor's use too).
        active_arms: the arms still run when it ended (the others were decided worse).
        rule: the rule's settings (its plan as the numbers that tune the test), for a resume.

    Example:
        >>> rec = StopRecord(reason="decided", clusters=4, of=10, planned=8, order_seed=0)
        >>> rec.share, StopRecord.from_dict(rec.to_dict()) == rec
        (0.4, True)
    """

    reason: str
    clusters: int
    of: int
    planned: int | None = None
    order_seed: int = 0
    order: list[str] = field(default_factory=list)
    winner: str | None = None
    pairs: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)
    rows: int = 0
    full_rows: int = 0
    unreported_rows: int = 0
    unreported_usd: float = 0.0
    active_arms: list[str] = field(default_factory=list)
    rule: dict[str, Any] = field(default_factory=dict)

    @property
    def share(self) -> float:
        """Clusters committed over the reference's clusters (0 to 1)."""
        return self.clusters / self.of if self.of else 0.0

    @property
    def e_values(self) -> dict[tuple[str, str], float]:
        """Each pair's e-value now, keyed ``(a, b)``."""
        return {(p["a"], p["b"]): float(p["e_value"]) for p in self.pairs}

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON-able builtins (as it is stored with the benchmark)."""
        out: dict[str, Any] = msgspec.to_builtins(self.__dict__)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StopRecord:
        """A record from :meth:`to_dict`'s form (fields it does not know are left out)."""
        names = cls.__dataclass_fields__
        return cls(**{k: v for k, v in data.items() if k in names})

    def resume(self, rule: Any = None) -> Resume:
        """What to pass as ``stop=`` to continue this benchmark's order and e-process.

        Args:
            rule: the rule to continue under (a new ``alpha`` or ``max_clusters``); by default
                the one in the state.
        """
        rule = rule if rule is not None else rule_from(self.rule)
        return Resume(rule=rule, state=self.state, order=list(self.order), committed=self.clusters)


@dataclass
class Resume:
    """A stop rule to continue from a stored state (:meth:`StopRecord.resume`)."""

    rule: Any
    state: Mapping[str, Any]
    order: list[str]
    committed: int


def kept(done: Mapping[tuple[str, str, int], Row] | None) -> dict[tuple[str, str, int], Row]:
    """The rows a resume keeps: all but those of a reportable split that are not reportable.

    Such rows are those of clusters a stop cancelled: they never entered the test, so they
    are run again with their cluster.

    Example:
        >>> r = Row(cluster="c", item="q", arm="a", run=1, split="test", correct=True,
        ...         outcome=None, failure_kind=None, reportable=False)
        >>> kept({("a", "q", 1): r}), len(kept({("a", "q", 1): msgspec.structs.replace(r, split="dev")}))
        ({}, 1)
    """
    return {k: r for k, r in (done or {}).items() if r.reportable or r.split == "dev"}


_PLAN_FIELDS = ("diff", "var_within", "var_between", "var_cluster", "runs", "items_per_cluster", "n_clusters")
"""What a rule's tuning reads of its plan (an :func:`hrbench.power` result)."""


def rule_dict(rule: Any) -> dict[str, Any]:
    """A rule's settings as builtins: its plan as the numbers that tune the test."""
    out: dict[str, Any] = {}
    for name in getattr(rule, "__dataclass_fields__", {}):
        value = getattr(rule, name)
        if name == "plan" and value is not None:
            value = {f: _num(getattr(value, f, None)) for f in _PLAN_FIELDS}
        elif name == "pairs" and value is not None:
            value = [list(p) for p in value]
        out[name] = value
    return out


def _num(v: Any) -> Any:
    return v if v is None or isinstance(v, (int, float)) else float(v)


def rule_from(settings: Mapping[str, Any]) -> Any:
    """The rule :func:`rule_dict` describes (a :class:`~hrbench.StopWhenSure`)."""
    from hrbench.stats import StopWhenSure

    kw = dict(settings)
    if kw.get("pairs") is not None:
        kw["pairs"] = tuple(tuple(p) for p in kw["pairs"])
    if kw.get("plan") is not None:
        kw["plan"] = types.SimpleNamespace(**kw["plan"])
    return StopWhenSure(**{k: v for k, v in kw.items() if k in StopWhenSure.__dataclass_fields__})


def _rule_of(stop: Any) -> tuple[Any, Resume | None]:
    if isinstance(stop, Resume):
        return stop.rule, stop
    return stop, None


def gate(
    stop: Any,
    plan: Plan,
    runs: int,
    done: Mapping[tuple[str, str, int], Row],
    rt: Runtime,
    judge_rt: Runtime | None = None,
    store: Any = None,
    concurrency: int = 16,
    remote: Any = None,
) -> Gate | None:
    """The :class:`Gate` of a benchmark run with ``stop`` (``None``: no stop rule).

    Raises:
        ConfigError: ``stop`` is not a stop rule, or its settings do not fit these arms and
            clusters (the rule's own check names the field).
    """
    if stop is None:
        return None
    rule, resume = _rule_of(stop)
    if not (callable(getattr(rule, "cluster_order", None)) and callable(getattr(rule, "start", None))):
        raise ConfigError("stop", stop, "expected an hrbench.StopWhenSure (or Bench.stop.resume())")
    if remote is not None:
        raise ConfigError("stop", rule, "a stop rule runs on the local executor only (leave out executor)")
    return Gate(rule, resume, plan, runs, done, rt, judge_rt=judge_rt, store=store, concurrency=concurrency)


class Gate:
    """Schedules a benchmark's clusters in the rule's order and commits them to its test in order.

    Made by :func:`gate`; the benchmark's :class:`~hrbench.runner._loop.Loop` calls :meth:`hold`
    with every row it scores, and :meth:`run` in place of its own workers.
    """

    def __init__(
        self,
        rule: Any,
        resume: Resume | None,
        plan: Plan,
        runs: int,
        done: Mapping[tuple[str, str, int], Row],
        rt: Runtime,
        *,
        judge_rt: Runtime | None = None,
        store: Any = None,
        concurrency: int = 16,
    ) -> None:
        self.rule, self.plan, self.runs, self.done, self.store = rule, plan, runs, done, store
        self._resumed = resume is not None
        self.by_cluster: dict[str, list[Cell]] = {}
        every = plan.cells()
        self._n_cells = len(every)
        for ci, (cluster, item, arm) in enumerate(every):
            self.by_cluster.setdefault(cluster, []).append((ci, cluster, item, arm))
        names = [a.name for a in plan.arms]
        clusters = list(self.by_cluster)
        rule.check(names, len(clusters))
        self._sizes = {c: len({i for _, _, i, _ in cells}) for c, cells in self.by_cluster.items()}
        warn_undecidable(rule, names, list(self._sizes.values()))
        warn_fit(rule, names, list(self._sizes.values()))
        self._setup(resume)
        self.rt = rt
        if rt.drain is None:  # a stop lets the requests sent finish, as a clean cancel does
            rt.drain = Drain()
            if judge_rt is not None:
                judge_rt.drain = rt.drain
        self.drain: Drain = rt.drain
        per = max(1, len(every) // max(1, len(clusters)))
        self.window = max(2, math.ceil(concurrency / per) + 1)
        """Clusters that may be started past the last one committed."""
        self.group = max(1, min(8, len(every) // (4 * max(1, concurrency))))
        """A sync arm's cells a worker takes at once from those queued (one trip to a worker
        thread for them, as :meth:`~hrbench.runner._loop.Loop.groups` makes)."""
        self.wave: int | None = None
        """Clusters per wave (batch mode, :mod:`hrbench.runner.batch`), or ``None``: a wave's
        clusters start together, the next wave once every cluster of this one is committed."""
        self.emit: Emit | None = None
        self.reason: str | None = None
        self._held: dict[str, list[tuple[int, Row, list[Step], dict[str, float] | None]]] = {}
        self._out: set[int] = set()  # ids of the rows being given on (not held again)
        self._left: dict[str, int] = {}  # cluster -> cells not finished
        self._ran: dict[str, list[Cell]] = {}  # cluster -> its cells started
        self._queue: collections.deque[Cell] = collections.deque()
        self._started = 0  # clusters of the order started
        self._budget = False  # the governor stopped a run: no cluster starts any more
        self._blocked = False  # a cluster with a stopped run: no cluster is committed any more
        self._given = 0
        self._changed = anyio.Event()
        self._lock = anyio.Lock()
        self._tg: Any = None
        self._unreported = [0, 0.0]
        self._record: StopRecord | None = None
        self._keeping = False
        self._keep_after = 0.0  # time.monotonic() before which no running record is stored
        self._kept = 0  # rows of the clusters started that a resume kept
        self._test_lock = threading.Lock()  # the test is committed to and read in worker threads

    def _setup(self, resume: Resume | None) -> None:
        """The test and the order: fresh, or continued from a resume's state."""
        names, clusters = [a.name for a in self.plan.arms], list(self.by_cluster)
        if resume is not None and resume.state:
            from hrbench.stats import SequentialTest

            state = dict(resume.state)
            if state.get("stopped") == "max_clusters" and len(state.get("committed") or ()) < self.rule.limit(
                len(clusters)
            ):
                state["stopped"] = None  # a resume under a higher max_clusters goes on
            self.test = SequentialTest.from_state(self.rule, state)
            stored = [c for c in resume.order if c in self.by_cluster]
            self.order = (
                stored
                if sorted(stored) == sorted(clusters)
                else list(self.rule.cluster_order(clusters, self._sizes))
            )
            self.committed = min(resume.committed, len(self.order))
        else:
            self.test = self.rule.start(names, self._sizes)
            self.order = list(self.rule.cluster_order(clusters, self._sizes))
            self.committed = 0
        self._where = {c: i for i, c in enumerate(self.order)}  # cluster -> its place in the order

    async def _load(self) -> None:
        """Continue from the record stored with the benchmark, when there is one (a daemon's resume)."""
        get = getattr(self.store, "benchmark_stop_get", None)
        if not callable(get):
            return
        stored = await anyio.to_thread.run_sync(get, self.plan.bench_id)
        if stored and stored.get("state"):
            self._setup(StopRecord.from_dict(stored).resume(self.rule))

    # -- rows ------------------------------------------------------------------------------
    def hold(self, seq: int, row: Row, trace: list[Step], values: dict[str, float] | None) -> bool:
        """Keep a scored row until its cluster is committed; ``False`` for a row being given on."""
        if id(row) in self._out:
            return False
        self._held.setdefault(row.cluster, []).append((seq, row, trace, values))
        self.drain.finished(row.ledger_id)  # its row is out: a stop need not wait for it
        if row.failure_kind == "budget_stop":
            self._budget = True
            self._changed.set()
        return True

    async def _give(self, cluster: str, reportable: bool) -> None:
        assert self.emit is not None
        for seq, row, trace, values in sorted(self._held.pop(cluster, []), key=lambda h: h[0]):
            if not reportable:
                row = msgspec.structs.replace(row, reportable=False)
                self._unreported[0] += 1
                self._unreported[1] += row.usd or 0.0
            self._out.add(id(row))
            self._given += 1
            try:
                await self.emit(seq, row, trace, values)
            finally:
                self._out.discard(id(row))

    # -- scheduling ------------------------------------------------------------------------
    def _start(self, index: int) -> None:
        cluster = self.order[index]
        cells = self.by_cluster[cluster]
        if index < self.committed:  # committed before a resume: only the arms it ran
            ran = {a for (a, i, _r) in self.done if i in {c[2] for c in cells}}
            cells = [c for c in cells if c[3].name in ran]
        else:
            active = set(self.test.active_arms)
            cells = [c for c in cells if c[3].name in active]
        self._ran[cluster] = cells
        self._kept += sum(
            (c[3].name, c[2], run) in self.done for c in cells for run in range(1, self.runs + 1)
        )
        self._left[cluster] = len(cells)
        self._queue.extend(cells)

    def _halted(self) -> bool:
        return self.reason is not None or self._budget

    async def _next(self) -> Cell | None:
        while True:
            if self._halted():
                return None
            if self._queue:
                return self._queue.popleft()
            if self._started >= len(self.order):
                return None
            if self._started - self.committed >= self.window or self._wave_full():
                changed = self._changed
                await changed.wait()
                continue
            index = self._started
            self._started += 1
            self._start(index)
            if self._left[self.order[index]] == 0:
                await self._advance()

    def startable(self) -> bool:
        """Whether a cell waits for a worker, or a cluster may start now (a worker is about to take it).

        Batch mode's collector sends a wave's lines once no run of it is still to start.
        """
        if self._queue:
            return True
        if self._halted() or self._started >= len(self.order):
            return False
        return not (self._started - self.committed >= self.window or self._wave_full())

    def _wave_full(self) -> bool:
        """Whether the next cluster belongs to a wave that may not start yet (the last not all committed)."""
        wave = self.wave
        return wave is not None and self._started >= (self.committed // wave + 1) * wave

    async def _worker(self, run_cells: Callable[[list[Cell]], Awaitable[None]]) -> None:
        while (cell := await self._next()) is not None:
            cells, sync = [cell], self.wave is None and not cell[3].is_async
            while sync and len(cells) < self.group and self._queue and not self._queue[0][3].is_async:
                cells.append(self._queue.popleft())
            await run_cells(cells)
            for c in cells:
                self._left[c[1]] -= 1
            for cluster in dict.fromkeys(c[1] for c in cells):
                await self._advance(cluster)

    # -- committing ------------------------------------------------------------------------
    def _means(self, cluster: str) -> dict[str, dict[str, float]]:
        active = set(self.test.active_arms)
        new = {(r.arm, r.item, r.run): r for _, r, _, _ in self._held.get(cluster, [])}
        means: dict[str, dict[str, float]] = {}
        for _, _, item, arm in self._ran[cluster]:
            if arm.name not in active:
                continue
            got = []
            for run in range(1, self.runs + 1):
                row = new.get((arm.name, item, run)) or self.done.get((arm.name, item, run))
                if row is not None and row.correct is not None:
                    got.append(1.0 if row.correct else 0.0)
            if got:
                means.setdefault(arm.name, {})[item] = sum(got) / len(got)
        return means

    async def _advance(self, done: str | None = None) -> None:
        """Commit every complete cluster at the head of the order; stop when the test says so.

        ``done``: the cluster a cell of which just finished; one committed before a resume gives
        its rows on (runs made again there) once its cells are done.
        """
        async with self._lock:
            if done is not None and self._left.get(done) == 0 and done in self._held:
                if self._where[done] < self.committed:
                    await self._give(done, True)
            while self.reason is None and (ready := self._ready()):
                with anyio.CancelScope(shield=True):  # committed to the test and counted, or neither
                    n = await anyio.to_thread.run_sync(self._commit, ready)
                for cluster in ready[:n]:
                    await self._give(cluster, True)
                if self.test.stopped is not None:
                    self.reason = str(self.test.stopped)
                    if self._tg is not None:
                        self._tg.start_soon(self._halt)
                elif self.store is not None and self._tg is not None:
                    self._tg.start_soon(self._keep)
            self._changed.set()
            self._changed = anyio.Event()

    def _ready(self) -> list[str]:
        """The complete clusters at the head of the order, up to the first with a run the budget stopped."""
        ready: list[str] = []
        for cluster in self.order[self.committed : self._started]:
            if self._left[cluster]:
                break
            if self._blocked or any(h[1].failure_kind == "budget_stop" for h in self._held.get(cluster, [])):
                self._blocked = True  # a budget stop: this cluster and those after it stay out
                break
            ready.append(cluster)
        return ready

    def _commit(self, ready: list[str]) -> int:
        """Commit ``ready`` to the test in order, each counted, until it stops; how many were committed.

        In a worker thread, in one trip: a commit that decides a pair computes its confidence
        sequence over every cluster committed.
        """
        with self._test_lock:
            for n, cluster in enumerate(ready, start=1):
                self.test.commit(cluster, self._means(cluster))
                self.committed += 1
                if self.test.stopped is not None:
                    return n
            return len(ready)

    async def _keep(self) -> None:
        """Store the record as it stands (reason ``"running"``), one write at a time, at :data:`_KEEP_EVERY`.

        The view shows a running benchmark's progress by it, and a resume after a kill goes on
        from its state (commits since are committed again from the kept rows).
        """
        if self._keeping or time.monotonic() < self._keep_after:
            return
        self._keeping = True
        try:
            began = time.monotonic()
            await anyio.to_thread.run_sync(self._write, "running")
            now = time.monotonic()
            self._keep_after = now + max(_KEEP_EVERY_S, _KEEP_EVERY * (now - began))
        finally:
            self._keeping = False

    async def _halt(self) -> None:
        """The stop: nothing more is sent; what was sent may finish within the grace; the rest is cancelled."""
        self.drain.begin()
        await self.drain.wait(cancel_grace_s())
        assert self._tg is not None
        self._tg.cancel_scope.cancel()

    # -- the run ---------------------------------------------------------------------------
    async def run(
        self, run_cells: Callable[[list[Cell]], Awaitable[None]], concurrency: int, emit: Emit
    ) -> None:
        """Run the clusters with ``concurrency`` workers; on any end, give every held row on.

        A cancel from outside keeps the finished rows (not reportable) and stores the record
        with the reason ``"cancelled"``, then goes on.
        """
        self.emit = emit
        if self.store is not None and not self._resumed:
            await self._load()
        if self.store is not None and self.test.stopped is None:
            await anyio.to_thread.run_sync(self._write, "running")
            self._keep_after = time.monotonic() + _KEEP_EVERY_S
        try:
            async with anyio.create_task_group() as tg:
                self._tg = tg
                if self.test.stopped is not None:  # a resume of a stopped test: nothing to run
                    self.reason = str(self.test.stopped)
                for _ in range(max(1, concurrency)):
                    tg.start_soon(self._worker, run_cells)
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                await self._end("cancelled")
            raise
        await self._end(self.reason or ("budget" if self._budget else "max_clusters"))

    async def _end(self, reason: str) -> None:
        for cluster in list(self.order):
            if cluster in self._held:
                await self._give(cluster, self._where[cluster] < self.committed)
        self._record = await anyio.to_thread.run_sync(self._make, reason)
        if self.store is not None:
            await anyio.to_thread.run_sync(self._save, self._record)

    def _write(self, reason: str) -> None:
        """Store the record as it stands (in a worker thread: the summary's sequences take time)."""
        self._save(self._make(reason))

    def _make(self, reason: str) -> StopRecord:
        with self._test_lock:
            return self._made(reason)

    def _made(self, reason: str) -> StopRecord:
        summary = dict(self.test.summary())
        return StopRecord(
            reason=reason,
            clusters=self.committed,
            of=len(self.order),
            planned=summary.get("of"),
            order_seed=int(getattr(self.rule, "seed", 0)),
            order=list(self.order),
            winner=summary.get("winner"),
            pairs=list(summary.get("pairs") or []),
            summary=summary,
            state=dict(self.test.state()),
            rows=self._given + self._kept,
            full_rows=self._n_cells * self.runs,
            unreported_rows=int(self._unreported[0]),
            unreported_usd=float(self._unreported[1]),
            active_arms=list(self.test.active_arms),
            rule=rule_dict(self.rule),
        )

    def _save(self, record: StopRecord) -> None:
        put = getattr(self.store, "benchmark_stop_put", None)
        if callable(put):
            put(self.plan.bench_id, record.to_dict())

    @property
    def record(self) -> StopRecord | None:
        """The stop's record once :meth:`run` ended."""
        return self._record
