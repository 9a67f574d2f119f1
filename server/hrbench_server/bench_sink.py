"""Where the ``benchmark`` method's rows go: written to the store in batches, then streamed.

:class:`Sink` takes each scored row from the runner (``on_row``), writes the rows to SQLite in
batches in the daemon's writer thread, and only once a batch committed sends it to the caller
(``hrbench/rows`` and ``hrbench/progress`` notifications): a row the caller saw is a row saved.
The rules (batch sizes, when the runner waits, a failing store) are in :mod:`hrbench_server.bench`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import time
from collections.abc import Awaitable
from typing import Any

import msgspec

from hrbench.errors import StoreError
from hrbench.records import Row, Step
from hrbench_client import protocol as p
from hrbench_server.app import App
from hrbench_server.framing import wire_id
from hrbench_server.rpc import HrbenchProtocol, frame_notification

__all__ = ["FLUSH_INTERVAL_S", "MAX_PENDING", "PROGRESS_INTERVAL_S", "STORE_BATCH", "Sink"]

logger = logging.getLogger("hrbench_server")

STORE_BATCH = 1024
"""Rows waiting that make the runner hand a batch to the writer thread (a batch takes every row
waiting: it may hold more). Each batch costs the event loop a task, a thread hand-off and a
socket write: 1,024 rows streamed 3% faster than 256 (``bench/daemon.py``)."""

FLUSH_INTERVAL_S = 0.1
"""The longest a scored row waits before it is written (seconds)."""

PROGRESS_INTERVAL_S = 1.0
"""The longest a caller waits for a progress notification while rows are scored (seconds): progress
is sent about every 1% of rows, and at least this often when rows were scored since the last."""

MAX_PENDING = 4 * STORE_BATCH
"""Rows a benchmark may hold before the runner waits: waiting, being written, or written and not yet
sent (a runner that never suspends gives no written batch a turn to be sent: they piled up).

