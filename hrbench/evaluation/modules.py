"""Signatures and modules, the DSPy-style side of seed 003, and running them on rows.

A :class:`Signature` names a module's inputs and typed outputs; a module fills the outputs,
either with one model call (:func:`module`) or with a plain function (:func:`module_fn`).
:func:`run` runs a module once; :func:`run_dataset` runs it on every row of a data set.

Signature grammar (white space is free between tokens)::

    signature := fields "->" fields
    fields    := field ("," field)*
    field     := NAME [":" type] [DESCRIPTION]
    type      := "str" | "int" | "float" | "bool" | "list[" scalar "]"
               | "enum(" STRING ("," STRING)* ")"
    scalar    := "str" | "int" | "float" | "bool"
    NAME      := a Python identifier that is not a keyword and does not start with "_"
    STRING    := '...' or "..." (a backslash escapes the quote)
    DESCRIPTION := STRING

A field without a type is ``str``. Names must be unique across inputs and outputs. Examples:
``"text -> sentiment: enum('positive', 'negative')"``,
``'question: str "the question", context -> answer: str "a short span", confidence: float'``.
Instructions are not part of the string: pass ``signature(..., instructions=...)`` or
``module(..., instructions=...)``. A malformed signature raises
:class:`~hrbench.errors.SignatureError` with the column and the fragment at fault.

Example:
    >>> sig = signature("text -> sentiment: enum('positive', 'negative')")
    >>> [f.name for f in sig.inputs], sig.outputs[0].choices
    (['text'], ('positive', 'negative'))
    >>> rule = module_fn("text -> sentiment",
    ...                  lambda text: "positive" if "love" in text.lower() else "negative")
    >>> run(rule, text="I love it!")
    Prediction(sentiment='positive')
"""

from __future__ import annotations

import hashlib
import inspect
import json
import keyword
import math
import re
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal, TypedDict

import anyio
import anyio.lowlevel
import anyio.to_thread
import msgspec

from hrbench.arm import Context, RunInfo, current_run
from hrbench.errors import BudgetRefused, ConfigError, ModelError, SignatureError
from hrbench.results.records import REFUSAL_REASONS, Result, Step, Usage

__all__ = [
    "Example",
    "Field",
    "FnModule",
    "LMModule",
    "Module",
    "Prediction",
    "RowResult",
    "Signature",
    "Trace",
    "module",
    "module_fn",
    "rows_of",
    "run",
    "run_async",
    "run_dataset",
    "run_dataset_async",
    "signature",
]

# --------------------------------------------------------------------------- signatures

_SCALARS: dict[str, type] = {"str": str, "int": int, "float": float, "bool": bool}
_TYPE_HELP = "str, int, float, bool, list[str|int|float|bool] or enum('a', 'b', ...)"


class Field(msgspec.Struct, frozen=True, kw_only=True):
    """One input or output field of a signature.

    Attributes:
        name: the field's name.
        type: ``"str"``, ``"int"``, ``"float"``, ``"bool"``, ``"list[str]"`` (or another scalar
            in the brackets) or ``"enum"``.
        choices: the allowed values of an ``enum`` field.
        description: what the field holds, shown to the model.
    """

    name: str
    type: str = "str"
    choices: tuple[str, ...] | None = None
    description: str | None = None

    @property
    def annotation(self) -> Any:
        """The Python type the field's values are validated against."""
        if self.type == "enum":
            return Literal[self.choices]
        if self.type.startswith("list["):
            item: Any = _SCALARS[self.type[5:-1]]
            return list[item]
        return _SCALARS[self.type]

    def describe(self) -> str:
        """The field's type in words, for the prompt."""
        if self.type == "enum":
            return "one of " + ", ".join(json.dumps(c) for c in self.choices or ())
        return {"str": "string", "int": "integer", "float": "number", "bool": "boolean (true or false)"}.get(
            self.type, "JSON array of " + self.type[5:-1]
        )

    def __str__(self) -> str:
        if self.type == "enum":
            out = f"{self.name}: enum({', '.join(repr(c) for c in self.choices or ())})"
        else:
            out = f"{self.name}: {self.type}"
        if self.description is not None:
            out += " " + json.dumps(self.description)
        return out


