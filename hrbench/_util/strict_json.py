"""JSON a caller's file holds, read as JSON is written: ``NaN`` and ``Infinity`` are not JSON.

Python's :func:`json.loads` accepts ``NaN``, ``Infinity`` and ``-Infinity`` (and
:func:`json.dumps` writes them for a float that is not finite), but RFC 8259 (section 6: "Numeric
values that cannot be represented ... such as Infinity and NaN are not permitted") has no such
number. Read as Python reads it, ``"label": NaN`` in a reference would be a float NaN, which the
scorers take for "no label" (:func:`hrbench.scoring.label_answers`): an item the file meant to
label would be scored NA in silence. Every JSON document of a caller's reference is read with
:func:`loads`, which refuses them as :class:`json.JSONDecodeError` naming the field (its path in
the document), the constant, and its place (line and column), like any other JSON error; ``null``
is the value JSON has for "none".
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["loads"]

_MARK = object()
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|(-?Infinity|NaN)', re.S)
"""A JSON string (skipped whole) or a constant that is not JSON."""


class _Constant(Exception):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def _refuse(name: str) -> Any:
    raise _Constant(name)


def _path_of(value: Any, at: str = "") -> str | None:
    """The path (``label``, ``answers[1]``, ``[2].label``) of the first :data:`_MARK` in ``value``."""
    if value is _MARK:
        return at
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, sub in items:
        step = f"[{key}]" if isinstance(key, int) else f"{at and '.'}{key}"
        found = _path_of(sub, at + step)
        if found is not None:
            return found
    return None


def loads(text: str, **kw: Any) -> Any:
    """``json.loads(text, **kw)``, refusing ``NaN``, ``Infinity`` and ``-Infinity`` (not JSON).

    Raises:
        json.JSONDecodeError: as :func:`json.loads`; a constant that is not JSON, its message
            naming the field it is the value of and what to write instead, its ``pos`` the
            constant's place in ``text``.

    Example:
        >>> loads('{"id": "q1", "label": null}')
        {'id': 'q1', 'label': None}
        >>> try:
        ...     loads('{"id": "q1", "label": NaN}')
        ... except json.JSONDecodeError as exc:
        ...     print(exc)
        `label` is NaN, a number JSON does not have; write null for none: line 1 column 23 (char 22)
    """
    try:
        return json.loads(text, parse_constant=_refuse, **kw)
    except _Constant as exc:
        where = _path_of(json.loads(text, parse_constant=lambda _: _MARK))
        pos = next((m.start(1) for m in _TOKEN.finditer(text) if m.group(1)), 0)
        said = f"`{where}` is {exc.name}" if where else exc.name
        msg = f"{said}, a number JSON does not have; write null for none"
        raise json.JSONDecodeError(msg, text, pos) from None
