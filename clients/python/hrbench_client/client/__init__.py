"""A synchronous client of the hrbench daemon: standard library and msgspec only.

>>> from hrbench_client import connect
>>> with connect() as hb:  # starts a daemon if none runs  # doctest: +SKIP
...     print(hb.score("  paris ", label="Paris").correct)
...     stream = hb.benchmark({"arms": [...], "reference": "capitals", "client": {...}})
...     for row in stream:                                        # rows arrive as they are scored
...         print(row.item, row.correct)
...     print(stream.result.summary)
True

The daemon listens on a Unix socket in the state directory (``$HRBENCH_HOME`` or the user state
dir); :func:`connect` starts one (``python -m hrbench_server daemon``, detached) when asked.
:meth:`Client.spawn_stdio` runs a private server over pipes instead. Errors come back as the
typed exceptions of :mod:`hrbench_client.errors`.

The package's modules: :mod:`~hrbench_client.client.transport` (framing over a socket or pipes),
:mod:`~hrbench_client.client.connection` (:class:`Client` and its methods),
:mod:`~hrbench_client.client.stream` (:class:`BenchmarkStream`),
:mod:`~hrbench_client.client.outgoing` (what is added to a spec before it is sent) and
:mod:`~hrbench_client.client.daemon` (start, status, stop, :func:`connect`).
"""

from __future__ import annotations

from hrbench_client.client.connection import Client
from hrbench_client.client.daemon import DEFAULT_IDLE_EXIT_S as DEFAULT_IDLE_EXIT_S
from hrbench_client.client.daemon import _pid_alive as _pid_alive
from hrbench_client.client.daemon import (
    autostart_idle_exit_s,
    connect,
    daemon_status,
    start_daemon,
    stop_daemon,
)
from hrbench_client.client.outgoing import LIMIT_VARIABLES as LIMIT_VARIABLES
from hrbench_client.client.outgoing import keyed_reference, with_caller_env
from hrbench_client.client.stream import BenchmarkStream
from hrbench_client.client.transport import _server_command as _server_command

__all__ = [
    "BenchmarkStream",
    "Client",
    "connect",
    "autostart_idle_exit_s",
    "daemon_status",
    "keyed_reference",
    "start_daemon",
    "stop_daemon",
    "with_caller_env",
]
