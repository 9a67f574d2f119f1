"""Running a module once (:func:`run`, :func:`run_async`).

The inputs checked, the call made and its outcome kept.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import anyio
import anyio.lowlevel
import anyio.to_thread
import msgspec

from hrbench._util.forms import whole
from hrbench.arm import Context, RunInfo, current_run
from hrbench.errors import BudgetRefused, ConfigError, ModelError
from hrbench.evaluation.modules._base import Module, RunFailure, Settings, settings_of
from hrbench.evaluation.modules._fn import FnModule
from hrbench.evaluation.modules._records import Prediction, Trace
from hrbench.evaluation.modules._signatures import Signature
from hrbench.records import Step, Usage

__all__ = ["rows_of", "run", "run_async"]


def rows_of(data: Any) -> list[dict[str, Any]]:
    """The rows of a data set as dicts.

    Args:
        data: a list (or other iterable) of dicts, a pandas DataFrame, a polars DataFrame, or a
            dict of equal-length columns.

    Returns:
        One dict per row (missing pandas values come back as ``None`` or NaN, as pandas has them).

    Raises:
        ConfigError: when ``data`` is none of these.

    Example:
        >>> rows_of({"text": ["a", "b"], "label": [1, 0]})
        [{'text': 'a', 'label': 1}, {'text': 'b', 'label': 0}]
    """
    mod = type(data).__module__.split(".", 1)[0]
    if mod == "pandas" and hasattr(data, "to_dict"):
        return list(data.to_dict(orient="records"))
    if mod == "polars" and hasattr(data, "to_dicts"):
        return list(data.to_dicts())
    if isinstance(data, Mapping):
        cols = {str(k): v for k, v in data.items()}
        if cols and all(isinstance(v, (list, tuple)) for v in cols.values()):
            lengths = {len(v) for v in cols.values()}
            if len(lengths) != 1:
                raise ConfigError("data", data, "columns must all have the same length")
            n = lengths.pop()
            return [{k: v[i] for k, v in cols.items()} for i in range(n)]
        raise ConfigError("data", data, "a dict must map column names to equal-length lists")
    if isinstance(data, (str, bytes)) or not isinstance(data, Iterable):
        raise ConfigError("data", data, "expected a list of dicts, a pandas or polars DataFrame")
    rows = data if isinstance(data, list) else list(data)
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise ConfigError(f"data[{i}]", row, "each row must be a dict of column -> value")
    return rows


def check_inputs(sig: Signature, rows: Sequence[Mapping[str, Any]]) -> None:
    names = sig.input_names
    for i, row in enumerate(rows):
        for n in names:
            if n not in row:
                raise ConfigError(
                    f"data[{i}]", sorted(row), f"the row has no column {n!r} for the signature input"
                )


class Outcome:
    """One row run: what happened, before any metric."""

    __slots__ = ("error", "exc", "failure_kind", "metadata", "prediction", "trace")

    def __init__(
        self,
        prediction: Prediction | None,
        error: str | None,
        failure_kind: str | None,
        metadata: dict[str, Any],
        trace: Trace,
        exc: BaseException | None = None,
    ) -> None:
        self.prediction = prediction
        self.error = error
        self.failure_kind = failure_kind
        self.metadata = metadata
        self.trace = trace
        self.exc = exc


async def run_one(
    mod: Module,
    inputs: dict[str, Any],
    settings: Settings,
    draw_index: int,
    item: str,
    ledger_id: str,
) -> Outcome:
    ctx: Context | None = None
    token = None
    if settings.runtime is not None:
        # The runtime's draw checks are per (arm, item): the item is the inputs' identity, so two
        # identical rows may share a cached draw, while an epoch served another epoch's reply is
        # still caught as a duplicate draw.
        item = _inputs_key(inputs)
        ctx = Context(
            arm=mod.name, item_id=item, run=draw_index, draw_index=draw_index,
            seed=0, client=settings.llm, ledger_id=ledger_id,
            runtime=settings.runtime,
        )  # fmt: skip
        token = current_run.set(RunInfo(mod.name, item, draw_index))
    start = time.perf_counter()
    error = failure_kind = None
    caught: BaseException | None = None
    prediction: Prediction | None
    try:
        prediction = Prediction(await mod._acall(inputs, ctx))
    except RunFailure as exc:
        prediction, error, failure_kind, caught = None, str(exc), exc.failure_kind, exc
    except BudgetRefused as exc:
        prediction, error, failure_kind, caught = None, f"budget_stop: {exc.limit}: {exc}", "budget_stop", exc
    except Exception as exc:  # the module's own failure is a run error, not a crash
        prediction, error, failure_kind, caught = None, f"{type(exc).__name__}: {exc}", "error", exc
    finally:
        if token is not None:
            current_run.reset(token)
    seconds = time.perf_counter() - start
    return _outcome(mod, inputs, draw_index, ledger_id, prediction, error, failure_kind, caught, seconds, ctx)


_canon = msgspec.json.Encoder(order="sorted")


def _inputs_key(inputs: dict[str, Any]) -> str:
    try:
        body = _canon.encode(inputs)
    except (TypeError, ValueError):
        body = repr(sorted(inputs.items(), key=lambda kv: kv[0])).encode()
    return hashlib.sha256(body).hexdigest()[:16]


def _outcome(
    mod: Module,
    inputs: dict[str, Any],
    draw_index: int,
    ledger_id: str,
    prediction: Prediction | None,
    error: str | None,
    failure_kind: str | None,
    caught: BaseException | None,
    seconds: float,
    ctx: Context | None,
) -> Outcome:
    steps = ctx.trace if ctx is not None else []
    metadata = _metadata(mod, ledger_id, draw_index, steps, seconds)
    if ctx is not None and ctx.notes:
        metadata["notes"] = list(ctx.notes)
    trace = Trace(
        ledger_id=ledger_id, module=mod.name, draw_index=draw_index, inputs=inputs, outputs=prediction,
        steps=steps, error=error, failure_kind=failure_kind, seconds=seconds,
    )  # fmt: skip
    return Outcome(prediction, error, failure_kind, metadata, trace, caught)


def run_inline(mod: FnModule, inputs: dict[str, Any], draw_index: int, ledger_id: str) -> Outcome:
    """:func:`run_one` for a sync function module run inline: no coroutine, same outcome."""
    start = time.perf_counter()
    error = failure_kind = None
    caught: BaseException | None = None
    prediction: Prediction | None
    try:
        prediction = Prediction(mod._outputs_of(mod.fn(**inputs)))
    except RunFailure as exc:
        prediction, error, failure_kind, caught = None, str(exc), exc.failure_kind, exc
    except Exception as exc:  # the module's own failure is a run error, not a crash
        prediction, error, failure_kind, caught = None, f"{type(exc).__name__}: {exc}", "error", exc
    seconds = time.perf_counter() - start
    return _outcome(
        mod, inputs, draw_index, ledger_id, prediction, error, failure_kind, caught, seconds, None
    )


def _metadata(
    mod: Module, ledger_id: str, draw_index: int, steps: list[Step], seconds: float
) -> dict[str, Any]:
    if not steps:
        return {
            "ledger_id": ledger_id, "module": mod.name, "draw_index": draw_index, "model": None, "n_calls": 0,
            "repaired": False, "sources": [], "tokens_in": 0, "tokens_out": 0, "tokens_reasoning": 0,
            "tokens_cached": 0, "usd": 0.0, "seconds": seconds,
        }  # fmt: skip
    meta: dict[str, Any] = {"ledger_id": ledger_id, "module": mod.name, "draw_index": draw_index}
    usage = [s.usage or Usage() for s in steps]
    usd: float | None = 0.0
    for s in steps:
        if s.usd is None:
            usd = None
            break
        usd += s.usd  # type: ignore[operator]
    requests = [s for s in steps if s.source != "arm"]
    meta.update(
        model=steps[-1].model,
        n_calls=len(requests),
        repaired=len(requests) > 1,
        sources=[s.source for s in requests],
        tokens_in=sum(u.tokens_in for u in usage),
        tokens_out=sum(u.tokens_out for u in usage),
        tokens_reasoning=sum(u.tokens_reasoning for u in usage),
        tokens_cached=sum(u.tokens_cached for u in usage),
        usd=usd,
        seconds=seconds,
    )
    return meta


def check_draw(draw_index: int) -> int:
    """``draw_index`` as an ``int`` (:func:`hrbench._util.forms.whole`).

    Raises:
        ConfigError: not a whole number >= 1 (a bool, a float such as 2.0, a string).
    """
    return whole("draw_index", draw_index, least=1)


async def run_async(
    mod: Module,
    inputs: Mapping[str, Any] | None = None,
    *,
    llm: Any = None,
    cache: Any = None,
    governor: Any = None,
    draw_index: int = 1,
    **kw_inputs: Any,
) -> Prediction:
    """Run a module once (the async twin of :func:`run`).

    Args:
        mod: the module.
        inputs: the inputs as a dict (or pass them as keyword arguments).
        llm: the model client, overriding the module's.
        cache: ``None``/``False`` (no cache), a :class:`~hrbench.runner.Cache` or a Store.
        governor: the budget for model calls; ``None`` gives the benchmark's default
            (:func:`~hrbench.runner.default_governor`).
        draw_index: the draw index of the request (default 1, as epoch 1 of evaluate()).
        **kw_inputs: the inputs by name.

    Returns:
        The prediction.

    Raises:
        ModelError: when a model module's run fails (failed request, refusal, unparseable
            reply); its ``context["failure_kind"]`` says which.
        BudgetRefused: when the governor refused the request.
        Exception: what a :func:`module_fn` function raised, unchanged.
    """
    draw_index = check_draw(draw_index)
    values = {**(inputs or {}), **kw_inputs}
    check_inputs(mod.signature, [values])
    ins = {n: values[n] for n in mod.signature.input_names}
    settings = settings_of(mod, llm, cache, governor)
    out = await run_one(mod, ins, settings, draw_index, "run", f"{mod.artifact_id}/run/{draw_index}")
    if out.prediction is not None:
        return out.prediction
    if isinstance(out.exc, RunFailure) or out.exc is None:
        raise ModelError(out.error or "the run failed", failure_kind=out.failure_kind)
    raise out.exc


def run(
    mod: Module,
    inputs: Mapping[str, Any] | None = None,
    *,
    llm: Any = None,
    cache: Any = None,
    governor: Any = None,
    draw_index: int = 1,
    **kw_inputs: Any,
) -> Prediction:
    """Run a module once on one set of inputs.

    A sync wrapper over :func:`run_async` (use that inside a running event loop).

    Args:
        mod: the module.
        inputs: the inputs as a dict (or pass them as keyword arguments).
        llm: the model client, overriding the module's.
        cache: ``None``/``False`` (no cache), a :class:`~hrbench.runner.Cache` or a Store.
        governor: the budget for model calls; ``None`` gives the benchmark's default
            (:func:`~hrbench.runner.default_governor`).
        draw_index: the draw index of the request (default 1, as epoch 1 of evaluate()).
        **kw_inputs: the inputs by name.

    Returns:
        The prediction.

    Raises:
        ModelError: when a model module's run fails (see :func:`run_async`).

    Example:
        >>> from hrbench.evaluation.modules import module_fn
        >>> rule = module_fn("text -> sentiment", lambda text: "negative")
        >>> run(rule, text="Awful.")
        Prediction(sentiment='negative')
    """

    async def go() -> Prediction:
        return await run_async(
            mod, inputs, llm=llm, cache=cache, governor=governor, draw_index=draw_index, **kw_inputs
        )

    return anyio.run(go)
