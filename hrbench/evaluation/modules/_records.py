"""What a module run gives back.

The prediction, the data row as an example, the trace of one run, and one row's result.
"""

from __future__ import annotations

from typing import Any

import msgspec

from hrbench.records import Step

__all__ = ["Example", "Prediction", "RowResult", "Trace"]


class _AttrDict(dict[str, Any]):
    """A dict whose keys are also attributes (``p.sentiment`` or ``p["sentiment"]``)."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"{type(self).__name__} has no field {name!r}") from None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.items())})"

    def __reduce__(self) -> Any:
        return (type(self), (dict(self),))


class Prediction(_AttrDict):
    """A module's outputs for one row: ``prediction.sentiment`` or ``prediction["sentiment"]``.

    Example:
        >>> p = Prediction(sentiment="positive")
        >>> p.sentiment == p["sentiment"] == "positive"
        True
    """

    __slots__ = ()


class Example(_AttrDict):
    """One data row as a metric sees it (``expected``): every column, by key or attribute.

    Example:
        >>> Example(text="Awful.", sentiment="negative").sentiment
        'negative'
    """

    __slots__ = ()


class Trace(msgspec.Struct, kw_only=True, gc=False):
    """One row's execution trace, as trace-aware metrics receive it.

    Traces can hold prompts, inputs and replies.

    Attributes:
        ledger_id: the row run's id (``<program>/<row>/<draw index>``).
        module: the module's name.
        draw_index: the draw index (the epoch) of the run.
        inputs: the inputs the module got.
        outputs: the outputs, or ``None`` when the run failed.
        steps: the model requests, in order (empty for a plain-function module).
        error: the run error's message, or ``None``.
        failure_kind: ``"parse_failure"``, ``"refusal"``, ``"budget_stop"`` or ``"error"`` for a
            failed run, else ``None``.
        seconds: wall-clock seconds of the run.
    """

    ledger_id: str
    module: str
    draw_index: int
    inputs: dict[str, Any] = msgspec.field(default_factory=dict)
    outputs: dict[str, Any] | None = None
    steps: list[Step] = msgspec.field(default_factory=list)
    error: str | None = None
    failure_kind: str | None = None
    seconds: float = 0.0


class RowResult(msgspec.Struct, kw_only=True, gc=False):
    """One row of :func:`run_dataset` with ``return_format="structured"``.

    Attributes:
        row: the row's 0-based position in the data.
        inputs: the inputs the module got.
        prediction: the outputs, or ``None`` when the run failed.
        error: the run error's message, or ``None``.
        failure_kind: why the run failed (see :class:`Trace`), or ``None``.
        metadata: call metadata: ``ledger_id``, ``module``, ``draw_index``, ``model``,
            ``n_calls``, ``repaired``, ``sources``, ``tokens_in``, ``tokens_out``,
            ``tokens_reasoning``, ``tokens_cached``, ``usd`` (``None`` when a cost is unknown),
            ``seconds``.
        trace: the row's :class:`Trace`.
    """

    row: int
    inputs: dict[str, Any]
    prediction: Prediction | None
    error: str | None
    failure_kind: str | None
    metadata: dict[str, Any]
    trace: Trace
