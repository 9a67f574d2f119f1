"""What every wire method's handler shares: decoding, running, benchmark ids, absolute paths.

A handler is registered in one of three shapes: :func:`sync_handler` (answered on the event
loop: the daemon's own state), :func:`async_handler` (a task: its blocking work goes to a worker
thread with :func:`to_thread`), :func:`inline_or_task` (answered at once when quick, else a task).
Each decodes its Struct (a bad field is -32602 naming it) and turns a library error into its
JSON-RPC error (:func:`hrbench_server.errors.to_rpc_error`).
"""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio.to_thread
import msgspec

from hrbench.errors import ConfigError, NotFound
from hrbench_client import protocol as p
from hrbench_server.app import App, warning_collector
from hrbench_server.errors import invalid_params, to_rpc_error
from hrbench_server.rpc import INLINE_OR_TASK

__all__ = [
    "absolute_path",
    "async_handler",
    "decode",
    "inline_or_task",
    "resolve",
    "running",
    "sync_handler",
    "to_thread",
]

S = TypeVar("S", bound=msgspec.Struct)
T = TypeVar("T")

_DECODERS: dict[type[Any], msgspec.json.Decoder[Any]] = {}


def decode(raw: Any, typ: type[S]) -> S:
    """Decode raw params into ``typ``; a validation error becomes -32602 with its field path.

    A value out of its range is said in words with the value given (``runs = 0: must be at
    least 1``), its field and rule also in the error's data (``field``, ``context.rule``) for a
    client that names the option it came from (:func:`hrbench_client.protocol.plain_range`).
    """
    dec = _DECODERS.get(typ)
    if dec is None:
        dec = _DECODERS[typ] = msgspec.json.Decoder(typ)
    try:
        out: S = (
            dec.decode(raw)
            if isinstance(raw, msgspec.Raw)
            else msgspec.convert({} if raw is None else raw, typ)
        )
        return out
    except msgspec.DecodeError as exc:  # ValidationError included; an unknown field gets the close name
        message, broken = str(exc), p.broken_range(str(exc))
        if broken is not None:  # a range broken: the field, the value given and the range, in words
            raise invalid_params(ValueError(p.plain_range(message, raw)), broken[0], broken[1]) from None
        said = p.enum_hint(
            p.unknown_field_hint(message, typ, raw), typ, raw
        )  # a misspelt value: the close one
        raise invalid_params(ValueError(said)) from None


def sync_handler(typ: type[S], fn: Callable[[S], Any]) -> Callable[[Any], Any]:
    """A handler answered on the event loop: ``fn`` gets the decoded ``typ`` and returns the result."""

    @functools.wraps(fn)
    def handler(params):  # type: ignore[no-untyped-def]  # pygls must not see an annotation
        args = decode(params, typ)
        try:
            return fn(args)
        except Exception as exc:
            raise to_rpc_error(exc) from None

    return handler


def async_handler(typ: type[S], fn: Callable[[S], Awaitable[Any]]) -> Callable[[Any], Awaitable[Any]]:
    """A handler run as a task; the warnings its work raises are collected for its reply."""

    @functools.wraps(fn)
    async def handler(params):  # type: ignore[no-untyped-def]
        args = decode(params, typ)
        sink: list[str] = []
        warning_collector.set(sink)
        try:
            return await fn(args)
        except Exception as exc:
            raise to_rpc_error(exc) from None
        except BaseExceptionGroup as eg:
            if eg.subgroup(lambda e: not isinstance(e, Exception)) is not None:
                raise
            raise to_rpc_error(eg) from None

    return handler


def inline_or_task(typ: type[S], fn: Callable[[S], Any]) -> Callable[[Any], Any]:
    """A handler whose ``fn`` returns its result, or an awaitable of it (work off the loop).

    The result is answered at once, as a sync handler's; an awaitable runs as a task, as an
    async handler's (:meth:`hrbench_server.rpc.HrbenchProtocol._execute_handler`).
    """

    async def later(pending: Awaitable[Any]) -> Any:
        try:
            return await pending
        except Exception as exc:
            raise to_rpc_error(exc) from None

    @functools.wraps(fn)
    def handler(params):  # type: ignore[no-untyped-def]
        args = decode(params, typ)
        try:
            out = fn(args)
        except Exception as exc:
            raise to_rpc_error(exc) from None
        return later(out) if inspect.isawaitable(out) else out

    setattr(handler, INLINE_OR_TASK, True)
    return handler


def to_thread(fn: Callable[..., T], *args: Any) -> Awaitable[T]:
    """``fn(*args)`` in a worker thread (SQLite, statistics), awaited."""
    return anyio.to_thread.run_sync(functools.partial(fn, *args))


def absolute_path(path: str, field: str) -> str:
    """``path`` with ``~`` expanded; refused unless absolute (the daemon's working directory is not the caller's).

    Raises:
        ConfigError: a relative path, naming ``field``.
    """
    if not os.path.isabs(os.path.expanduser(path)):
        raise ConfigError(
            field, path, "the daemon needs an absolute path (its working directory is not yours)"
        )
    return os.path.expanduser(path)


def resolve(app: App, ref: str, field: str = "id") -> str:
    """The benchmark id ``ref`` names: an id, a unique id prefix or a name (``Store.benchmark_resolve``).

    Rule (an unknown id gives one exit code, 2, for every command): every method taking a benchmark id refuses an unknown or ambiguous one here, in one
    shape, ``<field>: <why>; ... (got '<ref>')``, the unknown one naming the closest stored ids
    and names (:meth:`~hrbench.store.Store.benchmark_close_to`). Both are the caller's input:
    ``hrb`` exits 2.

    Raises:
        NotFound: nothing matches.
        ConfigError: an ambiguous prefix (the candidates are listed).
    """
    bid = app.store.benchmark_resolve(ref)
    if bid is None:
        hint = app.store.benchmark_close_to(ref)
        raise NotFound(
            f"{field}: no stored benchmark has this id, id prefix (4+ characters) or name; {hint}"
            f"`hrb ls` lists them (got {ref!r})",
            benchmark=ref,
            field=field,
        )
    return bid


def running(app: App) -> set[str]:
    """The ids of the benchmarks running in this daemon now."""
    return set(app.running)
