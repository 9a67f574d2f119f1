"""How many examples a property test draws: a quarter in ``make test``, all of them in ``make test-slow``.

A hypothesis test writes its full number of examples as ``@settings(max_examples=examples(300))``
(a test with no ``max_examples`` gets hypothesis's 100, through the profile that
``tests/conftest.py`` loads). ``make test`` draws a quarter of them, at least 20 (never more than
written): every property still runs on fresh random examples in each run. ``make test-slow``
sets ``HRBENCH_TEST_EXAMPLES=full`` and selects the hypothesis tests too (``-m "slow or
hypothesis"``), so CI runs each with every example it names.
"""

from __future__ import annotations

import os

VARIABLE = "HRBENCH_TEST_EXAMPLES"

FULL_DEFAULT = 100
"""Hypothesis's own ``max_examples``: what a test without one draws in full."""


def full(raw: str | None = None) -> bool:
    """Whether ``HRBENCH_TEST_EXAMPLES`` asks for every example: ``full``; unset or empty is the quick run.

    Raises:
        ValueError: any other value, naming the variable and the value.

    Example:
        >>> full("full"), full(""), full(" FULL ")
        (True, False, True)
    """
    raw = os.environ.get(VARIABLE, "") if raw is None else raw
    value = raw.strip().lower()
    if value not in ("", "full"):
        raise ValueError(f"{VARIABLE}={raw!r}: set it to full (every example) or leave it unset (a quarter)")
    return value == "full"


try:
    FULL = full()
except ValueError:  # reported by pytest_configure (tests/conftest.py) as a usage error
    FULL = False


def quick(n: int) -> int:
    """The examples of a quick run for a test written with ``n``: a quarter, at least 20, at most ``n``.

    Example:
        >>> quick(300), quick(100), quick(60), quick(10)
        (75, 25, 20, 10)
    """
    return max(min(n, 20), n // 4)


def examples(n: int) -> int:
    """``n`` under ``HRBENCH_TEST_EXAMPLES=full`` (``make test-slow``), else :func:`quick` of it.

    Example:
        >>> examples(300) == (300 if FULL else 75)
        True
    """
    return n if FULL else quick(n)
