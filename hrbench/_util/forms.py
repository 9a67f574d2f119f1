"""The forms of spec fields: URLs, names, environment variable names, and variable references.

Rule (bad input is refused before the first run, so ``base_url = "${VAR}"`` never fails 200
runs after 5 attempts each): every field with a
form is checked when its client or arm is built, which is before the first request for the
library, a TOML spec read by ``hrb`` and a spec on the wire alike (they all build through
:mod:`hrbench.specs` or the client classes). A value that holds a variable reference
(``${NAME}`` or ``$NAME``) in a field that is never expanded is refused naming the field and
the fields where variables are expanded; free text (a template, a system message, canned
replies, payloads, labels) is not checked for them, since ``$`` is ordinary text there.

Each check raises :class:`~hrbench.errors.ConfigError` naming the field and the value.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Collection, Mapping
from typing import Any
from urllib.parse import urlsplit

from hrbench._util.messages import did_you_mean
from hrbench.errors import ConfigError

__all__ = [
    "EXPANDED_FIELDS",
    "check_env_name",
    "check_fields",
    "check_name",
    "check_number",
    "check_one_of",
    "check_url",
    "refuse_variable",
]

_VARIABLE = re.compile(r"\$(?:\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

EXPANDED_FIELDS = (
    "environment variables are expanded only in the path fields of a TOML spec that `hrb` reads "
    "(reference.path, reference.ids_from, an outputs arm's path, python_path)"
)
"""Where variables are expanded, said in every refusal of a variable elsewhere."""


def refuse_variable(field: str, value: Any) -> None:
    """Refuse a value holding a variable reference (``${NAME}``, ``$NAME``) in a field not expanded.

    Raises:
        ConfigError: naming the field, the reference and where variables are expanded.

    Example:
        >>> refuse_variable("client.model", "gpt-4o-mini")
        >>> refuse_variable("client.base_url", "${LLM_URL}")
        Traceback (most recent call last):
        ...
        hrbench.errors.ConfigError: client.base_url: ${LLM_URL} is a variable reference, and this field is not expanded: environment variables are expanded only in the path fields of a TOML spec that `hrb` reads (reference.path, reference.ids_from, an outputs arm's path, python_path); write the value itself (got '${LLM_URL}')
    """
    if isinstance(value, str) and (m := _VARIABLE.search(value)) is not None:
        raise ConfigError(
            field,
            value,
            f"{m.group()} is a variable reference, and this field is not expanded: {EXPANDED_FIELDS}; "
            "write the value itself",
        )


def check_url(field: str, value: Any) -> str:
    """Refuse a base URL that is not ``http://`` or ``https://`` with a host.

    Also refused: a variable reference, white space, a port that is not a number from 0 to
    65535, and a query or fragment (the request's path, ``/chat/completions``, is appended to
    the base URL, so it would land inside them).

    Returns:
        The URL, unchanged.

    Raises:
        ConfigError: naming the field, the value and the rule it breaks.

    Example:
        >>> check_url("base_url", "http://127.0.0.1:8000/v1")
        'http://127.0.0.1:8000/v1'
        >>> check_url("base_url", "127.0.0.1:8000/v1")
        Traceback (most recent call last):
        ...
        hrbench.errors.ConfigError: base_url: expected an http:// or https:// URL with a host, such as http://127.0.0.1:8000/v1 (add http:// or https:// in front) (got '127.0.0.1:8000/v1')
    """
    expected = "expected an http:// or https:// URL with a host, such as http://127.0.0.1:8000/v1"
    if not isinstance(value, str):
        raise ConfigError(field, value, expected)
    refuse_variable(field, value)
    if not value:
        raise ConfigError(field, value, f"{expected} (leave the field out for the provider's own)")
    if any(c.isspace() or not c.isprintable() for c in value):
        raise ConfigError(field, value, f"{expected}, and a URL holds no spaces")
    parts = urlsplit(value)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        why = (
            f"not {parts.scheme}://"
            if parts.scheme and "://" in value
            else "add http:// or https:// in front"
        )
        raise ConfigError(field, value, f"{expected} ({why})")
    try:
        host, _ = parts.hostname, parts.port
    except ValueError:
        raise ConfigError(field, value, "the port is not a number from 0 to 65535") from None
    if not host or not value.lower().startswith(f"{scheme}://"):
        raise ConfigError(field, value, f"{expected} (it names no host)")
    if parts.query or parts.fragment or value.endswith(("?", "#")):
        raise ConfigError(
            field,
            value,
            "a base URL has no query or fragment: the request's path (/chat/completions, /messages) "
            "is appended to it",
        )
    return value


def check_name(field: str, value: Any, what: str = "a model name", optional: bool = False) -> str:
    """Refuse a name that is not a string, is empty or blank, or holds a variable reference.

    Args:
        field: the field named in the error.
        value: the name.
        what: what the field holds, said in the error.
        optional: the field may be left out (said in the error of an empty one).

    Example:
        >>> check_name("client.model", "gpt-4o-mini")
        'gpt-4o-mini'
        >>> check_name("arms[0].model", "", optional=True)
        Traceback (most recent call last):
        ...
        hrbench.errors.ConfigError: arms[0].model: expected a model name, not an empty one (leave the field out for the default) (got '')
    """
    if not isinstance(value, str):
        raise ConfigError(field, value, f"expected {what} (a string)")
    if not value.strip():
        left_out = " (leave the field out for the default)" if optional else ""
        raise ConfigError(field, value, f"expected {what}, not an empty one{left_out}")
    refuse_variable(field, value)
    return value


def check_env_name(field: str, value: Any) -> str | None:
    """Refuse an environment variable's name that is not one (``api_key_env``); ``None`` passes.

    Example:
        >>> check_env_name("client.api_key_env", "$OPENAI_API_KEY")
        Traceback (most recent call last):
        ...
        hrbench.errors.ConfigError: client.api_key_env: expected the NAME of an environment variable (letters, digits, _), without `$`: the client reads its value at each request (got '$OPENAI_API_KEY')
    """
    if value is None:
        return None
    if not isinstance(value, str) or _ENV_NAME.fullmatch(value) is None:
        without = ", without `$`" if isinstance(value, str) and value.startswith("$") else ""
        raise ConfigError(
            field,
            value,
            f"expected the NAME of an environment variable (letters, digits, _){without}: the client "
            "reads its value at each request",
        )
    return value


def check_number(
    field: str,
    value: Any,
    *,
    low: float,
    above: bool = False,
    high: float | None = None,
    whole: bool = False,
    unit: str = "",
) -> Any:
    """Refuse a number outside its range, NaN, infinity, or a bool; ``None`` passes.

    Args:
        field: the field named in the error.
        value: the number.
        low: the least value (excluded when ``above``).
        above: the value must be more than ``low``.
        high: the greatest value (included), or ``None``.
        whole: a whole number is expected.
        unit: said after the bound (``" seconds"``).

    Example:
        >>> check_number("client.timeout_s", 30, low=0, above=True, unit=" seconds")
        30
        >>> check_number("client.max_attempts", 0, low=1, whole=True)
        Traceback (most recent call last):
        ...
        hrbench.errors.ConfigError: client.max_attempts: expected a whole number, 1 or more (got 0)
    """
    if value is None:
        return None
    kind = "a whole number" if whole else "a number"
    bound = f"more than {low:g}{unit}" if above else f"{low:g}{unit} or more"
    if high is not None:
        bound += f", at most {high:g}"
    ok = (
        not isinstance(value, bool)
        and isinstance(value, (int, float))
        and (isinstance(value, int) or not whole)
        and math.isfinite(value)
        and (value > low if above else value >= low)
        and (high is None or value <= high)
    )
    if not ok:
        raise ConfigError(field, value, f"expected {kind}, {bound}")
    return value


def whole(field: str, value: Any, least: int | None = None) -> int:
    """``value`` as an ``int``: any whole number but a bool (numpy's and pandas' integers too).

    Args:
        field: the field named in the error.
        value: the number.
        least: the least value allowed, or ``None`` for any.

    Raises:
        ConfigError: not a whole number (a float, a string, a bool), or below ``least``.

    Example:
        >>> import numpy as np
        >>> whole("runs", np.int64(5), least=1)
        5
        >>> whole("runs", 2.5, least=1)
        Traceback (most recent call last):
        ...
        hrbench.errors.ConfigError: runs: expected a whole number >= 1 (got 2.5)
    """
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Integral)
        or (least is not None and value < least)
    ):
        raise ConfigError(
            field, value, "expected a whole number" + (f" >= {least}" if least is not None else "")
        )
    return int(value)


def check_one_of(field: str, value: Any, allowed: Collection[str], what: str = "unknown value") -> Any:
    """Refuse a value outside an enumeration: the field, the value, the closest allowed one and all.

    The words are the daemon's for a value outside a wire ``Literal`` or a ``kind`` tag
    (:func:`hrbench_client.protocol.enum_hint`), so the library and the wire say the same.

    Args:
        field: the field, for the error.
        value: what was given.
        allowed: every value allowed, in the order they are said.
        what: what the value is, said first (``"unknown arm kind"``).

    Returns:
        ``value``, when allowed.

    Raises:
        ConfigError: ``value`` is not one of ``allowed``.

    Example:
        >>> check_one_of("arms[0].format", "tatq", ("outputs", "tatqa"))
        Traceback (most recent call last):
        ...
        hrbench.errors.ConfigError: arms[0].format: unknown value; did you mean 'tatqa'? expected one of outputs, tatqa (got 'tatq')
    """
    known = list(allowed)
    if value not in known:
        hint = did_you_mean(value, known) if isinstance(value, str) else ""
        raise ConfigError(field, value, f"{what}; {hint}expected one of {', '.join(map(str, known))}")
    return value


def check_fields(where: str, spec: Any, known: Collection[str]) -> None:
    """Refuse a key of a mapping spec that is not one of its fields, with the closest field.

    A spec read by attribute (a wire Struct, whose decoder refuses unknown fields) passes.

    Example:
        >>> check_fields("client", {"kind": "openai", "model": "m"}, ("kind", "model", "base_url"))
        >>> check_fields("client", {"kind": "openai", "base_ur": "x"}, ("kind", "model", "base_url"))
        Traceback (most recent call last):
        ...
        hrbench.errors.ConfigError: client.base_ur: unknown field; did you mean 'base_url'? expected one of kind, model, base_url (got 'base_ur')
    """
    if not isinstance(spec, Mapping):
        return
    for key in spec:
        if key not in known:
            raise ConfigError(
                f"{where}.{key}",
                key,
                f"unknown field; {did_you_mean(str(key), list(known))}expected one of {', '.join(known)}",
            )