class Signature(msgspec.Struct, frozen=True, kw_only=True):
    """A module's inputs, typed outputs and instructions (made by :func:`signature`).

    Attributes:
        inputs: the input fields, in order.
        outputs: the output fields, in order.
        instructions: what the model is asked to do, or ``None``.
    """

    inputs: tuple[Field, ...]
    outputs: tuple[Field, ...]
    instructions: str | None = None

    @property
    def input_names(self) -> list[str]:
        """The input fields' names."""
        return [f.name for f in self.inputs]

    @property
    def output_names(self) -> list[str]:
        """The output fields' names."""
        return [f.name for f in self.outputs]

    @property
    def spec(self) -> str:
        """The signature as a string that :func:`signature` parses back to it."""
        return ", ".join(map(str, self.inputs)) + " -> " + ", ".join(map(str, self.outputs))

    def __str__(self) -> str:
        return self.spec


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.seen: set[str] = set()

    def fail(self, why: str, at: int | None = None, length: int = 12) -> SignatureError:
        at = self.pos if at is None else at
        fragment = self.text[at : at + length] or "<end>"
        err = SignatureError("signature", self.text, f"{why} at column {at + 1} (near {fragment!r})")
        err.column = at + 1  # type: ignore[attr-defined]
        err.fragment = fragment  # type: ignore[attr-defined]
        return err

    def ws(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self, s: str) -> bool:
        self.ws()
        return self.text.startswith(s, self.pos)

    def take(self, s: str) -> bool:
        if self.peek(s):
            self.pos += len(s)
            return True
        return False

    def ident(self, what: str) -> tuple[str, int]:
        self.ws()
        m = re.compile(r"[^\W\d]\w*").match(self.text, self.pos)
        if m is None:
            raise self.fail(f"expected {what}")
        self.pos = m.end()
        return m.group(), m.start()

    def string(self, what: str) -> str:
        self.ws()
        start = self.pos
        if self.pos >= len(self.text) or self.text[self.pos] not in "'\"":
            raise self.fail(f"expected {what} in quotes")
        quote = self.text[self.pos]
        self.pos += 1
        out: list[str] = []
        while self.pos < len(self.text):
            ch = self.text[self.pos]
            if ch == "\\" and self.pos + 1 < len(self.text):
                out.append(self.text[self.pos + 1])
                self.pos += 2
                continue
            if ch == quote:
                self.pos += 1
                return "".join(out)
            out.append(ch)
            self.pos += 1
        raise self.fail("unterminated string", at=start)

    def type_(self, name: str) -> tuple[str, tuple[str, ...] | None]:
        word, at = self.ident("a type (" + _TYPE_HELP + ")")
        if word in _SCALARS:
            return word, None
        if word == "list":
            if not self.take("["):
                raise self.fail("expected '[' after list (list[str])")
            inner, inner_at = self.ident("a list element type")
            if inner not in _SCALARS:
                raise self.fail(
                    f"unknown list element type {inner!r}; expected str, int, float or bool", at=inner_at
                )
            if not self.take("]"):
                raise self.fail("expected ']' to close list[")
            return f"list[{inner}]", None
        if word == "enum":
            if not self.take("("):
                raise self.fail("expected '(' after enum (enum('a', 'b'))")
            choices: list[str] = []
            if self.peek(")"):
                raise self.fail("enum() needs at least one quoted choice")
            while True:
                self.ws()
                c_at = self.pos
                choice = self.string("an enum choice")
                if choice in choices:
                    raise self.fail(f"duplicate enum choice {choice!r}", at=c_at)
                choices.append(choice)
                if self.take(")"):
                    return "enum", tuple(choices)
                if not self.take(","):
                    raise self.fail("expected ',' or ')' in enum(...)")
        raise self.fail(f"unknown type {word!r} for field {name!r}; expected {_TYPE_HELP}", at=at)

    def field(self, side: str) -> Field:
        name, at = self.ident(f"{side} field name")
        if keyword.iskeyword(name) or name.startswith("_"):
            raise self.fail(f"{name!r} cannot be a field name", at=at)
        if name in self.seen:
            raise self.fail(f"duplicate field {name!r}", at=at)
        self.seen.add(name)
        type_, choices = "str", None
        if self.take(":"):
            type_, choices = self.type_(name)
        desc = None
        if self.peek('"') or self.peek("'"):
            desc = self.string("a description")
        return Field(name=name, type=type_, choices=choices, description=desc)

    def fields(self, side: str, stop: str | None) -> list[Field]:
        out = [self.field(side)]
        while True:
            if self.take(","):
                out.append(self.field(side))
                continue
            self.ws()
            if stop is not None and self.peek(stop):
                return out
            if stop is None and self.pos >= len(self.text):
                return out
            expected = f"',' or '{stop}'" if stop else "',' or the end of the signature"
            raise self.fail(f"expected {expected}")

    def parse(self) -> tuple[list[Field], list[Field]]:
        inputs = self.fields("an input", "->")
        self.take("->")
        outputs = self.fields("an output", None)
        return inputs, outputs


