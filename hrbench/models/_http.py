"""The HTTP layer of the model clients: the only module that imports the HTTP library.

Everything the OpenAI and Anthropic clients need from HTTP lives here, so that changing the
library is a one-module change (``../shared/notes/http-client.md``: httpx 0.28.1 collapses at
100 requests in flight; httpx2, its maintained continuation, does not).

- :func:`make_async_client` builds an ``AsyncClient`` whose pool holds ``max_connections``
  connections, with explicit timeouts. The pool timeout is ``None`` on purpose: the slots
  below never let more requests in flight than the pool holds, so a request waits for a slot,
  never dies of a ``PoolTimeout``.
- :class:`Slots` bounds the requests in flight to one endpoint at the clients' ceiling; the
  rate within it is paced by :mod:`hrbench.models._pace`.
- :func:`endpoint` returns the shared pool and slots of one ``(provider, base_url)`` in the
  running event loop, so every arm of a benchmark (and every client pointing at the same
  endpoint) shares them. Pools are per event loop (a connection belongs to the loop that opened
  it); on asyncio they are closed when the loop shuts down.

Transport failures are re-exported under library-neutral names (:data:`TransportError`,
:data:`TimeoutError_`) so that the clients never name the library.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import ssl
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.to_thread
import httpx2

from hrbench._util.per_loop import NO_LOOP, PerLoop, running_loop

__all__ = [
    "Body",
    "ConnectError",
    "Endpoint",
    "HttpResponse",
    "Slots",
    "TimeoutError_",
    "TransportError",
    "endpoint",
    "make_async_client",
]

HttpResponse = httpx2.Response
"""A reply: ``.status_code``, ``.headers``, ``.content``."""

TransportError = httpx2.TransportError
"""Raised by the HTTP library when a connection fails, drops or times out."""

ConnectError = httpx2.ConnectError
"""Raised by the HTTP library when no connection could be made (refused, no route, no DNS)."""

TimeoutError_ = httpx2.TimeoutException
"""Raised by the HTTP library when a connect, read, write or pool timeout expires."""

DEFAULT_KEEPALIVE_S = 5.0
"""Seconds an idle pooled connection is kept (servers commonly close idle ones after 5-60 s)."""


def make_async_client(
    max_connections: int,
    timeout_s: float,
    *,
    connect_timeout_s: float = 10.0,
    keepalive_s: float = DEFAULT_KEEPALIVE_S,
    trust_env: bool = True,
    ssl_context: ssl.SSLContext | None = None,
) -> httpx2.AsyncClient:
    """Build an ``AsyncClient`` with a pool sized to the concurrency and explicit timeouts.

    Args:
        max_connections: connections the pool may hold, all kept alive when idle; size it to
            the requests you allow in flight.
        timeout_s: read and write timeout per attempt (seconds).
        connect_timeout_s: connect timeout (seconds), capped at ``timeout_s``.
        keepalive_s: how long an idle connection stays in the pool (seconds).
        trust_env: honour proxy and certificate environment variables.
        ssl_context: the TLS context to verify servers with, shared by several clients (made
            by ``httpx2.create_ssl_context(trust_env=trust_env)``); ``None``: the client makes
            its own, the same way.

    Returns:
        A new client; the caller closes it with ``await client.aclose()``.
    """
    limits = httpx2.Limits(
        max_connections=max_connections,
        max_keepalive_connections=max_connections,
        keepalive_expiry=keepalive_s,
    )
    timeout = httpx2.Timeout(
        connect=min(connect_timeout_s, timeout_s), read=timeout_s, write=timeout_s, pool=None
    )
    verify: ssl.SSLContext | bool = True if ssl_context is None else ssl_context
    return httpx2.AsyncClient(
        limits=limits, timeout=timeout, trust_env=trust_env, follow_redirects=False, verify=verify
    )


class Slots:
    """Bounds the requests in flight to one endpoint: the ceiling the clients set, no more.

    The ceiling is a bound, not a target: how many requests go in flight within it is the pace's
    business (:mod:`hrbench.models._pace`), which sends at the rate the provider allows. A 429
    lowers that rate, never the slots: when latency rises and no 429 comes, more requests go in
    flight at the same rate, up to the ceiling. A ``Slots`` belongs to one event loop (see
    :func:`endpoint`).

    Args:
        ceiling: the most requests in flight (the pool size).

    Example:
        >>> import anyio
        >>> slots = Slots(2)
        >>> async def one():
        ...     async with slots.slot():
        ...         return slots.in_flight
        >>> anyio.run(one)
        1
    """

    def __init__(self, ceiling: int) -> None:
        self.ceiling = max(1, int(ceiling))
        self.in_flight = 0
        self._waiters: deque[anyio.Event] = deque()

    def __repr__(self) -> str:
        return f"Slots(ceiling={self.ceiling}, in_flight={self.in_flight})"

    def raise_ceiling(self, ceiling: int) -> None:
        """Let more requests in flight when a client that allows more joins the endpoint."""
        if ceiling > self.ceiling:
            self.ceiling = int(ceiling)
            self._wake()

    def slot(self) -> _Slot:
        """Hold one slot for the body of the ``async with``."""
        return _Slot(self)

    def _wake(self) -> None:
        free = self.ceiling - self.in_flight
        while free > 0 and self._waiters:
            self._waiters.popleft().set()
            free -= 1


class _Slot:
    """One slot of a :class:`Slots`, held for the body of an ``async with`` (a plain class: no generator)."""

    __slots__ = ("slots",)

    def __init__(self, slots: Slots) -> None:
        self.slots = slots

    async def __aenter__(self) -> None:
        slots = self.slots
        while slots.in_flight >= slots.ceiling:
            event = anyio.Event()
            slots._waiters.append(event)
            try:
                await event.wait()
            except BaseException:
                with contextlib.suppress(ValueError):
                    slots._waiters.remove(event)
                slots._wake()  # pass a wake-up this waiter may have swallowed on to the next one
                raise
        slots.in_flight += 1

    async def __aexit__(self, *exc: object) -> None:
        slots = self.slots
        slots.in_flight -= 1
        slots._wake()


class Body(httpx2.ByteStream):
    """A request body that knows whether it was written whole (:attr:`whole`).

    The HTTP library asks a request's body for its next chunk once it has written the one
    before, so a body whose one chunk was taken and then asked for more was written whole (its
    ``Content-Length`` ends the request: no bytes follow it). A write that fails part-way is
    swallowed by the library, which goes on to read a reply, so this is the only sign that a
    request never left whole. A retry on another connection (a pooled one the server had closed)
    writes the body again from the start.

    Args:
        content: the bytes to send.

    Example:
        >>> import anyio
        >>> body = Body(b"{}")
        >>> async def write():
        ...     async for chunk in body:
        ...         assert not body.whole  # taken, not yet written
        >>> anyio.run(write); body.whole
        True
    """

    def __init__(self, content: bytes) -> None:
        super().__init__(content)
        self.content = content
        self.whole = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        self.whole = False
        yield self.content
        self.whole = True


SHARD_CONNECTIONS = 16
"""Connections per shard of a :class:`ShardedPool`."""


class ShardedPool:
    """Several ``AsyncClient`` pools of at most :data:`SHARD_CONNECTIONS` connections each.

    httpcore's pool scans every connection it holds on each request (to assign it and to expire
    idle ones), so one pool of 100 connections spends CPU in proportion to 100 on every request:
    at 100 requests in flight that scan, not the network, bounded the throughput (measured with
    ``bench/concurrency.py``: the pool's ``_assign_requests_to_connections`` was the top entry of
    the profile). Each request goes to the shard with the fewest requests in flight, so the
    shards fill evenly and none holds more requests than connections while another has room.
    """

    def __init__(self, shards: list[httpx2.AsyncClient]) -> None:
        self.shards = shards
        self.in_flight = [0] * len(shards)
        self._urls: dict[str, httpx2.URL] = {}
        """Each URL posted to, parsed once (the library copies a parsed URL without parsing it again)."""

    @classmethod
    def build(
        cls, max_connections: int, timeout_s: float, connect_timeout_s: float, trust_env: bool
    ) -> ShardedPool:
        """Split ``max_connections`` into shards of at most :data:`SHARD_CONNECTIONS`.

        The shards share one TLS context, made as each would make its own: loading the system's
        certificates is most of the cost of building a client (tens of milliseconds each).
        """
        n = max(1, -(-max_connections // SHARD_CONNECTIONS))
        per = -(-max_connections // n)
        tls = httpx2.create_ssl_context(trust_env=trust_env)
        return cls(
            [
                make_async_client(
                    per, timeout_s, connect_timeout_s=connect_timeout_s, trust_env=trust_env, ssl_context=tls
                )
                for _ in range(n)
            ]
        )

    async def post(self, url: str, body: Body, headers: dict[str, str]) -> HttpResponse:
        """POST ``body`` through the least busy shard; ``body.whole`` says whether it was written whole."""
        i = min(range(len(self.shards)), key=self.in_flight.__getitem__)
        self.in_flight[i] += 1
        try:
            shard = self.shards[i]
            parsed = self._urls.get(url)
            if parsed is None:
                if len(self._urls) >= 64:  # a pool's clients post to a few paths of one endpoint
                    self._urls.clear()
                parsed = self._urls[url] = httpx2.URL(url)
            request = shard.build_request("POST", parsed, content=body.content, headers=headers)
            request.stream = body  # its Content-Length header is the bytes' own
            return await shard.send(request)
        finally:
            self.in_flight[i] -= 1

    async def aclose(self) -> None:
        """Close every shard's connections."""
        for shard in self.shards:
            await shard.aclose()


