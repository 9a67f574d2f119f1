"""The draw-keyed response cache.

Repeated runs are evidence only if each run is its own draw. The cache key is the sha256 of a
canonical JSON of the request as sent (provider, endpoint, model, messages, every body field
after the client's defaults, tools, headers that change the reply, a mock's responder
fingerprint), the arm's name and the draw index (seed 002; cases H12a-H12e, R03a). The API key
is never part of it: clients read keys from the environment at request time and never put them
in a :class:`~hrbench.records.Request`.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import threading
from typing import Any

import msgspec

from hrbench.errors import ConfigError
from hrbench.records import REFUSAL_REASONS, Request, Result
from hrbench.store import Store

__all__ = ["IN_FLIGHT", "Cache", "InFlight", "cache_key", "request_hash"]

_canon = msgspec.json.Encoder(order="sorted")


class _Body(msgspec.Struct, kw_only=True, gc=False):
    """What :func:`request_hash` hashes, as the JSON object of these keys, sorted at every level.

    A Struct whose fields are in sorted order encodes as the dict of the same keys sorted by
    ``order="sorted"`` does, byte for byte, without sorting its keys on every request.
    """

    endpoint: Any
    headers: Any
    messages: Any
    model: Any
    params: Any
    provider: Any
    responder: Any
    tools: Any


_HASHED: dict[bytes, str] = {}
"""Recent canonical requests and their sha256 hex: a cell's runs differ only in their draw index,
which :func:`request_hash` leaves out, so each run after the first finds its hash here."""
_HASHED_BYTES = [0]  # the canonical bytes _HASHED holds; emptied past _HASHED_MAX_BYTES
_HASHED_MAX_BYTES = 4 << 20

_PLAIN_HASHED: dict[tuple[str | None, ...], str] = {}
"""Recent plain requests (:func:`_plain_key`) and their sha256 hex, found without encoding them."""
_PLAIN_CHARS = [0]  # the characters of the strings _PLAIN_HASHED's keys hold; emptied past the bound

_PREFIXES: dict[tuple[str, str], Any] = {}
"""Recent ``(request hash, arm)`` pairs and the sha256 state of ``"{hash}|{arm}|"``: a cell's runs
differ only in their draw index, so :func:`cache_key` hashes only the draw on that state's copy."""
_PREFIXES_MAX = 4096


def _plain_key(request: Request) -> tuple[str | None, ...] | None:
    """A key that fixes the canonical bytes of a plain request, or ``None`` for any other request.

    Plain: no params, no tools, a wire of at most a responder's fingerprint (a mock's), and
    messages of exactly a role and a content, both strings. Every part of the key is a string
    or ``None``, and the key holds every field :func:`request_hash` encodes, so two requests
    with the same key have the same canonical bytes (equal strings are equal bytes).
    """
    wire = request.wire
    responder = None
    if wire is not None:
        if len(wire) != 1 or type(responder := wire.get("responder")) is not str:
            return None
    provider, base_url, model = request.provider, request.base_url, request.model
    if (
        request.params
        or request.tools is not None
        or type(provider) is not str
        or type(base_url) is not str
        or not (model is None or type(model) is str)
    ):
        return None
    parts: list[str | None] = [provider, base_url, model, responder]
    for m in request.messages:
        if type(m) is not dict or len(m) != 2:
            return None
        role, content = m.get("role"), m.get("content")
        if type(role) is not str or type(content) is not str:
            return None
        parts.append(role)
        parts.append(content)
    return tuple(parts)


def request_hash(request: Request) -> str:
    """The sha256 hex of a request as sent on the wire, without its draw index.

    The key is the request as sent (SPEC section 6, case R03a): provider, endpoint,
    model, messages, tools, every body field after the client's defaults (``request.wire``'s
    ``defaults`` under the request's own params: the Anthropic client's ``max_tokens`` is in it
    when the request sets none), the headers that change the reply (``anthropic-version``,
    extra headers; never a credential) and a mock's responder fingerprint. A field the client
    drops from the body (an OpenAI-only param sent to Anthropic) stays in the key: a key may be
    finer than the body, never coarser. The API key is never part of it.

    Keys are sorted at every level, so two requests that differ only in the order of their
    parameters hash the same. A plain request (:func:`_plain_key`) seen recently is looked up
    by its fields, without encoding it again.

    Example:
        >>> a = Request(messages=[{"role": "user", "content": "hi"}], params={"temperature": 1, "seed": 2})
        >>> b = Request(messages=[{"role": "user", "content": "hi"}], params={"seed": 2, "temperature": 1})
        >>> request_hash(a) == request_hash(b)
        True
        >>> c = msgspec.structs.replace(a, wire={"defaults": {"max_tokens": 3}})
        >>> d = msgspec.structs.replace(a, wire={"defaults": {"max_tokens": 1000}})
        >>> request_hash(c) == request_hash(d)
        False
    """
    plain = _plain_key(request)
    if plain is not None and (digest := _PLAIN_HASHED.get(plain)) is not None:
        return digest
    digest = _encoded_hash(request)
    if plain is not None:
        chars = sum(len(p) for p in plain if p is not None)
        if _PLAIN_CHARS[0] + chars > _HASHED_MAX_BYTES:
            _PLAIN_HASHED.clear()  # bounded (4 M characters): only a cell's recent requests repeat
            _PLAIN_CHARS[0] = 0
        _PLAIN_HASHED[plain] = digest
        _PLAIN_CHARS[0] += chars
    return digest