def signature(spec: str | Signature, instructions: str | None = None) -> Signature:
    """Parse a signature string (grammar in this module's docstring).

    Args:
        spec: ``"inputs -> outputs"``, or a :class:`Signature` (returned as is, with the
            instructions replaced when given).
        instructions: what the model is asked to do.

    Returns:
        The signature.

    Raises:
        SignatureError: when ``spec`` is malformed; the message gives the column and the
            fragment at fault (also as the ``column`` and ``fragment`` attributes).

    Example:
        >>> signature("text -> sentiment: enum('positive', 'negative')").spec
        "text: str -> sentiment: enum('positive', 'negative')"
        >>> signature("text -> sentiment: strr")
        Traceback (most recent call last):
        ...
        hrbench.errors.SignatureError: signature: unknown type 'strr' for field 'sentiment'; ...
    """
    if isinstance(spec, Signature):
        if instructions is None:
            return spec
        return msgspec.structs.replace(spec, instructions=instructions)
    if not isinstance(spec, str):
        raise SignatureError("signature", spec, "expected a string such as 'text -> sentiment'")
    inputs, outputs = _Parser(spec).parse()
    return Signature(inputs=tuple(inputs), outputs=tuple(outputs), instructions=instructions)


# --------------------------------------------------------------------------- predictions


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


# --------------------------------------------------------------------------- running context


class _RunFailure(Exception):
    def __init__(self, message: str, failure_kind: str) -> None:
        super().__init__(message)
        self.failure_kind = failure_kind


@dataclass
class _Settings:
    """What row runs share: the model client, cache and governor, and the call runtime."""

    llm: Any = None
    cache: Any = None
    governor: Any = None
    runtime: Any = None


def _resolve_cache(cache: Any) -> Any:
    """``None``/``False``: no cache; ``True``: the default store; a Store: a Cache on it; a Cache."""
    from hrbench.runner.cache import Cache
    from hrbench.store import Store

    if cache is None or cache is False:
        return None
    if cache is True:
        return Cache(Store())
    if isinstance(cache, Store):
        return Cache(cache)
    if isinstance(cache, Cache):
        return cache
    raise ConfigError("cache", cache, "expected None, False, True, a Cache or a Store")


