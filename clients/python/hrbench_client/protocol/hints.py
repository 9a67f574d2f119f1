"""Errors of decoding: the closest field's name when a message is about an unknown field."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from msgspec import Struct

__all__ = ["unknown_field_hint"]


def _walk(typ: Any) -> list[Any]:
    """The types ``typ`` may be: ``Annotated`` and unions unwrapped."""
    import typing

    origin = typing.get_origin(typ)
    if origin is Annotated:
        return _walk(typing.get_args(typ)[0])
    if origin is typing.Union or type(typ).__name__ == "UnionType":
        return [t for arg in typing.get_args(typ) for t in _walk(arg)]
    return [typ]


def _fields_at(typ: Any, path: str, data: Any) -> list[str]:
    """The field names of the Structs at a msgspec error path (``.client``, ``.arms[1]``)."""
    import re
    import typing

    types, at = _walk(typ), data
    for name, index in re.findall(r"\.(\w+)|\[([^\]]*)\]", path):
        step: list[Any] = []
        for t in types:
            if name and isinstance(t, type) and issubclass(t, Struct):
                step += [f.type for f in msgspec.structs.fields(t) if f.encode_name == name]
            elif index and typing.get_origin(t) in (list, dict):
                step.append(typing.get_args(t)[-1])
        types = [t for s in step for t in _walk(s)]
        if name:
            at = at.get(name) if isinstance(at, dict) else None
        else:
            at = at[int(index)] if index.isdigit() and isinstance(at, list) and int(index) < len(at) else None
    structs = [t for t in types if isinstance(t, type) and issubclass(t, Struct)]
    kind = at.get("kind") if isinstance(at, dict) else None
    tagged = [t for t in structs if kind is not None and t.__struct_config__.tag == kind]
    names: list[str] = []
    for t in tagged or structs:
        tag_field = t.__struct_config__.tag_field
        for n in ([tag_field] if tag_field else []) + [f.encode_name for f in msgspec.structs.fields(t)]:
            if n not in names:
                names.append(n)
    return names


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
    import difflib
    import re

    m = re.fullmatch(r"Object contains unknown field `([^`]*)`(?: - at `\$(.*)`)?", message, re.S)
    if m is None:
        return message
    if isinstance(data, (bytes, bytearray, memoryview, msgspec.Raw)):
        try:
            data = msgspec.json.decode(bytes(data))
        except msgspec.DecodeError:
            data = None
    close = difflib.get_close_matches(m.group(1), _fields_at(typ, m.group(2) or "", data), n=1)
    return f"{message} (did you mean `{close[0]}`?)" if close else message
