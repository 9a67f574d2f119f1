"""Waiting for a process to be ready, however busy the machine: no wall-clock deadline to guess.

A daemon that starts in 1 s on an idle machine can take a minute on one whose cores are shared
by twenty busy processes (or a virtual machine whose host steals its CPU): a fixed deadline
either fails there or waits for nothing on a dead process. :func:`wait_ready` waits as long as
the process is alive and getting CPU time, and fails only when

- it exits (:class:`ProcessExited`),
- it is alive but used no CPU time for :data:`STALL_S` seconds (blocked: a deadlock, a lock
  held elsewhere), or used more than :data:`CPU_BUDGET_S` CPU seconds without becoming ready
  (a busy loop), or :data:`CAP_S` seconds passed (:class:`NotReady`).

Where the process's CPU time cannot be read (no ``/proc``: macOS), the wait is ``base_s``
seconds times the machine's load per core (:func:`load_factor`), up to :data:`CAP_S`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = [
    "CAP_S",
    "CPU_BUDGET_S",
    "STALL_S",
    "NotReady",
    "ProcessExited",
    "cpu_seconds",
    "load_factor",
    "wait_ready",
]

T = TypeVar("T")

STALL_S = 60.0
"""Seconds a live process may go without any CPU time before the wait gives up (it is blocked)."""

CPU_BUDGET_S = 120.0
"""CPU seconds a process may use without becoming ready (a daemon's start takes about one)."""

CAP_S = 600.0
"""The longest any wait lasts, in seconds."""


class ProcessExited(Exception):
    """Raised when the process exited before it was ready; ``returncode`` is its exit code."""

    def __init__(self, returncode: int) -> None:
        super().__init__(f"the process exited with code {returncode}")
        self.returncode = returncode


class NotReady(Exception):
    """Raised when a live process did not become ready: blocked, busy without end, or past the cap.

    Its message completes "not ready ...": ``within 600 s``, ``after using 120 CPU seconds``.
    """


def cpu_seconds(pid: int) -> float | None:
    """The CPU time (user and system, all threads) process ``pid`` has used, in seconds; ``None`` when unknown.

    Read from ``/proc/<pid>/stat`` (Linux); ``None`` without it or once the process is gone.

    Example:
        >>> t = cpu_seconds(os.getpid())
        >>> t is None or t > 0
        True
    """
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def load_factor() -> float:
    """How many times slower than idle this machine runs a process now: the 1-minute load per core, at least 1.

    Example:
        >>> load_factor() >= 1.0
        True
    """
    try:
        load = os.getloadavg()[0]
    except (OSError, AttributeError):
        return 1.0
    return max(1.0, load / (os.cpu_count() or 1))


def wait_ready(
    proc: Any,
    ready: Callable[[], T | None],
    *,
    timeout_s: float | None = None,
    base_s: float = 20.0,
    poll_s: float = 0.02,
    clock: Callable[[], float] = time.monotonic,
    cpu: Callable[[int], float | None] = cpu_seconds,
) -> T:
    """Wait until ``ready()`` returns something other than ``None`` while ``proc`` runs; returns it.

    Args:
        proc: the process (a :class:`subprocess.Popen`: ``pid`` and ``poll()``).
        ready: the readiness check (a status request that answers, a line in a log), called
            every ``poll_s`` seconds; ``None`` while not ready.
        timeout_s: a hard deadline in seconds instead of the rules above (``None``: none).
        base_s: the wait on an idle machine where CPU time cannot be read (scaled by load).
        poll_s: seconds between checks.
        clock: the monotonic clock (seconds).
        cpu: the CPU-time reader, :func:`cpu_seconds` (tests give their own).

    Raises:
        ProcessExited: ``proc`` exited before it was ready (checked after one last ``ready()``).
        NotReady: it was blocked for :data:`STALL_S` seconds, used :data:`CPU_BUDGET_S` CPU
            seconds, or :data:`CAP_S` (or ``timeout_s``) seconds passed; the message says which.

    Example:
        >>> class Done:
        ...     pid = os.getpid()
        ...     def poll(self): return 0
        >>> wait_ready(Done(), lambda: "up")
        'up'
    """
    start = clock()
    last_cpu = cpu(proc.pid)
    moved = start
    while True:
        got = ready()
        if got is not None:
            return got
        rc = proc.poll()
        if rc is not None:
            got = ready()  # it may have answered, then exited (another daemon took over)
            if got is not None:
                return got
            raise ProcessExited(rc)
        now = clock()
        waited = now - start
        if timeout_s is not None:
            if waited >= timeout_s:
                raise NotReady(f"within {timeout_s:g} s")
        else:
            used = cpu(proc.pid)
            if used is None or last_cpu is None:
                limit = min(CAP_S, base_s * load_factor())
                if waited >= limit:
                    raise NotReady(f"within {limit:.0f} s ({base_s:g} s times the machine's load per core)")
            else:
                if used != last_cpu:
                    last_cpu, moved = used, now
                elif now - moved >= STALL_S:
                    raise NotReady(f"in {STALL_S:.0f} s in which it used no CPU time (blocked)")
                if used >= CPU_BUDGET_S:
                    raise NotReady(f"after using {used:.0f} CPU seconds")
            if waited >= CAP_S:
                raise NotReady(f"within {CAP_S:.0f} s")
        time.sleep(poll_s)
