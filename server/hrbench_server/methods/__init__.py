"""The JSON-RPC methods. Each handler is thin: decode its params Struct, call the library, encode.

Handlers are registered on each connection's server by :func:`register`; they close over the
daemon's shared :class:`~hrbench_server.app.App`. Blocking work (SQLite, statistics) and any
scoring that may take long run in a worker thread so the event loop keeps serving other clients.

One module per family of methods, each registering its own handlers:

- :mod:`~hrbench_server.methods.score`: ``score``.
- :mod:`~hrbench_server.methods.benchmarks`: ``benchmark``, ``evaluate``, ``benchmark/cancel``.
- :mod:`~hrbench_server.methods.references`: ``reference/put|get|list``.
- :mod:`~hrbench_server.methods.cache`: ``cache/stats|clear``, ``recording/import|export``.
- :mod:`~hrbench_server.methods.views`: ``benchmark/rows``, ``report``, the ``hrb view`` views.
- :mod:`~hrbench_server.methods.housekeeping`: ``benchmark/delete``, ``gc``.
- :mod:`~hrbench_server.methods.lifecycle`: ``status``, ``shutdown``, ``auth``, ``initialize``.
- :mod:`hrbench_server.checks` (``benchmark/gate``, ``prices``) and :mod:`hrbench_server.interop`
  (``benchmark/export``).

What their handlers share (decoding, the ways a handler runs, resolving a benchmark id) is in
:mod:`~hrbench_server.methods._handlers`.
"""

from __future__ import annotations

from hrbench_server.app import App
from hrbench_server.checks import register_checks
from hrbench_server.interop import register_export
from hrbench_server.methods._handlers import async_handler, resolve
from hrbench_server.methods.benchmarks import register_benchmarks
from hrbench_server.methods.cache import register_cache
from hrbench_server.methods.housekeeping import register_housekeeping
from hrbench_server.methods.lifecycle import register_lifecycle
from hrbench_server.methods.references import register_references
from hrbench_server.methods.score import register_score
from hrbench_server.methods.views import register_views
from hrbench_server.rpc import RpcServer

__all__ = ["register"]


def register(server: RpcServer, app: App) -> None:
    """Register every method of :data:`hrbench_client.protocol.METHODS` on ``server``."""
    proto = server.protocol
    proto.graceful_cancel = app.cancel_soon  # Ctrl-C and a closed connection cancel as `hrb cancel` does
    feature = server.feature
    register_score(feature, app)  # inline when it is quick; else in a worker thread (case S12a)
    register_benchmarks(feature, proto, app)
    register_references(feature, app)
    register_cache(feature, app)
    register_housekeeping(feature, app)
    register_views(feature, app)
    register_checks(feature, app, async_handler)  # benchmark/gate and prices
    register_export(feature, app, async_handler, resolve)  # benchmark/export
    register_lifecycle(feature, proto, app)
