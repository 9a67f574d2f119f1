"""A module that fills its outputs with a plain Python function (:func:`module_fn`)."""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Callable, Mapping
from typing import Any

import anyio
import anyio.lowlevel
import anyio.to_thread

from hrbench.errors import ConfigError
from hrbench.evaluation.modules._base import Module, RunFailure
from hrbench.evaluation.modules._signatures import Signature, signature

__all__ = ["FnModule", "module_fn"]


class FnModule(Module):
    """A plain function as a module (made by :func:`module_fn`)."""

    def __init__(
        self, sig: Signature, fn: Callable[..., Any], name: str | None = None, thread: bool = False
    ) -> None:
        self.signature = sig
        self.fn = fn
        self.name = name or _fn_name(fn)
        self.thread = thread
        self.is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
            type(fn).__call__ if not inspect.isfunction(fn) else None
        )
        self._single = sig.outputs[0].name if len(sig.outputs) == 1 else None
        self._outputs = sig.output_names

    def __repr__(self) -> str:
        return f"module_fn({self.signature.spec!r}, {self.name})"

    @property
    def spec(self) -> dict[str, Any]:
        try:
            source = inspect.getsource(self.fn)
        except (OSError, TypeError):
            source = getattr(self.fn, "__qualname__", repr(self.fn))
        return {
            "kind": "module_fn",
            "name": self.name,
            "signature": self.signature.spec,
            "instructions": self.signature.instructions,
            "fn": f"{getattr(self.fn, '__module__', '?')}:{getattr(self.fn, '__qualname__', '?')}",
            "source_sha256": hashlib.sha256(source.encode()).hexdigest(),
        }

    def _outputs_of(self, out: Any) -> dict[str, Any]:
        single = self._single
        if single is not None and type(out) in _ATOMS:
            return {single: out}
        if isinstance(out, Mapping) and all(k in out for k in self._outputs):
            return dict(out)
        if single is not None:
            return {single: out}
        if isinstance(out, Mapping):
            missing = [k for k in self._outputs if k not in out]
            raise RunFailure(f"the function's result lacks output field(s) {missing}", "error")
        raise RunFailure(
            f"the function returned {type(out).__name__}; "
            f"a module with outputs {self._outputs} must return a dict",
            "error",
        )

    async def _acall(self, inputs: dict[str, Any], ctx: Any) -> dict[str, Any]:
        if self.is_async:
            out = await self.fn(**inputs)
        elif self.thread:
            out = await anyio.to_thread.run_sync(lambda: self.fn(**inputs))
        else:
            out = self.fn(**inputs)
        return self._outputs_of(out)


_ATOMS = frozenset({str, int, float, bool, type(None), list, tuple})


def _fn_name(fn: Callable[..., Any]) -> str:
    name = getattr(fn, "__name__", None) or type(fn).__name__
    return "module_fn" if name == "<lambda>" else name


def module_fn(
    signature_: str | Signature, fn: Callable[..., Any], *, name: str | None = None, thread: bool = False
) -> FnModule:
    """A plain function as a module (the seed's offline example).

    ``fn`` receives the signature's inputs as keyword arguments and returns the outputs as a
    dict, or the bare value when the signature has one output field. ``fn`` may be ``async``.

    A sync ``fn`` runs inline on the event loop (no thread hop per row), which suits
    the quick rules and lookups ``module_fn`` is for; pass ``thread=True`` for a function that
    blocks (I/O, a local model), so rows run in worker threads up to the concurrency limit.
    Outputs are taken as returned: they are not converted to the signature's types.

    Args:
        signature_: the signature (string or :class:`Signature`).
        fn: the function.
        name: the module's name (default: the function's name).
        thread: run a sync ``fn`` in a worker thread.

    Returns:
        The module.

    Example:
        >>> from hrbench.evaluation.modules import run
        >>> rule = module_fn("text -> sentiment",
        ...                  lambda text: "positive" if "great" in text.lower() else "negative")
        >>> run(rule, text="Great value").sentiment
        'positive'
    """
    if not callable(fn):
        raise ConfigError("fn", fn, "expected a function")
    return FnModule(signature(signature_), fn, name=name, thread=thread)
