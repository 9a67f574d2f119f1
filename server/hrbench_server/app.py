"""The daemon's shared warm state: the store, scorers, running benchmarks, connections.

One :class:`App` per daemon process. Every connection gets its own pygls server (see
:mod:`hrbench_server.rpc`) whose handlers close over the same App, so references, the
response cache, recordings and governor ledgers are shared by every client.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import logging
import os
import time
import warnings
from pathlib import Path
from typing import Any

from hrbench import errors
from hrbench.runtime import Drain
from hrbench.store import Store

__all__ = ["App", "warning_collector"]

logger = logging.getLogger("hrbench_server")

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
    benchmark's result carries its own (and ``hrb`` prints them on stderr; newcomer finding).
    """
    for cat in vars(errors).values():
        if isinstance(cat, type) and issubclass(cat, Warning):
            warnings.simplefilter("always", cat)
    warnings.showwarning = _showwarning


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
        self.running: dict[str, asyncio.Task[Any]] = {}
        self.drains: dict[str, Drain] = {}
        """Each running benchmark's drain: a clean cancel lets its sent requests finish first."""
        self.cancelled_by: dict[str, str] = {}
        """Benchmarks being cancelled by ``benchmark/cancel``, and by what (for their caller)."""
        self.stop_event = asyncio.Event()
        self.stopping: str | None = None
        """Why the daemon is stopping (:meth:`stop`); ``None`` while it serves."""
        self._store: Store | None = None
        self.scorers: dict[str, Any] = {}
        self.background: set[asyncio.Task[Any]] = set()  # daemon-wide tasks (the idle watch)
        self.idle_exit_s: float | None = None
        self.row_writer = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="hrbench-rows")
        """The thread that writes benchmarks' rows: one, so a benchmark's batches commit in the
        order they were taken (:mod:`hrbench_server.bench`)."""

    @property
    def store(self) -> Store:
        """The store, opened on first use."""
        if self._store is None:
            self.home.mkdir(parents=True, exist_ok=True, mode=0o700)
            self._store = Store(self.db_path)
            os.chmod(self.db_path, 0o600)
        return self._store

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

    async def aclose(self) -> None:
        """Cancel running benchmarks (they stay resumable) and close the store."""
        for t in self.background:
            t.cancel()
        tasks = list(self.running.values())
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=10)
        # the batches handed over are written before the store closes (in a thread: a write may be slow)
        await asyncio.get_running_loop().run_in_executor(None, self.row_writer.shutdown)
        if self._store is not None:
            self._store.close()
            self._store = None
