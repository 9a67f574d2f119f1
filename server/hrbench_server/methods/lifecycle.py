"""The daemon's own methods: ``status``, ``shutdown``, ``auth`` and LSP's ``initialize``."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from typing import Any

from pygls.exceptions import JsonRpcInvalidRequest

from hrbench.runner.runtime import cancel_grace_s
from hrbench_client import protocol as p
from hrbench_server import __version__
from hrbench_server.app import App
from hrbench_server.methods._handlers import sync_handler
from hrbench_server.rpc import HrbenchProtocol

__all__ = ["register_lifecycle"]


def register_lifecycle(feature: Callable[[str], Any], proto: HrbenchProtocol, app: App) -> None:
    """Register ``status``, ``shutdown``, ``auth`` and ``initialize`` (answered on the event loop)."""

    def status(args: p.StatusParams) -> p.StatusResult:
        return p.StatusResult(
            protocol_version=p.PROTOCOL_VERSION,
            version=__version__,
            pid=os.getpid(),
            uptime_s=round(time.monotonic() - app.started, 3),
            connections=app.connections,
            running=sorted(app.running),
            home=str(app.home),
            transport=app.transport,
            idle_exit_s=app.idle_exit_s,
            cancel_grace_s=cancel_grace_s(),
        )

    def shutdown(args: p.ShutdownParams) -> p.ShutdownResult | None:
        if proto.lsp_session:  # LSP: answer null, then wait for `exit` (see hrbench_server.rpc)
            proto.shutdown_requested = True
            return None
        why = "a shutdown request" + ("" if app.transport == "stdio" else " (`hrb daemon stop`)")
        asyncio.get_running_loop().call_soon(app.stop, why)  # its cancelled benchmarks say why
        return p.ShutdownResult(ok=True)

    def initialize(args: p.InitializeParams) -> p.InitializeResult:
        """LSP's ``initialize``: once per connection (LSP: a second one is an InvalidRequest)."""
        if proto.lsp_session:
            raise JsonRpcInvalidRequest(
                "Invalid Request: `initialize` was already sent on this connection, and LSP allows it "
                "once per session; go on with the session, or send `shutdown` and `exit` and connect again",
                data=p.ErrorData(name="InvalidRequest", field="method"),
            )
        proto.lsp_session = True
        return _INITIALIZE_RESULT

    def auth(args: p.AuthParams) -> p.AuthResult:
        return p.AuthResult(ok=True)  # already authenticated (or a transport without a token)

    feature("status")(sync_handler(p.StatusParams, status))
    feature("shutdown")(sync_handler(p.ShutdownParams, shutdown))
    feature("auth")(sync_handler(p.AuthParams, auth))
    feature("initialize")(sync_handler(p.InitializeParams, initialize))


_INITIALIZE_RESULT = p.InitializeResult(
    capabilities=p.ServerCapabilities(
        experimental=p.ServerExperimental(
            hrbench=p.HrbenchCapabilities(
                protocolVersion=p.PROTOCOL_VERSION,
                methods=sorted(p.METHODS),
                notifications=sorted(p.NOTIFICATIONS),
            )
        )
    ),
    serverInfo=p.ServerInfo(name="hrbench", version=__version__),
)
