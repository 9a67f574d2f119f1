"""Errors of decoding: the closest name for an unknown field or value, and a range broken in words.

msgspec says ``Expected `int` >= 1 - at `$.runs```; :func:`plain_range` says ``runs = 0: must
be at least 1`` (the field, the value given, the range allowed), and ``hrb`` names the option
instead of the field when an option gave the value (``--alpha 2: must be below 0.5``).
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from msgspec import Struct

__all__ = ["broken_range", "closest", "enum_hint", "plain_range", "shown", "unknown_field_hint"]

_RULES = {">=": "at least", ">": "above", "<=": "at most", "<": "below"}
"""msgspec's comparison in a range message, and the words for it."""


def _walk(typ: Any) -> list[Any]:
    """The types ``typ`` may be: ``Annotated`` and unions unwrapped."""
    import typing

    origin = typing.get_origin(typ)
    if origin is Annotated:
        return _walk(typing.get_args(typ)[0])
    if origin is typing.Union or type(typ).__name__ == "UnionType":
        return [t for arg in typing.get_args(typ) for t in _walk(arg)]
    return [typ]


def _of_kind(types: list[Any], at: Any) -> list[Any]:
    """The Structs of ``types`` whose tag is the ``kind`` that ``at`` gives (all when none matches)."""
    structs = [t for t in types if isinstance(t, type) and issubclass(t, Struct)]
    kind = at.get("kind") if isinstance(at, dict) else None
    tagged = [t for t in structs if kind is not None and t.__struct_config__.tag == kind]
    return tagged or types


def _types_at(typ: Any, path: str, data: Any) -> tuple[list[Any], Any]:
    """The types at a msgspec error path (``.client``, ``.arms[1].format``) and the data there.

    A tagged union's member is the one whose tag is the data's ``kind``, at every step.
    """
    import re
    import typing

    types, at = _walk(typ), data
    for name, index in re.findall(r"\.(\w+)|\[([^\]]*)\]", path):
        step: list[Any] = []
        for t in _of_kind(types, at):
            if name and isinstance(t, type) and issubclass(t, Struct):
                step += [f.type for f in msgspec.structs.fields(t) if f.encode_name == name]
            elif index and typing.get_origin(t) in (list, dict):
                step.append(typing.get_args(t)[-1])
        types = [t for s in step for t in _walk(s)]
        if name:
            at = at.get(name) if isinstance(at, dict) else None
        else:
            at = at[int(index)] if index.isdigit() and isinstance(at, list) and int(index) < len(at) else None
    return types, at


def _fields_at(typ: Any, path: str, data: Any) -> list[str]:
    """The field names of the Structs at a msgspec error path (``.client``, ``.arms[1]``)."""
    types, at = _types_at(typ, path, data)
    structs = [t for t in _of_kind(types, at) if isinstance(t, type) and issubclass(t, Struct)]
    names: list[str] = []
    for t in structs:
        tag_field = t.__struct_config__.tag_field
        for n in ([tag_field] if tag_field else []) + [f.encode_name for f in msgspec.structs.fields(t)]:
            if n not in names:
                names.append(n)
    return names


def _decoded(data: Any) -> Any:
    """``data`` as decoded JSON when it is bytes (``None`` when they are not JSON), else as it is."""
    if isinstance(data, (bytes, bytearray, memoryview, msgspec.Raw)):
        try:
            return msgspec.json.decode(bytes(data))
        except msgspec.DecodeError:
            return None
    return data