def _settings(mod: Module, llm: Any, cache: Any, governor: Any) -> _Settings:
    """Resolve the cache and, for a model module, build the benchmark's call runtime.

    A model module's requests go through the same machinery as a benchmark arm's ``ctx.acall``
    (:class:`hrbench.arm.Context` on the benchmark runtime): the governor gate before every
    attempt, the draw-keyed cache (keyed by the module's name as the arm), pricing, duplicate-draw
    checks, and one trace step per request.
    """
    settings = _Settings(llm=llm, cache=_resolve_cache(cache), governor=governor)
    if mod.uses_model:
        client = llm if llm is not None else getattr(mod, "client", None)
        if client is None:
            raise ConfigError(
                "llm", None, "the module has no model client; pass module(..., model=client) or llm="
            )
        if not hasattr(client, "send"):
            raise ConfigError("llm", client, "expected a model client (an object with async send(request))")
        from hrbench.models.pricing import default_pricing
        from hrbench.runner.governor import Governor, default_governor
        from hrbench.runner.runtime import Runtime

        if governor is not None and not isinstance(governor, Governor):
            raise ConfigError("governor", governor, "expected an hrbench.Governor or None")
        gov = governor if governor is not None else default_governor()
        settings.llm = client
        settings.governor = gov
        settings.runtime = Runtime(client, gov, settings.cache, None, None, default_pricing())
    return settings


# --------------------------------------------------------------------------- modules


