"""Warnings that point at the caller's line, however deep in hrbench, anyio or asyncio they start."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import threading
import warnings

import anyio

__all__ = ["warn_at_caller"]

_DIRS = tuple(
    os.path.dirname(p) + os.sep
    for m in (sys.modules["hrbench"], anyio, asyncio)
    for p in {m.__file__ or "", os.path.abspath(m.__file__ or "")}
)
_FILES = frozenset(
    p for m in (contextlib, threading) for p in (m.__file__ or "", os.path.abspath(m.__file__ or ""))
)


def _outside(filename: str) -> bool:
    if filename.startswith("<frozen"):
        return False
    return not filename.startswith(_DIRS) and filename not in _FILES  # no abspath: it may block


def warn_at_caller(message: str, category: type[Warning]) -> None:
    """Warn ``message`` at the first frame outside hrbench, anyio and asyncio (the user's line).

    Python 3.11 has no ``skip_file_prefixes``; this walks the stack instead (so a
    ``FewRunsWarning`` never points at asyncio's file).

    Example:
        >>> import warnings
        >>> with warnings.catch_warnings(record=True) as got:
        ...     warnings.simplefilter("always")
        ...     warn_at_caller("hello", UserWarning)
        >>> got[0].filename.endswith(".py") or got[0].filename.startswith("<doctest")
        True
    """
    level = 2
    frame = sys._getframe(1)
    while frame is not None and not _outside(frame.f_code.co_filename):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    if frame is None:
        level = 2
    warnings.warn(message, category, stacklevel=level)