def unknown_field_hint(message: str, typ: Any, data: Any = None) -> str:
    """A msgspec error message, with the closest field name when it is about an unknown field.

    Unchecked fields would fail late: msgspec says ``Object contains
    unknown field `base_ur` - at `$.client```; this adds ``(did you mean `base_url`?)`` from the
    fields of the Struct there (of the ``kind`` the object gives, when ``data`` holds it).
    ``hrb`` and the daemon both say it.

    Args:
        message: the error's message.
        typ: the type that was decoded (``BenchmarkParams``).
        data: what was decoded (a dict or JSON bytes), to tell a tagged union's member.

    Example:
        >>> from hrbench_client.protocol import BenchmarkParams
        >>> unknown_field_hint("Object contains unknown field `rusn`", BenchmarkParams)
        'Object contains unknown field `rusn` (did you mean `runs`?)'
    """
    import re

    m = re.fullmatch(r"Object contains unknown field `([^`]*)`(?: - at `\$(.*)`)?", message, re.S)
    if m is None:
        return message
    data = _decoded(data)
    near = closest(m.group(1), _fields_at(typ, m.group(2) or "", data))
    return f"{message} (did you mean `{near}`?)" if near is not None else message


def closest(name: str, known: list[str]) -> str | None:
    """The known name closest to ``name``: one that differs only by case first, else by :mod:`difflib`.

    Example:
        >>> closest("lmeval", ["rows", "lm-eval"]), closest("ROWS", ["rows"]), closest("zz", ["rows"])
        ('lm-eval', 'rows', None)
    """
    import difflib

    folded = [k for k in known if k.casefold() == name.casefold()]
    close = folded or difflib.get_close_matches(name, known, n=1)
    return close[0] if close else None


def _choices(types: list[Any]) -> list[Any]:
    """The values the ``Literal`` and ``Enum`` types among ``types`` allow, in their order."""
    import enum
    import typing

    out: list[Any] = []
    for t in types:
        if typing.get_origin(t) is typing.Literal:
            out += [v for v in typing.get_args(t) if v not in out]
        elif isinstance(t, type) and issubclass(t, enum.Enum):
            out += [m.value for m in t if m.value not in out]
    return out


def _at(path: str) -> str:
    """A field's path as an error names it (``arms[0].kind``) in the form :func:`_types_at` reads (``.arms[0].kind``)."""
    return f".{path}" if path and not path.startswith("[") else path


def _tags(typ: Any, path: str, data: Any) -> list[Any]:
    """The tags of the tagged union whose tag field ``path`` names (``arms[0].kind``: every arm kind)."""
    parent, _, name = path.rpartition(".")
    if not name.isidentifier():
        return []
    structs = [
        t for t in _types_at(typ, _at(parent), data)[0] if isinstance(t, type) and issubclass(t, Struct)
    ]
    out: list[Any] = []
    for t in structs:
        config = t.__struct_config__
        if config.tag_field == name and config.tag not in out:
            out.append(config.tag)
    return out


def enum_hint(message: str, typ: Any, data: Any = None) -> str:
    """A msgspec message about a value outside a ``Literal``, an ``Enum`` or a union's tags, said with the values allowed.

    msgspec says ``Invalid enum value 'lmeval' - at `$.reference.format``` (and ``Invalid value
    'promt' - at `$.arms[0].kind``` for a tag no member of a tagged union has) and no more;
    this says the field, the closest allowed value, every allowed value and the value given, in
    the form of hrbench's ``ConfigError`` (:func:`hrbench._util.forms.check_one_of` says the
    library's so): ``reference.format: unknown value; did you mean 'lm-eval'? expected one of
    rows, squad, tatqa, inspect, lm-eval, promptfoo (got 'lmeval')``. Other messages, and one
    whose place holds no such type, are returned as they are. ``hrb`` and the daemon both say it.

    Args:
        message: the error's message.
        typ: the type that was decoded (``BenchmarkParams``).
        data: what was decoded (a dict or JSON bytes), to tell a tagged union's member.

    Example:
        >>> from hrbench_client.protocol import BenchmarkParams
        >>> enum_hint("Invalid enum value 'lmeval' - at `$.reference.format`", BenchmarkParams)
        "reference.format: unknown value; did you mean 'lm-eval'? expected one of rows, squad, tatqa, inspect, lm-eval, promptfoo (got 'lmeval')"
        >>> enum_hint("Invalid value 'promt' - at `$.arms[0].kind`", BenchmarkParams)
        "arms[0].kind: unknown value; did you mean 'prompt'? expected one of prompt, reading, outputs, import (got 'promt')"
    """
    import re

    m = re.fullmatch(r"Invalid (enum )?value (.*) - at `\$\.?(.*)`", message, re.S)
    if m is None:
        return message
    data = _decoded(data)
    path = m.group(3)
    allowed = _choices(_types_at(typ, _at(path), data)[0])
    if not allowed and m.group(1) is None:
        allowed = _tags(typ, path, data)
    if not allowed:
        return message
    got = m.group(2)
    named = got[1:-1] if len(got) >= 2 and got[0] == got[-1] == "'" else got
    near = closest(named, [str(v) for v in allowed])
    hint = f"did you mean {near!r}? " if near is not None else ""
    return (
        f"{path or 'value'}: unknown value; {hint}expected one of {', '.join(map(str, allowed))} (got {got})"
    )