class Module:
    """The Module role: a signature and a way to fill its outputs.

    Attributes:
        signature: the module's signature.
        name: the module's name (part of its cache key and its ledger ids).
        uses_model: ``True`` when the module calls a model client.
    """

    signature: Signature
    name: str
    uses_model: bool = False

    @property
    def spec(self) -> dict[str, Any]:
        """What identifies the module: kind, name, signature and settings, as plain data."""
        raise NotImplementedError

    @property
    def hash(self) -> str:
        """The sha256 hex of :attr:`spec` (the program's identity)."""
        return hashlib.sha256(json.dumps(self.spec, sort_keys=True, default=str).encode()).hexdigest()

    @property
    def artifact_id(self) -> str:
        """``<name>-<first 12 hex of hash>``: the ``program_artifact_id`` of an evaluation."""
        return f"{self.name}-{self.hash[:12]}"

    async def _acall(self, inputs: dict[str, Any], ctx: Any) -> dict[str, Any]:
        raise NotImplementedError


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
            raise _RunFailure(f"the function's result lacks output field(s) {missing}", "error")
        raise _RunFailure(
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

    Decided: a sync ``fn`` runs inline on the event loop (no thread hop per row), which suits
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
        >>> rule = module_fn("text -> sentiment",
        ...                  lambda text: "positive" if "great" in text.lower() else "negative")
        >>> run(rule, text="Great value").sentiment
        'positive'
    """
    if not callable(fn):
        raise ConfigError("fn", fn, "expected a function")
    return FnModule(signature(signature_), fn, name=name, thread=thread)


@lru_cache(maxsize=256)
def _output_type(sig: Signature) -> Any:
    return TypedDict("Outputs", {f.name: f.annotation for f in sig.outputs})  # type: ignore[operator]


_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)


def _extract_json(text: str) -> str:
    t = text.strip()
    m = _FENCE.search(t)
    if m:
        t = m.group(1).strip()
    if not t.startswith("{"):
        i, j = t.find("{"), t.rfind("}")
        if i != -1 and j > i:
            t = t[i : j + 1]
    return t


def parse_outputs(sig: Signature, text: str | None) -> dict[str, Any]:
    r"""Parse a model's reply into the signature's typed outputs.

    The reply must hold one JSON object (a Markdown code fence around it, or prose before and
    after it, is tolerated). Values are validated with msgspec against the field types, leniently:
    ``"3"`` is accepted for an ``int``, ``"true"`` for a ``bool``, a number for a ``str`` (written
    in plain digits), and an enum choice in any letter case or with surrounding spaces. Keys
    that are not output fields are dropped.

    Args:
        sig: the signature.
        text: the reply's text.

    Returns:
        The outputs, keyed by field name.

    Raises:
        ValueError: when the reply holds no JSON object or a value fails validation; the message
            says where (``Expected `int`, got `str` - at `$.count```).

    Example:
        >>> parse_outputs(signature("q -> n: int, ok: bool"), '```json\n{"n": "3", "ok": true}\n```')
        {'n': 3, 'ok': True}
    """
    if not text or not text.strip():
        raise ValueError("the reply is empty; expected a JSON object")
    try:
        obj = msgspec.json.decode(_extract_json(text))
    except msgspec.DecodeError as exc:
        raise ValueError(f"the reply is not valid JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise ValueError(f"expected a JSON object with keys {sig.output_names}, got {type(obj).__name__}")
    for f in sig.outputs:
        v = obj.get(f.name)
        if f.type == "enum" and isinstance(v, str) and f.choices and v not in f.choices:
            folded = v.strip().casefold()
            for c in f.choices:
                if c.casefold() == folded:
                    obj[f.name] = c
                    break
        elif f.type == "str" and isinstance(v, (int, float)) and not isinstance(v, bool):
            from hrbench.scoring.scorer import plain_number

            obj[f.name] = plain_number(v) if not (isinstance(v, float) and not math.isfinite(v)) else str(v)
    try:
        out = msgspec.convert(obj, _output_type(sig), strict=False)
    except msgspec.ValidationError as exc:
        raise ValueError(str(exc)) from None
    return {f.name: out[f.name] for f in sig.outputs}


def _value_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return msgspec.json.encode(value).decode()
    except TypeError:
        return str(value)


class LMModule(Module):
    """A module that fills its outputs with one model call (made by :func:`module`)."""

    uses_model = True

    def __init__(
        self,
        sig: Signature,
        model: Any = None,
        params: Mapping[str, Any] | None = None,
        name: str | None = None,
    ) -> None:
        self.signature = sig
        if model is None or isinstance(model, str):
            self.client, self.model = None, model
        elif hasattr(model, "send"):
            self.client, self.model = model, None
        else:
            raise ConfigError("model", model, "expected a model client (with .send) or a model name")
        self.params = dict(params or {})
        self.name = name or "module"
        self._system = self._system_prompt()

    def __repr__(self) -> str:
        return f"module({self.signature.spec!r}, model={self.model or self.client!r})"

    @property
    def spec(self) -> dict[str, Any]:
        client = self.client
        return {
            "kind": "module",
            "name": self.name,
            "signature": self.signature.spec,
            "instructions": self.signature.instructions,
            "model": self.model or getattr(client, "model", None),
            "provider": getattr(client, "provider", None),
            "params": self.params,
        }

    def _system_prompt(self) -> str:
        sig = self.signature
        ins = ", ".join(f"`{n}`" for n in sig.input_names)
        outs = ", ".join(f"`{n}`" for n in sig.output_names)
        lines = [sig.instructions or f"Given the fields {ins}, produce the fields {outs}.", ""]
        lines.append("Input fields:")
        for f in sig.inputs:
            lines.append(f"- {f.name}" + (f": {f.description}" if f.description else ""))
        lines.append("Output fields:")
        for f in sig.outputs:
            lines.append(f"- {f.name} ({f.describe()})" + (f": {f.description}" if f.description else ""))
        lines.append("")
        keys = ", ".join(json.dumps(n) for n in sig.output_names)
        lines.append(f"Reply with a single JSON object and nothing else, with exactly the keys {keys}.")
        return "\n".join(lines)

    def messages(self, inputs: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The chat messages sent for ``inputs``.

        Args:
            inputs: the input values, by field name.

        Returns:
            A system message (instructions, fields, the JSON format) and a user message with
            one ``name: value`` block per input.
        """
        user = "\n\n".join(f"{n}: {_value_text(inputs[n])}" for n in self.signature.input_names)
        return [{"role": "system", "content": self._system}, {"role": "user", "content": user}]

    async def _acall(self, inputs: dict[str, Any], ctx: Any) -> dict[str, Any]:
        messages = self.messages(inputs)
        params = dict(self.params)
        if self.model:
            params["model"] = self.model
        result = await ctx.acall(messages, **params)
        text = _checked_text(result)
        try:
            return parse_outputs(self.signature, text)
        except ValueError as exc:
            first_error = str(exc)
        repair = messages + [
            {"role": "assistant", "content": text},
            {
                "role": "user",
                "content": f"Your reply could not be parsed: {first_error}\n"
                f"Reply again with only a JSON object with the keys "
                f"{', '.join(json.dumps(n) for n in self.signature.output_names)}.",
            },
        ]
        result = await ctx.acall(repair, **params)
        text = _checked_text(result)
        try:
            return parse_outputs(self.signature, text)
        except ValueError as exc:
            raise _RunFailure(
                f"parse_failure: the reply could not be parsed after one repair attempt: {exc} "
                f"(first attempt: {first_error})",
                "parse_failure",
            ) from None


def _checked_text(result: Result) -> str:
    if not result.ok:
        raise _RunFailure(f"model error: {result.error or 'the request failed'}", "error")
    if result.refused or result.finish_reason in REFUSAL_REASONS:
        raise _RunFailure(f"refusal: the model refused ({result.finish_reason or 'refused'})", "refusal")
    return result.text or ""


def module(
    signature_: str | Signature,
    model: Any = None,
    *,
    instructions: str | None = None,
    params: Mapping[str, Any] | None = None,
    name: str | None = None,
) -> LMModule:
    """A module that fills the signature's outputs with one model call per row.

    The request asks for a JSON object with the output fields, and the reply is parsed and
    validated against their types (:func:`parse_outputs`). On a parse or validation error the
    module makes one repair call: the same conversation plus its reply and the error, asking
    again. A reply that still fails is a run error (``failure_kind="parse_failure"``), never a
    crash; so are a failed request (``"error"``), a refusal (``"refusal"``) and a request the
    governor refused (``"budget_stop"``).

    Each request carries the run's draw index (epoch ``e`` of :func:`~hrbench.evaluation.evaluate.evaluate`
    is draw ``e``; :func:`run` uses draw 1) and goes through the governor and the cache (keyed by
    the request, the module's name and the draw index), and is recorded as a trace step.

    Args:
        signature_: the signature (string or :class:`Signature`).
        model: a model client (an object with ``send``, such as
            :class:`~hrbench.models.mock.MockClient`), or a model name to ask the ``llm=``
            client for, or ``None`` to take both from ``llm=`` when run.
        instructions: what the model is asked to do (replaces the signature's).
        params: sampling parameters sent with every request (``temperature``, ``max_tokens``,
            ``response_format``, ...).
        name: the module's name (default ``"module"``); part of its cache key.

    Returns:
        The module.

    Example:
        >>> from hrbench.models.mock import MockClient
        >>> client = MockClient(lambda messages, params: '{"sentiment": "positive"}')
        >>> classifier = module("text -> sentiment: enum('positive', 'negative')", model=client)
        >>> run(classifier, text="I love it!")
        Prediction(sentiment='positive')
    """
    sig = signature(signature_, instructions=instructions)
    return LMModule(sig, model=model, params=params, name=name)


# --------------------------------------------------------------------------- running


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


def _check_inputs(sig: Signature, rows: Sequence[Mapping[str, Any]]) -> None:
    names = sig.input_names
    for i, row in enumerate(rows):
        for n in names:
            if n not in row:
                raise ConfigError(
                    f"data[{i}]", sorted(row), f"the row has no column {n!r} for the signature input"
                )


class _Outcome:
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


async def _run_one(
    mod: Module,
    inputs: dict[str, Any],
    settings: _Settings,
    draw_index: int,
    item: str,
    ledger_id: str,
) -> _Outcome:
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
    except _RunFailure as exc:
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
) -> _Outcome:
    steps = ctx.trace if ctx is not None else []
    metadata = _metadata(mod, ledger_id, draw_index, steps, seconds)
    if ctx is not None and ctx.notes:
        metadata["notes"] = list(ctx.notes)
    trace = Trace(
        ledger_id=ledger_id, module=mod.name, draw_index=draw_index, inputs=inputs, outputs=prediction,
        steps=steps, error=error, failure_kind=failure_kind, seconds=seconds,
    )  # fmt: skip
    return _Outcome(prediction, error, failure_kind, metadata, trace, caught)


