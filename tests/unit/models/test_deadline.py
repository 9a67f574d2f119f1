"""The total deadline of an attempt, and whether its request was written whole.

An attempt may take ``timeout_s``, connect to last byte: a server that drips its reply a byte at
a time (each read well inside the HTTP library's own read timeout) is cut at ``timeout_s``. One
timer per event loop and ``timeout_s`` watches every attempt (:mod:`hrbench.models._deadline`),
so these tests also cover attempts that start and end while the timer is set for an older one,
several at once, and two timeouts side by side. The written-whole rule: an attempt whose request
was cut while being written is given back (no call); one written whole is booked as lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import threading
import time
from collections.abc import Iterator
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from hrbench.models import OpenAIClient
from hrbench.models._deadline import _Scoped, deadline
from tests._slow import current, slow
from tests.unit.models.conftest import FAST, req

REPLY = (
    b'{"id":"r1","model":"loopback-1","choices":[{"index":0,"message":{"role":"assistant",'
    b'"content":"fine"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}'
)


class Gate:
    """A ``before_attempt`` that counts attempts, the ones given back and the ones booked as lost."""

    def __init__(self) -> None:
        self.calls = self.given_back = self.lost_calls = 0

    def __call__(self) -> None:
        self.calls += 1

    def unsent(self) -> None:
        self.given_back += 1

    def lost(self, usage: Any = None, model: Any = None) -> None:
        self.lost_calls += 1


def _read_request(conn: socket.socket) -> bytes:
    """Read one whole HTTP request (headers and a Content-Length body)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


class RawServer:
    """A one-thread TCP server on 127.0.0.1 that answers each connection with ``handle(conn)``."""

    def __init__(self, handle: Any) -> None:
        self.handle = handle
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # inherited by accepted sockets
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.1)
        self.base_url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        self.stop = threading.Event()
        self.connections = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            self.connections += 1
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):
            self.handle(conn, self.stop)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(slow(10))
        self.sock.close()


@contextlib.contextmanager
def raw_server(handle: Any) -> Iterator[RawServer]:
    srv = RawServer(handle)
    try:
        yield srv
    finally:
        srv.close()


def drip(conn: socket.socket, stop: threading.Event) -> None:
    """Read the request whole, then send a valid reply one byte every 20 ms (about 5 s in all)."""
    _read_request(conn)
    reply = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (
        len(REPLY),
        REPLY,
    )
    for i in range(len(reply)):
        if stop.wait(0.02):
            return
        conn.sendall(reply[i : i + 1])


