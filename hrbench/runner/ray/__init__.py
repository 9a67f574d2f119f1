"""Run a benchmark's cells on a Ray cluster, with one governor, one store and resume.

``benchmark(..., executor="ray")`` (or ``{"kind": "ray", "address": ...}``, or a
:class:`RayExecutor`) hands the cells (arm x item, with the runs still to make) to this module
instead of the local task group; every other part of the runner is the local one. The rules:

- **One driver.** Cells go out in batches, as Ray tasks; every scored row streams back to the
  driver, which alone emits rows (``on_row``: the daemon's streaming, its store, ``hrb ls``,
  reports and resume work unchanged) and alone touches the store.
- **One governor.** The benchmark's :class:`~hrbench.Governor` is wrapped in one Ray actor;
  every request on every worker reserves its worst-case estimate from it before it is sent and
  settles after the reply (case H13a's rule), so caps hold across the cluster. The driver's
  governor is kept up to date with the actor's use as rows come in. When the driver keeps the
  governor's ledger per call (the daemon always does; :func:`hrbench.runner.kept_ledger` from
  Python), every reservation is committed to it by the driver before its request is sent, and
  settled in it after the reply, as the local runner does: a driver killed mid-run leaves the
  requests in flight open in the store, and the resume counts them as spent.
- **One store.** Cache lookups, cache writes and recordings go to the driver through a hub
  actor; the driver answers them from its :class:`~hrbench.Cache` and
  :class:`~hrbench.store.Store`. Keys and draw indices are the local ones, so a deterministic
  model gives the same rows locally and on Ray (except ``seconds``).
- **Faults.** A batch whose worker dies is retried by Ray (``max_retries``); the retry asks the
  hub which of its runs already reached the driver and makes only the others; the driver drops
  any row it already has (by arm, item, run). A call that finished before the death was
  written to the cache through the driver, so with a cache it is not paid again. A reservation
  held by a dead worker is never released: the governor errs on the side of the cap.
- **Concurrency.** ``worker_concurrency`` cells run at once in one task (one worker process);
  at most ``concurrency // worker_concurrency`` tasks are in flight, so the benchmark's
  ``concurrency`` is the global limit. By default each of the cluster's CPUs gets an equal
  share of ``concurrency``.

Ray is imported only when a Ray executor runs (the ``ray`` extra: ``pip install
'hrbench[ray]'``). Arms, the scorer and the client are shipped to workers with cloudpickle:
functions defined in a module are imported there by name (the driver's ``sys.path`` is
shipped along, which serves a cluster on one machine; a multi-machine cluster needs the code
installed or a Ray ``runtime_env``); closures (prompt arms, reading recipes) travel by value.

Not carried over: a replay client (it reads recordings from the driver's store) is
refused; a provider response id repeated across two items of one arm is detected only when
both ran in the same batch; the caller's environment of a daemon request (API keys,
:mod:`hrbench._util.environ`) stays on the driver, and workers read keys from their own environment,
so that no key enters Ray's object store (which may spill to disk); a provider's quota refusal
stops the runs of the worker that saw it, the other workers at their own first refusal.

Example:
    >>> RayExecutor(address="local", num_cpus=2)
    RayExecutor(address='local', num_cpus=2, worker_concurrency=None, batch_size=None, max_retries=3)
    >>> resolve_executor("local") is None
    True
    >>> resolve_executor({"kind": "ray", "address": "auto"}).address
    'auto'
"""

from __future__ import annotations

from hrbench.runner.ray._executor import RayExecutor, resolve_executor

__all__ = ["RayExecutor", "resolve_executor"]
