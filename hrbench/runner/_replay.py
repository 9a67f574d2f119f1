"""Replaying recordings: answer each arm with the replies that arm got."""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import msgspec

from hrbench.arm import current_run
from hrbench.errors import ConfigError, ReplayMiss
from hrbench.records import Request, Result
from hrbench.runner._cache import request_hash
from hrbench.store import Store

__all__ = ["ReplayClient"]

_decode_result = msgspec.json.Decoder(Result).decode


class ReplayClient:
    """A client that answers from a recording (the seed's ``gr_replay_client``).

    A benchmark run with ``record="name"`` records each request a run makes under the arm's
    name, the request and its draw index. A replay answers each arm with the replies that arm
    got, whatever the arm order or subset (seed 002). A reply recorded without a draw index
    serves a request that has one only as a flagged reply (``draw_keyed=False``), which the
    runner refuses as a duplicate draw on every run after the first.

    The match rule: a request is answered by the reply the
    same arm got for the same request as sent (provider, endpoint, model, messages, every body
    field, reply-changing headers: :func:`~hrbench.runner._cache.request_hash`, as the live cache keys
    it) and the same draw index. The endpoint is the recording's own unless ``base_url`` (or
    the fallback's) says otherwise: a replay pointed at another server misses, and with no
    fallback it is refused at once.

    Args:
        store: the store holding the recording.
        recording: the recording's name.
        strict: ``True``: on a miss, raise :class:`~hrbench.errors.ReplayMiss` naming the arm,
            item, run and key (the run is an ``error``); never a live call, even with a
            ``fallback`` (which then only gives the identity the requests carry). ``False``:
            ask ``fallback`` on a miss and record what it fetches; it needs a fallback.
        fallback: a live client to ask on a miss when ``strict`` is ``False``; what it fetches
            is recorded.
        model: the model reported; the recorded request's model is matched, so pass the model
            the recording was made with (the benchmark's requests carry ``client.model``).
        provider, base_url: the identity the recorded requests carried (they are part of the
            key); by default those of ``fallback``, else taken from the recording itself.

    Requests are keyed as sent (case R03a): the recording client's endpoint, default body
    fields and reply-changing headers are taken from the recording (or from ``fallback``), and a
    request made under a USD or token cap carries the output limit the runner sends then; replay
    under the same kind of governor the recording was made under.

    The constructor reads the recording's identity (model, provider, base URL) from the store,
    which blocks: in async code build it in a worker thread (``anyio.to_thread.run_sync``), as the
    daemon does. Sending never blocks the event loop.

    Raises:
        ConfigError: ``strict=False`` with no ``fallback`` (it would behave as strict), or a
            ``base_url`` the recording holds no request for (no fallback).
        ReplayMiss: (on send) a strict miss.

    Example:
        >>> rc = ReplayClient(Store(":memory:"), recording="r1", model="gpt-4o-mini", provider="openai",
        ...                   base_url="https://api.openai.com/v1")
        >>> rc.provider
        'openai'
    """

    def __init__(
        self,
        store: Store,
        recording: str,
        strict: bool = True,
        fallback: Any = None,
        model: str | None = None,
        provider: str | None = None,
        base_url: str | None = None,
    ) -> None:
        if not strict and fallback is None:
            raise ConfigError(
                "strict",
                strict,
                "strict = false asks the fallback on a miss, and this replay has no fallback, so every "
                "miss would raise ReplayMiss as with strict = true; give a `fallback` client, or leave "
                "`strict` out",
            )
        self.store = store
        self.recording = recording
        self.strict = strict
        self.fallback = fallback
        identity = self._identity_from_recording() if fallback is None else {}
        self.model = model or getattr(fallback, "model", None) or identity.get("model", "replay")
        self.provider = provider or getattr(fallback, "provider", None) or identity.get("provider", "replay")
        self.base_url = (
            base_url
            if base_url is not None
            else getattr(fallback, "base_url", None) or identity.get("base_url", "")
        )
        self._wire: dict[str, Any] | None = identity.get("wire")
        if fallback is None and base_url is not None and identity:
            self._wire = self._at(base_url, identity)
        self.hits = 0
        self.misses = 0
        self._loaded: dict[str, dict[tuple[str, int | None], bytes]] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"ReplayClient(recording={self.recording!r}, strict={self.strict}, model={self.model!r})"

    @property
    def spec(self) -> dict[str, Any]:
        """The client's record."""
        return {"kind": "replay", "recording": self.recording, "strict": self.strict, "model": self.model}

    @property
    def bills(self) -> bool:
        """A replay bills nothing; a fallback that is asked may."""
        return bool(getattr(self.fallback, "bills", False))

    @property
    def billed_as(self) -> tuple[str, ...]:
        """The fallback's ``billed_as``."""
        return tuple(getattr(self.fallback, "billed_as", ()))

    def wire(self, request: Request) -> dict[str, Any] | None:
        """What the recorded client added on the wire (case R03a): the fallback's, else the recording's.

        Recordings are keyed on the request as sent, so a replay keys each request as the client
        that made the recording did (its endpoint, default body fields and headers).
        """
        wire = getattr(self.fallback, "wire", None)
        return wire(request) if callable(wire) else self._wire

    def _at(self, base_url: str, identity: dict[str, Any]) -> dict[str, Any] | None:
        """The recorded wire with its endpoint moved to ``base_url`` (the endpoint is in the key).

        Rule: a replay given a ``base_url`` is keyed on it, as the
        live cache is, so a recording made against one server never answers a spec pointing at
        another. A base URL the recording holds no request for is refused at once.

        Raises:
            ConfigError: ``base_url`` is none the recording was made against.
        """
        held = self.base_urls()
        want = base_url.rstrip("/")
        if want not in held:
            raise ConfigError(
                "base_url",
                base_url,
                f"recording {self.recording!r} was made against {', '.join(sorted(held)) or 'no base URL'}; a "
                "replay is keyed on the endpoint as the cache is, so it holds no reply for this one (leave "
                "`base_url` out to replay it as recorded)",
            )
        wire = identity.get("wire")
        recorded = str(identity.get("base_url") or "").rstrip("/")
        endpoint = str((wire or {}).get("endpoint") or "")
        if wire is None or not endpoint.startswith(recorded):
            return wire
        return {**wire, "endpoint": want + endpoint[len(recorded) :]}

    def base_urls(self) -> set[str]:
        """The base URLs (trailing ``/`` dropped) of the requests held in the recording (blocking)."""
        rows = self.store._all(
            "SELECT DISTINCT json_extract(request, '$.base_url') FROM recordings WHERE recording=?",
            [self.recording],
        )
        return {str(r[0] or "").rstrip("/") for r in rows}

    def _identity_from_recording(self) -> dict[str, Any]:
        rows = self.store._all("SELECT request FROM recordings WHERE recording=? LIMIT 1", [self.recording])
        if not rows:
            return {}
        req = msgspec.json.decode(rows[0][0])
        return {
            "model": req.get("model", ""),
            "provider": req.get("provider", ""),
            "base_url": req.get("base_url", ""),
            "wire": req.get("wire"),
        }

    def _entries(self, arm: str) -> dict[tuple[str, int | None], bytes]:
        """The recorded replies of one arm, loaded once: ``(request_hash, draw_index) -> JSON``."""
        with self._lock:
            got = self._loaded.get(arm)
            if got is None:
                rows = self.store._all(
                    "SELECT request_hash, draw_index, result FROM recordings WHERE recording=? AND arm=?",
                    [self.recording, arm],
                )
                got = {(h, d): r.encode() if isinstance(r, str) else r for h, d, r in rows}
                self._loaded[arm] = got
            return got

    def lookup(self, request: Request, arm: str) -> Result | None:
        """The recorded reply for ``request`` of ``arm``, or ``None``.

        Blocking: the first lookup of an arm loads its entries from SQLite; the rest are
        dictionary lookups.
        """
        entries = self._entries(arm)
        h = request_hash(request)
        raw = entries.get((h, request.draw_index))
        keyed = request.draw_index is not None
        if raw is None and request.draw_index is not None:
            raw, keyed = entries.get((h, None)), False
        if raw is None:
            return None
        return msgspec.structs.replace(_decode_result(raw), source="recording", draw_keyed=keyed)

    async def send(
        self, request: Request, before_attempt: Callable[[], Awaitable[None] | None] | None = None
    ) -> Result:
        """Answer from the recording; on a miss raise (strict) or ask the fallback and record.

        A recorded reply costs no call and no USD: ``before_attempt`` is called only when the
        fallback is asked.

        Raises:
            ReplayMiss: a miss in strict mode, or with no fallback.
        """
        info = current_run.get()
        arm = info.arm if info else ""
        if arm in self._loaded:
            hit = self.lookup(request, arm)  # a dictionary lookup: no need to leave the loop
        else:
            hit = await anyio.to_thread.run_sync(self.lookup, request, arm)
        if hit is not None:
            self.hits += 1
            return hit
        self.misses += 1
        key = f"{request_hash(request)}#{request.draw_index}"
        if self.strict or self.fallback is None:
            where = f"arm {arm!r}, item {info.item!r}, run {info.run}" if info else f"arm {arm!r}"
            raise ReplayMiss(
                f"recording {self.recording!r} has no reply for {where}, key {key}",
                arm=arm,
                item=info.item if info else None,
                run=info.run if info else None,
                key=key,
            )
        result: Result = await self.fallback.send(request, before_attempt)
        if result.ok and not result.refused:
            await anyio.to_thread.run_sync(
                self.store.recording_put, self.recording, arm, request_hash(request), request, result
            )
            with self._lock:
                loaded = self._loaded.get(arm)
                if loaded is not None:
                    loaded[(request_hash(request), request.draw_index)] = msgspec.json.encode(result)
        return result
