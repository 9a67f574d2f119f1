"""How every side of a bench figure is warmed and timed: one definition, shared by hrbench and the peers.

Imports nothing of hrbench, so ``bench/_peers.py`` uses it in the peers' own virtual environment
(``.venv-peers``) exactly as the scripts in ``.venv`` do. The rule, for every side of a ratio:
``warmups`` untimed runs first (imports, first-use caches, a peer's start-up), then ``repeats``
timed runs, a full garbage collection before each outside the timed section; the figure is the
least wall time and the least CPU time (every thread of the process) of the timed runs.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

__all__ = ["Timing", "statistic", "timed"]

T = TypeVar("T")


@dataclass(frozen=True)
class Timing:
    """The best of one side's timed runs.

    Attributes:
        rows: rows each run made.
        wall_s: the least wall seconds of the timed runs.
        cpu_s: the least CPU seconds of the timed runs (user + system, every thread of the process).
        repeats: timed runs.
        warmups: untimed runs before them.
    """

    rows: int
    wall_s: float
    cpu_s: float
    repeats: int
    warmups: int

    @property
    def rows_per_s(self) -> float:
        """Rows per wall second."""
        return self.rows / self.wall_s

    @property
    def us_per_row(self) -> float:
        """Wall microseconds a row."""
        return 1e6 * self.wall_s / self.rows

    @property
    def cpu_us_per_row(self) -> float:
        """CPU microseconds a row (steadier than wall time on a loaded machine)."""
        return 1e6 * self.cpu_s / self.rows


def statistic(repeats: int, warmups: int) -> str:
    """The statistic in words, for a script's header."""
    return (
        f"each side: {warmups} untimed warm-up run(s), then the least wall and the least CPU time of "
        f"{repeats} timed runs (a full GC before each, outside the timing)"
    )


def timed(run: Callable[[], T], rows_of: Callable[[T], int], repeats: int, warmups: int = 1) -> Timing:
    """Warm ``run`` up, then time it: see the module's rule.

    Args:
        run: one run of the side; returns what it made.
        rows_of: the rows of what a run made, after checking it (every row made and scored as it
            must be); raises when the run failed. Called outside the timed section, for the
            warm-up runs too.
        repeats: timed runs (at least 1).
        warmups: untimed runs first.

    Returns:
        The best of the timed runs.

    Raises:
        ValueError: ``repeats`` < 1, or the runs made different numbers of rows.
        Exception: what ``rows_of`` raises for a failed run.

    Example:
        >>> t = timed(lambda: [1] * 10, len, repeats=2)
        >>> t.rows, t.repeats, t.warmups
        (10, 2, 1)
    """
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, not {repeats}")
    rows: set[int] = set()
    for _ in range(warmups):
        rows.add(rows_of(run()))
    wall = cpu = float("inf")
    for _ in range(repeats):
        gc.collect()
        t, c = time.perf_counter(), time.process_time()
        made = run()
        wall = min(wall, time.perf_counter() - t)
        cpu = min(cpu, time.process_time() - c)
        rows.add(rows_of(made))
        del made
    if len(rows) != 1:
        raise ValueError(f"the runs made different numbers of rows: {sorted(rows)}")
    return Timing(rows.pop(), wall, cpu, repeats, warmups)