def cut_while_writing(conn: socket.socket, stop: threading.Event) -> None:
    """Read the request's headers and a little of its body, then reset the connection."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(4096)
        if not chunk:
            return
        data += chunk
    conn.recv(4096)
    stop.wait(0.2)  # the client fills the buffers and waits for them to drain
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close = reset


def answer(conn: socket.socket, stop: threading.Event) -> None:
    """Read the request whole and answer it at once (keep-alive, until the client closes)."""
    while not stop.is_set():
        if not _read_request(conn):
            return
        conn.sendall(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s"
            % (len(REPLY), REPLY)
        )


def client(base_url: str, **settings: Any) -> OpenAIClient:
    return OpenAIClient("loopback-1", base_url=base_url, api_key_env=None, **{**FAST, **settings})


def test_a_reply_dripped_a_byte_at_a_time_is_cut_at_timeout_s_and_booked_as_sent() -> None:
    """Each byte comes well inside the read timeout (20 ms of 0.5 s): only the total deadline cuts it."""
    gate = Gate()
    with raw_server(drip) as srv:
        cl = client(srv.base_url, timeout_s=0.5, max_attempts=2)
        start = time.monotonic()
        r = anyio.run(cl.send, req("x"), gate)
        took = time.monotonic() - start
    assert not r.ok and "no reply within 0.5 s (TimeoutError)" in (r.error or ""), r.error
    assert "after 2 attempts" in (r.error or "")
    assert took >= 2 * 0.5  # each attempt ran its whole time: the deadline is not early
    # the request was written whole before the drip began: both attempts stay calls
    assert (gate.calls, gate.lost_calls, gate.given_back) == (2, 2, 0)
    assert "sent whole (counted at its worst case)" in (r.error or "")


def test_dripped_replies_time_out_beside_quick_ones_sharing_the_loop_and_its_timer() -> None:
    """Many attempts under one timer: the dripped ones fail at their deadline, the others answer."""
    # a quick reply must come within the shared timeout on a loaded machine too: every duration
    # is stretched alike, at most 5 times (the longer deadline, 4 s, stays within the 5 s drip)
    k = min(current(), 5.0)
    with raw_server(drip) as slow_srv, raw_server(answer) as fast_srv:
        dripped = client(slow_srv.base_url, timeout_s=0.4 * k, max_attempts=1)
        quick = client(fast_srv.base_url, timeout_s=0.4 * k, max_attempts=1)
        longer = client(slow_srv.base_url, timeout_s=0.8 * k, max_attempts=1)
        got: dict[str, list[Any]] = {"dripped": [], "quick": [], "longer": []}

        async def main() -> None:
            async def one(name: str, cl: OpenAIClient, delay: float) -> None:
                await anyio.sleep(delay)
                got[name].append(await cl.send(req("x")))

            async with anyio.create_task_group() as tg:
                tg.start_soon(one, "longer", longer, 0.0)  # the longer timeout starts first
                for i in range(20):  # quick ones come and go while the timer waits for older ones
                    tg.start_soon(one, "quick", quick, i * 0.03 * k)
                for i in range(5):
                    tg.start_soon(one, "dripped", dripped, (0.1 + i * 0.05) * k)

        anyio.run(main)
    assert all(r.ok and r.text == "fine" for r in got["quick"]) and len(got["quick"]) == 20
    for name, timeout_s in (("dripped", 0.4 * k), ("longer", 0.8 * k)):
        assert got[name] and all(
            not r.ok and f"no reply within {timeout_s:g} s" in (r.error or "") for r in got[name]
        ), got[name]


def test_a_request_cut_while_it_is_written_is_given_back() -> None:
    """The server resets the connection part-way through a body too large for the socket buffers."""
    gate = Gate()
    with raw_server(cut_while_writing) as srv:
        cl = client(srv.base_url, max_attempts=2)
        r = anyio.run(cl.send, req("x" * 16_000_000), gate)
    assert not r.ok and "transport error" in (r.error or ""), r.error
    assert "the request was not sent (no call counted)" in (r.error or "")
    assert (gate.calls, gate.given_back, gate.lost_calls) == (2, 2, 0)


def test_a_request_written_whole_and_then_dropped_stays_a_call() -> None:
    """The server reads the whole request, then closes without a reply: it may have been billed."""

    def read_and_close(conn: socket.socket, stop: threading.Event) -> None:
        _read_request(conn)

    gate = Gate()
    with raw_server(read_and_close) as srv:
        r = anyio.run(client(srv.base_url, max_attempts=1).send, req("x" * 100_000), gate)
    assert not r.ok and "sent whole (counted at its worst case)" in (r.error or ""), r.error
    assert (gate.calls, gate.lost_calls, gate.given_back) == (1, 1, 0)


@pytest.mark.parametrize("make", [deadline, _Scoped], ids=["watched", "cancel-scope"])
def test_a_block_past_its_deadline_raises_timeout_error_and_the_task_goes_on(make: Any) -> None:
    async def main() -> list[str]:
        seen = []
        with pytest.raises(TimeoutError):
            with make(0.05):
                await anyio.sleep(30)
        seen.append("timed out")
        with make(30):
            await anyio.lowlevel.checkpoint()
        seen.append("in time")
        await anyio.sleep(0.01)  # the task is not left cancelled
        seen.append("went on")
        return seen

    assert anyio.run(main) == ["timed out", "in time", "went on"]


def test_a_block_started_after_the_timer_was_set_is_cut_at_its_own_deadline() -> None:
    """The timer is set for the first block's deadline; it is set again for the later one's."""

    async def main() -> None:
        with deadline(0.2):
            await anyio.lowlevel.checkpoint()
        await anyio.sleep(0.1)
        with pytest.raises(TimeoutError):
            with deadline(0.2):  # due 0.1 s after the first block's deadline
                await anyio.sleep(30)

    anyio.run(main)


def test_a_cancellation_from_elsewhere_stays_a_cancellation() -> None:
    """An outer scope cancelled while the block waits: no TimeoutError, the outer scope catches it."""

    async def main() -> str:
        with anyio.move_on_after(0.05) as outer:
            with deadline(30):
                await anyio.sleep(30)
        return "outer" if outer.cancelled_caught else "?"

    assert anyio.run(main) == "outer"


@pytest.mark.parametrize("first", ["deadline", "outer"])
def test_an_outer_cancellation_due_with_the_deadline_is_never_lost(first: str) -> None:
    """Both due in the same turn of the loop: the outer scope still ends its block.

    When the outer cancellation lands first, the block's exit sees two cancellations and lets
    the outer one through (asyncio.timeout's rule); when the deadline lands first, the block
    raises its TimeoutError (the attempt did time out) and the outer scope's cancellation
    arrives at the task's next wait, as anyio delivers it until its block ends.
    """

    async def main() -> tuple[str, bool]:
        loop = asyncio.get_running_loop()
        seen = "?"
        with anyio.CancelScope() as outer:
            try:
                block = deadline(0.05)
                with block:
                    if first == "outer":
                        loop.call_at(block.deadline - 1e-6, outer.cancel)
                    else:
                        loop.call_at(block.deadline, outer.cancel)
                    await anyio.sleep(30)
            except TimeoutError:
                seen = "timeout"
            else:
                seen = "returned"
            await anyio.sleep(30)  # the outer cancellation ends this wait
            seen = "not cancelled"
        return seen, outer.cancelled_caught

    seen, caught = anyio.run(main)
    assert caught and seen in ("?", "timeout"), seen
    if first == "outer":
        assert seen == "?"  # no TimeoutError: the cancellation went through the block


@pytest.mark.parametrize("bad", [0, -1.0, float("nan")])
def test_a_deadline_must_be_positive(bad: float) -> None:
    with pytest.raises(ValueError, match="timeout_s must be > 0"):
        deadline(bad)
