"""Reading a spec's fields, and loading the code a spec names (``package.module:attribute``).

A spec is read by attribute (the daemon's msgspec Structs) or by key (a plain dict), so the
core imports nothing from the daemon or the clients. An import path is code: it is refused
where :data:`code_allowed` is false (a TCP connection to the daemon).
"""

from __future__ import annotations

import contextvars
import importlib
import os
import sys
import threading
from collections.abc import Mapping
from typing import Any

from hrbench.errors import CodeRefused, ConfigError

__all__ = ["check_code_allowed", "code_allowed", "load_object"]

_MISSING = object()


def _get(spec: Any, name: str, default: Any = None) -> Any:
    if isinstance(spec, Mapping):
        return spec.get(name, default)
    return getattr(spec, name, default)


def _kind(spec: Any, what: str) -> str:
    kind = _get(spec, "kind")
    if kind is None and not isinstance(spec, Mapping):  # a msgspec tagged Struct keeps its tag on the class
        config = getattr(type(spec), "__struct_config__", None)
        kind = getattr(config, "tag", None)
    if not isinstance(kind, str):
        raise ConfigError(f"{what}.kind", kind, "a spec needs a `kind`")
    return kind


_MTIMES: dict[str, int] = {}


def _mtime(module: Any) -> int | None:
    file = getattr(module, "__file__", None)
    try:
        return os.stat(file).st_mtime_ns if file else None
    except OSError:
        return None


_RELOAD_LOCK = threading.RLock()  # reentrant: a module's body may itself call load_object


def _import(module_name: str) -> Any:
    """Import a module; reload one imported here before whose file changed since.

    Safe from several threads at once (the daemon builds concurrent benchmarks in worker
    threads): the module always comes from ``importlib.import_module``, which waits while
    another thread is still running the module's body, never from a bare ``sys.modules``
    look-up, which can return a module half initialised (its later attributes missing).
    """
    if module_name not in sys.modules:
        importlib.invalidate_caches()  # a module written after start-up must be found
        module = importlib.import_module(module_name)
        with _RELOAD_LOCK:
            _MTIMES[module_name] = _mtime(module) or 0
        return module
    module = importlib.import_module(module_name)
    with _RELOAD_LOCK:
        seen = _MTIMES.get(module_name)
        now = _mtime(module)
        if seen is not None and now is not None and now != seen:
            module = importlib.reload(module)
            _MTIMES[module_name] = now
    return module


code_allowed: contextvars.ContextVar[bool] = contextvars.ContextVar("hrbench_code_allowed", default=True)
"""Whether specs may name code (import paths, ``python_path``) in this context.

True in the library and over the daemon's stdio and Unix socket; the daemon sets it false for
a TCP connection unless started with ``--allow-code-over-tcp`` (SPEC §4). Worker threads see
the value of the task that started them (``anyio.to_thread`` copies the context).
"""


def check_code_allowed(field: str, value: Any) -> None:
    """Refuse code (an import path, a ``python_path``) where :data:`code_allowed` is false.

    Raises:
        CodeRefused: naming the field and the value.

    Example:
        >>> check_code_allowed("scorer", "mymod:score")  # the library: allowed
    """
    if not code_allowed.get():
        raise CodeRefused(
            field,
            value,
            "an import path is code run with the daemon user's rights; it is refused over TCP "
            "(use the Unix socket or stdio, or start the daemon with --allow-code-over-tcp)",
        )


def load_object(path: str, field: str = "path") -> Any:
    """Import ``package.module:attribute`` (the attribute may be dotted).

    A long-lived process (the daemon) sees edits: a module first imported by this function is
    reloaded when its file changed since.

    Args:
        path: the import path.
        field: the spec field named in errors.

    Returns:
        The attribute.

    Raises:
        ConfigError: a malformed path, a module that cannot be imported, a missing attribute.
        CodeRefused: where :data:`code_allowed` is false (a TCP connection to the daemon).

    Example:
        >>> load_object("json:dumps")([1])
        '[1]'
    """
    check_code_allowed(field, path)
    module_name, sep, attr = path.partition(":")
    if not sep or not module_name or not attr:
        raise ConfigError(field, path, "expected `package.module:attribute`")
    try:
        obj: Any = _import(module_name)
    except ImportError as exc:
        raise ConfigError(
            field, path, f"cannot import module {module_name!r} ({type(exc).__name__})"
        ) from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ConfigError(field, path, f"module {module_name!r} has no attribute {attr!r}") from None
    return obj
