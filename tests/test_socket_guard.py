"""The socket guard (tests/_sockets.py) finds a TCP socket left open and names the test that opened it."""

from __future__ import annotations

import socket

import httpx2
import pytest

from hrbench.testing import LoopbackServer
from tests._sockets import open_tcp_sockets


def _is_open(sock: socket.socket) -> bool:
    return any(s is sock for s in open_tcp_sockets())


def test_an_open_socket_is_found_and_named_with_its_test(request: pytest.FixtureRequest) -> None:
    guard = request.config.pluginmanager.get_plugin("hrbench-socket-guard")
    sock = socket.socket()
    try:
        sock.bind(("127.0.0.1", 0))
        assert _is_open(sock)
        assert guard.describe(sock) == f"{request.node.nodeid}: {sock!r}"
    finally:
        sock.close()
    assert not _is_open(sock)


def test_a_client_kept_past_its_server_is_found_until_closed() -> None:
    """What the loopback limits' tests did: one client at module level, its connections kept."""
    client = httpx2.Client(trust_env=False)
    with LoopbackServer() as srv:
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        assert client.post(srv.base_url + "/chat/completions", json=body).status_code == 200
    try:
        assert [s for s in open_tcp_sockets() if _peer(s) == srv.port]
    finally:
        client.close()
    assert not [s for s in open_tcp_sockets() if _peer(s) == srv.port]


def _peer(sock: socket.socket) -> int | None:
    try:
        return int(sock.getpeername()[1])
    except OSError:
        return None