def _run_inline(mod: FnModule, inputs: dict[str, Any], draw_index: int, ledger_id: str) -> _Outcome:
    """:func:`_run_one` for a sync function module run inline: no coroutine, same outcome."""
    start = time.perf_counter()
    error = failure_kind = None
    caught: BaseException | None = None
    prediction: Prediction | None
    try:
        prediction = Prediction(mod._outputs_of(mod.fn(**inputs)))
    except _RunFailure as exc:
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


def _check_draw(draw_index: int) -> None:
    if isinstance(draw_index, bool) or not isinstance(draw_index, int) or draw_index < 1:
        raise ConfigError("draw_index", draw_index, "expected a whole number >= 1")


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
        cache: ``None``/``False`` (no cache), a :class:`~hrbench.runner.cache.Cache` or a Store.
        governor: the budget for model calls; ``None`` gives the benchmark's default
            (:func:`~hrbench.runner.governor.default_governor`).
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
    _check_draw(draw_index)
    values = {**(inputs or {}), **kw_inputs}
    _check_inputs(mod.signature, [values])
    ins = {n: values[n] for n in mod.signature.input_names}
    settings = _settings(mod, llm, cache, governor)
    out = await _run_one(mod, ins, settings, draw_index, "run", f"{mod.artifact_id}/run/{draw_index}")
    if out.prediction is not None:
        return out.prediction
    if isinstance(out.exc, _RunFailure) or out.exc is None:
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
        cache: ``None``/``False`` (no cache), a :class:`~hrbench.runner.cache.Cache` or a Store.
        governor: the budget for model calls; ``None`` gives the benchmark's default
            (:func:`~hrbench.runner.governor.default_governor`).
        draw_index: the draw index of the request (default 1, as epoch 1 of evaluate()).
        **kw_inputs: the inputs by name.

    Returns:
        The prediction.

    Raises:
        ModelError: when a model module's run fails (see :func:`run_async`).

    Example:
        >>> rule = module_fn("text -> sentiment", lambda text: "negative")
        >>> run(rule, text="Awful.")
        Prediction(sentiment='negative')
    """

    async def go() -> Prediction:
        return await run_async(
            mod, inputs, llm=llm, cache=cache, governor=governor, draw_index=draw_index, **kw_inputs
        )

    return anyio.run(go)


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


def _check_concurrency(concurrency: int) -> None:
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ConfigError("concurrency", concurrency, "expected a whole number >= 1")


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
        cache: ``None``/``False`` (no cache), a :class:`~hrbench.runner.cache.Cache` or a Store.
        governor: the budget for model calls; ``None`` gives the benchmark's default
            (:func:`~hrbench.runner.governor.default_governor`).
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
    _check_concurrency(concurrency)
    _check_draw(draw_index)
    rows = rows_of(data)
    _check_inputs(mod.signature, rows)
    settings = _settings(mod, llm, cache, governor)
    outcomes = await _run_rows(mod, rows, settings, [draw_index], concurrency, progress)
    out = outcomes[0]
    if return_format == "simple":
        return [o.prediction for o in out]
    return [_row_result(i, o) for i, o in enumerate(out)]


def _row_result(i: int, o: _Outcome) -> RowResult:
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
        cache: ``None``/``False`` (no cache), a :class:`~hrbench.runner.cache.Cache` or a Store.
        governor: the budget for model calls; ``None`` gives the benchmark's default
            (:func:`~hrbench.runner.governor.default_governor`).
        concurrency: the most rows in flight.
        progress: show a tqdm progress bar on stderr.
        draw_index: the draw index of every request.
        return_format: ``"simple"`` (predictions) or ``"structured"`` (:class:`RowResult` rows).

    Returns:
        One prediction (or :class:`RowResult`) per row, in row order.

    Example:
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


async def _run_rows(
    mod: Module,
    rows: Sequence[Mapping[str, Any]],
    settings: _Settings,
    draws: Sequence[int],
    concurrency: int,
    progress: bool,
    after: Callable[[int, int, _Outcome], Any] | None = None,
) -> list[list[_Outcome]]:
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
        outcome = await _run_one(
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
                    outcome = _run_inline(mod, {k: row[k] for k in names}, draw, f"{prefix}/{i}/{draw}")
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
