"""An evaluation from plain data (a TOML or JSON spec, or the daemon's wire).

The module, the metric and the data built and run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import anyio
import msgspec

from hrbench import metrics as m
from hrbench.errors import ConfigError
from hrbench.evaluation.evaluate._evaluating import run_evaluation
from hrbench.evaluation.modules import Module
from hrbench.metrics import Metric, tatqa_exact_match, tatqa_f1
from hrbench.specs import build_client, load_object

__all__ = ["EvaluateSpec", "evaluate_spec", "evaluate_spec_async"]


class ModuleSpec(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """A module as plain data.

    Attributes:
        signature: the signature string.
        instructions: the instructions for a model module.
        fn: an import path ``package.module:function`` for a plain-function module; when absent
            the module is a model module (it needs ``client``).
        params: sampling parameters for a model module.
        name: the module's name.
    """

    signature: str
    instructions: str | None = None
    fn: str | None = None
    params: dict[str, Any] = msgspec.field(default_factory=dict)
    name: str | None = None


class MetricSpec(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """A metric as plain data.

    Attributes:
        name: ``"exact_match"``, ``"f1"``, ``"contains"``, ``"field_match"``, or an import path
            ``package.module:function`` of a custom metric ``fn(prediction, expected)``.
        field: the output field (built-ins; default: the module's only output).
        column: the data column (built-ins; default: the field's name).
        fields: the fields of ``field_match``.
        normalise: ``True``/``"squad"`` (SQuAD v2.0, the default), ``"numbers"`` (numbers, signs
            and one-letter answers intact: :func:`~hrbench.metrics.normalize_numbers`) or
            ``False``, for ``exact_match``, ``f1``, ``contains``, ``field_match``.
        threshold: when set, the pass mark of :func:`~hrbench.metrics.threshold` around the metric.
    """

    name: str = "exact_match"
    field: str | None = None
    column: str | None = None
    fields: list[str] | None = None
    normalise: bool | Literal["squad", "numbers"] = True
    threshold: float | None = None


class EvaluateSpec(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """An evaluate() call as plain data (the daemon's ``evaluate`` params, ``hrb eval``).

    Attributes:
        module: the module.
        data: the rows.
        metric: the metric: a name, or a :class:`MetricSpec`.
        client: the model client spec of a model module, as :func:`hrbench.specs.build_client`
            reads it (``{"kind": "mock", "reply": ...}``, ``{"kind": "openai", "model": ...,
            "base_url": ..., "api_key_env": ...}``, ``anthropic``, ``replay``).
        epochs, concurrency, return_format: as in :func:`evaluate`.
        cache: use the cache passed to :func:`evaluate_spec` (``False`` bypasses it).
        trace_context: the caller's correlation context, returned as given.
    """

    module: ModuleSpec
    data: list[dict[str, Any]]
    metric: str | MetricSpec = "exact_match"
    client: dict[str, Any] | None = None
    epochs: int = 1
    concurrency: int = 8
    return_format: str = "structured"
    cache: bool = True
    trace_context: Any = None


def _as_spec(spec: Any) -> EvaluateSpec:
    """An :class:`EvaluateSpec` from itself, a dict, or another Struct with the same fields."""
    if isinstance(spec, EvaluateSpec):
        return spec
    if not isinstance(spec, Mapping):
        spec = msgspec.to_builtins(spec)
    return msgspec.convert(spec, EvaluateSpec)


def _metric_from(spec: str | MetricSpec) -> Metric:
    if isinstance(spec, str):
        spec = MetricSpec(name=spec)
    sp = spec
    builtins: dict[str, Any] = {
        "exact_match": lambda: m.exact_match(sp.field, sp.column, normalise=sp.normalise),
        "f1": lambda: m.f1(sp.field, sp.column, normalise=sp.normalise),
        "contains": lambda: m.contains(sp.field, sp.column, normalise=sp.normalise),
        "field_match": lambda: m.field_match(sp.fields, normalise=sp.normalise),
        "tatqa_exact_match": lambda: tatqa_exact_match(sp.field, sp.column),
        "tatqa_f1": lambda: tatqa_f1(sp.field, sp.column),
    }
    met: Metric
    if sp.name in builtins:
        met = builtins[sp.name]()
    elif ":" in sp.name:
        met = m.custom(load_object(sp.name, "metric.name"))
    else:
        raise ConfigError(
            "metric.name", sp.name, f"expected one of {sorted(builtins)} or 'package.module:function'"
        )
    if sp.threshold is not None:
        met = m.threshold(met, sp.threshold)
    return met


def build_from_spec(spec: Mapping[str, Any] | EvaluateSpec, store: Any = None) -> tuple[Module, Metric, Any]:
    """The module, metric and client an :class:`EvaluateSpec` describes.

    Args:
        spec: the spec, as a dict or a struct.
        store: the :class:`~hrbench.store.Store` a ``replay`` client reads.

    Returns:
        ``(module, metric, client or None)``.

    Raises:
        msgspec.ValidationError: when the dict does not match :class:`EvaluateSpec` (the message
            gives the path, e.g. ``Object missing required field `signature` - at `$.module```).
        ConfigError: for an unknown metric, client kind or import path, or a bad signature.
    """
    from hrbench.evaluation.modules import module, module_fn

    s = _as_spec(spec)
    client = None if s.client is None else build_client(s.client, store)
    ms = s.module
    if ms.fn is not None:
        mod: Module = module_fn(ms.signature, load_object(ms.fn, "module.fn"), name=ms.name)
    else:
        mod = module(ms.signature, instructions=ms.instructions, params=ms.params, name=ms.name)
    return mod, _metric_from(s.metric), client


async def evaluate_spec_async(
    spec: Mapping[str, Any] | EvaluateSpec,
    *,
    cache: Any = None,
    governor: Any = None,
    store: Any = None,
    progress: bool = False,
) -> dict[str, Any]:
    r"""Run an evaluate() described by plain data; return the evaluation as plain data.

    For the daemon's ``evaluate`` method and ``hrb eval``: the wire carries no code, so the
    module is a signature (a model module) or an import path (a function module), the client a
    spec, the metric a built-in name or an import path.

    Args:
        spec: an :class:`EvaluateSpec` or a dict of its fields, e.g.
            ``{"module": {"signature": "text -> sentiment"}, "client": {"kind": "mock",
            "reply": "{\"sentiment\": \"positive\"}"}, "data": [...], "metric": "exact_match"}``.
        cache: the daemon's :class:`~hrbench.runner.Cache` (used unless the spec says
            ``"cache": false``).
        governor: the daemon's budget for these calls.
        store: the daemon's :class:`~hrbench.store.Store`, read by a ``replay`` client (default:
            the cache's store).
        progress: show a progress bar on stderr.

    Returns:
        :meth:`Evaluation.to_dict`, plus ``"warnings"``: the warning messages raised.

    Raises:
        msgspec.ValidationError: for a malformed spec (the message gives the path).
        ConfigError: for a bad value.
    """
    s = _as_spec(spec)
    mod, met, client = build_from_spec(s, store if store is not None else getattr(cache, "store", None))
    result, found = await run_evaluation(
        mod, s.data, met, s.epochs, cache if s.cache else False, client, s.concurrency, progress,
        s.return_format, s.trace_context, governor,
    )  # fmt: skip
    out = result.to_dict()
    out["warnings"] = [f"{type(w).__name__}: {w}" for w in found]
    return out


def evaluate_spec(spec: Mapping[str, Any] | EvaluateSpec, **kwargs: Any) -> dict[str, Any]:
    """Sync wrapper of :func:`evaluate_spec_async` (same arguments).

    Example:
        >>> out = evaluate_spec({
        ...     "module": {"signature": "text -> sentiment: enum('positive', 'negative')"},
        ...     "client": {"kind": "mock", "reply": '{"sentiment": "positive"}'},
        ...     "data": [{"text": "I love it!", "sentiment": "positive"},
        ...              {"text": "Awful.", "sentiment": "negative"}],
        ...     "metric": {"name": "exact_match", "field": "sentiment"},
        ...     "return_format": "simple",
        ... })
        >>> out["mean_score"], out["scores"]
        (0.5, [1.0, 0.0])
    """

    async def go() -> dict[str, Any]:
        return await evaluate_spec_async(spec, **kwargs)

    return anyio.run(go)
