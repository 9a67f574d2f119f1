"""Library errors to JSON-RPC errors.

Each :class:`hrbench.errors.HrbenchError` subclass has a stable ``code`` (a class attribute,
-32001 .. -32011); the daemon sends that code, the exception's message and, in ``error.data``,
its class name (``{"name": "BudgetRefused", "limit": "call_cap_reached"}``) so that a client
raises the same typed exception again. msgspec validation errors become -32602 with msgspec's
field path. Anything else is -32603 with the exception's *type name only*: the traceback goes to
the daemon's log, never to the client (no tracebacks, no file paths on the wire).

As a last line of defence, every message sent is scrubbed of the values of secret environment
variables (a client's ``api_key_env``, or a credential-like name such as ``*_API_KEY``,
``*_TOKEN``, ``*_SECRET``, ``*PASSWORD*``, but not ``*_DIR``/``*_PATH``/``*_FILE`` or
``TIKTOKEN_*``: :func:`hrbench._util.redact.is_secret_name`), in the daemon's environment and the
caller's, in any echo of them (plain, base64, URL-encoded, spaced out:
:func:`hrbench._util.redact.redact`).
"""

from __future__ import annotations

import logging
import os
from typing import Any

import msgspec
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from hrbench._util.environ import caller_env
from hrbench._util.redact import redact, secret_values
from hrbench.errors import HrbenchError
from hrbench_client import protocol as p
from hrbench_client.protocol import ERROR_CODES, ErrorData

__all__ = ["invalid_params", "scrub", "to_rpc_error"]

logger = logging.getLogger("hrbench_server")


def scrub(text: str) -> str:
    """Remove the value of every secret-looking environment variable from ``text``, in any echo.

    Plain, base64, URL-encoded, escaped or spaced out (:func:`hrbench._util.redact.redact`), and
    anything shaped like a key.

    Example:
        >>> os.environ["HRB_DOCTEST_API_KEY"] = "hrb-doctest-0123456789"
        >>> scrub("echo: h r b - d o c t e s t - 0 1 2 3 4 5 6 7 8 9")
        'echo: ***'
        >>> del os.environ["HRB_DOCTEST_API_KEY"]
    """
    values = secret_values(os.environ)
    env = caller_env.get()
    if env:
        values += secret_values(env)
    return redact(text, *values)


def invalid_params(exc: Exception, field: str | None = None, rule: str | None = None) -> JsonRpcException:
    """A -32602 error carrying msgspec's message (``... - at `$.arms[0].name```).

    ``field`` and ``rule``: the field path and the range it broke (``"runs"``, ``"must be at
    least 1"``), sent in ``data`` as ``field`` and ``context.rule``.
    """
    context = {"rule": scrub(rule)} if rule else None
    return JsonRpcInvalidParams(
        scrub(str(exc)), data=ErrorData(name="InvalidParams", field=field, context=context)
    )


def _context(ctx: dict[str, Any]) -> dict[str, Any] | None:
    out = {
        k: v for k, v in ctx.items() if isinstance(v, (str, int, float, bool)) and k not in ("field", "limit")
    }
    return {k: scrub(v) if isinstance(v, str) else v for k, v in out.items()} or None


def _first(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def to_rpc_error(exc: BaseException) -> JsonRpcException:
    """The JSON-RPC error for an exception raised by a handler.

    Args:
        exc: what the handler raised (an exception group is unwrapped to its first member).

    Returns:
        A pygls ``JsonRpcException`` with our code, a message and :class:`ErrorData`.
    """
    exc = _first(exc)
    if isinstance(exc, JsonRpcException):
        return exc
    if isinstance(exc, msgspec.ValidationError):
        broken = p.broken_range(str(exc))
        if broken is not None:  # a range broken: said in words, as a decoded request's
            return invalid_params(ValueError(p.plain_range(str(exc))), *broken)
        return invalid_params(exc)
    if isinstance(exc, HrbenchError):
        data = ErrorData(
            name=type(exc).__name__,
            field=getattr(exc, "field", None),
            limit=getattr(exc, "limit", None),
            context=_context(getattr(exc, "context", {}) or {}),
        )
        return JsonRpcException(scrub(str(exc)), code=int(type(exc).code), data=data)
    logger.error("internal error", exc_info=(type(exc), exc, exc.__traceback__))
    name = type(exc).__name__
    return JsonRpcException(
        f"internal error ({name}); the daemon log has the details",
        code=ERROR_CODES["InternalError"],
        data=ErrorData(name="InternalError", context={"type": name}),
    )