class Endpoint:
    """The pool and slots shared by every client of one ``(provider, base_url)`` in one loop.

    Attributes:
        provider, base_url: what the endpoint is.
        slots: its :class:`Slots` (the ceiling of requests in flight).
    """

    def __init__(self, provider: str, base_url: str, ceiling: int) -> None:
        self.provider = provider
        self.base_url = base_url
        self.slots = Slots(ceiling)
        self._pools: dict[tuple[Any, ...], ShardedPool] = {}
        self._building: dict[tuple[Any, ...], anyio.Event] = {}

    def __repr__(self) -> str:
        return f"Endpoint({self.provider!r}, {self.base_url!r}, {self.slots!r})"

    async def pool(
        self, max_connections: int, timeout_s: float, connect_timeout_s: float, trust_env: bool
    ) -> ShardedPool:
        """The shared connection pool for these settings, created on first use.

        It is built once, in a worker thread: building one loads the system's certificates (tens
        of milliseconds of blocking file reads), which must not stall the event loop. The
        requests that arrive meanwhile wait on one event and all go on in the same turn of the
        loop once it is built (behind a lock they would go one per turn: at 100 requests in
        flight the last waited 99 turns of a busy loop). When the build fails, the request that
        started it gets the error and the next waiter builds again.
        """
        key = (max_connections, timeout_s, connect_timeout_s, trust_env)
        while (pool := self._pools.get(key)) is None:
            building = self._building.get(key)
            if building is not None:
                await building.wait()
                continue
            self._building[key] = done = anyio.Event()
            try:
                pool = await anyio.to_thread.run_sync(
                    functools.partial(
                        ShardedPool.build, max_connections, timeout_s, connect_timeout_s, trust_env
                    )
                )
                self._pools[key] = pool
            finally:
                del self._building[key]
                done.set()
        return pool

    def built(
        self, max_connections: int, timeout_s: float, connect_timeout_s: float, trust_env: bool
    ) -> ShardedPool | None:
        """The pool for these settings if it is built already, else ``None`` (then await :meth:`pool`)."""
        return self._pools.get((max_connections, timeout_s, connect_timeout_s, trust_env))

    async def aclose(self) -> None:
        """Close every pooled connection."""
        pools, self._pools = list(self._pools.values()), {}
        for client in pools:
            await client.aclose()


