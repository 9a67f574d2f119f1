"""Signatures.

A module's named inputs and typed outputs, parsed from a string (the grammar is in
:mod:`hrbench.evaluation.modules`).
"""

from __future__ import annotations

import json
import keyword
import re
from typing import Any, Literal

import msgspec

from hrbench.errors import SignatureError

__all__ = ["Field", "Signature", "signature"]


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
