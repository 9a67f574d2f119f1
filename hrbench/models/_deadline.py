"""A total deadline on each attempt of a model request: one timer per event loop, not one per attempt.

An attempt may take at most ``timeout_s``, connect to last byte: the HTTP library's own timeouts
bound each read and write, not their sum, so a server that drips its reply a byte at a time would
hold an attempt forever. ``with deadline(timeout_s):`` raises ``TimeoutError`` from the block
when it outlives ``timeout_s``, the rule of ``anyio.fail_after`` and ``asyncio.timeout``.

On asyncio the attempts with the same ``timeout_s`` are kept in one insertion-ordered set per
event loop: their deadlines then come in the order they started, so one timer, due at the
oldest attempt's deadline, watches them all. When it fires it cancels the attempts whose time is
up (the task's ``cancel()``, taken back with ``uncancel()`` at the block's end, as
``asyncio.timeout`` does) and is set again for the oldest left. An attempt pays for entering
and leaving a set, not for a cancel scope and a timer of its own (at 100 requests in flight those
were a tenth of the client's CPU). Elsewhere (anyio on trio) the block is an ``anyio.CancelScope``
with a deadline.

Example:
    >>> import anyio
    >>> async def slow():
    ...     with deadline(0.01):
    ...         await anyio.sleep(1)
    >>> try:
    ...     anyio.run(slow)
    ... except TimeoutError:
    ...     print("no reply within 0.01 s")
    no reply within 0.01 s
"""

from __future__ import annotations

import asyncio
from types import TracebackType
from typing import Any

import anyio

from hrbench._util.per_loop import PerLoop

__all__ = ["deadline"]


class _Watch:
    """The attempts of one event loop with one ``timeout_s``, oldest first, and their one timer."""

    __slots__ = ("loop", "pending", "timeout_s", "timer")

    def __init__(self, loop: asyncio.AbstractEventLoop, timeout_s: float) -> None:
        self.loop = loop
        self.timeout_s = timeout_s
        self.pending: dict[_Attempt, None] = {}
        self.timer: asyncio.TimerHandle | None = None

    def fire(self) -> None:
        """Cancel every attempt whose deadline has passed; set the timer for the oldest left."""
        self.timer = None
        now = self.loop.time()
        pending = self.pending
        while pending:
            oldest = next(iter(pending))
            if oldest.deadline > now:
                self.timer = self.loop.call_at(oldest.deadline, self.fire)
                return
            del pending[oldest]
            oldest.fired = True
            oldest.task.cancel()


_WATCHES: PerLoop[dict[float, _Watch]] = PerLoop()
"""Per event loop: ``{timeout_s: _Watch}`` (weak on the loop, so a finished loop's watches go)."""


class _Attempt:
    """One block under a deadline on asyncio (see :func:`deadline`)."""

    __slots__ = ("cancelling", "deadline", "fired", "task", "timeout_s", "watch")

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self.fired = False

    def __enter__(self) -> None:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task(loop)
        if task is None:
            raise RuntimeError("deadline() is used inside a task")
        watches = _WATCHES.get(loop, dict)
        watch = watches.get(self.timeout_s)
        if watch is None:
            watch = watches[self.timeout_s] = _Watch(loop, self.timeout_s)
        self.watch = watch
        self.task = task
        self.cancelling = task.cancelling()
        self.deadline = loop.time() + self.timeout_s
        watch.pending[self] = None
        if watch.timer is None:
            watch.timer = loop.call_at(self.deadline, watch.fire)

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if not self.fired:
            del self.watch.pending[self]
            return
        # its deadline cancelled the task: taken back, and a timeout unless someone else cancels too
        if self.task.uncancel() <= self.cancelling and exc_type is asyncio.CancelledError:
            raise TimeoutError from exc


class _Scoped:
    """One block under a deadline outside asyncio: an anyio cancel scope with its own deadline."""

    __slots__ = ("scope", "timeout_s")

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s

    def __enter__(self) -> None:
        self.scope = anyio.CancelScope(deadline=anyio.current_time() + self.timeout_s)
        self.scope.__enter__()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.scope.__exit__(exc_type, exc, tb):  # its own deadline cancelled the block
            raise TimeoutError


def deadline(timeout_s: float) -> Any:
    """A context manager: its block raises ``TimeoutError`` once it has run ``timeout_s`` seconds.

    Args:
        timeout_s: the most the block may take (seconds, > 0).

    Returns:
        The context manager; enter it in the task that runs the block.

    Raises:
        TimeoutError: from the block, when its time is up (a cancellation from elsewhere stays a
            cancellation).
    """
    if not timeout_s > 0:
        raise ValueError(f"timeout_s must be > 0, got {timeout_s!r}")
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _Scoped(timeout_s)
    return _Attempt(timeout_s)
