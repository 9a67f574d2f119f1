"""The session's methods: ``initialize``, ``auth``, ``status`` and ``shutdown``."""

from __future__ import annotations

from typing import Any

from msgspec import Struct, field

from hrbench_client.protocol._base import _Spec

__all__ = [
    "AuthParams",
    "AuthResult",
    "HrbenchCapabilities",
    "InitializeParams",
    "InitializeResult",
    "ServerCapabilities",
    "ServerExperimental",
    "ServerInfo",
    "ShutdownParams",
    "ShutdownResult",
    "StatusParams",
    "StatusResult",
]


class StatusParams(_Spec):
    """Params of ``status`` (none)."""


class StatusResult(Struct, kw_only=True):
    """The daemon's state.

    ``cancel_grace_s``: how long a cancel, Ctrl-C in ``hrb bench``, a closed connection or the
    daemon's stop lets the requests already sent finish (``HRBENCH_CANCEL_GRACE_S`` of the
    daemon, else 10 s); ``hrb daemon stop`` waits that long more when benchmarks run.
    """

    protocol_version: int
    version: str
    pid: int
    uptime_s: float
    connections: int
    running: list[str]
    home: str
    transport: str
    idle_exit_s: float | None = None
    cancel_grace_s: float | None = None


class ShutdownParams(_Spec):
    """Params of ``shutdown`` (none; ``null`` is accepted as none).

    Without ``initialize`` on the connection, the daemon stops after answering
    (:class:`ShutdownResult`). After ``initialize`` (an LSP client), it is LSP's ``shutdown``:
    the answer is ``null``, later requests are refused, and the ``exit`` notification ends the
    connection (over stdio, the process).
    """


class ShutdownResult(Struct, kw_only=True):
    """Acknowledges ``shutdown`` (``null`` instead, after ``initialize``)."""

    ok: bool = True


class InitializeParams(Struct, kw_only=True):
    """Params of ``initialize``: LSP's ``InitializeParams``; every field is optional and unread.

    Sending ``initialize`` is optional for hrbench's own clients; LSP clients send it first.
    """

    processId: int | None = None  # noqa: N815 - LSP's spelling
    clientInfo: dict[str, Any] | None = None  # noqa: N815
    capabilities: dict[str, Any] = field(default_factory=dict)


class HrbenchCapabilities(Struct, kw_only=True):
    """What the server offers, under ``capabilities.experimental.hrbench`` of ``initialize``."""

    protocolVersion: int  # noqa: N815 - LSP's spelling
    methods: list[str] = field(default_factory=list)
    notifications: list[str] = field(default_factory=list)


class ServerExperimental(Struct, kw_only=True):
    """``capabilities.experimental``: hrbench's own capabilities."""

    hrbench: HrbenchCapabilities


class ServerCapabilities(Struct, kw_only=True):
    """The LSP ``ServerCapabilities`` hrbench announces (no document features; custom requests)."""

    experimental: ServerExperimental


class ServerInfo(Struct, kw_only=True):
    """LSP ``serverInfo``."""

    name: str
    version: str


class InitializeResult(Struct, kw_only=True):
    """LSP's ``InitializeResult``: the server's name and version, and its methods."""

    capabilities: ServerCapabilities
    serverInfo: ServerInfo  # noqa: N815 - LSP's spelling


class AuthParams(_Spec):
    """Params of ``auth``: the first message on a TCP connection, carrying the token file's content."""

    token: str


class AuthResult(Struct, kw_only=True):
    """Acknowledges ``auth``."""

    ok: bool = True