A write can take tens of milliseconds when the runner holds the GIL (the writer thread waits up
to the interpreter's switch interval, 5 ms, each time it needs it back from SQLite): rows are
kept encoded, ~1 KB each with their trace, so this bounds a benchmark's queue to a few MB."""

_encoder = msgspec.json.Encoder()
"""The writer thread's encoder (notifications; one batch at a time per sink)."""

_row_encoder = msgspec.json.Encoder()
"""The event loop's encoder: each row and its trace, as the runner hands them over, written into
the batch's buffers (:meth:`msgspec.json.Encoder.encode_into`): no bytes object is made per row
and freed by the writer thread (a row's three encodings made on the loop and freed in another
thread cost the loop ~1 us a row in allocations)."""


class Sink:
    """Receives rows from the runner, writes them to the store in batches, then streams them.

    A row is sent to the caller only after the transaction holding it committed: a row the
    client saw is a row saved (after a full disk, no row reaches the client unsaved). When the store fails (full, deleted, read-only), no later
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
        self.batches: list[p.BatchState] = []  # batch mode: its batches' states, sent with progress
        self.msg_id = wire_id(msg_id)  # notifications carry the request's id as it was sent
        self.total, self.done, self.stream, self.governor = total, done, stream, governor
        self.snapshots = snapshots
        """Whether the ledger is written with the rows (a Ray run; else it is kept per call)."""
        self.rerun: set[tuple[str, str, int]] = set()
        """``(arm, item, run)`` of stored rows this run makes again (budget stops, on resume)."""
        self.pending = bytearray(b"[")
        """The waiting rows as a JSON array opened, each row followed by a comma."""
        self.pending_ends: list[int] = []
        """Where each waiting row's JSON ends in :attr:`pending` (the offset of its comma)."""
        self.pending_seqs: list[int] = []
        self.pending_traces = bytearray(b"{")
        """Their traces as a JSON object opened, each ``"ledger_id":[steps],``."""
        self.pending_rerun = 0  # how many waiting rows replace a stored one (see rerun)
        self.lock = asyncio.Lock()
        self.progress_every = max(1, total // 100)
        self.last_progress = done
        self.progress_at = time.monotonic()  # when the last progress notification was sent
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
        self.usd_unknown = False  # a row whose model has no price: its USD (and so the spend) is NA

    def progress(self) -> None:
        self.last_progress = self.done
        self.progress_at = time.monotonic()
        self.proto.send_notification(
            "hrbench/progress",
            p.ProgressNotification(
                request_id=self.msg_id,
                benchmark=self.bench_id,
                done=self.done,
                total=self.total,
                usd=float(self.governor.usd),
                usd_known=not self.usd_unknown,
                max_usd=self.governor.max_usd,
                calls=int(self.governor.calls),
                max_calls=self.governor.max_calls,
                batches=self.batches,
            ),
        )

    def on_row(self, seq: int, row: Row, trace: list[Step]) -> Awaitable[None] | None:
        """Take a scored row; a full batch is written in the background while the runner goes on.

        Returns ``None`` (nothing to wait for: no coroutine is made per row), or what the
        runner must await: the oldest batch not yet sent when :data:`MAX_PENDING` rows are unsent
        (a slow disk or a slow reader; memory stays bounded), or the store's error.
        """
        into, rows, traces = _row_encoder.encode_into, self.pending, self.pending_traces
        into(row, rows, -1)
        if row.usd is None:
            self.usd_unknown = True
        self.pending_ends.append(len(rows))
        rows += b","
        self.pending_seqs.append(seq)
        into(row.ledger_id, traces, -1)
        traces += b":"
        into(trace, traces, -1)
        traces += b","
        if self.rerun and (row.arm, row.item, row.run) in self.rerun:
            self.pending_rerun += 1
        if self.failed is not None:
            return self.flush()  # raises the store's error
        n = len(self.pending_seqs)
        if n >= STORE_BATCH:
            if self.landing and n + sum(self.landing.values()) >= MAX_PENDING:
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
        batch: bytearray,
        ends: list[int],
        seqs: list[int],
        traces: bytearray,
        fresh: int,
        use: tuple[int, float, int] | None,
        steps: list[int],
    ) -> list[bytes]:
        """Write a batch in one transaction (a worker thread); its ``hrbench/rows`` notifications, framed.

        ``batch`` holds the rows' JSON (encoded once, for the store and the wire) as an array
        opened, each row followed by a comma, ``ends`` where each row ends: the array, closed
        in place, is what the store keeps; a notification carries the rows of a ``steps``
        entry (how many rows each notification carries, cut where a progress notification
        falls). ``traces`` is a JSON object opened in the same way. The event loop only queues
        the frames once the transaction committed.

        A batch after one that failed writes nothing (it may have been handed over before the
        failure was seen): no row is written or sent after the store failed.
        """
        if self.failed is not None:
            raise self.failed
        _close(batch, b"]")
        _close(traces, b"}")
        try:
            self.app.store.row_batch_put(self.bench_id, seqs, batch, traces, ledger=use, fresh=fresh)
        except StoreError as exc:
            self.failed = exc
            raise
        self.app.rows_written(len(seqs))
        if not self.stream:
            return []
        if len(steps) == 1:
            chunks: list[Any] = [batch]
        else:
            view, chunks, start, first = memoryview(batch), [], 0, 1
            for n in steps:
                start += n
                end = ends[start - 1]
                chunks.append(b"[%s]" % view[first:end])
                first = end + 1
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
        the governor keeps its ledger per call (:mod:`hrbench.runner._ledger`).
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
            self.unsaved += len(self.pending_seqs)
            self._take()
        else:
            use = self._use()
            if self.pending_seqs or use != self.ledger_written:  # (no rows: calls went out,
                batch, ends, seqs, traces, rerun = self._take()  # the ledger follows every tick)
                n, steps = len(seqs), self._steps(len(seqs))
                job = self._job = self.app.row_writer.submit(
                    self._write, batch, ends, seqs, traces, n - rerun, use, steps
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

    def _take(self) -> tuple[bytearray, list[int], list[int], bytearray, int]:
        """The waiting rows, where each ends, their order numbers, their traces and how many replace stored rows.

        None wait after.
        """
        taken = self.pending, self.pending_ends, self.pending_seqs, self.pending_traces, self.pending_rerun
        self.pending, self.pending_ends, self.pending_seqs = bytearray(b"["), [], []
        self.pending_traces, self.pending_rerun = bytearray(b"{"), 0
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
        """Queue a committed batch's ``hrbench/rows`` notifications, each followed by progress when due.

        Progress is due every 1% of rows, and after the batch when :data:`PROGRESS_INTERVAL_S`
        passed since the last progress and rows came since.
        """
        for i, step in enumerate(steps):
            if frames:
                self.proto.send_framed(frames[i : i + 1])
            self.done += step
            if self.done - self.last_progress >= self.progress_every:
                self.progress()
        if self.done > self.last_progress and time.monotonic() - self.progress_at >= PROGRESS_INTERVAL_S:
            self.progress()  # a large benchmark's 1% takes long: a caller still hears of its rows

    async def ticker(self) -> None:
        """Flush waiting rows, and the governor's use, every :data:`FLUSH_INTERVAL_S` seconds."""
        while True:
            await asyncio.sleep(FLUSH_INTERVAL_S)
            try:
                await self.flush()
            except StoreError:
                return  # recorded in self.failed: the runner's next row (or the end) raises it


def _close(opened: bytearray, closing: bytes) -> None:
    """Close a JSON array or object written as opened, each member followed by a comma, in place."""
    if len(opened) > 1:
        opened[-1:] = closing  # the last member's comma
    else:
        opened += closing


def _seen(task: asyncio.Future[Any]) -> None:
    """Mark a shielded flush's error as retrieved (its caller may be gone; ``failed`` keeps it)."""
    if not task.cancelled():
        task.exception()
