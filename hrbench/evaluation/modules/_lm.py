"""A module that fills its outputs with one model call (:func:`module`).

The prompt, and the reply read back as JSON outputs.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any, TypedDict

import msgspec

from hrbench.errors import ConfigError
from hrbench.evaluation.modules._base import Module, RunFailure
from hrbench.evaluation.modules._signatures import Signature, signature
from hrbench.records import REFUSAL_REASONS, Result

__all__ = ["LMModule", "module"]


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
            from hrbench.scoring import plain_number

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
            raise RunFailure(
                f"parse_failure: the reply could not be parsed after one repair attempt: {exc} "
                f"(first attempt: {first_error})",
                "parse_failure",
            ) from None


def _checked_text(result: Result) -> str:
    if not result.ok:
        raise RunFailure(f"model error: {result.error or 'the request failed'}", "error")
    if result.refused or result.finish_reason in REFUSAL_REASONS:
        raise RunFailure(f"refusal: the model refused ({result.finish_reason or 'refused'})", "refusal")
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
            :class:`~hrbench.models.MockClient`), or a model name to ask the ``llm=``
            client for, or ``None`` to take both from ``llm=`` when run.
        instructions: what the model is asked to do (replaces the signature's).
        params: sampling parameters sent with every request (``temperature``, ``max_tokens``,
            ``response_format``, ...).
        name: the module's name (default ``"module"``); part of its cache key.

    Returns:
        The module.

    Example:
        >>> from hrbench.evaluation.modules import run
        >>> from hrbench.models import MockClient
        >>> client = MockClient(lambda messages, params: '{"sentiment": "positive"}')
        >>> classifier = module("text -> sentiment: enum('positive', 'negative')", model=client)
        >>> run(classifier, text="I love it!")
        Prediction(sentiment='positive')
    """
    sig = signature(signature_, instructions=instructions)
    return LMModule(sig, model=model, params=params, name=name)