def broken_range(message: str) -> tuple[str, str] | None:
    """``(field path, rule)`` of a msgspec message about a value out of its range, else ``None``.

    The path is msgspec's without ``$.`` (``runs``, ``arms[0].temperature``); the rule says
    the range in words, a length's too.

    Example:
        >>> broken_range("Expected `float` < 0.5 - at `$.alpha`")
        ('alpha', 'must be below 0.5')
        >>> broken_range("Expected `array` of length >= 1 - at `$.models`")
        ('models', 'must have at least 1 item')
        >>> broken_range("Expected `int`, got `str` - at `$.runs`") is None
        True
    """
    import re

    m = re.fullmatch(
        r"Expected `(?P<type>[^`]+)`(?P<length> of length)? (?P<op>>=|>|<=|<) (?P<bound>\S+) - at `\$\.?(?P<path>[^`]*)`",
        message,
    )
    if m is None or not m["path"]:
        return None
    bound = m["bound"]
    try:
        bound = f"{float(bound):g}" if abs(float(bound)) < 1e15 else bound
    except ValueError:
        pass
    words = _RULES[m["op"]]
    if not m["length"]:
        return m["path"], f"must be {words} {bound}"
    unit = "character" if m["type"] == "str" else "item"
    return m["path"], f"must have {words} {bound} {unit}{'' if bound == '1' else 's'}"


def _value_at(data: Any, path: str) -> Any:
    """The value at a field path (``arms[0].temperature``) in decoded data; ``...`` when not there."""
    import re

    at = data
    for name, index in re.findall(r"(?:^|\.)(\w+)|\[([^\]]*)\]", path):
        if name and isinstance(at, dict) and name in at:
            at = at[name]
        elif index.isdigit() and isinstance(at, list) and int(index) < len(at):
            at = at[int(index)]
        else:
            return ...
    return at


def shown(value: Any) -> str:
    """A value as a spec or an option gives it: ``0``, ``2.5``, ``"x"``, ``[]`` (cut at 60 characters).

    Example:
        >>> shown(0), shown(2.0), shown("a"), shown([])
        ('0', '2', '"a"', '[]')
    """
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        text = str(int(value))
    else:
        text = msgspec.json.encode(value).decode() if not isinstance(value, float) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def plain_range(message: str, data: Any = None) -> str:
    """A msgspec range message said as the field, the value given and the range allowed; others unchanged.

    Args:
        message: msgspec's message (``Expected `int` >= 1 - at `$.runs```).
        data: what was decoded (a dict, or JSON bytes), to show the value given.

    Example:
        >>> plain_range("Expected `int` >= 1 - at `$.runs`", {"runs": 0})
        'runs = 0: must be at least 1'
        >>> plain_range("Expected `int`, got `str` - at `$.runs`", {"runs": "x"})
        'Expected `int`, got `str` - at `$.runs`'
    """
    found = broken_range(message)
    if found is None:
        return message
    path, rule = found
    data = _decoded(data)
    value = _value_at(data, path)
    return f"{path}: {rule}" if value is ... else f"{path} = {shown(value)}: {rule}"
