"""Running a module on every row of a data set (:func:`run_dataset`), with bounded concurrency."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import anyio
import anyio.lowlevel
import anyio.to_thread

from hrbench._util.forms import whole
from hrbench.errors import ConfigError
from hrbench.evaluation.modules._base import Module, Settings, settings_of
from hrbench.evaluation.modules._fn import FnModule
from hrbench.evaluation.modules._records import RowResult
from hrbench.evaluation.modules._running import (
    Outcome,
    check_draw,
    check_inputs,
    rows_of,
    run_inline,
    run_one,
)

__all__ = ["run_dataset", "run_dataset_async"]


async def _pool(
    n_jobs: int,
    job: Callable[[int], Awaitable[None]],
    concurrency: int,
) -> None:
    """Run ``job(0..n_jobs-1)`` with at most ``concurrency`` in flight, by a fixed set of workers.

    Workers take job numbers from one shared counter, so there is no task per job; a job that
    never suspends (an inline function module) costs no scheduling at all.
    """
    if n_jobs == 0:
        return
    counter = iter(range(n_jobs))

    async def worker() -> None:
        for j in counter:
            await job(j)

    if concurrency == 1 or n_jobs == 1:
        await worker()
        return
    async with anyio.create_task_group() as tg:
        for _ in range(min(concurrency, n_jobs)):
            tg.start_soon(worker)


def check_concurrency(concurrency: int) -> int:
    """``concurrency`` as an ``int`` (:func:`hrbench._util.forms.whole`, as ``benchmark()`` reads it).

    Raises:
        ConfigError: not a whole number >= 1 (a bool, a float such as 2.0, a string).
    """
    return whole("concurrency", concurrency, least=1)


async def run_dataset_async(
    mod: Module,
    data: Any,
    *,
    llm: Any = None,
    cache: Any = None,
    governor: Any = None,
    concurrency: int = 8,
    progress: bool = False,
    draw_index: int = 1,
    return_format: str = "simple",
) -> list[Any]:
    """Run a module on every row of a data set (the async twin of :func:`run_dataset`).

    Args:
        mod: the module.
        data: rows (see :func:`rows_of`); each needs a column per signature input.
        llm: the model client, overriding the module's.
        cache: ``None``/``False`` (no cache), a :class:`~hrbench.runner.Cache` or a Store.
        governor: the budget for model calls; ``None`` gives the benchmark's default
            (:func:`~hrbench.runner.default_governor`).
        concurrency: the most rows in flight.
        progress: show a tqdm progress bar on stderr.
        draw_index: the draw index of every request.
        return_format: ``"simple"``: one :class:`Prediction` per row, ``None`` for a failed row;
            ``"structured"``: one :class:`RowResult` per row.

    Returns:
        The list described under ``return_format``, in row order.

    Raises:
        ConfigError: for a bad argument or a row without an input column.
    """
    if return_format not in ("simple", "structured"):
        raise ConfigError("return_format", return_format, "expected 'simple' or 'structured'")
    concurrency = check_concurrency(concurrency)
    draw_index = check_draw(draw_index)
    rows = rows_of(data)
    check_inputs(mod.signature, rows)
    settings = settings_of(mod, llm, cache, governor)
    outcomes = await run_rows(mod, rows, settings, [draw_index], concurrency, progress)
    out = outcomes[0]
    if return_format == "simple":
        return [o.prediction for o in out]
    return [row_result(i, o) for i, o in enumerate(out)]


def row_result(i: int, o: Outcome) -> RowResult:
    return RowResult(
        row=i, inputs=o.trace.inputs, prediction=o.prediction, error=o.error, failure_kind=o.failure_kind,
        metadata=o.metadata, trace=o.trace,
    )  # fmt: skip


def run_dataset(
    mod: Module,
    data: Any,
    *,
    llm: Any = None,
    cache: Any = None,
    governor: Any = None,
    concurrency: int = 8,
    progress: bool = False,
    draw_index: int = 1,
    return_format: str = "simple",
) -> list[Any]:
    """Run a module on every row of a data set.

    A run error on a row (a failed call, an unparseable reply, an exception from a
    :func:`module_fn` function) does not stop the others: that row's prediction is ``None`` and
    the structured result carries the message.

    Args:
        mod: the module.
        data: a list of dicts, a pandas or a polars DataFrame (see :func:`rows_of`).
        llm: the model client, overriding the module's.
        cache: ``None``/``False`` (no cache), a :class:`~hrbench.runner.Cache` or a Store.
        governor: the budget for model calls; ``None`` gives the benchmark's default
            (:func:`~hrbench.runner.default_governor`).
        concurrency: the most rows in flight.
        progress: show a tqdm progress bar on stderr.
        draw_index: the draw index of every request.
        return_format: ``"simple"`` (predictions) or ``"structured"`` (:class:`RowResult` rows).

    Returns:
        One prediction (or :class:`RowResult`) per row, in row order.

    Example:
        >>> from hrbench.evaluation.modules import module_fn
        >>> rule = module_fn("text -> sentiment",
        ...                  lambda text: "positive" if "love" in text else "negative")
        >>> run_dataset(rule, [{"text": "I love it!"}, {"text": "Awful."}])
        [Prediction(sentiment='positive'), Prediction(sentiment='negative')]
    """

    async def go() -> list[Any]:
        return await run_dataset_async(
            mod, data, llm=llm, cache=cache, governor=governor, concurrency=concurrency, progress=progress,
            draw_index=draw_index, return_format=return_format,
        )  # fmt: skip

    return anyio.run(go)


async def run_rows(
    mod: Module,
    rows: Sequence[Mapping[str, Any]],
    settings: Settings,
    draws: Sequence[int],
    concurrency: int,
    progress: bool,
    after: Callable[[int, int, Outcome], Any] | None = None,
) -> list[list[Outcome]]:
    """Run ``mod`` on every row for every draw index; ``after(d, i, outcome)`` runs per row."""
    n = len(rows)
    names = mod.signature.input_names
    prefix = mod.artifact_id
    results: list[list[Any]] = [[None] * n for _ in draws]
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=n * len(draws), desc=mod.name, unit="row")

    async def job(j: int) -> None:
        d, i = divmod(j, n)
        row = rows[i]
        draw = draws[d]
        outcome = await run_one(
            mod, {k: row[k] for k in names}, settings, draw, str(i), f"{prefix}/{i}/{draw}"
        )
        results[d][i] = outcome
        if after is not None:
            maybe = after(d, i, outcome)
            if maybe is not None:  # an awaitable: the metric was async
                await maybe
        if bar is not None:
            bar.update(1)

    if isinstance(mod, FnModule) and not mod.is_async and not mod.thread:
        # A sync function run inline never suspends, so concurrency cannot help: run the rows in
        # order without a task or coroutine per row, and yield to the event loop now and then.
        try:
            for d, draw in enumerate(draws):
                out = results[d]
                for i, row in enumerate(rows):
                    outcome = run_inline(mod, {k: row[k] for k in names}, draw, f"{prefix}/{i}/{draw}")
                    out[i] = outcome
                    if after is not None:
                        maybe = after(d, i, outcome)
                        if maybe is not None:
                            await maybe
                    if i % 512 == 511:
                        if bar is not None:
                            bar.update(512)
                        await anyio.lowlevel.checkpoint()
                if bar is not None:
                    bar.update(n - (n // 512) * 512)
        finally:
            if bar is not None:
                bar.close()
        return results

    try:
        await _pool(n * len(draws), job, concurrency)
    finally:
        if bar is not None:
            bar.close()
    return results