_ENDPOINTS: PerLoop[dict[tuple[str, str], Endpoint]] = PerLoop()
"""Per event loop: ``{(provider, base_url): Endpoint}`` (outside asyncio, ``NO_LOOP``'s: one set
of endpoints, closed by hand). Weak on the loop, so a finished loop's endpoints go."""

_CLOSERS: set[asyncio.Task[None]] = set()


def endpoint(provider: str, base_url: str, ceiling: int) -> Endpoint:
    """The shared :class:`Endpoint` of ``(provider, base_url)`` in the running event loop.

    On asyncio the endpoint's pools are closed when the loop shuts down (``asyncio.run`` and
    ``anyio.run`` cancel leftover tasks at exit; a watcher task closes the pools then).

    Args:
        provider: ``"openai"``, ``"anthropic"``, ...
        base_url: the endpoint's base URL.
        ceiling: the most requests in flight this caller allows; the endpoint's ceiling is the
            largest asked for.

    Returns:
        The endpoint.
    """
    loop = running_loop()
    per_loop = _ENDPOINTS.last(loop)
    if per_loop is None:
        per_loop = _ENDPOINTS.get(loop, lambda: _endpoints_of(loop))
    ep = per_loop.get((provider, base_url))
    if ep is None:
        ep = per_loop[(provider, base_url)] = Endpoint(provider, base_url, ceiling)
    elif ceiling > ep.slots.ceiling:
        ep.slots.raise_ceiling(ceiling)
    return ep


def _endpoints_of(loop: Any) -> dict[tuple[str, str], Endpoint]:
    """A new loop's endpoints; on asyncio a task closes their pools when the loop shuts down."""
    per_loop: dict[tuple[str, str], Endpoint] = {}
    if loop is not NO_LOOP:
        task = loop.create_task(_close_at_loop_exit(loop, per_loop), name="hrbench-http-pool-closer")
        _CLOSERS.add(task)  # the loop holds tasks weakly: keep this one alive
        task.add_done_callback(_CLOSERS.discard)
    return per_loop


async def _close_at_loop_exit(loop: Any, per_loop: dict[tuple[str, str], Endpoint]) -> None:
    try:
        await asyncio.Event().wait()
    finally:  # cancelled by asyncio.run / anyio.run at exit: close the pools on their own loop
        _ENDPOINTS.pop(loop)
        for ep in list(per_loop.values()):
            with contextlib.suppress(Exception):
                await ep.aclose()
        per_loop.clear()


async def aclose_all() -> None:
    """Close every pool of the running event loop (the loop's endpoints are made again on use)."""
    per_loop = _ENDPOINTS.peek(running_loop()) or {}
    for ep in list(per_loop.values()):
        await ep.aclose()
    per_loop.clear()
