"""Values kept per event loop: weakly keyed by the loop, the one asked for last remembered.

The HTTP client asks for its loop's endpoint, pace queue and deadline watches on every request,
nearly always for the loop it asked for last; a lookup in a ``WeakKeyDictionary`` makes a weak
reference each time, so the last loop and its value are kept beside the mapping. A finished
loop's values go with it (the mapping is weak on the loop).

Example:
    >>> import asyncio
    >>> queues: PerLoop[list[int]] = PerLoop()
    >>> async def use() -> bool:
    ...     loop = running_loop()
    ...     return queues.get(loop, list) is queues.get(loop, list)
    >>> asyncio.run(use()), queues.get(running_loop(), list) == []  # outside asyncio: NO_LOOP's
    (True, True)
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import weakref
from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

__all__ = ["NO_LOOP", "PerLoop", "running_loop"]

T = TypeVar("T")


class NoLoop:
    """The key used outside asyncio (anyio on trio, or no loop): one value for all such callers."""


NO_LOOP = NoLoop()


def running_loop() -> Any:
    """The running asyncio loop, or :data:`NO_LOOP` outside one."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return NO_LOOP


class PerLoop(Generic[T]):
    """One value per event loop, made on first use by ``make()``; the loop asked for last is found without a lookup."""

    __slots__ = ("_last", "_values")

    def __init__(self) -> None:
        self._values: weakref.WeakKeyDictionary[Any, T] = weakref.WeakKeyDictionary()
        self._last: tuple[weakref.ref[Any], T] | None = None

    def get(self, loop: Any, make: Callable[[], T], lock: threading.Lock | None = None) -> T:
        """``loop``'s value, made by ``make()`` the first time (under ``lock`` when given: loops in several threads)."""
        last = self._last
        if last is not None and last[0]() is loop:
            return last[1]
        with lock if lock is not None else contextlib.nullcontext():
            value = self._values.get(loop)
            if value is None:
                value = self._values[loop] = make()
        self._last = (weakref.ref(loop), value)
        return value

    def last(self, loop: Any) -> T | None:
        """``loop``'s value when ``loop`` is the one asked for last, else ``None`` (then call :meth:`get`).

        For a caller whose ``make`` would be a closure over the loop: no closure is made when
        the value is found.
        """
        last = self._last
        return last[1] if last is not None and last[0]() is loop else None

    def peek(self, loop: Any) -> T | None:
        """``loop``'s value, or None when it has none (nothing is made)."""
        return self._values.get(loop)

    def pop(self, loop: Any) -> None:
        """Forget ``loop``'s value (the next :meth:`get` makes another)."""
        self._values.pop(loop, None)
        self._last = None

    def values(self) -> Iterable[T]:
        """Every loop's value."""
        return self._values.values()
