"""Running a benchmark: where it is planned, where each arm is invoked, scored and held to a budget.

- :mod:`~hrbench.runner._benchmark`: :func:`~hrbench.benchmark` and its async and streaming forms,
  which run these steps:
- :mod:`~hrbench.runner._plan`: the plan, the checks and refusals before the first run;
- :mod:`~hrbench.runner._loop`: the loop over the cells, each run finished and its row given on;
- :mod:`~hrbench.runner._invoke`: one run's steps (invoke the arm, judge, score, make the row);
- :mod:`~hrbench.runner._bench`: the result, :class:`~hrbench.Bench`; :mod:`~hrbench.runner._summary`
  (its per-arm summary), :mod:`~hrbench.runner._notes` (what it says of stopped and failed runs),
  :mod:`~hrbench.runner._tallies` (what is warned of at the end), :mod:`~hrbench.runner._stopping`
  (stop when sure);
- :mod:`~hrbench.runner.runtime`: what an arm's requests go through (cache, governor, recorder,
  pricing, the draw check); :mod:`~hrbench.runner._cache`, :mod:`~hrbench.runner._replay`;
- :mod:`~hrbench.runner._governor` (the budget; :mod:`~hrbench.runner._reservation`: a request's hold
  on it, the steps every governor shares), :mod:`~hrbench.runner._ledger` (the budget kept in the
  store across kills), :mod:`~hrbench.runner._limits` (the default limits), :mod:`~hrbench.runner._room`;
- :mod:`~hrbench.runner.ray`: the same runs on a Ray cluster.
"""

import typing

__all__ = [
    "Bench",
    "Cache",
    "DUPLICATE_CAUSE",
    "Governor",
    "Journal",
    "ReplayClient",
    "benchmark_async",
    "default_governor",
    "error_causes",
    "error_note",
    "kept",
    "kept_ledger",
    "refuse_before_start",
    "stop_note",
    "summarise",
    "trace_metrics",
    "unknown_of",
    "unknown_sentence",
]


# -- tools/privatize.py: names other packages use, imported on first use (PEP 562)
if typing.TYPE_CHECKING:
    from hrbench.runner._bench import Bench
    from hrbench.runner._benchmark import benchmark_async
    from hrbench.runner._cache import Cache
    from hrbench.runner._governor import Governor, default_governor
    from hrbench.runner._ledger import Journal, kept_ledger, unknown_of, unknown_sentence
    from hrbench.runner._notes import DUPLICATE_CAUSE, error_causes, error_note, stop_note
    from hrbench.runner._plan import refuse_before_start
    from hrbench.runner._replay import ReplayClient
    from hrbench.runner._stopping import kept
    from hrbench.runner._summary import summarise, trace_metrics

_LAZY = {
    "Bench": "hrbench.runner._bench",
    "Cache": "hrbench.runner._cache",
    "DUPLICATE_CAUSE": "hrbench.runner._notes",
    "Governor": "hrbench.runner._governor",
    "Journal": "hrbench.runner._ledger",
    "ReplayClient": "hrbench.runner._replay",
    "benchmark_async": "hrbench.runner._benchmark",
    "default_governor": "hrbench.runner._governor",
    "error_causes": "hrbench.runner._notes",
    "error_note": "hrbench.runner._notes",
    "kept": "hrbench.runner._stopping",
    "kept_ledger": "hrbench.runner._ledger",
    "refuse_before_start": "hrbench.runner._plan",
    "stop_note": "hrbench.runner._notes",
    "summarise": "hrbench.runner._summary",
    "trace_metrics": "hrbench.runner._summary",
    "unknown_of": "hrbench.runner._ledger",
    "unknown_sentence": "hrbench.runner._ledger",
}

if not typing.TYPE_CHECKING:  # type checkers read the imports above; a typo stays an error
    from hrbench._util.lazy import lazy_names

    __getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)

# -- end of tools/privatize.py's block
