"""The tests' time limits, scaled for a busy machine: ``HRBENCH_TEST_SLOW=3 make test`` triples them.

The factor scales every time limit: pytest-timeout's per-test timeout (``timeout`` in
pyproject's ``[tool.pytest.ini_options]`` and ``pytest.mark.timeout``, through the
``pytest_timeout_set_timer`` hook in :mod:`tests._procs`) and the waits inside the tests and
their helpers (a daemon's start, a subprocess's ``timeout=``, a polling loop's deadline), which
are written ``slow(60)``. It never scales a duration the test is about (an idle timeout, a
model client's ``timeout_s``, a sleep that lets something happen): those stay as written.
"""

from __future__ import annotations

import math
import os

VARIABLE = "HRBENCH_TEST_SLOW"


def factor(raw: str | None = None) -> float:
    """The factor ``HRBENCH_TEST_SLOW`` sets: 1 when unset or empty.

    Raises:
        ValueError: when it is not a finite number above 0, naming the variable.

    Example:
        >>> factor("3"), factor(""), factor("1.5")
        (3.0, 1.0, 1.5)
    """
    raw = os.environ.get(VARIABLE, "") if raw is None else raw
    if not raw.strip():
        return 1.0
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{VARIABLE}={raw!r}: the time-limit factor must be a number above 0, e.g. 3")
    return value


try:
    FACTOR = factor()
except ValueError:  # reported by pytest_configure (tests/conftest.py) as a usage error
    FACTOR = 1.0


def slow(seconds: float) -> float:
    """``seconds`` times ``HRBENCH_TEST_SLOW``: for a wait's upper bound, never for a measured duration.

    Example:
        >>> slow(60) == 60 * FACTOR
        True
    """
    return seconds * FACTOR
