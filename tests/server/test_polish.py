"""Small faults seen through a real daemon (polish): reference/put's answer."""

from __future__ import annotations

import socket
import uuid

import pytest

from hrbench.testing import LoopbackServer
from tests.server._daemon import Daemon, spec


@pytest.mark.parametrize("name", [None, "polish-ref"])
def test_reference_put_says_whether_the_content_is_new_and_when(
    shared_daemon: Daemon, name: str | None
) -> None:
    ref = {"items": {"a": uuid.uuid4().hex}, "labels": ["x"]}  # content no other test stores
    with shared_daemon.client() as c:
        first = c.references.put(ref, name=name)
        again = c.references.put(ref, name=name)
        other = c.references.put(ref, name=f"polish-other-{uuid.uuid4().hex[:6]}")
        listed = {(r.hash, r.name): r.created for r in c.references.list()}
    assert (first.new, again.new, other.new) == (True, False, False)
    assert first.hash == again.hash == other.hash
    assert again.created is not None and again.created.endswith("+00:00")
    assert listed[(other.hash, other.name)] == other.created
    if name is not None:
        assert listed[(again.hash, name)] == again.created


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(
    ("faults", "dead"),
    [((), False), (("500", "503", "500"), False), (("429",), False), ((), True)],
)
def test_calls_are_the_requests_the_server_received(
    shared_daemon: Daemon, faults: tuple[str, ...], dead: bool
) -> None:
    """Calls are the requests the server received (never 101 for 100): a retry is a call the server
    receives; an attempt that cannot connect (nothing listens) was never sent and is not one."""
    name = f"calls-{uuid.uuid4().hex[:8]}"
    with LoopbackServer() as srv, shared_daemon.client() as c:
        srv.push(*faults)
        url = f"http://127.0.0.1:{_free_port()}/v1" if dead else srv.base_url
        client = {"kind": "openai", "model": "loopback-1", "base_url": url, "api_key_env": None}
        rows = list(c.benchmark(spec(name=name, cache=False, client=client, governor={"max_calls": 100})))
        (listed,) = [b for b in c.benchmarks() if b.name == name]
        received = len(srv.requests) if not dead else 0
    assert len(rows) == 20 and all(r.failure_kind == "error" for r in rows) == dead
    assert listed.calls == received == (0 if dead else 20 + len(faults))
