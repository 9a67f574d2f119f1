"""Running a benchmark: where it is planned, where each arm is invoked, scored and held to a budget.

- :mod:`~hrbench.runner.benchmark`: :func:`~hrbench.benchmark` and its async and streaming forms,
  which run these steps:
- :mod:`~hrbench.runner.plan`: the plan, the checks and refusals before the first run;
- :mod:`~hrbench.runner.loop`: the loop over the cells, each run finished and its row given on;
- :mod:`~hrbench.runner.invoke`: one run's steps (invoke the arm, judge, score, make the row);
- :mod:`~hrbench.runner.bench`: the result, :class:`~hrbench.Bench`; :mod:`~hrbench.runner.summary`
  (its per-arm summary), :mod:`~hrbench.runner.notes` (what it says of stopped and failed runs),
  :mod:`~hrbench.runner.tallies` (what is warned of at the end), :mod:`~hrbench.runner.stopping`
  (stop when sure);
- :mod:`~hrbench.runner.runtime`: what an arm's requests go through (cache, governor, recorder,
  pricing, the draw check); :mod:`~hrbench.runner.cache`, :mod:`~hrbench.runner.replay`;
- :mod:`~hrbench.runner.governor` (the budget; :mod:`~hrbench.runner.reservation`: a request's hold
  on it, the steps every governor shares), :mod:`~hrbench.runner.ledger` (the budget kept in the
  store across kills), :mod:`~hrbench.runner.limits` (the default limits), :mod:`~hrbench.runner.room`;
- :mod:`~hrbench.runner.ray`: the same runs on a Ray cluster.
"""
