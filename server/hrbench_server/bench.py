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
   (issue 15, point 6: ~6 us a row);
2. once that transaction committed, sent to the caller in ``hrbench/rows`` notifications (a
   batch each) tagged with the request id (unless ``stream`` is false), with an
   ``hrbench/progress`` notification about every 1% of rows: a row the caller saw is a row
   saved. Each row and its trace are encoded once, as the row arrives, for both the store and
   the wire: a notification's rows and a batch's stored rows are those encodings joined. A row
   kept as Python objects until its batch was written cost the event loop ~3 us in garbage
   collection and cache misses, more than encoding it (issue 15, point 6).

A store that fails (disk full, the file deleted or replaced, read-only) ends the benchmark with
its typed error (:class:`~hrbench.errors.StoreError`), which says how many scored rows were
not saved; nothing more is written or sent.

The runner keeps no rows in memory (``keep_rows=False``); the summary is its running count.
The connection is drained after every batch sent, so a client that reads slowly slows the
benchmark instead of growing the daemon's memory.

The governor's ledger is kept per call (issue 13, :mod:`hrbench.runner.ledger`): each reservation is
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
unless it gives one (newcomer findings).

A benchmark whose runs ended in errors, all or some, ends with the status ``errors``
(:attr:`hrbench.Bench.status`). One running when the daemon is stopped (``shutdown``, SIGTERM)
is stored ``interrupted`` and its caller gets :class:`~hrbench.errors.DaemonStopped`, which
names how the daemon was stopped, the runs saved and the resume command (newcomer finding).

The spec's ``metrics`` (graded scores beside the scorer's accuracy, e.g. the official TAT-QA
EM and F1) are computed on each run's output as it is scored and kept in the run's trace; a
resume reads them back, so its summary's metrics cover every run (newcomer finding).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import datetime
import logging
import os
import sys
import uuid
import warnings
from collections.abc import Awaitable
from typing import Any

import anyio
import anyio.to_thread
import msgspec

from hrbench import specs
from hrbench.errors import (
    BenchmarkCancelled,
    BenchmarkRunning,
    ConfigError,
    DaemonStopped,
    DuplicateDrawError,
    NotFound,
    ReferenceReboundWarning,
    StoreError,
)
from hrbench.reference import Reference, check_keyed
from hrbench.results.records import Row, Step
from hrbench.runner.benchmark import benchmark_async, refuse_before_start, trace_metrics
from hrbench.runner.cache import Cache
from hrbench.runner.governor import Governor, default_governor
from hrbench.runner.ledger import Journal
from hrbench.runner.runtime import ADVICE, Drain
from hrbench.runner.stopping import kept
from hrbench.specs import build_stop
from hrbench_client import protocol as p
from hrbench_server.app import App, warning_collector
from hrbench_server.bench_notes import not_finished_error as _not_finished
from hrbench_server.bench_notes import rebound_note as _rebound
from hrbench_server.bench_notes import stop_note as _stop_note
from hrbench_server.framing import wire_id
from hrbench_server.rpc import HrbenchProtocol, frame_notification

__all__ = [
    "DEFAULT_CONCURRENCY",
    "FLUSH_INTERVAL_S",
    "MAX_PENDING",
    "STORE_BATCH",
    "check_resume_only",
    "run_benchmark",
]

logger = logging.getLogger("hrbench_server")

STORE_BATCH = 256
"""Rows written to SQLite per transaction (at most)."""

FLUSH_INTERVAL_S = 0.1
"""The longest a scored row waits before it is written (seconds)."""

MAX_PENDING = 16 * STORE_BATCH
"""Rows a benchmark may hold before the runner waits: waiting, being written, or written and not yet
sent (a runner that never suspends gives no written batch a turn to be sent: they piled up).

A write can take tens of milliseconds when the runner holds the GIL (the writer thread waits up
to the interpreter's switch interval, 5 ms, each time it needs it back from SQLite): rows are
kept encoded, ~1 KB each with their trace, so this bounds a benchmark's queue to a few MB."""

DEFAULT_CONCURRENCY = 16
"""How many (arm, item) pairs run at once when a new benchmark's request gives no ``concurrency``
(it is stored with the spec, and a resume keeps it unless the resume gives one)."""

_SPEC_VERSION = 1

_encoder = msgspec.json.Encoder()
"""The writer thread's encoder (notifications; one batch at a time per sink)."""