def _encoded_hash(request: Request) -> str:
    """:func:`request_hash` of the request's canonical JSON, from the memo of recent ones when there."""
    wire = request.wire or {}
    defaults = wire.get("defaults") or {}
    canon = _canon.encode(
        _Body(
            endpoint=wire.get("endpoint") or request.base_url.rstrip("/"),
            headers=wire.get("headers") or {},
            messages=request.messages,
            model=request.model,
            params={**defaults, **request.params} if defaults else request.params,
            provider=request.provider,
            responder=wire.get("responder"),
            tools=request.tools,
        )
    )
    digest = _HASHED.get(canon)
    if digest is None:
        digest = hashlib.sha256(canon).hexdigest()
        if _HASHED_BYTES[0] + len(canon) > _HASHED_MAX_BYTES:
            _HASHED.clear()  # bounded (4 MB): only a cell's recent requests repeat
            _HASHED_BYTES[0] = 0
        _HASHED[canon] = digest
        _HASHED_BYTES[0] += len(canon)
    return digest


def cache_key(request: Request, arm: str = "", hashed: str | None = None) -> str:
    """The cache key of a request: its :func:`request_hash`, the arm's name and its draw index.

    The arm's name is part of the key (case H12e): two arms that send the same request
    never share draws, so an arm and its copy are compared on their own samples. The key is
    the sha256 hex of ``"{request hash}|{arm}|{draw index}"`` (``-`` for no draw index).

    Args:
        request: the request as sent.
        arm: the arm's name.
        hashed: the request's :func:`request_hash` when the caller has it (the runtime hashes
            each request once and hands the hash to the cache and the recorder), else ``None``.

    Example:
        >>> r = Request(messages=[{"role": "user", "content": "hi"}], draw_index=1)
        >>> cache_key(r, "A") != cache_key(msgspec.structs.replace(r, draw_index=2), "A")
        True
        >>> cache_key(r, "A", request_hash(r)) == cache_key(r, "A")
        True
        >>> cache_key(r, "A") == hashlib.sha256(f"{request_hash(r)}|A|1".encode()).hexdigest()
        True
    """
    draw = "-" if request.draw_index is None else str(request.draw_index)
    pair = (hashed or request_hash(request), arm)
    prefix = _PREFIXES.get(pair)
    if prefix is None:
        if len(_PREFIXES) >= _PREFIXES_MAX:
            _PREFIXES.clear()  # bounded: only a cell's recent runs share a prefix
        prefix = _PREFIXES[pair] = hashlib.sha256(f"{pair[0]}|{arm}|".encode())
    state = prefix.copy()
    state.update(draw.encode())
    return state.hexdigest()


def as_store(field: str, value: object) -> Store:
    """``value`` as a :class:`~hrbench.store.Store`: a store, or the path of its SQLite file.

    Raises:
        ConfigError: naming ``field`` when ``value`` is neither (an int, a dict, ``True``...).

    Example:
        >>> as_store("store", ":memory:").cache_stats()["entries"]
        0
    """
    if isinstance(value, Store):
        return value
    if isinstance(value, str | os.PathLike) and not isinstance(value, bool):
        return Store(os.fspath(value))
    raise ConfigError(field, value, "expected an hrbench Store or the path of its file")


