"""Tool definitions: Python functions and either provider's definitions, in one form.

Requests keep tools in OpenAI's form (``{"type": "function", "function": {"name",
"description", "parameters"}}``), which the Anthropic client turns into the Messages form
(:func:`hrbench.models._anthropic.anthropic_tool`). A definition in Anthropic's form (``{"name",
"description", "input_schema"}``) is converted here, and a Python function is described from
its signature: each parameter a property (``str`` a string, ``int`` an integer, ``float`` a
number, ``bool`` a boolean, ``list`` an array, ``dict`` an object; no annotation: any value),
those without a default required, and the docstring's first paragraph its description.
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable, Mapping
from typing import Any

from hrbench.errors import ConfigError

__all__ = ["TOOL_NAME", "function_definition", "tool_definitions"]

TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""What both providers accept as a tool's name."""

_JSON_TYPES: dict[Any, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    list: "array",
    dict: "object",
    "str": "string",
    "int": "integer",
    "float": "number",
    "bool": "boolean",
    "list": "array",
    "dict": "object",
}


def _check_name(name: Any) -> str:
    if not isinstance(name, str) or not TOOL_NAME.fullmatch(name):
        raise ConfigError(
            "tools", name, "a tool's name is 1 to 64 letters, digits, '_' or '-' (both providers' rule)"
        )
    return name


def _json_type(annotation: Any) -> str | None:
    """The JSON Schema type of an annotation (``list[int]`` is an array), or ``None``."""
    if annotation is inspect.Parameter.empty:
        return None
    origin = typing.get_origin(annotation)
    if origin is not None and origin in _JSON_TYPES:
        return _JSON_TYPES[origin]
    if isinstance(annotation, str):
        return _JSON_TYPES.get(annotation.split("[", 1)[0].strip())
    try:
        return _JSON_TYPES.get(annotation)
    except TypeError:  # an unhashable annotation
        return None


def function_definition(fn: Callable[..., Any], name: str | None = None) -> dict[str, Any]:
    """The tool definition of a Python function, in OpenAI's form.

    Args:
        fn: the function; keyword arguments are what the model sends.
        name: the tool's name; the function's ``__name__`` by default.

    Raises:
        ConfigError: a name neither provider accepts, or a function whose signature cannot be
            read (``*args`` or positional-only parameters, which a model cannot name).

    Example:
        >>> def lookup(city: str, year: int = 2024):
        ...     '''The population of a city in a year.'''
        >>> function_definition(lookup)["function"]["parameters"]["required"]
        ['city']
        >>> function_definition(lookup)["function"]["description"]
        'The population of a city in a year.'
    """
    tool = _check_name(name or getattr(fn, "__name__", None))
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise ConfigError("tools", tool, f"cannot read the function's signature ({exc})") from None
    try:
        hints = typing.get_type_hints(fn)
    except Exception:  # a name the annotations use is not importable here: read them as text
        hints = {}
    props: dict[str, Any] = {}
    required: list[str] = []
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.POSITIONAL_ONLY):
            raise ConfigError(
                "tools", tool, f"parameter {p.name!r} cannot be named by a model: use keyword parameters"
            )
        if p.kind is p.VAR_KEYWORD:
            continue
        kind = _json_type(hints.get(p.name, p.annotation))
        props[p.name] = {} if kind is None else {"type": kind}
        if p.default is p.empty:
            required.append(p.name)
    doc = inspect.getdoc(fn) or ""
    out: dict[str, Any] = {"name": tool}
    if doc:
        out["description"] = doc.split("\n\n", 1)[0].strip()
    out["parameters"] = {"type": "object", "properties": props, "required": required}
    return {"type": "function", "function": out}


def _definition(tool: Any, name: str | None = None) -> dict[str, Any]:
    if callable(tool) and not isinstance(tool, Mapping):
        return function_definition(tool, name)
    if not isinstance(tool, Mapping):
        raise ConfigError("tools", tool, "expected a tool definition (a table) or a Python function")
    fn = tool.get("function")
    if isinstance(fn, Mapping):  # OpenAI's form
        _check_name(fn.get("name"))
        return {**tool, "type": tool.get("type", "function"), "function": dict(fn)}
    if "input_schema" in tool or ("name" in tool and "parameters" not in tool):  # Anthropic's form
        out: dict[str, Any] = {"name": _check_name(tool.get("name"))}
        if tool.get("description"):
            out["description"] = tool["description"]
        out["parameters"] = tool.get("input_schema") or {"type": "object", "properties": {}}
        return {"type": "function", "function": out}
    if "name" in tool and "parameters" in tool:  # a bare function definition
        return {"type": "function", "function": {**tool, "name": _check_name(tool["name"])}}
    raise ConfigError("tools", tool, "expected OpenAI's {type, function} or Anthropic's {name, input_schema}")


def tool_definitions(tools: Any) -> list[dict[str, Any]]:
    """Tools in OpenAI's form, from definitions in either provider's form or Python functions.

    Args:
        tools: a list of definitions and functions, or a mapping of name to function (or to a
            definition).

    Returns:
        The definitions, in order.

    Raises:
        ConfigError: a tool that is neither, a name neither provider accepts, or a name given
            twice.

    Example:
        >>> [t["function"]["name"] for t in tool_definitions([{"name": "add", "input_schema": {"type": "object"}}])]
        ['add']
    """
    if isinstance(tools, Mapping):
        out = [_definition(fn, str(name)) for name, fn in tools.items()]
    elif isinstance(tools, (list, tuple)):
        out = [_definition(t) for t in tools]
    else:
        raise ConfigError("tools", tools, "expected a list of tools or a mapping of name to function")
    names = [t["function"]["name"] for t in out]
    for n in names:
        if names.count(n) > 1:
            raise ConfigError("tools", n, "two tools have this name")
    return out
