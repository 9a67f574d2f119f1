"""The daemon's shared warm state: the store, scorers, running benchmarks, connections.

One :class:`App` per daemon process. Every connection gets its own pygls server (see
:mod:`hrbench_server.rpc`) whose handlers close over the same App, so references, the
response cache, recordings and governor ledgers are shared by every client.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import gc
import logging
import os
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import anyio

from hrbench import errors
from hrbench.runner.runtime import Drain, cancel_grace_s, heavy_scorer_threads
from hrbench.store import Store

__all__ = ["App", "warning_collector"]

logger = logging.getLogger("hrbench_server")

CHECKPOINT_ROWS = 4096
"""Rows committed after which the write-ahead log is copied into the database file, in a thread
of its own (:meth:`App.rows_written`): ~4 MB of log for rows as small as a mock's. Every batch
(1,024 rows) cost the daemon's threads more CPU than it saved. Left to SQLite, the whole copy came
every 10,000 pages (~40 MB) inside a commit of the row writer, 150-330 ms during which a streamed
benchmark's runner waited for its rows to be written (``bench/daemon.py``); now SQLite's copy,
when it still comes, holds only what was written since the last checkpoint began."""

warning_collector: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar(
    "hrbench_warning_collector", default=None
)
"""The list a running handler gathers library warnings into (they go to its result)."""


def _showwarning(
    message: Any, category: type[Warning], filename: str, lineno: int, file: Any = None, line: Any = None
) -> None:
    sink = warning_collector.get()
    text = f"{category.__name__}: {message}"
    if sink is not None:
        sink.append(text)
    else:
        logger.warning("%s", text)


def route_warnings() -> None:
    """Send library warnings to the running handler's result (else to the log), never to stdout.

    Every warning class of :mod:`hrbench.errors` is shown always, not once per place: each
    benchmark's result carries its own (and ``hrb`` prints them on stderr).
    """
    for cat in vars(errors).values():
        if isinstance(cat, type) and issubclass(cat, Warning):
            warnings.simplefilter("always", cat)
    warnings.showwarning = _showwarning


@functools.cache
def _malloc_trim() -> Any:
    """The C library's ``malloc_trim`` (glibc's), or ``None`` where it has none (musl, macOS)."""
    import ctypes  # here: the daemon's start does not need it

    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None


class App:
    """The daemon's state.

    Args:
        home: the state directory (the database lives there).
        transport: ``"stdio"``, ``"unix"`` or ``"unix+tcp"`` (reported by ``status``).
        db_path: the database file; ``home / "hrbench.sqlite3"`` by default.
    """

    def __init__(self, home: Path, transport: str, db_path: Path | None = None) -> None:
        self.home = home
        self.transport = transport
        self.db_path = db_path or home / "hrbench.sqlite3"
        self.started = time.monotonic()
        self.connections = 0
        self.running: dict[str, asyncio.Task[Any]] = {}  # until each one's end is stored
        self.drains: dict[str, Drain] = {}
        self.batching: dict[str, Any] = {}
        """Each running benchmark in batch mode (:class:`hrbench.runner.batch.Batching`): ``batch/cancel`` reaches it."""
        """Each running benchmark's drain: a clean cancel lets its sent requests finish first."""
        self.cancelled_by: dict[str, str] = {}
        """Benchmarks being cancelled by ``benchmark/cancel``, and by what (for their caller)."""
        self.stop_event = asyncio.Event()
        self.stopping: str | None = None
        """Why the daemon is stopping (:meth:`stop`); ``None`` while it serves."""
        self._store: Store | None = None
        self.scorers: dict[str, Any] = {}
        self.heavy_scorers = anyio.CapacityLimiter(heavy_scorer_threads())
        """The worker threads ``score`` requests' heavy scorers (``offload``: a pattern) share."""
        self.background: set[asyncio.Task[Any]] = set()  # daemon-wide tasks (the idle watch)
        self.cancels: set[asyncio.Future[Any]] = set()  # clean cancels under way (cancel_soon)
        self.settling: asyncio.Future[Any] | None = None  # malloc_trim under way (settle)
        self._frozen_modules = 0  # len(sys.modules) at the last freeze()
        self.idle_exit_s: float | None = None
        self.row_writer = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="hrbench-rows")
        """The thread that writes benchmarks' rows: one, so a benchmark's batches commit in the
        order they were taken (:mod:`hrbench_server.bench`)."""
        self.checkpointer = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="hrbench-checkpoint")
        """The thread that copies the write-ahead log into the database file (:meth:`rows_written`)."""
        self.unchecked_rows = 0  # rows committed since the last checkpoint began (the row writer's)
        self._checkpoint: concurrent.futures.Future[None] | None = None

    @property
    def store(self) -> Store:
        """The store, opened on first use."""
        if self._store is None:
            self.home.mkdir(parents=True, exist_ok=True, mode=0o700)
            self._store = Store(self.db_path)
            os.chmod(self.db_path, 0o600)
        return self._store

    def rows_written(self, n: int) -> None:
        """Count ``n`` rows committed (the row writer's thread); past :data:`CHECKPOINT_ROWS`, checkpoint.

        The log is copied by :meth:`hrbench.store.Store.wal_checkpoint` in the checkpointer
        thread while rows go on being written; one checkpoint at a time.
        """
        self.unchecked_rows += n
        if self.unchecked_rows >= CHECKPOINT_ROWS and (self._checkpoint is None or self._checkpoint.done()):
            self.unchecked_rows = 0
            self._checkpoint = self.checkpointer.submit(self._wal_checkpoint)

    def _wal_checkpoint(self) -> None:
        try:
            self.store.wal_checkpoint()
        except errors.StoreError as exc:  # the writer's next commit fails and says what to do
            logger.warning("write-ahead log not copied into %s: %s", self.db_path, exc)

    def freeze(self) -> None:
        """Move every object now alive to the permanent generation (:func:`gc.freeze`), garbage first.

        At start, and again by :meth:`settle` once requests have imported more (the runner,
        statistics, numpy: ~100k objects between them, imported on first use): a full collection
        then scans only what serving made, so it runs often enough that each connection's cyclic
        garbage (server, protocol, handlers) is freed soon, and takes milliseconds.
        """
        gc.collect()
        gc.freeze()
        self._frozen_modules = len(sys.modules)

    def settle(self) -> None:
        """When the daemon goes idle (no connection, no benchmark): tidy its memory for the next one.

        What requests imported since the last :meth:`freeze` is frozen too: on the event loop
        (a collection holds the interpreter whichever thread runs it; here no request waits, and
        no connection's objects are alive to be frozen with it). Then glibc's ``malloc_trim``
        hands the C heap's free pages back to the system (in a worker thread: ~1 ms; about 2 MB
        after a benchmark and a report); where the C library has none, nothing is trimmed.
        """
        if self.connections or self.running or self.stopping is not None or self.settling is not None:
            return
        if len(sys.modules) != self._frozen_modules:
            self.freeze()
        trim = _malloc_trim()
        if trim is not None:
            self.settling = asyncio.get_running_loop().run_in_executor(None, trim, 0)
            self.settling.add_done_callback(self._settled)

    def _settled(self, fut: asyncio.Future[Any]) -> None:
        self.settling = None
        if not fut.cancelled() and (exc := fut.exception()) is not None:  # pragma: no cover - libc's
            logger.warning("malloc_trim failed: %r", exc)

    def stop(self, reason: str = "the daemon is stopping") -> None:
        """Ask the daemon to stop (after the current replies are written).

        Args:
            reason: how it was stopped (``hrb daemon stop``, a signal, idle), for the callers
                of the benchmarks it cancels (:class:`~hrbench.errors.DaemonStopped`); the
                first reason given is kept.
        """
        if self.stopping is None:
            self.stopping = reason
        self.stop_event.set()

    async def cancel(self, bench_id: str, grace_s: float | None = None, by: str | None = None) -> int:
        """Cancel a running benchmark cleanly: what was sent finishes first, within the grace.

        Rule (:class:`hrbench.runner.runtime.Drain`): nothing new is sent, the
        runs whose requests were sent go on for up to ``grace_s`` seconds, their replies
        settled at their real cost and their rows saved; then the benchmark's task is
        cancelled, and only what is still in flight is counted "cancelled in flight". Every
        way a benchmark is cancelled takes this path: ``hrb cancel`` (``benchmark/cancel``),
        Ctrl-C in ``hrb bench`` (its ``$/cancelRequest``), its connection closing, and the
        daemon stopping (``hrb daemon stop``, a signal, the idle timeout).

        Args:
            bench_id: a running benchmark's id (one not running is left alone).
            grace_s: seconds the requests already sent may take; ``None``: the daemon's
                :func:`~hrbench.runner.runtime.cancel_grace_s` (``HRBENCH_CANCEL_GRACE_S``, else 10 s).
            by: who cancelled it, for its caller (:class:`~hrbench.errors.BenchmarkCancelled`);
                ``None`` when its caller asked (Ctrl-C, a closed connection) or the daemon stops.

        Returns:
            The runs whose request was still unanswered after the grace.
        """
        task = self.running.get(bench_id)
        if task is None:
            return 0
        drain = self.drains.get(bench_id)
        if drain is None:  # it is finishing (its end being stored): nothing is left to cancel
            await asyncio.wait({task}, timeout=30)
            return 0
        drain.begin()
        await drain.wait(cancel_grace_s() if grace_s is None else grace_s)
        in_flight = drain.live
        if not task.done() and not task.cancelling():  # another cancel may have ended its grace first
            if by is not None:
                self.cancelled_by.setdefault(bench_id, by)
            task.cancel()
        await asyncio.wait({task}, timeout=30)
        return in_flight

    def cancel_soon(self, task: asyncio.Future[Any]) -> bool:
        """Cancel the benchmark ``task`` runs by :meth:`cancel`, in the background.

        Used where a request's task would be cancelled at once (``$/cancelRequest``, its
        connection closing: :mod:`hrbench_server.rpc`).

        Returns:
            ``False`` when ``task`` runs no benchmark (the caller cancels it as usual).
        """
        bench_id = next((b for b, t in self.running.items() if t is task), None)
        if bench_id is None:
            return False
        job = asyncio.ensure_future(self.cancel(bench_id))
        self.cancels.add(job)
        job.add_done_callback(self.cancels.discard)
        return True

    async def aclose(self) -> None:
        """Cancel running benchmarks by :meth:`cancel` (they stay resumable) and close the store."""
        for t in self.background:
            t.cancel()
        if self.running:
            await asyncio.gather(*(self.cancel(bench_id) for bench_id in list(self.running)))
        if self.cancels:
            await asyncio.wait(set(self.cancels), timeout=30)
        # the batches handed over are written before the store closes (in a thread: a write may be slow)
        await asyncio.get_running_loop().run_in_executor(None, self.row_writer.shutdown)
        await asyncio.get_running_loop().run_in_executor(None, self.checkpointer.shutdown)
        if self._store is not None:
            self._store.close()
            self._store = None