class Cache:
    """A response cache in a :class:`~hrbench.store.Store`.

    A refusal or content-filter reply, and a failed reply, are not cached. An entry keeps the
    reply, its usage, its original cost and latency, and the provider's response id; a reply
    served from the cache costs nothing for the run (``usd = 0``) while its trace keeps the
    nominal cost (case H14a).

    Args:
        store: where entries live; a fresh ``Store(":memory:")`` when ``None``.
        read: serve hits (``False`` re-samples every request but still writes).
        write: keep new replies.

    Example:
        >>> c = Cache()
        >>> r = Request(messages=[{"role": "user", "content": "hi"}], draw_index=1)
        >>> c.put(r, Result(text="hello"), arm="A")
        True
        >>> c.get(r, arm="A").text
        'hello'
    """

    def __init__(
        self, store: Store | str | os.PathLike[str] | None = None, read: bool = True, write: bool = True
    ) -> None:
        self.store = as_store("store", store) if store is not None else Store(":memory:")
        self.read = read
        self.write = write
        self.hits = 0
        self.misses = 0

    def __repr__(self) -> str:
        return f"Cache({self.store!r}, hits={self.hits}, misses={self.misses})"

    def get(self, request: Request, arm: str = "", key: str | None = None) -> Result | None:
        """The cached reply for ``request`` (draw index included) of ``arm``, or ``None``.

        ``key``: the request's :func:`cache_key` when the caller has it (else it is computed).
        """
        if not self.read:
            return None
        hit = self.store.cache_get(key or cache_key(request, arm))
        if hit is None:
            self.misses += 1
        else:
            self.hits += 1
        return hit

    @property
    def scope(self) -> str:
        """Which entries this cache sees: its store's file path, or the in-memory store's id.

        Two caches on one file (named by the same path) share entries, and so share requests
        in flight (:class:`InFlight`). The path is not resolved: that would touch the file
        system on the event loop.
        """
        path = self.store.path
        return f":memory:{id(self.store)}" if path == ":memory:" else path

    @staticmethod
    def keeps(result: Result) -> bool:
        """Whether a reply may be cached: not failed, not refused or filtered."""
        return result.ok and not result.refused and result.finish_reason not in REFUSAL_REASONS

    def put(
        self,
        request: Request,
        result: Result,
        arm: str = "",
        key: str | None = None,
        hashed: str | None = None,
    ) -> bool:
        """Keep a reply; returns ``False`` (and keeps nothing) for failed or refused replies.

        ``key`` and ``hashed``: the request's :func:`cache_key` and :func:`request_hash` when the
        caller has them (else they are computed).
        """
        if not self.write or not self.keeps(result):
            return False
        hashed = hashed or request_hash(request)
        self.store.cache_put(key or cache_key(request, arm, hashed), arm, hashed, request, result)
        return True

    def stats(self) -> dict[str, Any]:
        """The store's cache statistics plus this object's hits and misses."""
        return {**self.store.cache_stats(), "hits": self.hits, "misses": self.misses}


class InFlight:
    """Identical requests in flight, sent once.

    The first caller of a ``(scope, key)`` pair (a :meth:`Cache.scope` and a :func:`cache_key`)
    *leads*: it looks the key up in the cache, sends the request when it is not there, and
    lands the reply (:meth:`land`). A caller that arrives while it is in flight *waits* for that
    reply instead of sending its own; it is then served exactly what the cache would have
    given it had it come a moment later (a cache hit: no call, no reservation, ``usd = 0``).

    Rule: a failed, refused or filtered reply is not cached, so it is not shared
    either: the waiters of a lead that failed (or raised, or was refused by its own governor,
    or was cancelled) send their own request, one of them leading again, at once. A lead held
    at its benchmark's clean-cancel drain (:class:`hrbench.runner.runtime.Drain`: it will send nothing)
    lands its key as it stops there, not when the grace ends (waiters of other benchmarks
    would otherwise stall for the grace, 10 s). A waiter thus never
    gets a failure it did not see happen, and its own retry policy and governor apply.

    The map is process-wide (:data:`IN_FLIGHT`) and thread-safe: benchmarks running at once in
    one daemon, or several ``benchmark_async`` calls, share it, whatever their event loop.

    Example:
        >>> f = InFlight()
        >>> f.join("s", "k") is None  # the first caller leads
        True
        >>> f.land("s", "k", None)
        0
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._flights: dict[tuple[str, str], list[tuple[asyncio.AbstractEventLoop, asyncio.Future[Any]]]] = {}

    def __len__(self) -> int:
        return len(self._flights)

    def join(self, scope: str, key: str) -> asyncio.Future[Result | None] | None:
        """Lead the key (``None``: the caller must :meth:`land` it), or a future of the lead's reply.

        The future gives the reply to share, or ``None`` when there is none (send it yourself).
        Call it on a running asyncio event loop.
        """
        with self._lock:
            waiters = self._flights.get((scope, key))
            if waiters is None:
                self._flights[(scope, key)] = []
                return None
            loop = asyncio.get_running_loop()
            fut: asyncio.Future[Result | None] = loop.create_future()
            waiters.append((loop, fut))
            return fut

    def land(self, scope: str, key: str, result: Result | None) -> int:
        """End the lead of a key: its waiters get ``result`` (``None``: none to share).

        Returns:
            How many callers were waiting.
        """
        with self._lock:
            waiters = self._flights.pop((scope, key), [])
        for loop, fut in waiters:
            if loop.is_closed():
                continue
            loop.call_soon_threadsafe(_resolve, fut, result)
        return len(waiters)


def _resolve(fut: asyncio.Future[Result | None], result: Result | None) -> None:
    if not fut.done():  # a waiter cancelled meanwhile
        fut.set_result(result)


IN_FLIGHT = InFlight()
"""The process's requests in flight (:class:`InFlight`); :class:`hrbench.runner.runtime.Runtime` uses it."""
