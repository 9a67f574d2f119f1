"""The benchmark runner (the seed's ``hr_benchmark``): every arm on every item, ``runs`` times.

:func:`benchmark` is a thin sync wrapper over :func:`benchmark_async`, which runs on an anyio
task group with a concurrency limit; :func:`benchmark_stream` yields rows as they are scored.
Rows come back in the seed's order (cluster x item x arm x run) whatever order they finished in.

:func:`benchmark_async` runs these steps: the benchmark is planned, checked and refused or warned
of before the first run (:mod:`hrbench.runner._plan`); its cells are run by a
:class:`~hrbench.runner._loop.Loop` (:mod:`hrbench.runner._loop`), each arm invoked, judged and
scored into a row (:mod:`hrbench.runner._invoke`); the result is a :class:`Bench`
(:mod:`hrbench.runner._bench`), whose summary (:mod:`hrbench.runner._summary`) and notes on
stopped and failed runs (:mod:`hrbench.runner._notes`) are counted as rows are scored.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import anyio
import anyio.to_thread

from hrbench.arm import Arm
from hrbench.errors import ConfigError
from hrbench.models import Pricing, default_pricing, default_pricing_loaded, load_package, package_loaded
from hrbench.records import Row, Step
from hrbench.reference import Reference
from hrbench.runner._bench import Bench
from hrbench.runner._cache import Cache
from hrbench.runner._governor import Governor
from hrbench.runner._invoke import BenchMetric, judge_runtime
from hrbench.runner._loop import Loop, RowCallback
from hrbench.runner._notes import DUPLICATE_CAUSE as DUPLICATE_CAUSE
from hrbench.runner._notes import MISSING_OUTPUT_ADVICE as MISSING_OUTPUT_ADVICE
from hrbench.runner._notes import MISSING_OUTPUT_CAUSE as MISSING_OUTPUT_CAUSE
from hrbench.runner._notes import error_causes as error_causes
from hrbench.runner._notes import error_note, stop_note
from hrbench.runner._plan import (
    check_options,
    make_plan,
    open_cache,
    refuse_same_items,
    refuse_spec,
    warn_plan,
    warn_unpriced,
)
from hrbench.runner._plan import refuse_before_start as refuse_before_start
from hrbench.runner._summary import METRICS_SOURCE, trace_metrics
from hrbench.runner._summary import summarise as summarise
from hrbench.runner.batch import install
from hrbench.runner.runtime import Drain, Runtime
from hrbench.store import Store

__all__ = ["METRICS_SOURCE", "Bench", "benchmark", "benchmark_async", "benchmark_stream", "error_note"]
__all__ += ["stop_note", "trace_metrics"]
# Also offered here, from where they now live, for the code that imports them from this module:
# error_causes, refuse_before_start, summarise, and the causes the notes name.


async def benchmark_async(
    arms: Arm | Sequence[Arm],
    reference: Reference,
    runs: int = 5,
    client: Any = None,
    scorer: Any = None,
    split: str | Sequence[str] = "test",
    governor: Governor | None = None,
    seed: int = 1,
    *,
    cache: Cache | str | os.PathLike[str] | bool | None = None,
    record: str | None = None,
    store: Store | str | os.PathLike[str] | None = None,
    concurrency: int = 16,
    pricing: Pricing | None = None,
    benchmark_id: str | None = None,
    on_row: RowCallback | None = None,
    done: dict[tuple[str, str, int], Row] | None = None,
    raise_duplicates: bool = True,
    keep_rows: bool = True,
    executor: Any = None,
    metrics: Sequence[BenchMetric] | None = None,
    done_metrics: Mapping[str, Mapping[str, float]] | None = None,
    done_traces: Mapping[str, Sequence[Step]] | None = None,
    retry_errors: bool = False,
    drain: Drain | None = None,
    stop: Any = None,
    batch: Any = None,
    on_batch: Any = None,
) -> Bench:
    """Run every arm on every item of the chosen split(s), ``runs`` times, and score each run.

    The async twin of :func:`benchmark`; see it for the rules.

    Args:
        arms: an :class:`~hrbench.Arm` or a list of them, with unique names.
        reference: the :class:`~hrbench.Reference`.
        runs: runs per arm per item, a whole number >= 1.
        client: the model client, or ``None``.
        scorer: a scorer; ``exact_scorer()`` by default.
        split: the split or splits to run on.
        governor: the :class:`~hrbench.Governor`; the defaults when ``None``.
        seed: the seed of the arms' private random streams (``ctx.rng``, seed 002). Not sent
            to the model and not part of the cache key: a reply is
            selected by its request and draw index, so an arm that does not use ``ctx.rng``
            gets the same replies under any seed; a provider seed is a request param
            (``ctx.call(..., seed=n)``), which is in the key.
        cache: a :class:`~hrbench.Cache` (draw-keyed), ``True`` (the cache in ``store``), the
            path of a SQLite file to keep the cache in, or ``None``.
        record: the name of a recording to record every live reply into (needs ``store``).
        concurrency: how many (arm, item) pairs run at once.
        benchmark_id: the benchmark's id (a fresh one by default); ledger ids start with it.
        on_row: called as ``on_row(seq, row, trace)`` as each row is scored (``seq`` is the
            row's place in the seed's order); may be async.
        done: rows already finished, keyed by ``(arm, item, run)``: they are kept and not run
            again (resuming an interrupted benchmark).
        done_metrics: the metric values of ``done`` rows by ledger id, as each run's trace
            keeps them (:func:`trace_metrics`); a done row without them makes its arm's
            metrics ``None``.
        done_traces: the traces of ``done`` rows by ledger id: the summary names the causes
            of those that ended in an error (``error_causes``; ``"unknown"`` without them),
            and the runs made again are checked against every kept run's draws (request keys,
            provider response ids; seed 002): a run whose reply repeats a
            kept run's is refused again as a duplicate draw. A kept run without its trace
            cannot be checked against (:class:`~hrbench.errors.DrawsUncheckedWarning`).
        retry_errors: run again the ``done`` runs that ended in an error (``failure_kind ==
            "error"``) instead of keeping them; their new rows replace the old ones, so a
            benchmark whose runs failed on a dead endpoint can be finished once it is fixed. What
            the failed attempts spent stays spent: the governor starts from its ledger as given.
        drain: a :class:`~hrbench.runner.runtime.Drain` that a clean cancel begins before cancelling
            the benchmark: the requests sent finish and their runs are saved.
        stop: a :class:`~hrbench.StopWhenSure` rule: the clusters run in its seeded order and the
            benchmark stops as soon as its sequential test is sure (:mod:`hrbench.runner._stopping`);
            its record is :attr:`Bench.stop`. To go on after a stop, a budget stop or a cancel,
            pass ``done=bench.as_done()`` and ``stop=bench.stop.resume()``: the same order and
            e-process continue. Not with another ``executor``.
        batch: ``True`` or a :class:`~hrbench.Batch`: the arms' model calls go through the
            provider's batch API (OpenAI's, Anthropic's), reserved and billed at its batch rate,
            in waves of clusters (with ``stop``, a wave at a time until it decides; nothing is
            uploaded after). Every batch is kept in ``store`` before it is uploaded, so a resume
            after a crash reattaches to it (:mod:`hrbench.runner.batch`; the guide
            ``docs/guides/batch.md``). Not with another ``executor``.
        on_batch: in batch mode, called as ``on_batch(batching)`` when the run starts and
            whenever one of its batches changes state (:class:`~hrbench.runner.batch.Batching`:
            its ``batches`` and ``cancel(tag)``).
        store: a :class:`~hrbench.store.Store` or the path of its SQLite file: where recordings
            go (``record=``), and where the cache lives when ``cache`` is ``True``.
        pricing: the price table; the shipped one by default.
        raise_duplicates: raise :class:`~hrbench.errors.DuplicateDrawError` at the end when an
            arm's runs were not distinct draws (the rows are on ``error.bench``).
        keep_rows: ``False`` keeps no rows or traces in memory (stream them with ``on_row``):
            memory then does not grow with the number of rows.
        metrics: graded scores reported beside the scorer's accuracy (rule: one
            scorer decides right or wrong; metrics such as the official TAT-QA or SQuAD F1
            are means beside it). Each is ``fn(item, output, label)`` returning a number (named
            by the function's ``name`` or ``__name__``), a mapping of names to numbers (e.g.
            :func:`hrbench.reading.tatqa_scores`: ``tatqa_em`` and ``tatqa_f1``), a
            :class:`~hrbench.records.Score` (its ``correct`` as 1 or 0) or ``None`` (no value).
            A run that raised or was stopped is scored on the output ``None``. A metric with a
            ``check_labels`` attribute gets the run items' labels (id -> label) before the
            first run and may refuse them (``tatqa_scores`` refuses labels that are not
            TAT-QA's). Each name's
            mean is taken over runs within an item, then over labelled reportable items, and
            shown in ``summary()["metrics"]`` and the printout. Each run's values are kept in its
            trace as a ``note`` step (source ``"metrics"``), so a resume counts them;
            an arm with a resumed row whose trace holds none has ``None`` (NA). A metric
            that raises is recorded
            in the run's trace and gives no value for that run; rows are not changed.
        executor: where the cells run: ``None`` or ``"local"`` (here), or a Ray cluster
            (``"ray"``, ``{"kind": "ray", "address": ...}``, a
            :class:`~hrbench.runner.ray.RayExecutor`): same rows, one governor,
            the store and ``on_row`` on this process.
    """
    plan = make_plan(arms, reference, runs, scorer, split, seed, benchmark_id, metrics)
    refuse_spec(plan.arms, plan.reference, plan.item_ids, plan.metrics, client, plan.runs, plan.scorer)
    remote, gov, concurrency = check_options(plan, executor, concurrency, governor)
    cache, store, cached = open_cache(cache, record, store, client)
    refuse_same_items(reference.items, plan.item_ids, client, cached)
    warn_plan(plan, reference, runs)
    reference.lock()
    if pricing is None:  # the first load reads the shipped price table: not on the event loop
        pricing = default_pricing_loaded()
        if pricing is None:
            pricing = await anyio.to_thread.run_sync(default_pricing)
    if getattr(pricing, "package", False) and not package_loaded():  # and so does the price
        await anyio.to_thread.run_sync(load_package)  # package's, at the first request's price
    rt = Runtime(client, gov, cache, record, store, pricing)
    rt.drain = drain
    judge_rt = judge_runtime(plan.scorer, rt)
    if judge_rt is not None:
        judge_rt.drain = drain
    refuse_before_start(client, gov, pricing, scorer=plan.scorer)
    warn_unpriced(client, gov, pricing)  # its USD is NA: said once
    loop = Loop(
        plan,
        rt,
        judge_rt,
        client,
        concurrency=concurrency,
        keep_rows=keep_rows,
        on_row=on_row,
        done=done,
        done_traces=done_traces,
        done_metrics=done_metrics,
        retry_errors=retry_errors,
        stop=stop,
        store=store,
        drain=drain,
        remote=remote,
    )
    if batch is not None and batch is not False and remote is not None:
        raise ConfigError("batch", batch, "batch mode runs on the local executor only (leave out executor)")
    loop.batching = batching = install(batch, loop, store, plan.bench_id)
    if batching is not None and on_batch is not None:
        batching.collector.on_change = lambda: on_batch(batching)
        on_batch(batching)
    await loop.read_prepaid(store, benchmark_id is not None)
    if loop.batching is None:
        await loop.run(remote)
    else:
        async with loop.batching.running():
            await loop.run(remote)
    return loop.bench(raise_duplicates)


def benchmark(
    arms: Arm | Sequence[Arm],
    reference: Reference,
    runs: int = 5,
    client: Any = None,
    scorer: Any = None,
    split: str | Sequence[str] = "test",
    governor: Governor | None = None,
    seed: int = 1,
    **kwargs: Any,
) -> Bench:
    """Run every arm on every item of the chosen split(s), ``runs`` times (seed 002).

    Run ``r`` of each arm on each item gets ``ctx.draw_index = r``, so with a cache or a
    recording each run is its own draw. Runs are started in the seed's order, cluster x item x
    arm x run: the runs of one arm on one item are made one after another, and up to
    ``concurrency`` (arm, item) pairs run at once (with ``concurrency=1`` the whole benchmark
    runs in row order). Rows come back in that order whatever order they finished in (clusters
    in order of first appearance in the reference).

    Rules (seed 002):

    - Every request is checked against ``governor`` before it is sent, for the benchmark as a
      whole; a run ends at its first refused request and is recorded ``budget_stop`` and counted
      wrong; later runs are still started, so every row exists. With ``governor=None`` the
      limits of :data:`hrbench.runner._limits` apply to the whole benchmark. When any
      run is stopped, a :class:`~hrbench.errors.BudgetStoppedWarning` says how many, by which
      limits, how many count against an arm, and the first one.
    - An arm that raises has that run recorded as ``"error"`` with the message in its trace;
      so has a run whose model call failed (reading ``.text`` of a failed reply raises
      :class:`~hrbench.errors.ModelError`, and a failed reply returned as the output is an
      error too). The benchmark ends with one :class:`~hrbench.errors.ArmErrorWarning` that
      says, per arm, how many runs ended in errors, by cause (``openai: HTTP 401``,
      ``RuntimeError``, ...), and the first message: a 401 or a typo in an arm does not pass
      silently for a bad arm.
    - So has a run whose scorer raised or returned something that is not a score (``None``
      from a function that forgot its ``return``: :class:`~hrbench.scoring.Scorer`), its cause
      naming the scorer and the value (never a silent NA).
    - Every run on an item with no label has ``correct=None`` whatever its failure kind.
    - Rows on the ``dev`` split are ``reportable=False``.
    - An arm whose runs are not distinct draws is refused with
      :class:`~hrbench.errors.DuplicateDrawError` (raised after the run, the rows on
      ``error.bench``): a request answered from a cache or a recording with the same request
      and draw index as a request of an earlier run; a reply whose provider response id was
      seen in an earlier run; a recording served without its own draw key. Each such run is
      recorded ``"error"`` with ``duplicate_draw`` in its trace (case H12c). A mock
      client keeps no cache, so without a cache an arm that leaves the draw index out is not
      refused.
    - A reply served from a cache or a recording costs the run ``usd = 0`` and no governor call;
      its trace step keeps the nominal cost (case H14a).
    - Fewer than 5 runs warns :class:`~hrbench.errors.FewRunsWarning`.
    - No item with a label warns :class:`~hrbench.errors.NoLabelsWarning`;
      some items without one warn :class:`~hrbench.errors.UnlabelledItemsWarning`, counting them.
    - The reference is locked when scoring starts.
    - ``ctx.rng`` is seeded from (seed, arm, item, run); the global random state is untouched.

    Args:
        arms: an :class:`~hrbench.Arm` or a list of them, with unique names.
        reference: the :class:`~hrbench.Reference`.
        runs: runs per arm per item, a whole number >= 1 (5 or more expected).
        client: the model client passed to the arms as ``ctx.client``, or ``None``.
        scorer: a scorer; ``exact_scorer()`` by default.
        split: the split or splits to run on.
        governor: the :class:`~hrbench.Governor` the whole benchmark is held to.
        seed: the seed of the arms' private random streams.
        **kwargs: ``cache``, ``record``, ``store``, ``concurrency``, ``pricing``, ``batch``,
            ``benchmark_id``, ``on_row``, ``done`` (rows kept from an interrupted run: a resume),
            ``done_metrics``, ``done_traces``, ``retry_errors`` (run the ``done`` runs that
            ended in errors again), ``raise_duplicates``, ``keep_rows``,
            ``metrics`` (graded scores shown beside the accuracy), ``executor`` (``"local"``, or
            a Ray cluster), ``stop`` (a :class:`~hrbench.StopWhenSure` rule: stop as
            soon as the comparison is sure; :attr:`Bench.stop` says how it ended): see
            :func:`benchmark_async`.

    Returns:
        A :class:`Bench`.

    Raises:
        ConfigError: a bad argument (named with its value).
        DuplicateDrawError: an arm's runs were not distinct draws.

    Example:
        >>> import warnings
        >>> from hrbench import Arm, MockClient, Reference
        >>> ref = Reference({"q1": "France", "q2": "Peru", "q3": "Chad", "q4": "Fiji"},
        ...                 labels=["Paris", "Lima", "N'Djamena", "Suva"], cluster=["a", "a", "b", "b"])
        >>> capitals = {"France": "Paris", "Peru": "Lima", "Chad": "Ndjamena", "Fiji": "Suva"}
        >>> cl = MockClient(lambda messages, params: capitals[messages[0]["content"].removeprefix("Capital of ")])
        >>> ask = Arm("ask", lambda item, ctx: ctx.call(f"Capital of {item}").text)
        >>> bench = benchmark(ask, ref, runs=5, client=cl)
        >>> print(bench)  # doctest: +NORMALIZE_WHITESPACE
        <hr_bench> 1 arm(s) x 4 item(s) in 2 cluster(s) x 5 run(s); split test; scorer exact_normalised
         arm accuracy runs wrong failed budget_stop usd
         ask 0.750    20   5     0      0           0.0000
          Descriptive only: accuracy is the mean over runs within each item, then over labelled items, with no interval.
    """
    _check_keywords("benchmark", kwargs)
    return anyio.run(
        lambda: benchmark_async(arms, reference, runs, client, scorer, split, governor, seed, **kwargs)
    )


def _check_keywords(caller: str, kwargs: Mapping[str, Any]) -> None:
    """Refuse a keyword :func:`benchmark_async` does not take, naming ``caller`` (what the user called).

    Raises:
        TypeError: an unknown keyword, with the closest known one, naming the function the
            user called (``clinet=`` to ``benchmark()`` names ``benchmark()``, not
            ``benchmark_async()``).
    """
    import difflib
    import inspect

    known = list(inspect.signature(benchmark_async).parameters)
    for name in kwargs:
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise TypeError(
                f"{caller}() got an unexpected keyword argument {name!r}{hint}; it takes " + ", ".join(known)
            )


async def benchmark_stream(
    arms: Arm | Sequence[Arm],
    reference: Reference,
    runs: int = 5,
    client: Any = None,
    scorer: Any = None,
    split: str | Sequence[str] = "test",
    governor: Governor | None = None,
    seed: int = 1,
    **kwargs: Any,
) -> AsyncIterator[Row]:
    """Yield rows as they are scored (in completion order); same arguments as :func:`benchmark`.

    Duplicate draws are not raised here; each such run's row carries ``failure_kind="error"``.
    """
    _check_keywords("benchmark_stream", kwargs)
    send, receive = anyio.create_memory_object_stream[Row](max_buffer_size=1024)

    async def on_row(seq: int, row: Row, trace: list[Step]) -> None:
        await send.send(row)

    async def produce() -> None:
        async with send:
            await benchmark_async(
                arms,
                reference,
                runs,
                client,
                scorer,
                split,
                governor,
                seed,
                on_row=on_row,
                raise_duplicates=False,
                **kwargs,
            )

    async with anyio.create_task_group() as tg:
        tg.start_soon(produce)
        async with receive:
            async for row in receive:
                yield row
