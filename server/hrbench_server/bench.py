"""The ``benchmark`` method: run a spec, stream rows, keep them in SQLite, resume after a kill.

Each scored row is

1. buffered and written to the store with its trace in one transaction per batch, in the
   daemon's writer thread while the runner goes on: when :data:`STORE_BATCH` rows are waiting
   and no write is under way (a batch takes every row waiting, so batches grow while a write is
   under way), and at least every :data:`FLUSH_INTERVAL_S` seconds (one writer thread,
   :attr:`App.row_writer <hrbench_server.app.App.row_writer>`, serves every benchmark); the runner waits only when
   :data:`MAX_PENDING` rows are not yet sent (waiting, being written, or written). A batch is handed to the writer thread by the
   row that fills it, not by a task: a runner whose calls never suspend (an instant mock, a warm
   cache) gives the event loop no turn for thousands of rows, so a write left to a task began
   only when the runner stopped at :data:`MAX_PENDING`, and the loop then sat idle through it
   (~6 us a row);
2. once that transaction committed, sent to the caller in ``hrbench/rows`` notifications (a
   batch each) tagged with the request id (unless ``stream`` is false), with an
   ``hrbench/progress`` notification about every 1% of rows, and at least every
   :data:`~hrbench_server.bench_sink.PROGRESS_INTERVAL_S` while rows are scored (so a caller
   that asked for no rows still hears of them): a row the caller saw is a row saved. Each row and its trace are encoded once, as the row arrives, into the batch's buffer
   (one for rows, one for traces), for both the store and the wire: a batch's stored rows are
   that buffer, a notification's rows a slice of it. A row kept as Python objects until its
   batch was written cost the event loop ~3 us in garbage collection and cache misses, more
   than encoding it; its encodings kept as bytes objects, each made on the loop and freed in
   the writer thread, cost it ~1 us more than a buffer.

A store that fails (disk full, the file deleted or replaced, read-only) ends the benchmark with
its typed error (:class:`~hrbench.errors.StoreError`), which says how many scored rows were
not saved; nothing more is written or sent.

The runner keeps no rows in memory (``keep_rows=False``); the summary is its running count.
The connection is drained after every batch sent, so a client that reads slowly slows the
benchmark instead of growing the daemon's memory.

The governor's ledger is kept per call (:mod:`hrbench.runner._ledger`): each reservation is
committed to the store before its request is sent and settled right after the reply, so a
SIGKILL at any point leaves every call that may have been paid in the ledger. (A run on Ray
keeps it as a snapshot with each batch of rows, as before.)

Resume: ``{"resume": "<id>"}`` rebuilds the stored spec, checks that every arm still has the
hash it had (an arm whose code or settings changed would mix two arms in one table), keeps
the stored rows (the runner does not run them again), restores the governor's use from its
ledger (reservations left open by a crash counted as spent, and reported in the result's
text as "unknown, at most X USD / N calls"; those a cancel left in flight were counted so at
the cancel, as "cancelled in flight", once), and runs the rest. Calls that finished before the interruption are answered from the
draw-keyed cache (when ``cache`` is on, the default), so they are not paid again. Runs the
governor stopped are run again; runs that ended in errors only with ``retry_errors`` (their
rows replaced, their spend kept). A resume runs at the benchmark's stored ``concurrency``
unless it gives one.

A benchmark whose runs ended in errors, all or some, ends with the status ``errors``
(:attr:`hrbench.Bench.status`). One running when the daemon is stopped (``shutdown``, SIGTERM)
is stored ``interrupted`` and its caller gets :class:`~hrbench.errors.DaemonStopped`, which
names how the daemon was stopped, the runs saved and the resume command.

The spec's ``metrics`` (graded scores beside the scorer's accuracy, e.g. the official TAT-QA
EM and F1) are computed on each run's output as it is scored and kept in the run's trace; a
resume reads them back, so its summary's metrics cover every run.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
import os
import uuid
import warnings
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.to_thread
import msgspec

from hrbench.errors import (
    BenchmarkCancelled,
    BenchmarkRunning,
    DaemonStopped,
    DuplicateDrawError,
    ReferenceReboundWarning,
    StoreError,
)
from hrbench.records import Row, Step
from hrbench.runner import Bench, Cache, Journal, benchmark_async
from hrbench.runner.runtime import ADVICE, Drain
from hrbench_client import protocol as p
from hrbench_server.app import App, warning_collector
from hrbench_server.batches import watch_batches
from hrbench_server.bench_notes import not_finished_error as _not_finished
from hrbench_server.bench_notes import rebound_note as _rebound
from hrbench_server.bench_notes import stop_note as _stop_note
from hrbench_server.bench_resume import (
    check_unchanged,
    done_traces,
    kept_rows,
    read_resume,
    refuse_below_spent,
    resumed_governor,
    retried_rows,
)
from hrbench_server.bench_sink import FLUSH_INTERVAL_S, MAX_PENDING, STORE_BATCH, Sink
from hrbench_server.bench_spec import build, check_resume_only, limits_of
from hrbench_server.rpc import HrbenchProtocol

__all__ = [
    "DEFAULT_CONCURRENCY",
    "FLUSH_INTERVAL_S",
    "MAX_PENDING",
    "STORE_BATCH",
    "check_resume_only",
    "run_benchmark",
]

logger = logging.getLogger("hrbench_server")

DEFAULT_CONCURRENCY = 16
"""How many (arm, item) pairs run at once when a new benchmark's request gives no ``concurrency``
(it is stored with the spec, and a resume keeps it unless the resume gives one)."""

_SPEC_VERSION = 1


async def run_benchmark(
    app: App, proto: HrbenchProtocol, msg_id: Any, args: p.BenchmarkParams
) -> p.BenchmarkResult:
    """Run (or resume) a benchmark for one request; see the module docstring.

    The run holds the benchmark id's lease in the store for its whole life: a second run of the same id while it runs, from this daemon or another process on
    the same file, gets :class:`~hrbench.errors.BenchmarkRunning` naming the running one.
    """
    store = app.store
    ADVICE.set("spec")  # this task's advice names spec fields and hrb flags
    check_resume_only(args)
    if args.resume is not None:
        bench_id = args.resume
    else:
        bench_id = uuid.uuid4().hex[:16]
    owner = f"{os.getpid()}:{msg_id}:{uuid.uuid4().hex[:8]}"
    holder = await anyio.to_thread.run_sync(store.lease_acquire, bench_id, owner)
    if holder is not None:
        since = (
            "just now"
            if holder["acquired"] is None
            else "since "
            + datetime.datetime.fromtimestamp(holder["acquired"], tz=datetime.UTC).isoformat(
                timespec="seconds"
            )
        )
        raise BenchmarkRunning(
            f"benchmark {bench_id} is running now (process {holder['pid'] or 'unknown'}, {since}); wait "
            f"for it to finish or cancel that run (`hrb cancel {bench_id}` on its daemon), then resume it",
            benchmark=bench_id,
            pid=holder["pid"],
        )
    try:
        return await _run(app, proto, msg_id, args, bench_id)
    finally:
        with anyio.CancelScope(shield=True):
            try:
                await anyio.to_thread.run_sync(store.lease_release, bench_id, owner)
            except StoreError as exc:  # the run's own error says what happened to the store
                logger.error("benchmark %s: lease not released: %s", bench_id, exc)


async def _run(
    app: App, proto: HrbenchProtocol, msg_id: Any, args: p.BenchmarkParams, bench_id: str
) -> p.BenchmarkResult:
    """Run (or resume) the benchmark ``bench_id`` under its lease: the steps, in order."""
    store = app.store
    params, stored, prior = await read_resume(store, args, bench_id)
    if params.concurrency is None:
        params = msgspec.structs.replace(params, concurrency=DEFAULT_CONCURRENCY)
    built = await _built(store, args, params, stored, bench_id)
    governor = built["governor"]
    # start from what was spent, reservations a crash left open counted as spent
    governor.restore(await anyio.to_thread.run_sync(store.ledger_resume, bench_id))
    # kept per call on Ray too: the driver commits each worker's reservation before it is sent
    journal = Journal(store, bench_id)
    journal.attach(governor)
    done = kept_rows(prior, args.retry_errors)
    retried = retried_rows(prior, args.retry_errors)
    done_metrics, kept_traces = await anyio.to_thread.run_sync(
        done_traces, store, bench_id, params, done, built["total"]
    )
    # the ledger is kept per call (the journal), so the sink writes no snapshot of it with the rows
    sink = Sink(app, proto, msg_id, bench_id, built["total"], len(done), params.stream, governor, False)
    sink.rerun = {(r.arm, r.item, r.run) for r in prior} - set(done)  # their new rows replace them
    # a benchmark in batch mode runs to its end whoever listens: its batches go on at the provider
    run = _Running.start(
        app, proto, bench_id, built, sink, journal, detach=args.detach or params.batch is not None
    )
    await run.execute(params, done, done_metrics, kept_traces, resumed=stored is not None, retried=retried)
    run.raise_unfinished()
    return await run.result(len(done))


async def _built(
    store: Any,
    args: p.BenchmarkParams,
    params: p.BenchmarkParams,
    stored: dict[str, Any] | None,
    bench_id: str,
) -> dict[str, Any]:
    """The library objects of the spec (:func:`~hrbench_server.bench_spec.build`, in a worker thread).

    A resume's governor keeps the limits in force before, with those given replaced (a limit
    below what was spent is refused), and its arms and reference must be unchanged; a new
    benchmark is stored, with its spec, before it runs.
    """
    if stored is not None and args.governor is not None:
        refuse_below_spent(
            args.governor, await anyio.to_thread.run_sync(store.ledger_get, bench_id), bench_id
        )
    limits = None if stored is None else resumed_governor(stored, args.governor)
    built = await anyio.to_thread.run_sync(build, params, store, limits)
    if stored is not None:
        check_unchanged(stored, built["arms"], built["reference"], bench_id)
    else:
        await _create(store, params, built, bench_id)
    return built


async def _create(store: Any, params: p.BenchmarkParams, built: dict[str, Any], bench_id: str) -> None:
    """Store a new benchmark, ``running``, with its spec and reference (a rebound name is warned of)."""
    arms, reference, governor = built["arms"], built["reference"], built["governor"]
    spec_params = msgspec.structs.replace(  # the caller's env is never stored
        params, reference=reference.hash, resume=None, stream=True, env={}, detach=False
    )
    spec = {
        "version": _SPEC_VERSION,
        "params": msgspec.to_builtins(spec_params),
        "arms": [{"name": a.name, "version": a.version, "hash": a.hash} for a in arms],
        "reference_hash": reference.hash,
        "scorer": built["scorer"].name,  # the name its rows' exports give (hrbench.specs.stored_scorer)
        "total": built["total"],
        "limits": limits_of(governor),  # the limits in force (the defaults' too): a resume keeps them
    }

    def create() -> str | None:
        rebound = _rebound(store, params, reference.hash)
        store.reference_put(reference, None)
        store.benchmark_put(bench_id, spec, reference.hash, "running")
        return rebound

    rebound = await anyio.to_thread.run_sync(create)
    if rebound is not None:
        warnings.warn(rebound, ReferenceReboundWarning, stacklevel=1)


@dataclass
class _Running:
    """A benchmark run from its start to its end: what the steps of :func:`_run` share.

    ``status`` is what the store is told at the end (``"failed"`` until the runner returns);
    ``stopped_by`` names how the daemon was stopped, ``cancelled_by`` who cancelled the run
    (``hrb cancel``), ``not_finished`` the store's error when the end could not be stored.
    """

    app: App
    proto: HrbenchProtocol
    bench_id: str
    built: dict[str, Any]
    sink: Sink
    journal: Journal
    drain: Drain
    task: asyncio.Task[Any]
    ticker: asyncio.Task[None]
    status: str = "failed"
    bench: Bench | None = None
    stopped_by: str | None = None
    cancelled_by: str | None = None
    not_finished: StoreError | None = None

    @classmethod
    def start(
        cls,
        app: App,
        proto: HrbenchProtocol,
        bench_id: str,
        built: dict[str, Any],
        sink: Sink,
        journal: Journal,
        *,
        detach: bool,
    ) -> _Running:
        """Register the running task (``app.running``, a clean cancel's drain) and start the sink's ticker."""
        task = asyncio.current_task()
        assert task is not None
        app.running[bench_id] = task
        drain = app.drains[bench_id] = Drain()  # a clean cancel lets the requests sent finish first
        if not detach:  # cancelled when the submitting connection closes
            proto.owned.add(task)
        ticker = asyncio.create_task(sink.ticker())
        return cls(app, proto, bench_id, built, sink, journal, drain, task, ticker)

    async def execute(
        self,
        params: p.BenchmarkParams,
        done: dict[tuple[str, str, int], Row],
        done_metrics: dict[str, dict[str, float]],
        kept_traces: dict[str, list[Step]],
        *,
        resumed: bool,
        retried: dict[tuple[str, str, int], Row],
    ) -> None:
        """Run the benchmark to its end, a cancel or an error; its end is stored whatever happened.

        ``retried`` holds the rows of the runs ``--retry-errors`` makes again: the runner gets
        them with ``done`` and ``retry_errors``, and runs them again.
        """
        try:
            if resumed:
                await anyio.to_thread.run_sync(
                    self.app.store.benchmark_put,
                    self.bench_id,
                    {"limits": limits_of(self.built["governor"])},
                    self.built["reference"].hash,
                    "running",
                )
            self.sink.progress()
            await self._benchmark(params, {**done, **retried}, done_metrics, kept_traces, bool(retried))
        except asyncio.CancelledError:
            if self._cancelled():
                raise
        finally:
            await self._close()

    async def _benchmark(
        self,
        params: p.BenchmarkParams,
        done: dict[tuple[str, str, int], Row],
        done_metrics: dict[str, dict[str, float]],
        kept_traces: dict[str, list[Step]],
        retry_errors: bool,
    ) -> None:
        built, store = self.built, self.app.store
        try:
            self.bench = await benchmark_async(
                built["arms"],
                built["reference"],
                params.runs,
                built["client"],
                built["scorer"],
                params.split,
                built["governor"],
                params.seed,
                cache=Cache(store) if params.cache else None,
                record=params.record,
                store=store,
                concurrency=params.concurrency or DEFAULT_CONCURRENCY,
                benchmark_id=self.bench_id,
                on_row=self.sink.on_row,
                done=done,
                keep_rows=False,  # rows stream to the store: memory does not grow with rows
                executor=params.executor,
                metrics=built["metrics"],
                done_metrics=done_metrics,
                done_traces=kept_traces,
                retry_errors=retry_errors,
                pricing=built["pricing"],
                drain=self.drain,
                stop=built["stop"],
                batch=built["batch"],
                on_batch=watch_batches(self.app, self.bench_id, self.sink),
            )
            self.status = (
                self.bench.status
            )  # "budget_stopped" when the governor stopped runs, "errors" when runs erred
        except DuplicateDrawError as exc:
            self.bench = exc.bench
            self.status = "refused"
            exc.context["benchmark"] = self.bench_id
            raise

    def _cancelled(self) -> bool:
        """Whom a cancel came from; ``True`` when it is to go on up (the submitting connection closed)."""
        app = self.app
        self.cancelled_by = app.cancelled_by.pop(self.bench_id, None)
        if app.stopping is None and self.cancelled_by is None:  # the submitting connection closed
            self.status = "cancelled"
            return True
        if app.stopping is None:  # `hrb cancel`: its caller is told who cancelled it
            self.status = "cancelled"
        else:
            self.status = "interrupted"  # the daemon is stopping: as when it dies, resumable
            self.stopped_by = app.stopping
        return False

    async def _close(self) -> None:
        """Stop the ticker, close the ledger, write the last rows and the end (shielded from cancels)."""
        app, bench_id, sink = self.app, self.bench_id, self.sink
        self.ticker.cancel()
        app.drains.pop(bench_id, None)  # finishing: a cancel now waits for its end (App.cancel)
        app.batching.pop(bench_id, None)
        app.cancelled_by.pop(bench_id, None)  # a cancel that came as it finished names nobody later
        self.proto.owned.discard(self.task)
        try:
            with anyio.CancelScope(shield=True):
                # every settlement written; what was in flight is folded now, once, as cancelled
                try:  # in flight (not "at a crash", not twice)
                    await anyio.to_thread.run_sync(self.journal.close)
                except StoreError as exc:  # they stay open: the next resume folds them
                    logger.error("benchmark %s: ledger not closed: %s", bench_id, exc)
                try:
                    await sink.flush()
                    summary = self.bench.summary() if self.bench is not None else None
                    await anyio.to_thread.run_sync(app.store.benchmark_finish, bench_id, self.status, summary)
                except StoreError as exc:  # raised below, unless an error is already on its way
                    logger.error("benchmark %s: not finished in the store: %s", bench_id, exc)
                    self.not_finished = exc
                if self.status != "done" or sink.failed is not None:
                    logger.info("benchmark %s %s after %d saved rows", bench_id, self.status, sink.done)
        finally:
            # a finishing benchmark is never listed `interrupted` (its record says `running`
            # while no task runs it): it counts as running until its end is stored
            app.running.pop(bench_id, None)

    def raise_unfinished(self) -> None:
        """Raise what ended the run early: the store's error, a daemon stopping, a cancel.

        Raises:
            StoreError: rows or the end could not be stored.
            DaemonStopped: the daemon was stopped while it ran.
            BenchmarkCancelled: ``hrb cancel`` cancelled it.
        """
        sink, bench_id, total = self.sink, self.bench_id, self.built["total"]
        if sink.failed is not None:
            raise sink.error()
        if self.not_finished is not None:
            # a benchmark whose end cannot be stored is never reported done (the store
            # would still say running); its caller gets the store's own error and advice, and
            # the saved rows stay (a resume finishes it once the store can be written)
            raise _not_finished(self.not_finished, bench_id, sink.done, total)
        if self.stopped_by is not None:
            raise DaemonStopped(
                f"the daemon was stopped by {self.stopped_by} while benchmark {bench_id} ran: {sink.done} of "
                f"{total} runs are done and saved. Resume it with: hrb bench --resume {bench_id}",
                benchmark=bench_id,
                done=sink.done,
                total=total,
            )
        if self.cancelled_by is not None:  # who cancelled it, how to go on
            raise BenchmarkCancelled(
                f"benchmark {bench_id} was cancelled by {self.cancelled_by}; {sink.done} of {total} "
                f"runs are done and saved (`hrb rows {bench_id}`). Resume it with: hrb bench --resume {bench_id}",
                benchmark=bench_id,
                done=sink.done,
                total=total,
            )

    async def result(self, n_resumed: int) -> p.BenchmarkResult:
        """The method's result, once the benchmark ran to its end; its last progress is sent."""
        bench, sink, bench_id = self.bench, self.sink, self.bench_id
        assert bench is not None  # it ran to its end (a cancel or an error raised above)
        if sink.last_progress != sink.done:
            sink.progress()
        bench.retry = f"`hrb bench --resume {bench_id} --retry-errors`"  # the printout's advice, for hrb
        stop_note = None
        if self.status != "done":  # the note hrb ls, the report and the view show, by the same function
            stop_note = await anyio.to_thread.run_sync(_stop_note, self.app.store, bench_id)
        return p.BenchmarkResult(
            id=bench_id,
            summary=msgspec.convert(bench.summary(), list[p.ArmSummary]),
            n_rows=sink.done,
            n_resumed=n_resumed,
            status=self.status,
            reference_hash=self.built["reference"].hash,
            arms=[
                p.ArmInfo(
                    name=a["name"], version=a["version"], hash=a["hash"], derived_from=a.get("derived_from")
                )
                for a in bench.arms
            ],
            text=str(bench),
            warnings=list(warning_collector.get() or []),
            stop_note=stop_note,
        )
