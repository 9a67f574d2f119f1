"""The loop of a benchmark: its cells run in the seed's order, each run finished into a row and emitted.

:func:`~hrbench.runner.benchmark_async` checks and plans a benchmark
(:mod:`hrbench.runner._plan`), then runs it through a :class:`Loop`, in these steps:

1. ``Loop(...)``: the running counts, a stop rule's gate, the kept runs of a resume and their draws
   (:func:`seed_kept_draws`);
2. :meth:`Loop.read_prepaid`: what a resume's runs made again were already billed;
3. :meth:`Loop.run`: every cell, by :meth:`Loop.run_cells` (the runs still to make,
   :meth:`Loop.pending`; each arm invoked, :mod:`hrbench.runner._invoke`), each run finished
   (:meth:`Loop.finish`: judged, scored) and its row given on (:meth:`Loop.emit`: counted, kept,
   handed to ``on_row``); under a stop rule's gate, on this process's workers, or on another executor;
4. :meth:`Loop.bench`: the :class:`~hrbench.Bench`, the end's warnings, the duplicate draws refused.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from typing import Any

import anyio
import anyio.to_thread

from hrbench._util.warn import warn_at_caller
from hrbench.arm import Arm
from hrbench.errors import DrawsUncheckedWarning, DuplicateDrawError
from hrbench.records import Result, Row, Step
from hrbench.runner import _stopping as stopping
from hrbench.runner._bench import Bench
from hrbench.runner._invoke import (
    Attempt,
    Plan,
    checked,
    failed,
    invoke_async,
    invoke_sync,
    judge,
    metric_values,
    score_row,
    scored,
    scorer_input,
)
from hrbench.runner._notes import DUPLICATE_ADVICE
from hrbench.runner._remade import carry_prepaid, prepaid, rescored_seconds
from hrbench.runner._summary import METRICS_SOURCE, Summary, metrics_json
from hrbench.runner._tallies import DEFAULT_SEED, Errors, Sources, Stops, Unreported
from hrbench.runner.runtime import Drain, Runtime, heavy_scorer_threads, off_loop
from hrbench.store import Store

__all__ = ["Loop", "RowCallback", "duplicates_refused", "seed_kept_draws"]

_PLAIN = frozenset({str, int, float, bool, type(None), dict, list, Result})
"""Output types that are never awaitable: the runner skips ``inspect.isawaitable`` for them."""

RowCallback = Callable[[int, Row, list[Step]], Awaitable[None] | None]
"""``on_row(seq, row, trace)``: called as each row is scored (``seq``: its place in the seed's order)."""

Cell = tuple[int, str, str, Arm]
"""A cell: (its index in the seed's order, cluster, item, arm); its runs are made one after another."""

GROUP_FIRST = 8
"""The most consecutive cells of a sync arm that take one worker-thread trip at first (:meth:`Loop.groups`)."""

GROUP_MAX = 64
"""The most they may grow to while the arm answers at once (:data:`FAST_RUN_S`)."""

GROUP_MAX_COMPUTING = 256
"""The most they may grow to while, besides, the arm's runs compute (:meth:`Loop.paced`): one trip
runs at a time then, and each trip costs the event loop and its worker two thread hand-offs."""

FAST_RUN_S = 0.0002
"""A trip whose median run took less than this (seconds) doubles the next groups, up to
:data:`GROUP_MAX`; a slower one gives them their first size again. A thread trip costs the event
loop and the worker about 50 us of CPU (a hand-off each way, on a shared 2-core machine): an arm
answered inline from an in-process client makes a row in a few microseconds, so it pays it
once per several hundred runs, not once per 40."""

COMPUTING_THREADS = 1
"""How many trips of a sync arm's cells run at once while its runs compute rather than wait
(:meth:`Loop.paced`): one, while the event loop finishes the rows of the last. More only take
turns on the GIL; each turn wakes another thread whose frames and rows are cold in the cache
(16 such trips cost an instant arm about 2 us of CPU a row more than 2), and each trip's two
hand-offs cost the worker 30-100 us of CPU on a shared 2-core machine (fewer, larger trips)."""

COMPUTING_SHARE = 1 / 3
"""A trip whose thread was on the CPU for at least this share of its wall time computes (it
shares the GIL with one other trip and the event loop); below it, the trip waited (a model over
HTTP, a sleep, a lock) and more trips at once make the benchmark faster."""


class Loop:
    """What a benchmark counts and keeps while its cells run, and the steps that run them.

    Args:
        plan: the benchmark's checked plan.
        rt: the arms' runtime; ``judge_rt`` a judge scorer's (``None``: no judge).
        client: the benchmark's model client (``None``: the arms call no model).
        concurrency: how many cells run at once.
        keep_rows: keep every row and trace in memory (``False``: only the running count).
        on_row: called as each row is scored, or ``None``.
        done, done_traces, done_metrics, retry_errors: a resume's kept rows, their traces and
            metric values, and whether those that ended in errors run again
            (see :func:`~hrbench.benchmark_async`).
        stop: a stop rule, or ``None``; ``store`` where its record is kept.
        drain: the clean cancel's drain, or ``None``.
        remote: another executor the cells go to, or ``None`` (here).

    Raises:
        ConfigError: ``stop`` is not a stop rule, or does not fit the plan
            (:func:`hrbench.runner._stopping.gate`).
    """

    __slots__ = (
        "batching",
        "cells",
        "concurrency",
        "done",
        "done_metrics",
        "done_traces",
        "drain",
        "duplicates",
        "errors",
        "gate",
        "group_cap",
        "group_cap_computing",
        "group_first",
        "group_size",
        "judge_rt",
        "keep_rows",
        "on_row",
        "paid_before",
        "plan",
        "retry_errors",
        "rows",
        "rt",
        "running",
        "runs",
        "score_limiter",
        "sources",
        "stops",
        "thread_limiter",
        "threads",
        "traces",
        "unreported",
        "with_metrics",
    )

    def __init__(
        self,
        plan: Plan,
        rt: Runtime,
        judge_rt: Runtime | None,
        client: Any,
        *,
        concurrency: int,
        keep_rows: bool,
        on_row: RowCallback | None,
        done: Mapping[tuple[str, str, int], Row] | None,
        done_traces: Mapping[str, Sequence[Step]] | None,
        done_metrics: Mapping[str, Mapping[str, float]] | None,
        retry_errors: bool,
        stop: Any,
        store: Store | None,
        drain: Drain | None,
        remote: Any,
    ) -> None:
        self.plan, self.rt, self.judge_rt = plan, rt, judge_rt
        self.runs = runs = plan.runs
        self.concurrency, self.keep_rows, self.on_row, self.drain = concurrency, keep_rows, on_row, drain
        self.done_traces, self.done_metrics, self.retry_errors = done_traces, done_metrics, retry_errors
        self.cells = plan.cells()
        total = len(self.cells) * runs
        self.rows: list[Row | None] = [None] * total if keep_rows else []
        self.traces: dict[str, list[Step]] = {}
        self.with_metrics = with_metrics = bool(plan.metrics)
        # the running count is the summary when rows are not kept, or when only it sees metric values
        self.running = (
            Summary([a.name for a in plan.arms], with_metrics) if (not keep_rows or with_metrics) else None
        )
        self.stops = Stops()
        self.errors = Errors()
        self.sources = Sources(active=plan.seed != DEFAULT_SEED)
        self.unreported = Unreported(bool(getattr(client, "bills", False)))  # a mock's replies carry no usage
        self.duplicates: list[DuplicateDrawError] = []
        self.threads = max(1, min(concurrency, 64))
        self.thread_limiter = anyio.CapacityLimiter(self.threads)
        self.score_limiter = anyio.CapacityLimiter(min(concurrency, heavy_scorer_threads()))  # see off_loop
        # a row a stop left out of its test (not reportable on a reportable split) runs again
        self.done = done = stopping.kept(done)
        self.gate = stopping.gate(stop, plan, runs, done, rt, judge_rt, store, concurrency, remote)
        seed_kept_draws(rt, done, done_traces, retry_errors, total, client is not None)
        self.paid_before: dict[
            str, list[Step]
        ] = {}  # bills of runs made again (a resume): rows match the bill
        self.batching: Any = None  # batch mode (hrbench.runner.batch.Batching), set before run()
        # a sync arm's consecutive cells per worker-thread trip (groups): many more cells than
        # slots, at least 4 groups per worker, so the last groups end near together (per
        # worker that runs: COMPUTING_THREADS of them while the arm's runs compute, see paced)
        most = len(self.cells) // (4 * concurrency)
        self.group_first = max(1, min(GROUP_FIRST, most))
        self.group_size = self.group_first
        self.group_cap = max(self.group_first, min(GROUP_MAX, most))
        most = len(self.cells) // (4 * min(concurrency, COMPUTING_THREADS))
        self.group_cap_computing = max(self.group_cap, min(GROUP_MAX_COMPUTING, most))

    async def read_prepaid(self, store: Store | None, named: bool) -> None:
        """Read what the runs to be made again were billed before (a resume of a named benchmark).

        Only with a store and a governor that keeps its ledger there (:func:`~hrbench.runner._remade.prepaid`).
        """
        if store is not None and named and getattr(self.rt.governor, "journal", None) is not None:
            kept_ids = [
                r.ledger_id
                for r in self.done.values()
                if not (self.retry_errors and r.failure_kind == "error")
            ]
            self.paid_before = await anyio.to_thread.run_sync(prepaid, store, self.plan.bench_id, kept_ids)

    async def emit(self, seq: int, row: Row, trace: list[Step], values: dict[str, float] | None) -> None:
        """Give a scored row on: counted, kept (``keep_rows``), handed to ``on_row``; a gate may hold it."""
        pending = self.given(seq, row, trace, values)
        if pending is not None:
            await pending

    def given(
        self, seq: int, row: Row, trace: list[Step], values: dict[str, float] | None
    ) -> Awaitable[Any] | None:
        """:meth:`emit` without its coroutine: what ``on_row`` returned to await, or ``None``.

        :meth:`finish` calls it for every row (a coroutine a row less); the stop rule's gate and
        another executor's rows go through :meth:`emit`.
        """
        gate = self.gate
        if gate is not None and gate.hold(seq, row, trace, values):
            return None  # given on when its cluster is committed (or at the end, not reportable)
        if self.retry_errors:  # a retried run re-served its calls keeps its time
            row = rescored_seconds(self.done.get((row.arm, row.item, row.run)), row, trace)
        if self.paid_before:
            row = carry_prepaid(self.paid_before, row, trace)
        if values is not None:  # kept with the run, for a resume
            trace.append(
                Step(ledger_id=row.ledger_id, kind="note", source=METRICS_SOURCE, text=metrics_json(values))
            )
        self.stops.add(seq, row, trace)
        self.errors.add(seq, row, trace)
        sources = self.sources
        if sources.active and not sources.other:  # else Sources.add counts nothing
            sources.add(trace)
        if self.unreported.bills:  # else Unreported.add counts nothing
            self.unreported.add(row)
        if self.keep_rows:
            self.rows[seq] = row
            self.traces[row.ledger_id] = trace
        running = self.running
        if running is not None:
            running.add(row, values, trace)
        on_row = self.on_row
        if on_row is not None:
            out = on_row(seq, row, trace)
            if out is not None and inspect.isawaitable(out):
                return out
        return None

    def finished(
        self, ci: int, cluster: str, item: str, arm: Arm, run: int, att: Attempt
    ) -> Awaitable[None] | None:
        """:meth:`finish` without its coroutine when nothing on the way waits: ``None`` once the row is given on.

        Else the awaitable that finishes the run (:meth:`finish`, or the rest of :meth:`given`'s
        hand-over): an output that is an awaitable, a judge, a scorer that runs in a worker thread
        (:func:`~hrbench.runner.runtime.off_loop`), an ``on_row`` that returns an awaitable. The
        steps and their order are :meth:`finish`'s (:func:`checked` may run twice: it leaves a
        checked run as it is).
        """
        plan = self.plan
        output = att.output
        if self.judge_rt is not None or (type(output) not in _PLAIN and inspect.isawaitable(output)):
            return self.finish(ci, cluster, item, arm, run, att)
        if type(output) is not str:  # a string is no failed call and no reply (checked)
            checked(att, arm)
        if att.forced is None and off_loop(
            plan.scorer,
            att.output if att.reply is None else scorer_input(plan.scorer, att),
            plan.labels[item],
        ):
            return self.finish(ci, cluster, item, arm, run, att)
        values = metric_values(plan, item, att) if self.with_metrics else None
        row = score_row(plan, cluster, item, arm, run, att)
        if att.dup is not None:
            self.duplicates.append(DuplicateDrawError(att.dup, arm=arm.name, item=item, run=run))
        pending = self.given(ci * self.runs + run - 1, row, att.ctx.trace, values)
        if pending is not None:
            return self._handed(pending, row.ledger_id)
        drain = self.drain
        if drain is not None:  # its row is out: a clean cancel need not wait for it
            drain.finished(row.ledger_id)
        return None

    async def _handed(self, pending: Awaitable[Any], ledger_id: str) -> None:
        """The end of :meth:`finished` when ``on_row`` returned an awaitable: await it, then free the drain."""
        await pending
        drain = self.drain
        if drain is not None:
            drain.finished(ledger_id)

    async def finish(self, ci: int, cluster: str, item: str, arm: Arm, run: int, att: Attempt) -> None:
        """Finish one run: await a sync arm's awaitable, judge or score its output, emit its row."""
        plan = self.plan
        if type(att.output) not in _PLAIN and inspect.isawaitable(att.output):  # a sync arm's awaitable
            try:
                att.output = await att.output
            except Exception as exc:
                failed(att, exc)
        if type(att.output) is not str:  # a string is no failed call and no reply (checked)
            checked(att, arm)  # a failed call reaches no scorer; a prompt arm's output is its text
        values = metric_values(plan, item, att) if self.with_metrics else None
        judge_rt = self.judge_rt
        if judge_rt is not None and att.forced is None:
            await judge(plan, judge_rt, item, arm, run, att)
        elif att.forced is None and off_loop(
            plan.scorer,
            att.output if att.reply is None else scorer_input(plan.scorer, att),
            plan.labels[item],
        ):
            att.score = await anyio.to_thread.run_sync(scored, plan, item, att, limiter=self.score_limiter)
        row = score_row(plan, cluster, item, arm, run, att)
        if att.dup is not None:
            self.duplicates.append(DuplicateDrawError(att.dup, arm=arm.name, item=item, run=run))
        pending = self.given(ci * self.runs + run - 1, row, att.ctx.trace, values)
        if pending is not None:
            await pending
        drain = self.drain
        if drain is not None:  # its row is out: a clean cancel need not wait for it
            drain.finished(row.ledger_id)

    def pending(self, ci: int, item: str, arm: Arm) -> list[int]:
        """The runs of a cell still to make; finished ones (resume) are counted as they are."""
        runs, done, done_traces = self.runs, self.done, self.done_traces
        todo = []
        kept_here = []
        for run in range(1, runs + 1):
            prior = done.get((arm.name, item, run))
            if prior is None or (self.retry_errors and prior.failure_kind == "error"):
                todo.append(run)
                continue
            kept_here.append(prior)
            # an error's trace names its cause; other kept rows keep their list price as paid
            kept = (done_traces or {}).get(prior.ledger_id) if prior.failure_kind == "error" else None
            if self.keep_rows:
                self.rows[ci * runs + run - 1] = prior
                if kept is not None:
                    self.traces[prior.ledger_id] = list(kept)
            if self.running is not None:  # its trace's metric values (none: the arm's metrics are NA)
                values = (self.done_metrics or {}).get(prior.ledger_id) if self.with_metrics else None
                self.running.add(prior, values, kept)
        if todo and done_traces:  # the runs made again are checked against the kept runs' draws
            for prior in kept_here:
                if (trace := done_traces.get(prior.ledger_id)) is not None:
                    self.rt.kept(arm.name, item, prior.run, trace)
        return todo

    async def run_cells(self, group: list[Cell]) -> None:
        """Make the runs of a group of cells still to make, in order, and finish each."""
        plan, rt = self.plan, self.rt
        try:
            todos = [self.pending(ci, item, arm) for ci, _, item, arm in group]
            if group[0][3].is_async:
                for (ci, cluster, item, arm), todo in zip(group, todos, strict=True):
                    for run in todo:
                        att = await invoke_async(plan, rt, item, arm, run)
                        if (rest := self.finished(ci, cluster, item, arm, run, att)) is not None:
                            await rest
            elif any(todos):
                # a sync arm's runs, on a group of items, take one trip to a worker thread, in order
                atts, cpu_share = await anyio.to_thread.run_sync(
                    self.trip, group, todos, limiter=self.thread_limiter
                )
                self.paced(atts, cpu_share)
                for (ci, cluster, item, arm), todo, cell_atts in zip(group, todos, atts, strict=True):
                    for run, att in zip(todo, cell_atts, strict=True):
                        if (rest := self.finished(ci, cluster, item, arm, run, att)) is not None:
                            await rest
        finally:
            for _, _, item, arm in group:
                rt.cells.pop((arm.name, item), None)

    def trip(self, group: list[Cell], todos: list[list[int]]) -> tuple[list[list[Attempt]], float]:
        """A sync arm's runs of ``group`` in this worker thread, in order, and the trip's CPU share.

        The share is the thread's CPU time over the trip's wall time (:meth:`paced` reads it).
        """
        plan, rt = self.plan, self.rt
        wall, cpu = time.perf_counter(), time.thread_time()
        atts = [
            [invoke_sync(plan, rt, item, arm, run) for run in todo]
            for (_, _, item, arm), todo in zip(group, todos, strict=True)
        ]
        cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
        return atts, (cpu / wall if wall > 0 else 1.0)

    def paced(self, atts: list[list[Attempt]], cpu_share: float = 0.0) -> None:
        """Size the next groups of a sync arm's cells, and the trips at once, from a trip's runs.

        The groups (:meth:`groups`) are doubled when the trip's median run took under
        :data:`FAST_RUN_S`, else back to the first size: an arm that waits (a model over HTTP,
        a sleep) keeps small groups, so the cells stay spread over the workers. The trips at
        once are :data:`COMPUTING_THREADS` when, besides, the trip's thread was on the CPU for
        :data:`COMPUTING_SHARE` of its time or more (``cpu_share``: its runs compute, and more
        threads would only take turns on the GIL), else ``concurrency`` (up to 64) again: one
        trip that waits gives the next ones every slot back. Doubled groups grow up to
        :attr:`group_cap`, or :attr:`group_cap_computing` (fewer trips, each a pair of thread
        hand-offs) while only :data:`COMPUTING_THREADS` run.
        """
        seconds = sorted(a.seconds for cell in atts for a in cell)
        if not seconds:
            return
        fast = seconds[len(seconds) // 2] < FAST_RUN_S
        computing = fast and cpu_share >= COMPUTING_SHARE
        if fast:
            cap = self.group_cap_computing if computing else self.group_cap
            self.group_size = min(cap, self.group_size * 2)
        else:
            self.group_size = self.group_first
        threads = min(self.threads, COMPUTING_THREADS) if computing else self.threads
        if self.thread_limiter.total_tokens != threads:
            self.thread_limiter.total_tokens = threads

    def groups(self) -> Iterator[list[Cell]]:
        """The cells in the seed's order, a sync arm's consecutive ones grouped.

        Grouped when there are many more cells than slots: one worker-thread trip then serves
        several items, which saves the thread hand-offs that dominate an instantly answering arm.
        A group holds up to :attr:`group_size` cells, which :meth:`paced` sets from the last
        trip: :data:`GROUP_FIRST` at first, up to :data:`GROUP_MAX` while the arm answers at
        once, and never so many that a worker gets fewer than 4 groups.
        """
        group: list[Cell] = []
        for ci, (cluster, item, arm) in enumerate(self.cells):
            if group and (arm.is_async or group[0][3].is_async or len(group) >= self.group_size):
                yield group
                group = []
            group.append((ci, cluster, item, arm))
        if group:
            yield group

    async def worker(self, queue: Iterator[list[Cell]]) -> None:
        """Take the next group from ``queue`` (shared by every worker) whenever free, and run it."""
        for group in queue:
            await self.run_cells(group)

    async def deliver(
        self, ci: int, row: Row, trace: list[Step], dup: str | None, values: dict[str, float] | None
    ) -> None:
        """Take back a row another executor made (once each), with its duplicate draw if any."""
        if dup is not None:
            self.duplicates.append(DuplicateDrawError(dup, arm=row.arm, item=row.item, run=row.run))
        await self.emit(ci * self.runs + row.run - 1, row, trace, values)

    async def run(self, remote: Any) -> None:
        """Run every cell: under the stop rule's gate, on this process's workers, or on ``remote``.

        ``concurrency`` workers take groups of cells from one queue in the seed's order: a
        cell's runs are made in order, cells start in the seed's order, and at most
        ``concurrency`` cells run at once; memory does not grow with the number of cells, and
        no task is made per cell.
        """
        concurrency = self.concurrency
        if self.batching is not None:  # batch mode: its waves (hrbench.runner.batch)
            await self.batching.run(self)
            return
        if self.gate is not None:
            await self.gate.run(self.run_cells, concurrency, self.emit)
        elif remote is None:
            queue = self.groups()
            async with anyio.create_task_group() as tg:
                for _ in range(min(concurrency, len(self.cells))):
                    tg.start_soon(self.worker, queue)
        if remote is not None:  # the cells go to another executor; their rows come back here, once each
            work = [
                (ci, c, i, a, todo)
                for ci, (c, i, a) in enumerate(self.cells)
                if (todo := self.pending(ci, i, a))
            ]
            await remote.run(self.plan, self.rt, work, concurrency, self.deliver)

    def bench(self, raise_duplicates: bool) -> Bench:
        """The :class:`~hrbench.Bench`, once the cells ran; the end's warnings are given here.

        Raises:
            DuplicateDrawError: an arm's runs were not distinct draws and ``raise_duplicates``
                (the rows are on ``error.bench``: :func:`duplicates_refused`).
        """
        plan, gov, gate = self.plan, self.rt.governor, self.gate
        bench = Bench(
            id=plan.bench_id,
            rows=[r for r in self.rows if r is not None],
            arms=[{k: v for k, v in a.spec.items() if k != "settings"} for a in plan.arms],
            reference=plan.reference,
            runs=self.runs,
            split=plan.split,
            seed=plan.seed,
            scorer_name=plan.scorer.name,
            traces=self.traces,
            governor=gov.snapshot(),
            duplicates=self.duplicates,
            summary=self.running,
            stopped=self.stops.n + sum(1 for r in self.done.values() if r.failure_kind == "budget_stop"),
            stop=None if gate is None else gate.record,
        )
        self.stops.warn(gov)
        self.errors.warn()
        self.unreported.warn()
        self.sources.warn(plan.seed)
        if self.duplicates and raise_duplicates:
            raise duplicates_refused(self.duplicates, bench)
        return bench


def duplicates_refused(duplicates: Sequence[DuplicateDrawError], bench: Bench) -> DuplicateDrawError:
    """The error that refuses a benchmark's arms whose runs were not distinct draws (seed 002).

    It names the arms, how many runs, the first one (by arm, item, run) and what helps
    (:data:`~hrbench.runner._notes.DUPLICATE_ADVICE`); ``error.bench`` holds the rows.
    """
    first = min(duplicates, key=lambda e: (e.arm or "", e.item or "", e.run or 0))
    arms_hit = sorted({e.arm for e in duplicates if e.arm})
    err = DuplicateDrawError(
        f"arm(s) {', '.join(map(repr, arms_hit))} refused: {len(duplicates)} run(s) were not distinct draws; "
        f"first: {first.message}; {DUPLICATE_ADVICE}",
        arm=first.arm,
        item=first.item,
        run=first.run,
        key=first.key,
    )
    err.bench = bench
    return err


def seed_kept_draws(
    rt: Runtime,
    done: Mapping[tuple[str, str, int], Row],
    done_traces: Mapping[str, Sequence[Step]] | None,
    retry_errors: bool,
    total: int,
    calls: bool,
) -> None:
    """Seed the distinct-draw check with the kept runs' response ids before a resume runs (seed 002).

    So that ``--retry-errors`` after a benchmark refused as not distinct draws never accepts
    one more duplicate per retry, from the cache, a resumed runtime remembers the kept runs'
    draws. Every kept run's provider response ids are remembered for
    its arm (a reply repeating one, on any item, is refused again); its request keys are
    remembered when its item runs (``pending``). Kept runs with no trace in ``done_traces``
    cannot be checked against: :class:`~hrbench.errors.DrawsUncheckedWarning` says how many
    (loud, never silent), when a run is to be made and the arms have a client.
    """
    kept = [r for r in done.values() if not (retry_errors and r.failure_kind == "error")]
    if not kept or len(kept) >= total:
        return  # nothing kept, or nothing to run again
    traces = done_traces or {}
    missing = 0
    for row in kept:
        trace = traces.get(row.ledger_id)
        if trace is None:
            missing += 1
        else:
            rt.kept(row.arm, row.item, row.run, trace, cell=False)
    if missing and calls:
        warn_at_caller(
            f"{missing} of {len(kept)} kept run(s) came without their traces (done_traces): a run made again "
            "whose reply repeats one of their draws cannot be refused as a duplicate draw; "
            "pass done_traces= the first run's traces (Bench.traces, or the store's)",
            DrawsUncheckedWarning,
        )
