"""Fingerprints of code and settings: what an arm's hash and a mock client's cache identity cover.

A fingerprint is a JSON-ready description of a callable: its bytecode, constants and names, its
defaults, the values in its closure and the module-level values its code reads, recursively.
Two callables with the same fingerprint compute the same function of their arguments as far as
their own code and data say (a responder that reads a file or the network is beyond it).
"""

from __future__ import annotations

import functools
import types
from typing import Any

__all__ = ["Unfingerprintable", "fingerprint"]

_MAX_DEPTH = 8
_MAX_ITEMS = 100_000


class Unfingerprintable(Exception):
    """Raised in strict mode for a value whose content cannot be described."""


def fingerprint(obj: Any, *, strict: bool = False) -> Any:
    """A stable, JSON-ready description of ``obj`` (code, constants, closure, defaults, globals).

    Args:
        obj: a function, method, ``functools.partial``, callable object or plain data.
        strict: describe objects by their attributes too, and the module-level values a
            function reads, and raise :class:`Unfingerprintable` for a structure nested deeper
            than 8 levels or holding more than 100,000 items, instead of describing it by its
            type name, which could hide a change. An object with no readable state (an
            ``itertools.count``, a lock, a ``random.Random``) is described by its type: its
            position in a stream of draws is not part of its identity.

    Returns:
        Nested lists, dicts, strings and numbers.

    Raises:
        Unfingerprintable: in strict mode, as above.

    Example:
        >>> fingerprint(lambda m, p: "a") == fingerprint(lambda m, p: "a")
        True
        >>> fingerprint(lambda m, p: "a") == fingerprint(lambda m, p: "b")
        False
    """
    return _fp(obj, 0, strict, set())


def _fp(obj: Any, depth: int, strict: bool, seen: set[int]) -> Any:
    if isinstance(obj, (str, int, float, bool)) or obj is None:
        return obj
    if depth > _MAX_DEPTH:
        if strict:
            raise Unfingerprintable(f"nested deeper than {_MAX_DEPTH} levels")
        return repr(type(obj))
    if isinstance(obj, bytes):
        return obj.hex()
    if isinstance(obj, types.ModuleType):
        return {"module": obj.__name__}
    if isinstance(obj, types.BuiltinFunctionType):
        return {"builtin": f"{getattr(obj, '__module__', '')}.{obj.__qualname__}"}
    if isinstance(obj, type):
        return {"type": f"{obj.__module__}.{obj.__qualname__}"}
    if id(obj) in seen:  # a cycle (a function that names itself): described once
        return {"cycle": type(obj).__qualname__}
    seen = seen | {id(obj)}
    if isinstance(obj, (list, tuple, set, frozenset)):
        items = sorted(obj, key=repr) if isinstance(obj, (set, frozenset)) else obj
        if strict and len(items) > _MAX_ITEMS:
            raise Unfingerprintable(f"a collection of {len(items)} items")
        return [_fp(x, depth + 1, strict, seen) for x in items]
    if isinstance(obj, dict):
        if strict and len(obj) > _MAX_ITEMS:
            raise Unfingerprintable(f"a mapping of {len(obj)} items")
        return {
            str(k): _fp(v, depth + 1, strict, seen) for k, v in sorted(obj.items(), key=lambda kv: str(kv[0]))
        }
    if isinstance(obj, types.CodeType):
        return {
            "code": obj.co_code.hex(),
            "consts": [_fp(c, depth + 1, strict, seen) for c in obj.co_consts],
            "names": list(obj.co_names),
        }
    if isinstance(obj, functools.partial):
        return {
            "partial": _fp(obj.func, depth + 1, strict, seen),
            "args": _fp(obj.args, depth + 1, strict, seen),
            "kw": _fp(obj.keywords, depth + 1, strict, seen),
        }
    if isinstance(obj, (types.FunctionType, types.MethodType)):
        return _function(obj, depth, strict, seen)
    spec = getattr(obj, "spec", None)
    if isinstance(spec, dict):
        return {"spec": _fp(spec, depth + 1, strict, seen)}
    call = type(obj).__dict__.get("__call__") if callable(obj) else None
    if isinstance(call, types.FunctionType):
        state = getattr(obj, "__dict__", None)
        return {
            "call": _fp(call, depth + 1, strict, seen),
            "state": _fp(state if isinstance(state, dict) else {}, depth + 1, strict, seen),
        }
    state = getattr(obj, "__dict__", None)
    if strict and isinstance(state, dict):  # an object: its type and its attributes
        return {
            "object": f"{type(obj).__module__}.{type(obj).__qualname__}",
            "state": _fp(state, depth + 1, strict, seen),
        }
    # an object with no readable state (a counter, a lock, a random stream): its type, whose
    # code is its behaviour; its position in a stream is not part of its identity
    return f"{type(obj).__module__}.{type(obj).__qualname__}"


def _function(obj: Any, depth: int, strict: bool, seen: set[int]) -> Any:
    fn = obj.__func__ if isinstance(obj, types.MethodType) else obj
    cells = []
    for c in fn.__closure__ or ():
        try:
            cells.append(_fp(c.cell_contents, depth + 1, strict, seen))
        except ValueError:  # an empty cell
            cells.append(None)
    out = {
        "fn": fn.__qualname__,
        "code": _fp(fn.__code__, depth + 1, strict, seen),
        "defaults": _fp(fn.__defaults__, depth + 1, strict, seen),
        "kwdefaults": _fp(fn.__kwdefaults__, depth + 1, strict, seen),
        "closure": cells,
    }
    if strict:  # the module-level values the code reads (a responder's lookup table)
        glob = fn.__globals__
        out["globals"] = {
            n: _fp(glob[n], depth + 1, strict, seen) for n in _global_names(fn.__code__) if n in glob
        }
    if isinstance(obj, types.MethodType):
        state = getattr(obj.__self__, "__dict__", None)
        out["self"] = _fp(state if isinstance(state, dict) else {}, depth + 1, strict, seen)
    return out


def _global_names(code: types.CodeType) -> list[str]:
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):  # nested functions and comprehensions
            names.update(_global_names(c))
    return sorted(names)
