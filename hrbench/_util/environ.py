"""The caller's environment: variables a request brings with it, read before the process's own.

SPEC §4: a client of the daemon sends the values of the environment variables its spec names
(API keys) from the caller's shell; the daemon uses them for that request only and never writes
them anywhere. :func:`use_caller_env` installs them for the current task (a ``ContextVar``, so
the tasks and worker threads a benchmark starts see them, and other requests do not), and
:func:`env_value` is how model clients read a key: the caller's value first, then
``os.environ``. The library alone never sets a caller environment: ``env_value`` is then
``os.environ.get``.

Example:
    >>> import os
    >>> os.environ.pop("HRB_DOC_KEY", None)
    >>> with use_caller_env({"HRB_DOC_KEY": "from-the-caller"}):
    ...     env_value("HRB_DOC_KEY")
    'from-the-caller'
    >>> env_value("HRB_DOC_KEY") is None
    True
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Iterator, Mapping

__all__ = ["caller_env", "env_value", "use_caller_env"]

caller_env: contextvars.ContextVar[Mapping[str, str] | None] = contextvars.ContextVar(
    "hrbench_caller_env", default=None
)
"""The current request's caller environment (``None``: none; read ``os.environ`` only)."""


def env_value(name: str) -> str | None:
    """The value of environment variable ``name``: the caller's, else the process's; ``None`` if unset or empty."""
    env = caller_env.get()
    if env is not None and env.get(name):
        return env[name]
    return os.environ.get(name) or None


@contextlib.contextmanager
def use_caller_env(env: Mapping[str, str]) -> Iterator[None]:
    """Read ``env`` before ``os.environ`` inside the block (this task and those it starts)."""
    token = caller_env.set(dict(env))
    try:
        yield
    finally:
        caller_env.reset(token)