_row_encoder = msgspec.json.Encoder()
"""The event loop's encoder: each row and its trace, as the runner hands them over."""


class _Sink:
    """Receives rows from the runner, writes them to the store in batches, then streams them.

    A row is sent to the caller only after the transaction holding it committed: a row the
    client saw is a row saved (decided, issue 13: after a full disk, rows had reached the
    client that were never saved). When the store fails (full, deleted, read-only), no later
    row is written or sent; the benchmark ends with the store's typed error, which says how
    many scored rows were not saved.
    """

    def __init__(
        self,
        app: App,
        proto: HrbenchProtocol,
        msg_id: Any,
        bench_id: str,
        total: int,
        done: int,
        stream: bool,
        governor: Any,
        snapshots: bool = True,
    ) -> None:
        self.app, self.proto, self.bench_id = app, proto, bench_id
        self.msg_id = wire_id(msg_id)  # notifications carry the request's id as it was sent
        self.total, self.done, self.stream, self.governor = total, done, stream, governor
        self.snapshots = snapshots
        """Whether the ledger is written with the rows (a Ray run; else it is kept per call)."""
        self.rerun: set[tuple[str, str, int]] = set()
        """``(arm, item, run)`` of stored rows this run makes again (budget stops, on resume)."""
        self.pending: list[bytes] = []
        """The waiting rows, each encoded as JSON."""
        self.pending_seqs: list[int] = []
        self.pending_traces: list[bytes] = []
        """Their traces, each as ``"ledger_id":[steps]`` (a member of a JSON object)."""
        self.pending_rerun = 0  # how many waiting rows replace a stored one (see rerun)
        self.lock = asyncio.Lock()
        self.progress_every = max(1, total // 100)
        self.last_progress = done
        self.written = 0
        self.failed: StoreError | None = None
        self.unsaved = 0
        self.ledger_written: tuple[int, float, int] | None = None  # the last use submitted
        self.writing: asyncio.Future[None] | None = None  # the last batch submitted, until it landed
        self.landing: dict[asyncio.Future[None], int] = {}
        """Batches written or being written, not yet sent, with their rows: with the waiting rows,
        at most MAX_PENDING (see on_row); a few batches, so their sum is taken when needed."""
        self._job: concurrent.futures.Future[list[bytes]] | None = None  # its write (app.row_writer)
        self._cut = (done, done)  # (done, last_progress) once every batch submitted has landed
        self._failure_logged = False

    def progress(self) -> None:
        self.last_progress = self.done
        self.proto.send_notification(
            "hrbench/progress",
            p.ProgressNotification(
                request_id=self.msg_id,
                benchmark=self.bench_id,
                done=self.done,
                total=self.total,
                usd=float(self.governor.usd),
                max_usd=self.governor.max_usd,
                calls=int(self.governor.calls),
                max_calls=self.governor.max_calls,
            ),
        )

    def on_row(self, seq: int, row: Row, trace: list[Step]) -> Awaitable[None] | None:
        """Take a scored row; a full batch is written in the background while the runner goes on.

        Returns ``None`` (nothing to wait for: no coroutine is made per row), or what the
        runner must await: the oldest batch not yet sent when :data:`MAX_PENDING` rows are unsent
        (a slow disk or a slow reader; memory stays bounded), or the store's error.
        """
        enc = _row_encoder.encode
        self.pending.append(enc(row))
        self.pending_seqs.append(seq)
        self.pending_traces.append(b"%s:%s" % (enc(row.ledger_id), enc(trace)))
        if self.rerun and (row.arm, row.item, row.run) in self.rerun:
            self.pending_rerun += 1
        if self.failed is not None:
            return self.flush()  # raises the store's error
        if len(self.pending) >= STORE_BATCH:
            if self.landing and len(self.pending) + sum(self.landing.values()) >= MAX_PENDING:
                # a runner that never suspends gives no batch a turn to land: its written rows
                # would pile up as frames, as many as it makes before it suspends
                return self._behind(next(iter(self.landing)))  # the oldest
            job = self._job
            if job is None or job.done():  # (its rows may not have landed: the next batch follows it)
                self.writing = self._start_flush()
        return None

    async def _behind(self, writing: asyncio.Future[None]) -> None:
        await asyncio.shield(writing)  # its error is kept in self.failed
        if self.failed is not None:
            await self.flush()

    def _write(
        self,
        batch: list[bytes],
        seqs: list[int],
        traces: list[bytes],
        fresh: int,
        use: tuple[int, float, int] | None,
        steps: list[int],
    ) -> list[bytes]:
        """Write a batch in one transaction (a worker thread); its ``hrbench/rows`` notifications, framed.

        ``batch`` holds the rows' JSON (encoded once, for the store and the wire): one array
        per ``steps`` entry (how many rows each notification carries, cut where a progress
        notification falls), which the store keeps joined as the batch's rows. The event loop
        only queues the frames once the transaction committed.

        A batch after one that failed writes nothing (it may have been handed over before the
        failure was seen): no row is written or sent after the store failed.
        """
        if self.failed is not None:
            raise self.failed
        chunks, start = [], 0
        for n in steps:
            chunks.append(b"[%s]" % b",".join(batch[start : start + n]))
            start += n
        body = chunks[0] if len(chunks) == 1 else b"[%s]" % b",".join(batch)
        try:
            self.app.store.row_batch_put(
                self.bench_id, seqs, body, b"{%s}" % b",".join(traces), ledger=use, fresh=fresh
            )
        except StoreError as exc:
            self.failed = exc
            raise
        if not self.stream:
            return []
        return [
            frame_notification(
                _encoder,
                "hrbench/rows",
                # protocol.Row's fields are records.Row's: the rows' JSON goes in as it is
                p.RowsNotification(request_id=self.msg_id, benchmark=self.bench_id, rows=msgspec.Raw(c)),  # type: ignore[arg-type]
            )
            for c in chunks
        ]

    def _use(self) -> tuple[int, float, int] | None:
        """The governor's use to keep with the rows, in-flight reservations counted as spent.

        A resume after a crash must not assume the calls in flight were free. ``None`` when
        the governor keeps its ledger per call (:mod:`hrbench.runner.ledger`).
        """
        if not self.snapshots:
            return None
        snap = self.governor.snapshot()
        return (int(snap["calls"]), float(snap["usd"]), int(snap["tokens"]))

    def error(self) -> StoreError:
        """The store's error, saying what became of this benchmark's rows."""
        assert self.failed is not None
        exc = self.failed
        return type(exc)(
            f"{exc.message} Benchmark {self.bench_id}: {self.unsaved} scored rows were not saved "
            f"(and not sent); {self.done} rows are saved and kept. Once fixed, resume it with "
            f'{{"resume": "{self.bench_id}"}} (`hrb bench --resume {self.bench_id}`)',
            exc.path,
            benchmark=self.bench_id,
            unsaved=self.unsaved,
        )

    async def flush(self) -> None:
        """Write the waiting rows in one transaction, then send them (and progress).

        Returns once every batch taken before it landed (written and queued to the caller).
        Shielded: a caller cancelled mid-write (the ticker at the end of the run, a cancelled
        runner) does not lose the batch it took; the next flush waits for this one.
        """
        await asyncio.shield(self._start_flush())

    def _start_flush(self) -> asyncio.Future[None]:
        """Hand the waiting rows to the writer thread now; a future done once they landed.

        Raises (through the future) the store's error once it failed: the waiting rows are
        then counted unsaved and dropped.
        """
        job, n, steps, use = None, 0, [], self.ledger_written
        if self.failed is not None:  # the store failed: keep nothing, send nothing
            self.unsaved += len(self.pending)
            self._take()
        else:
            use = self._use()
            if self.pending or use != self.ledger_written:  # (no rows: calls went out, the
                batch, seqs, traces, rerun = self._take()  # ledger follows every tick)
                n, steps = len(batch), self._steps(len(batch))
                job = self._job = self.app.row_writer.submit(
                    self._write, batch, seqs, traces, n - rerun, use, steps
                )
                self.ledger_written = use
        task = asyncio.ensure_future(self._land(job, n, steps))
        task.add_done_callback(_seen)
        if job is not None:  # its rows count against MAX_PENDING until they landed (or failed)
            self.landing[task] = n
            task.add_done_callback(self._landed)
        return task

    async def _land(
        self, job: concurrent.futures.Future[list[bytes]] | None, n: int, steps: list[int]
    ) -> None:
        """Once a batch committed, queue its rows to the caller (batches land in the order taken).

        The next batch may be written while this one drains to a slow reader; the runner still
        waits at :data:`MAX_PENDING` rows, counting those written and not yet landed.
        """
        async with self.lock:  # FIFO: the tasks take it in the order the batches were handed over
            try:
                frames = [] if job is None else await asyncio.wrap_future(job)
            except StoreError:
                self.unsaved += n
                if not self._failure_logged:
                    self._failure_logged = True
                    logger.error("benchmark %s: %s", self.bench_id, self.failed)
                raise self.error() from None
            if job is None and self.failed is not None:
                raise self.error()
            self.written += n
            self._queue(steps, frames)
        if n:
            await self.proto.drain()

    def _landed(self, task: asyncio.Future[None]) -> None:
        del self.landing[task]

    def _take(self) -> tuple[list[bytes], list[int], list[bytes], int]:
        """The waiting rows, their order numbers, their traces and how many replace stored rows; none wait after."""
        taken = self.pending, self.pending_seqs, self.pending_traces, self.pending_rerun
        self.pending, self.pending_seqs, self.pending_traces, self.pending_rerun = [], [], [], 0
        return taken

    def _steps(self, n: int) -> list[int]:
        """How many of ``n`` rows each notification carries: cut where a progress one falls (about every 1%)."""
        steps: list[int] = []
        done, last = self._cut
        while n > 0:
            step = min(n, max(1, self.progress_every - (done - last)))
            steps.append(step)
            n -= step
            done += step
            if done - last >= self.progress_every:
                last = done
        self._cut = (done, last)
        return steps

    def _queue(self, steps: list[int], frames: list[bytes]) -> None:
        """Queue a committed batch's ``hrbench/rows`` notifications, each followed by progress when due."""
        for i, step in enumerate(steps):
            if frames:
                self.proto.send_framed(frames[i : i + 1])
            self.done += step
            if self.done - self.last_progress >= self.progress_every:
                self.progress()

    async def ticker(self) -> None:
        """Flush waiting rows, and the governor's use, every :data:`FLUSH_INTERVAL_S` seconds."""
        while True:
            await asyncio.sleep(FLUSH_INTERVAL_S)
            try:
                await self.flush()
            except StoreError:
                return  # recorded in self.failed: the runner's next row (or the end) raises it


def _seen(task: asyncio.Future[Any]) -> None:
    """Mark a shielded flush's error as retrieved (its caller may be gone; ``failed`` keeps it)."""
    if not task.cancelled():
        task.exception()


def check_resume_only(args: p.BenchmarkParams) -> None:
    """Refuse spec fields beside ``resume`` (the stored spec runs), naming the first one given.

    Without ``resume``, refuse ``retry_errors`` (only a resume runs failed runs again).
    """
    if args.resume is None:
        if args.retry_errors:
            raise ConfigError(
                "retry_errors", True, "runs that ended in errors are run again by a resume: give `resume` too"
            )
        return
    bare = p.BenchmarkParams(
        resume=args.resume,
        stream=args.stream,
        concurrency=args.concurrency,
        env=args.env,
        governor=args.governor,
        detach=args.detach,
        retry_errors=args.retry_errors,
    )
    if args != bare:
        given = [f for f in args.__struct_fields__ if getattr(args, f) != getattr(bare, f)]
        raise ConfigError(
            given[0],
            getattr(args, given[0]),
            "`resume` runs the stored spec; leave the other fields out "
            "(except stream, concurrency, env, governor, detach, retry_errors)",
        )


def add_import_path(paths: list[str]) -> None:
    """Put absolute directories on the daemon's import path (for ``import`` arms, mock functions).

    They go at the end: a file there named like a module the daemon imports (a dependency
    imported lazily) never shadows it (issue 13). Code over TCP is refused (SPEC §4).

    Raises:
        ConfigError: a relative directory.
        CodeRefused: on a TCP connection of a daemon not started with ``--allow-code-over-tcp``.
    """
    for path in paths:
        specs.check_code_allowed("python_path", path)
        if not os.path.isabs(path):
            raise ConfigError("python_path", path, "expected an absolute directory")
        if path not in sys.path:
            sys.path.append(path)


def wire_reference(spec: str | p.ReferenceSpec, store: Any) -> Reference:
    """The reference a request sends (inline, or a stored name or hash), read by the wire's rule.

    Decided (issue 25, finding 1): the wire never pairs a list with a mapping by position. A JSON
    object's keys reach the daemon in whatever order the sender's map had (a Lua table's hash
    order), so an inline spec whose ``items`` is a mapping must key ``labels``, ``cluster`` and
    ``split`` by item id (:func:`hrbench.reference.check_keyed`); lists beside a list of items
    still pair by position. ``hrbench_client`` and ``hrb`` send the keyed form for specs whose
    order they know (a Python dict, a TOML file). Used by ``benchmark`` and ``reference/put``.

    Raises:
        ReferenceValueError: ``reference.labels`` (``.cluster``, ``.split``): a list beside a
            mapping of items, with the keyed form.
        ConfigError: a malformed spec, or no stored reference by that name.
    """
    with specs.field_under("reference"):
        if isinstance(spec, p.ReferenceSpec):
            check_keyed(spec.items, {"labels": spec.labels, "cluster": spec.cluster, "split": spec.split})
        return specs.build_reference(spec, store)


def _limits(governor: Any) -> dict[str, Any]:
    """The caps in force, kept with the benchmark so that ``hrb ls`` shows them.

    The defaults' too (decided, newcomer: ls said ``max_calls`` null while 400 applied); a
    resume with new limits replaces them.
    """
    return {**governor.limits, "default": governor.from_defaults}


def _build(params: p.BenchmarkParams, store: Any, governor: Governor | None = None) -> dict[str, Any]:
    """Library objects from the spec (blocking: may read files, import modules, query SQLite).

    ``governor``: a resume's (:func:`resumed_governor`); else the spec's, or the defaults.
    """
    if not params.arms:
        raise ConfigError("arms", [], "a benchmark needs at least one arm (or `resume` with a benchmark id)")
    if params.reference is None:
        raise ConfigError(
            "reference", None, "a benchmark needs a reference (inline, or a stored name or hash)"
        )
    add_import_path(params.python_path)
    arms = []
    for i, a in enumerate(params.arms):
        with specs.field_under(f"arms[{i}]"):  # errors name the full dotted path (newcomer finding)
            arms.append(specs.build_arm(a))
    reference = wire_reference(params.reference, store)
    with specs.field_under("client"):
        client = None if params.client is None else specs.build_client(params.client, store)
    pricing = specs.build_pricing(params.client)
    scorer = specs.build_scorer(params.scorer, params.scorer_settings, store)  # a replay judge reads it
    metrics = specs.build_metrics(params.metrics)
    if governor is None:
        governor = specs.build_governor(params.governor) or default_governor()
    refuse_before_start(  # before the benchmark is stored: a refusal leaves nothing
        client,
        governor,
        pricing,  # the spec's `price` (newcomer finding)
        arms=arms,
        reference=reference,
        split=params.split,
        metrics=metrics,
        runs=params.runs,
        cached=params.cache,
        scorer=scorer,
    )
    splits = [params.split] if isinstance(params.split, str) else list(params.split)
    n_items = sum(1 for s in reference.splits.values() if s in splits)
    return {
        "arms": arms,
        "reference": reference,
        "client": client,
        "scorer": scorer,
        "metrics": metrics,
        "pricing": pricing,
        "governor": governor,
        "total": n_items * len(arms) * params.runs,
        "stop": build_stop(params.stop, store, arms, reference, params.split),  # stop when sure
    }


def resumed_governor(stored: dict[str, Any], given: p.GovernorSpec | None) -> Any:
    """The governor a resume runs under: the limits in force before, with those given replaced.

    Decided (newcomer finding): a resume keeps every limit it does not set (the defaults' included: a
    benchmark started under the default $5 cap keeps it, and so keeps sending the output limit
    a cap requires, so that its requests are the ones the first part sent); a limit given
    (``--max-calls N``) replaces that one only. A limit still from the defaults keeps their
    rule (no refusal of an unpriced model).

    Args:
        stored: the benchmark's stored spec (``limits``, :func:`_limits`; a spec
            stored before them gives the spec's ``governor``, else the defaults).
        given: the resume's ``governor``; its ``None`` fields are not given.

    Returns:
        A fresh :class:`~hrbench.runner.governor.Governor` (its use is restored from the ledger).
    """
    if "limits" in stored:
        limits = dict(stored["limits"])
        from_defaults = bool(limits.pop("default", False))
    else:
        old = specs.build_governor(stored["params"].get("governor")) or default_governor()
        limits, from_defaults = old.limits, old.from_defaults
    changed = (
        {}
        if given is None
        else {k: v for k, v in msgspec.structs.asdict(given).items() if v is not None and k != "defaults"}
    )
    gov = Governor(**{**limits, **changed})
    gov.from_defaults = from_defaults and "max_usd" not in changed
    return gov


def refuse_below_spent(given: p.GovernorSpec, ledger: dict[str, Any] | None, bench_id: str) -> None:
    """Refuse a resume limit below what the benchmark already spent (newcomer finding).

    Decided (newcomer finding: ``--resume ID --max-calls 5`` after 371 calls said "all 5 calls
    are used" and stored ``max_calls`` 5 under ``calls`` 371): such a limit is a mistake, not a
    stop; it is refused before anything is stored.

    Args:
        given: the resume's ``governor`` (its ``None`` fields are not given).
        ledger: the benchmark's ledger (``calls``, ``usd``, ``tokens``), ``None`` if none.
        bench_id: the benchmark's id, for the message.

    Raises:
        ConfigError: naming the limit, the value given and the amount spent.

    Example:
        >>> refuse_below_spent(p.GovernorSpec(max_calls=5), {"calls": 371}, "b1")
        Traceback (most recent call last):
        ...
        hrbench.errors.ConfigError: governor.max_calls: a resume limit below what benchmark b1 already spent (371 calls); give more (--max-calls) (got 5)
    """
    for key, spent_key, unit, flag in (
        ("max_calls", "calls", " calls", "--max-calls"),
        ("max_usd", "usd", " USD", "--max-usd"),
        ("max_tokens", "tokens", " tokens", "--max-tokens"),
    ):
        value, spent = getattr(given, key), (ledger or {}).get(spent_key) or 0
        if value is not None and value < spent - 1e-12:
            raise ConfigError(
                f"governor.{key}",
                value,
                f"a resume limit below what benchmark {bench_id} already spent ({spent:g}{unit}); give more ({flag})",
            )


def _done_traces(
    store: Any, bench_id: str, params: p.BenchmarkParams, done: dict[Any, Row], total: int
) -> tuple[dict[str, dict[str, float]], dict[str, list[Step]]]:
    """What the traces of resumed rows keep: metric values, the traces of errors, and draws.

    newcomer findings: a resume keeps the metrics; the runs it keeps that ended in errors keep
    their causes (the ``errors`` status names the commonest); and when runs are made again, the
    other kept runs' draws (request keys, provider response ids: :meth:`Store.trace_draws`)
    seed the distinct-draw check (seed 002), so ``--retry-errors`` cannot accept a run whose
    reply repeats a kept run's.
    """
    want = [r.ledger_id for r in done.values() if params.metrics or r.failure_kind == "error"]
    traces = store.traces_get(bench_id, want) if want else {}
    metrics = (
        {lid: v for lid, trace in traces.items() if (v := trace_metrics(trace)) is not None}
        if params.metrics
        else {}
    )
    errors = {r.ledger_id: traces.get(r.ledger_id, []) for r in done.values() if r.failure_kind == "error"}
    if len(done) < total:  # runs are made again: every kept run's draws (an error's full trace has them)
        others = [r.ledger_id for r in done.values() if r.ledger_id not in errors]
        draws = store.trace_draws(bench_id, others) if others else {}
        errors.update({lid: draws.get(lid, []) for lid in others})
    return metrics, errors


async def run_benchmark(
    app: App, proto: HrbenchProtocol, msg_id: Any, args: p.BenchmarkParams
) -> p.BenchmarkResult:
    """Run (or resume) a benchmark for one request; see the module docstring.

    The run holds the benchmark id's lease in the store for its whole life (decided, issue
    13): a second run of the same id while it runs, from this daemon or another process on
    the same file, gets :class:`~hrbench.errors.BenchmarkRunning` naming the running one.
    """
    store = app.store
    ADVICE.set("spec")  # this task's advice names spec fields and hrb flags (newcomer finding)
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
    store = app.store
    prior: list[Row] = []
    stored: dict[str, Any] | None = None
    if args.resume is not None:
        rec = await anyio.to_thread.run_sync(store.benchmark_get, bench_id)
        if rec is None:
            raise NotFound(f"no stored benchmark has the id {bench_id!r}", benchmark=bench_id)
        stored = rec["spec"]
        params = msgspec.convert(stored["params"], p.BenchmarkParams)
        # the benchmark's own concurrency unless the resume gives one (newcomer finding)
        concurrency = params.concurrency if args.concurrency is None else args.concurrency
        params = msgspec.structs.replace(params, stream=args.stream, concurrency=concurrency)
        prior = await anyio.to_thread.run_sync(store.rows_get, bench_id)
    else:
        params = args
    if params.concurrency is None:
        params = msgspec.structs.replace(params, concurrency=DEFAULT_CONCURRENCY)
    if stored is not None and args.governor is not None:
        refuse_below_spent(
            args.governor, await anyio.to_thread.run_sync(store.ledger_get, bench_id), bench_id
        )
    limits = None if stored is None else resumed_governor(stored, args.governor)
    built = await anyio.to_thread.run_sync(_build, params, store, limits)
    arms, reference, governor = built["arms"], built["reference"], built["governor"]
    if stored is not None:
        was = {a["name"]: a["hash"] for a in stored.get("arms", [])}
        for a in arms:
            if was.get(a.name) != a.hash:
                raise ConfigError(
                    "resume", bench_id, f"arm {a.name!r} changed since the benchmark started (hash differs)"
                )
        if reference.hash != stored.get("reference_hash"):
            raise ConfigError("resume", bench_id, "the reference changed since the benchmark started")
    else:
        spec_params = msgspec.structs.replace(  # the caller's env is never stored
            params, reference=reference.hash, resume=None, stream=True, env={}, detach=False
        )
        spec = {
            "version": _SPEC_VERSION,
            "params": msgspec.to_builtins(spec_params),
            "arms": [{"name": a.name, "version": a.version, "hash": a.hash} for a in arms],
            "reference_hash": reference.hash,
            "total": built["total"],
            "limits": _limits(governor),  # the limits in force (the defaults' too): a resume keeps them
        }

        def create() -> str | None:
            rebound = _rebound(store, params, reference.hash)
            store.reference_put(reference, None)
            store.benchmark_put(bench_id, spec, reference.hash, "running")
            return rebound

        rebound = await anyio.to_thread.run_sync(create)
        if rebound is not None:
            warnings.warn(rebound, ReferenceReboundWarning, stacklevel=1)
    # issue 13: start from what was spent, reservations a crash left open counted as spent
    governor.restore(await anyio.to_thread.run_sync(store.ledger_resume, bench_id))
    # kept per call on Ray too: the driver commits each worker's reservation before it is sent
    journal: Journal | None = Journal(store, bench_id)
    assert journal is not None
    journal.attach(governor)
    # a run the governor stopped is run again on resume (issue 12: a budget stop is resumable);
    # one that ended in an error too, when asked (`--retry-errors`, newcomer finding): its new
    # row replaces the old one, and what its failed attempt spent stays in the ledger
    again = {"budget_stop", "error"} if args.retry_errors else {"budget_stop"}
    done = kept({(r.arm, r.item, r.run): r for r in prior if r.failure_kind not in again})
    done_metrics, done_traces = await anyio.to_thread.run_sync(
        _done_traces, store, bench_id, params, done, built["total"]
    )
    sink = _Sink(
        app, proto, msg_id, bench_id, built["total"], len(done), params.stream, governor, journal is None
    )
    sink.rerun = {(r.arm, r.item, r.run) for r in prior} - set(done)  # their new rows replace them
    task = asyncio.current_task()
    assert task is not None
    app.running[bench_id] = task
    drain = app.drains[bench_id] = Drain()  # a clean cancel lets the requests sent finish first
    cancelled_by: str | None = None
    if not args.detach:  # cancelled when the submitting connection closes (newcomer finding)
        proto.owned.add(task)
    ticker = asyncio.create_task(sink.ticker())
    status = "failed"
    bench = None
    stopped_by: str | None = None
    not_finished: StoreError | None = None  # the benchmark's end could not be stored
    try:
        if stored is not None:
            await anyio.to_thread.run_sync(
                store.benchmark_put, bench_id, {"limits": _limits(governor)}, reference.hash, "running"
            )
        sink.progress()
        try:
            bench = await benchmark_async(
                arms,
                reference,
                params.runs,
                built["client"],
                built["scorer"],
                params.split,
                governor,
                params.seed,
                cache=Cache(store) if params.cache else None,
                record=params.record,
                store=store,
                concurrency=params.concurrency or DEFAULT_CONCURRENCY,
                benchmark_id=bench_id,
                on_row=sink.on_row,
                done=done,
                keep_rows=False,  # rows stream to the store: memory does not grow with rows
                executor=params.executor,
                metrics=built["metrics"],
                done_metrics=done_metrics,
                done_traces=done_traces,
                pricing=built["pricing"],
                drain=drain,
                stop=built["stop"],
            )
            status = bench.status  # "budget_stopped" when the governor stopped runs, "errors" when runs erred
        except DuplicateDrawError as exc:
            bench = exc.bench
            status = "refused"
            exc.context["benchmark"] = bench_id
            raise
    except asyncio.CancelledError:
        cancelled_by = app.cancelled_by.pop(bench_id, None)
        if app.stopping is None and cancelled_by is None:  # the submitting connection closed
            status = "cancelled"
            raise
        if app.stopping is None:  # `hrb cancel`: its caller is told who cancelled it (newcomer finding)
            status = "cancelled"
        else:
            status = "interrupted"  # the daemon is stopping: as when it dies, resumable
            stopped_by = app.stopping
    finally:
        ticker.cancel()
        app.drains.pop(bench_id, None)  # finishing: a cancel now waits for its end (App.cancel)
        app.cancelled_by.pop(bench_id, None)  # a cancel that came as it finished names nobody later
        proto.owned.discard(task)
        try:
            with anyio.CancelScope(shield=True):
                if journal is not None:  # every settlement written; what was in flight is folded now,
                    try:  # once, as cancelled in flight (newcomer finding: not "at a crash", not twice)
                        await anyio.to_thread.run_sync(journal.close)
                    except StoreError as exc:  # they stay open: the next resume folds them
                        logger.error("benchmark %s: ledger not closed: %s", bench_id, exc)
                try:
                    await sink.flush()
                    summary = bench.summary() if bench is not None else None
                    await anyio.to_thread.run_sync(store.benchmark_finish, bench_id, status, summary)
                except StoreError as exc:  # raised below, unless an error is already on its way
                    logger.error("benchmark %s: not finished in the store: %s", bench_id, exc)
                    not_finished = exc
                if status != "done" or sink.failed is not None:
                    logger.info("benchmark %s %s after %d saved rows", bench_id, status, sink.done)
        finally:
            # decided (a view test saw a finishing benchmark listed `interrupted`: its record said
            # `running` while no task ran it): it counts as running until its end is stored
            app.running.pop(bench_id, None)
    if sink.failed is not None:
        raise sink.error()
    if not_finished is not None:
        # decided: a benchmark whose end cannot be stored is never reported done (the store
        # would still say running); its caller gets the store's own error and advice, and
        # the saved rows stay (a resume finishes it once the store can be written)
        raise _not_finished(not_finished, bench_id, sink.done, built["total"])
    if stopped_by is not None:
        raise DaemonStopped(
            f"the daemon was stopped by {stopped_by} while benchmark {bench_id} ran: {sink.done} of "
            f"{built['total']} runs are done and saved. Resume it with: hrb bench --resume {bench_id}",
            benchmark=bench_id,
            done=sink.done,
            total=built["total"],
        )
    if cancelled_by is not None:  # newcomer finding: who cancelled it, how to go on
        raise BenchmarkCancelled(
            f"benchmark {bench_id} was cancelled by {cancelled_by}; {sink.done} of {built['total']} "
            f"runs are done and saved (`hrb rows {bench_id}`). Resume it with: hrb bench --resume {bench_id}",
            benchmark=bench_id,
            done=sink.done,
            total=built["total"],
        )
    assert bench is not None  # it ran to its end (a cancel or an error raised above)
    if sink.last_progress != sink.done:
        sink.progress()
    bench.retry = f"`hrb bench --resume {bench_id} --retry-errors`"  # the printout's advice, for hrb
    stop_note = None
    if status != "done":  # the note hrb ls, the report and the view show, by the same function
        stop_note = await anyio.to_thread.run_sync(_stop_note, store, bench_id)
    return p.BenchmarkResult(
        id=bench_id,
        summary=msgspec.convert(bench.summary(), list[p.ArmSummary]),
        n_rows=sink.done,
        n_resumed=len(done),
        status=status,
        reference_hash=reference.hash,
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
