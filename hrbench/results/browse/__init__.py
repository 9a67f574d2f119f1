"""Read-only views of stored benchmarks, for ``hrb view`` and the daemon's ``benchmark/*`` reads.

Each function takes a :class:`~hrbench.store.Store` and returns builtins (dicts, lists, numbers)
shaped as the wire Structs of :mod:`hrbench_client.protocol` (``BenchmarkSummary``,
``BenchmarkViewResult``, ``BenchmarkMatrixResult``, ``BenchmarkCellResult``,
``BenchmarkCompareResult``), so the daemon only converts them. Statistics come from
:func:`hrbench.stats.report` and :func:`hrbench.stats.compare`: the numbers a page shows are
the report's numbers.

One module per view: :mod:`~hrbench.results.browse._listing` (the list, a benchmark's status
and banner), :mod:`~hrbench.results.browse._view` (a benchmark's page, two compared),
:mod:`~hrbench.results.browse._matrix` (items by arms) and :mod:`~hrbench.results.browse._cells`
(one cell with its traces), :mod:`~hrbench.results.browse._grading` (human grading),
:mod:`~hrbench.results.browse._report` (a stored benchmark's report with its status); every name
is importable from ``hrbench.results.browse``.

Rules:

- a benchmark is reported with ``descriptive=True`` always: with 5 or more runs per item that
  changes nothing, with fewer the report (and so every page) is labelled "descriptive only"
  instead of refused;
- the paired differences against a chosen arm are the report's all-pairs comparisons (Holm-
  adjusted over every pair, as ``report()`` gives them), turned so that ``diff = arm - against``;
- "arms disagree" on an item when the arms that ran it do not all have the same mean
  correctness over runs there;
- a benchmark stored as ``running`` that no task of this daemon runs is ``interrupted``;
- a benchmark ``running``, ``cancelled`` or ``interrupted`` is reported descriptive of the runs
  finished (never refused for their unequal runs), and a cancelled or interrupted one has a
  ``stop_note`` saying so and the command that resumes it;
- a benchmark a budget stopped has status ``budget_stopped`` and a ``stop_note`` saying how
  many runs count as wrong and how to resume;
- a benchmark with runs that ended in errors (all or some) has status ``errors`` (a budget stop
  wins when both) and a ``stop_note`` saying how many, the commonest cause, and that
  ``hrb bench --resume ID --retry-errors`` runs them again (a benchmark whose every run failed
  on a dead port is never shown ``done``); one stored ``done`` by an older version
  with such runs is shown ``errors`` too.
"""

from __future__ import annotations

from hrbench.results.browse._cells import benchmark_cell, reproduce_command
from hrbench.results.browse._grading import grades_get, grades_next, grades_put, output_of
from hrbench.results.browse._listing import (
    ENDED_EARLY,
    benchmark_list,
    benchmark_status,
    budget_note,
    ended_note,
    resume_flag,
    stop_limits,
)
from hrbench.results.browse._matrix import benchmark_matrix
from hrbench.results.browse._report import benchmark_report, running_note
from hrbench.results.browse._view import benchmark_compare, benchmark_view, judged_rows

__all__ = [
    "ENDED_EARLY",
    "benchmark_cell",
    "benchmark_compare",
    "benchmark_list",
    "benchmark_matrix",
    "benchmark_report",
    "benchmark_status",
    "benchmark_view",
    "budget_note",
    "ended_note",
    "grades_get",
    "grades_next",
    "grades_put",
    "judged_rows",
    "output_of",
    "reproduce_command",
    "resume_flag",
    "running_note",
    "stop_limits",
]
