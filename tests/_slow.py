"""The tests' time limits, scaled by how busy the machine is: ``make test`` passes on a loaded one.

Every time limit of the tests is written for an idle machine and multiplied, when it is set or
checked, by :func:`current`: the machine's load per core right now (the 1-minute load average
over the cores, at least 1: twenty runnable processes on two cores give 10), times the share
of CPU time its hypervisor steals, as measured when the session started. So 4 CPU burners
beside ``make test`` on a 2-core machine stretch the limits by about 4, with no flag.
``HRBENCH_TEST_SLOW=3`` sets the factor instead (3 times, whatever the load; ``1``: as written).

The factor scales pytest-timeout's per-test timeout (``timeout`` in pyproject's
``[tool.pytest.ini_options]`` and ``pytest.mark.timeout``, through the
``pytest_timeout_set_timer`` hook in :mod:`tests._procs`) and the waits inside the tests and
their helpers (a subprocess's ``timeout=``, a polling loop's deadline), which are written
``slow(60)``. A daemon's start does not use it: it waits while the daemon runs and gets CPU time
(:func:`hrbench_client.client.starting.wait_ready`). It never scales a duration the test is about
(an idle timeout, a model client's ``timeout_s``, a sleep that lets something happen): those
stay as written.
"""

from __future__ import annotations

import math
import os
import time

from hrbench_client.client.starting import load_factor

VARIABLE = "HRBENCH_TEST_SLOW"

MAX_AUTO = 20.0
"""The most the machine's load alone stretches a limit (a 120 s test timeout becomes 40 minutes)."""


def factor(raw: str | None = None) -> float | None:
    """The factor ``HRBENCH_TEST_SLOW`` sets; ``None`` when unset or empty (the load decides).

    Raises:
        ValueError: when it is not a finite number above 0, naming the variable.

    Example:
        >>> factor("3"), factor(""), factor("1.5")
        (3.0, None, 1.5)
    """
    raw = os.environ.get(VARIABLE, "") if raw is None else raw
    if not raw.strip():
        return None
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{VARIABLE}={raw!r}: the time-limit factor must be a number above 0, e.g. 3")
    return value


def _cpu_ticks() -> tuple[int, int] | None:
    """``(all, stolen)`` CPU ticks since boot from ``/proc/stat``; ``None`` without it."""
    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    return sum(fields[:8]), (fields[7] if len(fields) > 7 else 0)


def steal_factor(interval_s: float = 0.2) -> float:
    """How much slower the CPU runs for what its hypervisor steals: ``1 / (1 - stolen share)`` over ``interval_s``.

    Example:
        >>> 1.0 <= steal_factor(0.01) <= 10.0
        True
    """
    before = _cpu_ticks()
    time.sleep(interval_s)
    after = _cpu_ticks()
    if before is None or after is None or after[0] <= before[0]:
        return 1.0
    stolen = (after[1] - before[1]) / (after[0] - before[0])
    return 1.0 / max(0.1, 1.0 - stolen)


try:
    FACTOR = factor()
except ValueError:  # reported by pytest_configure (tests/conftest.py) as a usage error
    FACTOR = None

STEAL = steal_factor()
"""The CPU stolen by the hypervisor at session start, as a factor (1 on bare metal)."""


def current() -> float:
    """The factor every time limit is multiplied by now: ``HRBENCH_TEST_SLOW``, else the load per core times the steal.

    Example:
        >>> current() >= 1.0 or FACTOR is not None
        True
    """
    if FACTOR is not None:
        return FACTOR
    return min(MAX_AUTO, load_factor() * STEAL)


def slow(seconds: float) -> float:
    """``seconds`` times :func:`current`: for a wait's upper bound, never for a measured duration.

    Example:
        >>> slow(60) == 60 * current() or FACTOR is None  # (the load may change between the two)
        True
    """
    return seconds * current()
