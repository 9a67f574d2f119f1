"""A loopback OpenAI- and Anthropic-compatible model server for tests and benchmarks.

It listens on 127.0.0.1 and a free port, on starlette + uvicorn, in a background thread (or a
subprocess, for benchmarks where the server must not share the client's interpreter lock)::

    with LoopbackServer(latency_s=0.05) as srv:
        client = OpenAIClient("loopback-1", base_url=srv.base_url, api_key_env=None)

    async with LoopbackServer() as srv:      # from async tests: starts in a worker thread
        ...

Routes: ``POST /v1/chat/completions`` (OpenAI) and ``POST /v1/messages`` (Anthropic). It bills
what it generates: usage counts the reply it sends (``n`` choices each billed), it honours the
request's ``max_tokens`` (in words) or ignores it as told, and it can report another model than
the one asked for (``serve_model``). Replies are deterministic per ``(prompt, seed)`` (``vary=True`` makes every call differ, for draw
tests); a ``[[reply:TEXT]]`` marker in the prompt makes the reply ``TEXT``, and ``reply_fn``
computes it. Usage blocks are real: prompt tokens are the prompt's words, completion tokens
the reply's words plus ``reasoning_tokens``, cached tokens ``cached_fraction`` of the prompt;
every reply gets a fresh response id.

Faults (:data:`FAULTS`) are scripted two ways:

- a queue: ``srv.push("429", "ok", "500")`` gives the next requests those faults, in order;
- a marker in the prompt: ``[[fault:429]]`` applies to every request carrying it;
  ``[[fault:503:n=2]]`` only to the first two requests with that prompt and seed;
  options ``retry_after=S`` (seconds, for 429/503), ``date=FORM`` (send that wait as an
  HTTP-date, see :class:`Fault`) and ``hang=S`` (seconds).

The server records every request in :attr:`LoopbackServer.requests` (path, headers, body,
arrival time), so tests can check what was sent and when, and bills every reply it makes in
:attr:`LoopbackServer.bills` (response id, tokens, and USD at ``price``, as a provider's bill;
issue 13 checks row USD after a crash against it). ``gather=N`` holds every reply until
``N`` requests are in flight at once (then lets all through), so a test of a client's
concurrency does not depend on how fast the machine sends them.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import json
import logging
import math
import os
import re
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

try:
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route
    from starlette.types import Receive, Scope, Send
except ImportError as exc:  # pragma: no cover - only without the dev extras
    raise ImportError(
        f"hrbench.testing.loopback needs starlette and uvicorn (pip install 'hrbench[dev]'): {exc}"
    ) from exc

__all__ = ["FAULTS", "Bill", "Fault", "LoopbackServer", "ReceivedRequest"]

FAULTS = (
    "ok",
    "429",
    "500",
    "503",
    "529",
    "hang",
    "malformed",
    "drop",
    "quota",
    "quota429",
    "content_filter",
    "refusal",
    "unauthorized",
    "echo_key",
    "null_content",
    "late",
    "garbled",
    "504",
)
"""The fault kinds:

- ``ok``: a normal reply;
- ``429``: rate limited, with ``Retry-After`` (``retry_after`` seconds, default 1);
- ``500``, ``503``, ``529``: server errors (503 and 529 carry ``Retry-After`` when given);
- ``504``: a gateway's timeout (the upstream's reply lost; nothing billed here);
- ``hang``: no reply for ``hang`` seconds (default 30), past any sane client timeout;
- ``malformed``: HTTP 200 whose body is truncated JSON;
- ``late``: the whole reply is generated and billed (in :attr:`LoopbackServer.bills`), then
  held for ``hang`` seconds (default 30) before it is sent: past the client's timeout, a reply
  the provider billed and the client never read;
- ``garbled``: the whole reply is generated and billed, and HTTP 200 sends the first half of
  its JSON body (unparseable);
- ``drop``: the connection closes in the middle of the reply;
- ``quota``: HTTP 402, quota exhausted; ``quota429``: HTTP 429 with ``insufficient_quota``;
- ``content_filter``: the reply is filtered (OpenAI ``finish_reason="content_filter"``,
  Anthropic ``stop_reason="refusal"``), with no text;
- ``refusal``: the model refuses (OpenAI ``message.refusal``; Anthropic ``stop_reason="refusal"``);
- ``null_content``: HTTP 200, ``finish_reason="stop"``, no text (OpenAI ``content: null``,
  Anthropic no text block), billed as usual;
- ``unauthorized``: HTTP 401; ``echo_key``: HTTP 401 whose message quotes the key received,
  in the encoding ``enc`` (:data:`ECHO_ENCODINGS`; to test that clients scrub it).
"""

ECHO_ENCODINGS = ("plain", "base64", "basic", "base64url", "url", "spaced", "hex", "json")
"""How ``echo_key`` quotes a key: as is (and without its last 4 characters), base64, inside a
base64 ``user:key`` Basic credential, URL-safe base64, URL-encoded, spaced out, hex, and
JSON-escaped."""


def _echo(key: str, encoding: str) -> str:
    """The message of an ``echo_key`` reply: the key in ``encoding``."""
    import base64
    import urllib.parse

    data = key.encode()
    shown = {
        "plain": f"{key}. Also: {key[:-4]}",
        "base64": base64.b64encode(data).decode(),
        "basic": "Basic " + base64.b64encode(b"user:" + data).decode(),
        "base64url": base64.urlsafe_b64encode(data).decode().rstrip("="),
        "url": urllib.parse.quote(key, safe=""),
        "spaced": " ".join(key),
        "hex": data.hex().upper(),
        "json": "".join(f"\\u{ord(c):04x}" for c in key),
    }
    if encoding not in shown:
        raise ValueError(f"echo_key: unknown enc {encoding!r}; expected one of {ECHO_ENCODINGS}")
    return f"Incorrect API key provided: {shown[encoding]}"


_MARKER = re.compile(r"\[\[fault:([a-z0-9_]+)((?::[a-z_]+=[^:\]]+)*)\]\]")
_REPLY = re.compile(r"\[\[reply:(.*?)\]\]", re.DOTALL)
_LOG = logging.getLogger("hrbench.testing.loopback")


@dataclass(frozen=True)
class Fault:
    """A scripted fault.

    Attributes:
        kind: one of :data:`FAULTS`.
        retry_after_s: the ``Retry-After`` sent with a 429/503/529 (seconds); ``None`` sends
            none for 503/529 and 1 s for 429.
        hang_s: how long a ``hang`` lasts (seconds).
        encoding: how ``echo_key`` quotes the key: one of :data:`ECHO_ENCODINGS`
            (``[[fault:echo_key:enc=base64]]``).
        date: send ``Retry-After`` as an HTTP-date ``retry_after_s`` ahead (rounded up to
            the second) in this form: ``imf`` (``Sun, 06 Nov 1994 08:49:37 GMT``), ``rfc850``
            (``Sunday, 06-Nov-94 08:49:37 GMT``), ``asctime`` (``Sun Nov  6 08:49:37 1994``)
            or ``minus0000`` (IMF with ``-0000``); ``None`` sends seconds.
    """

    kind: str
    retry_after_s: float | None = None
    hang_s: float = 30.0
    encoding: str = "plain"
    date: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in FAULTS:
            raise ValueError(f"unknown fault {self.kind!r}; expected one of {FAULTS}")

    @classmethod
    def of(cls, spec: str | Fault) -> Fault:
        """A fault from a kind name, ``"429:retry_after=0.2"`` style options, or a ``Fault``."""
        if isinstance(spec, Fault):
            return spec
        kind, *opts = spec.split(":")
        kw: dict[str, Any] = {}
        for opt in opts:
            name, _, value = opt.partition("=")
            if name == "retry_after":
                kw["retry_after_s"] = float(value)
            elif name == "hang":
                kw["hang_s"] = float(value)
            elif name == "date":
                kw["date"] = value
        return cls(kind, **kw)


@dataclass
class ReceivedRequest:
    """One request the server received.

    Attributes:
        path: the URL path.
        headers: the request headers (lower-case names).
        body: the decoded JSON body, or ``None`` when it was not JSON.
        at: arrival time (``time.monotonic()`` seconds, comparable with the test's clock).
        prompt: the prompt text the server keyed the reply on.
        fault: the fault applied.
    """

    path: str
    headers: dict[str, str]
    body: Any
    at: float
    prompt: str = ""
    fault: str = "ok"


@dataclass(frozen=True)
class Bill:
    """What the server billed for one reply it made, as a provider's bill lists it.

    Attributes:
        response_id: the reply's id (``chatcmpl-...`` or ``msg_...``).
        model: the model billed.
        tokens_in: prompt tokens billed (cached ones included).
        tokens_out: completion tokens billed (reasoning included).
        usd: ``tokens_in`` and ``tokens_out`` at the server's ``price`` (USD per million input
            and output tokens; with a price table, cache reads and writes at their own rates);
            0 without a price.
    """

    response_id: str
    model: str
    tokens_in: int
    tokens_out: int
    usd: float


class _Drop(Exception):
    """Raised by the app to make uvicorn close the connection mid-reply."""


@dataclass
class _State:
    latency_s: float
    vary: bool
    reasoning_tokens: int
    cached_fraction: float
    cache_creation_tokens: int
    model: str
    api_key: str | None
    reply_fn: Callable[[str, Any, int], str] | None
    record: bool
    omit_usage: bool = False
    reply_words: int = 0
    honour_max_tokens: bool = True
    prompt_tokens: str = "words"
    serve_model: str | None = None
    price: tuple[float, float] | dict[str, float] | None = None
    cache_write_1h_tokens: int = 0
    same_ids: bool = False
    bills: list[Bill] = field(default_factory=list)
    gather: int = 0
    gather_timeout_s: float = 10.0
    gather_skip: int = 0
    gather_skipped: int = 0
    gathered: asyncio.Event | None = None
    queue: deque[Fault] = field(default_factory=deque)
    seen: dict[tuple[str, str, Any], int] = field(default_factory=dict)
    requests: list[ReceivedRequest] = field(default_factory=list)
    calls: Iterator[int] = field(default_factory=itertools.count)
    lock: threading.Lock = field(default_factory=threading.Lock)
    in_flight: int = 0
    max_in_flight: int = 0
    stopping: asyncio.Event | None = None


def _prompt_of(body: Any) -> str:
    messages = body.get("messages") if isinstance(body, dict) else None
    parts: list[str] = []
    if isinstance(body, dict) and isinstance(body.get("system"), str):
        parts.append(body["system"])
    for m in messages if isinstance(messages, list) else []:
        content = m.get("content") if isinstance(m, dict) else None
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return "\n".join(parts)


def _prompt_tokens(how: str, body: dict[str, Any], prompt: str) -> int:
    """Prompt tokens billed: words, UTF-8 bytes, or the model's own tokenizer (bytes without one)."""
    if how == "tiktoken":
        from hrbench.models.tokens import count_messages

        counted = count_messages(body.get("messages") or [], str(body.get("model") or ""))
        if counted is not None:
            return counted
        how = "bytes"
    if how == "bytes":
        return len(prompt.encode())
    return len(prompt.split())


def _retry_after(seconds: float, form: str | None) -> str:
    """A ``Retry-After`` value: seconds, or an HTTP-date that many seconds ahead in ``form``."""
    if form is None:
        return f"{seconds:g}"
    t = time.gmtime(math.ceil(time.time() + seconds))
    day, mon = _DAYS[t.tm_wday], _MONTHS[t.tm_mon - 1]
    hms = f"{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}"
    if form == "asctime":
        return f"{day[:3]} {mon} {t.tm_mday:2d} {hms} {t.tm_year}"
    if form == "rfc850":
        return f"{day}, {t.tm_mday:02d}-{mon}-{t.tm_year % 100:02d} {hms} GMT"
    zone = "-0000" if form == "minus0000" else "GMT"
    return f"{day[:3]}, {t.tm_mday:02d} {mon} {t.tm_year} {hms} {zone}"


_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


class _Api:
    """The ASGI endpoint for one API flavour (raw ASGI, so that it can drop a connection)."""

    def __init__(self, state: _State, flavour: str) -> None:
        self.state = state
        self.flavour = flavour

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        st = self.state
        request = Request(scope, receive)
        raw = await request.body()
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        prompt = _prompt_of(body)
        seed = body.get("seed") if isinstance(body, dict) else None
        fault = self._fault(prompt, seed)
        counted = fault.kind not in ("hang", "late")  # it outlives its client; it is not load
        if counted:
            st.in_flight += 1  # one event loop serves every request: no lock needed
            st.max_in_flight = max(st.max_in_flight, st.in_flight)
        try:
            if counted and st.gather > 0:
                await self._gather()
            await self._serve(scope, receive, send, request, body, prompt, seed, fault)
        finally:
            if counted:
                st.in_flight -= 1

    async def _gather(self) -> None:
        """Wait until ``gather`` requests are in flight at once (a latch: it opens once).

        A client that never gets that many in flight is let through after
        ``gather_timeout_s``, so that its test fails on its assertion instead of hanging.
        """
        st = self.state
        if st.gather_skipped < st.gather_skip:  # the first requests pass (a slow start's probe)
            st.gather_skipped += 1
            return
        if st.gathered is None:
            st.gathered = asyncio.Event()
        gathered = st.gathered
        if st.in_flight >= st.gather:
            gathered.set()
        if gathered.is_set():
            return
        try:
            await asyncio.wait_for(gathered.wait(), st.gather_timeout_s)
        except TimeoutError:
            _LOG.warning("only %d of %d requests in flight; gave up gathering", st.max_in_flight, st.gather)
            gathered.set()

    async def _serve(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        request: Request,
        body: Any,
        prompt: str,
        seed: Any,
        fault: Fault,
    ) -> None:
        st = self.state
        if st.record:
            st.requests.append(
                ReceivedRequest(
                    path=scope["path"],
                    headers={k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]},
                    body=body,
                    at=time.monotonic(),
                    prompt=prompt,
                    fault=fault.kind,
                )
            )
        if st.latency_s > 0:
            await asyncio.sleep(st.latency_s)
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            await self._error(400, "invalid_request_error", "expected a JSON body with messages")(
                scope, receive, send
            )
            return
        if st.api_key is not None and fault.kind not in ("echo_key",):
            if self._key_of(request) != st.api_key:
                await self._error(401, "authentication_error", "invalid API key")(scope, receive, send)
                return
        response = await self._respond(fault, body, prompt, seed, request, receive)
        if response is None:  # drop: start the reply, then close the connection mid-body
            await send(
                {"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"400")]}
            )
            await send({"type": "http.response.body", "body": b'{"id": "cut', "more_body": True})
            raise _Drop("dropped on purpose")
        await response(scope, receive, send)

    def _key_of(self, request: Request) -> str | None:
        if self.flavour == "anthropic":
            return request.headers.get("x-api-key")
        auth = request.headers.get("authorization", "")
        return auth[7:] if auth.lower().startswith("bearer ") else None

    def _fault(self, prompt: str, seed: Any) -> Fault:
        st = self.state
        with st.lock:
            if st.queue:
                return st.queue.popleft()
            m = _MARKER.search(prompt)
            if m is None:
                return Fault("ok")
            opts = dict(o.split("=", 1) for o in m.group(2).split(":") if o)
            key = (self.flavour, prompt, seed)
            n = st.seen.get(key, 0)
            st.seen[key] = n + 1
        if "n" in opts and n >= int(opts["n"]):
            return Fault("ok")
        return Fault(
            m.group(1),
            retry_after_s=float(opts["retry_after"]) if "retry_after" in opts else None,
            hang_s=float(opts.get("hang", 30.0)),
            encoding=opts.get("enc", "plain"),
            date=opts.get("date"),
        )

    def _error(
        self,
        status: int,
        kind: str,
        message: str,
        headers: dict[str, str] | None = None,
        code: str | None = None,
    ) -> Response:
        if self.flavour == "anthropic":
            payload: dict[str, Any] = {"type": "error", "error": {"type": kind, "message": message}}
        else:
            payload = {"error": {"message": message, "type": kind, "code": code or kind, "param": None}}
        return JSONResponse(payload, status_code=status, headers=headers)

    async def _respond(
        self, fault: Fault, body: dict[str, Any], prompt: str, seed: Any, request: Request, receive: Receive
    ) -> Response | None:
        kind = fault.kind
        ra = fault.retry_after_s
        if kind == "429":
            return self._error(
                429,
                "rate_limit_error",
                "Rate limit reached; please retry",
                {"retry-after": _retry_after(1.0 if ra is None else ra, fault.date)},
            )
        if kind in ("500", "503", "529", "504"):
            headers = {"retry-after": _retry_after(ra, fault.date)} if ra is not None else None
            kinds = {
                "500": "api_error",
                "503": "overloaded_error",
                "529": "overloaded_error",
                "504": "timeout",
            }
            return self._error(int(kind), kinds[kind], f"server error {kind}", headers)
        if kind == "hang":
            await self._hang(fault, receive)
            return self._error(504, "timeout", "hung")
        if kind in ("late", "garbled"):  # the whole reply is generated and billed, then lost
            made = self._reply("ok", body, prompt, seed)
            if kind == "garbled":
                return Response(bytes(made.body)[: len(made.body) // 2], media_type="application/json")
            await self._hang(fault, receive)
            return made
        if kind == "malformed":
            return Response(
                b'{"id": "chatcmpl-broken", "choices": [{"message": {"content": "Par',
                media_type="application/json",
            )
        if kind == "drop":
            return None
        if kind == "quota":
            return self._error(
                402,
                "insufficient_quota",
                "You exceeded your current quota, please check your plan and billing details.",
            )
        if kind == "quota429":
            return self._error(
                429,
                "insufficient_quota",
                "You exceeded your current quota, please check your plan and billing details.",
                code="insufficient_quota",
            )
        if kind == "unauthorized":
            return self._error(401, "authentication_error", "invalid API key")
        if kind == "echo_key":
            key = self._key_of(request) or ""
            return self._error(401, "authentication_error", _echo(key, fault.encoding))
        return self._reply(kind, body, prompt, seed)

    async def _hang(self, fault: Fault, receive: Receive) -> None:
        """Wait until ``hang_s`` passes, the client disconnects, or the server stops."""
        waits: list[asyncio.Future[Any]] = [asyncio.ensure_future(_disconnected(receive))]
        if self.state.stopping is not None:
            waits.append(asyncio.ensure_future(self.state.stopping.wait()))
        try:
            await asyncio.wait(waits, timeout=fault.hang_s, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waits:
                w.cancel()

    def _reply(self, kind: str, body: dict[str, Any], prompt: str, seed: Any) -> Response:
        st = self.state
        call = next(st.calls)
        m = _REPLY.search(prompt)
        if m is not None:
            text = m.group(1)
        elif st.reply_fn is not None:
            text = st.reply_fn(prompt, seed, call)
        else:
            basis = f"{prompt}|{seed}|{call}" if st.vary else f"{prompt}|{seed}"
            text = "reply-" + hashlib.sha256(basis.encode()).hexdigest()[:12]
        if st.reply_words > 0:
            text = " ".join(f"w{i}" for i in range(st.reply_words))
        limit = body.get("max_tokens") or body.get("max_completion_tokens")
        truncated = False
        if st.honour_max_tokens and isinstance(limit, int) and limit >= 0:
            words = text.split()
            if len(words) > limit:  # the provider stops at max_tokens (a token is a word here)
                text, truncated = " ".join(words[:limit]), True
        prompt_tokens = max(1, _prompt_tokens(st.prompt_tokens, body, prompt))
        cached = int(prompt_tokens * st.cached_fraction)
        reasoning = st.reasoning_tokens
        model = st.serve_model or str(body.get("model") or st.model)
        # a provider that gives one response id per prompt (not distinct draws), or a fresh one
        rid = hashlib.sha256(prompt.encode()).hexdigest()[:24] if st.same_ids else uuid.uuid4().hex[:24]
        if kind in ("content_filter", "refusal", "null_content"):
            reply_text: str | None = "I can't help with that." if kind == "refusal" else None
        else:
            reply_text = text
        n = body.get("n") if self.flavour == "openai" else 1
        n = n if isinstance(n, int) and n >= 1 else 1
        completion = ((len(reply_text.split()) if reply_text else 0) + reasoning) * n
        finish = "length" if truncated else "stop"
        if self.flavour == "anthropic":
            written = min(st.cache_creation_tokens, prompt_tokens - cached)
            hour = min(st.cache_write_1h_tokens, written)
            blocks: list[dict[str, Any]] = []
            if reasoning:
                blocks.append({"type": "thinking", "thinking": "hmm " * reasoning, "signature": "sig"})
            if reply_text is not None:
                blocks.append({"type": "text", "text": reply_text})
            payload: dict[str, Any] = {
                "id": f"msg_{rid}",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": blocks,
                "stop_reason": "refusal"
                if kind in ("content_filter", "refusal")
                else ("max_tokens" if truncated else "end_turn"),
                "stop_sequence": None,
                "usage": {
                    "input_tokens": prompt_tokens - cached - written,
                    "cache_read_input_tokens": cached,
                    "cache_creation_input_tokens": written,
                    "output_tokens": completion,
                },
            }
            if st.cache_write_1h_tokens:  # the newer split of the writes by lifetime
                payload["usage"]["cache_creation"] = {
                    "ephemeral_5m_input_tokens": written - hour,
                    "ephemeral_1h_input_tokens": hour,
                }
        else:
            message: dict[str, Any] = {"role": "assistant", "content": reply_text, "refusal": None}
            if kind == "refusal":
                message = {"role": "assistant", "content": None, "refusal": reply_text}
            payload = {
                "id": f"chatcmpl-{rid}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "system_fingerprint": "fp_loopback",
                "choices": [
                    {
                        "index": i,
                        "message": message,
                        "finish_reason": "content_filter" if kind == "content_filter" else finish,
                        "logprobs": None,
                    }
                    for i in range(n)
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion,
                    "total_tokens": prompt_tokens + completion,
                    "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
                    "completion_tokens_details": {"reasoning_tokens": reasoning, "audio_tokens": 0},
                },
            }
        if st.omit_usage:  # like servers that send no usage block
            payload.pop("usage", None)
        if isinstance(st.price, dict):  # a price table: cache reads and writes at their own rates
            pr = st.price
            w = (written - hour, hour) if self.flavour == "anthropic" else (0, 0)
            plain = prompt_tokens - cached - w[0] - w[1]
            usd = (
                plain * pr["input"]
                + cached * pr.get("cached_input", pr["input"])
                + w[0] * pr.get("cache_write_5m", pr["input"])
                + w[1] * pr.get("cache_write_1h", pr["input"])
                + completion * pr["output"]
            ) / 1e6
        else:
            pin, pout = st.price or (0.0, 0.0)
            usd = prompt_tokens * pin / 1e6 + completion * pout / 1e6
        st.bills.append(  # one event loop serves every request: no lock needed
            Bill(
                response_id=payload["id"],
                model=model,
                tokens_in=prompt_tokens,
                tokens_out=completion,
                usd=usd,
            )
        )
        return JSONResponse(payload)


_SETTINGS = frozenset(
    {
        "latency_s",
        "vary",
        "reasoning_tokens",
        "cached_fraction",
        "cache_creation_tokens",
        "api_key",
        "reply_fn",
        "omit_usage",
        "reply_words",
        "honour_max_tokens",
        "prompt_tokens",
        "serve_model",
        "price",
        "cache_write_1h_tokens",
        "same_ids",
        "gather",
        "gather_timeout_s",
        "gather_skip",
    }
)


class LoopbackServer:
    """An OpenAI- and Anthropic-compatible server on 127.0.0.1 and a free port.

    Use it as a context manager (``with`` or ``async with``), or call :meth:`start` and
    :meth:`stop`.

    Args:
        latency_s: seconds every reply waits before it is sent.
        vary: make every call's reply differ (for draw tests); otherwise replies are
            deterministic per ``(prompt, seed)``.
        reasoning_tokens: reasoning tokens reported in every reply (inside completion tokens).
        cached_fraction: the fraction of prompt tokens reported as cached (0 to 1).
        cache_creation_tokens: Anthropic ``cache_creation_input_tokens`` per reply (at most the
            uncached prompt tokens).
        model: the model reported when a request names none.
        api_key: when set, requests without this key get HTTP 401.
        reply_fn: ``reply_fn(prompt, seed, call_index) -> str`` computes the reply text.
        separate_process: run the server in a child process (no shared interpreter lock, for
            benchmarks); scripted queues, ``reply_fn`` and request records are then unavailable.
        record: keep every request in :attr:`requests`.

    Attributes:
        base_url: ``"http://127.0.0.1:<port>/v1"`` once started.
        requests: the requests received (when ``record``), in arrival order.
    """

    def __init__(
        self,
        latency_s: float = 0.0,
        *,
        vary: bool = False,
        reasoning_tokens: int = 0,
        cached_fraction: float = 0.0,
        cache_creation_tokens: int = 0,
        model: str = "loopback-1",
        api_key: str | None = None,
        reply_fn: Callable[[str, Any, int], str] | None = None,
        separate_process: bool = False,
        record: bool = True,
    ) -> None:
        self._state = _State(
            latency_s=float(latency_s),
            vary=vary,
            reasoning_tokens=int(reasoning_tokens),
            cached_fraction=float(cached_fraction),
            cache_creation_tokens=int(cache_creation_tokens),
            model=model,
            api_key=api_key,
            reply_fn=reply_fn,
            record=record and not separate_process,
        )
        self._subprocess = separate_process
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._proc: Any = None
        self.port = 0
        self.base_url = ""

    def __repr__(self) -> str:
        return f"LoopbackServer(base_url={self.base_url!r})"

    # -- scripting --------------------------------------------------------------------------

    @property
    def requests(self) -> list[ReceivedRequest]:
        """The requests received so far, in arrival order."""
        return self._state.requests

    @property
    def bills(self) -> list[Bill]:
        """What the server billed, one :class:`Bill` per reply made, in order."""
        return self._state.bills

    def push(self, *faults: str | Fault) -> None:
        """Queue faults for the next requests, in order (``"ok"`` for a normal reply)."""
        with self._state.lock:
            self._state.queue.extend(Fault.of(f) for f in faults)

    @property
    def in_flight(self) -> int:
        """The requests the server is answering now (a hang not counted)."""
        return self._state.in_flight

    @property
    def max_in_flight(self) -> int:
        """The most requests the server has handled at once since the last :meth:`reset`."""
        return self._state.max_in_flight

    def reset(self) -> None:
        """Forget queued faults, marker counts, recorded requests and bills, ``max_in_flight``; re-arm ``gather``."""
        with self._state.lock:
            self._state.queue.clear()
            self._state.seen.clear()
            self._state.requests.clear()
            self._state.bills.clear()
            self._state.max_in_flight = self._state.in_flight
            self._state.gathered = None
            self._state.gather_skipped = 0

    def set(self, **settings: Any) -> None:
        """Change settings of a running server.

        Args:
            **settings: ``latency_s``, ``vary``, ``reasoning_tokens``, ``cached_fraction``,
                ``cache_creation_tokens``, ``api_key``, ``reply_fn`` (as for the constructor),
                ``omit_usage`` (send replies without a usage block), ``reply_words`` (every
                reply is this many words, one token each; 0 for the usual one-word reply),
                ``honour_max_tokens`` (``True``: a reply stops at the request's ``max_tokens``
                words with finish reason ``length``; ``False``: the limit is ignored, as a
                server that overruns it), ``prompt_tokens`` (``"words"``, ``"bytes"`` or ``"tiktoken"``: how
                prompt tokens are billed; bytes is the most any byte-level tokenizer bills;
                ``"tiktoken"``: the model's own tokenizer where hrbench ships it, else bytes),
                ``serve_model`` (report this model whatever was asked), ``price`` (``(input,
                output)`` USD per million tokens that :attr:`bills` charges, every prompt token
                at ``input``; or a table ``{"input", "output", "cached_input",
                "cache_write_5m", "cache_write_1h"}`` that bills cache reads and writes at their
                rates, each ``input`` when left out), ``cache_write_1h_tokens`` (Anthropic: of
                the ``cache_creation_tokens``, this many are 1-hour writes, reported in the
                ``cache_creation`` block), ``same_ids`` (every reply to one
                prompt carries the same response id, as a provider that does not give distinct
                draws), ``gather`` (hold replies
                until this many requests are in flight at once; 0 for no holding; setting it
                re-arms the latch), ``gather_timeout_s`` (how long a held reply waits for
                the others before the latch gives up and opens; seconds) and ``gather_skip``
                (the first this many requests are not held: a governor's slow start sends one
                request alone until its reply shows the billed model).

        Raises:
            TypeError: for an unknown setting.
        """
        for name, value in settings.items():
            if name not in _SETTINGS:
                raise TypeError(f"unknown setting {name!r}")
            setattr(self._state, name, value)
            if name == "gather":
                self._state.gathered = None
                self._state.gather_skipped = 0

    # -- lifecycle --------------------------------------------------------------------------

    def app(self) -> Starlette:
        """The ASGI application."""
        return Starlette(
            routes=[
                Route("/v1/chat/completions", _Api(self._state, "openai"), methods=["POST"]),
                Route("/v1/messages", _Api(self._state, "anthropic"), methods=["POST"]),
            ]
        )

    def start(self, timeout_s: float = 20.0) -> LoopbackServer:
        """Start serving; return once the server accepts connections.

        Args:
            timeout_s: how long to wait for the server to come up (seconds).

        Returns:
            ``self``.

        Raises:
            RuntimeError: when the server did not start in time.
        """
        if self._subprocess:
            return self._start_subprocess(timeout_s)
        # proto IPPROTO_TCP, so that asyncio sets TCP_NODELAY on accepted connections (with proto
        # 0 it does not, and Nagle plus delayed ACKs add ~40 ms to every reply)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self.app(),
            log_config=None,
            log_level="critical",
            access_log=False,
            lifespan="off",
            loop="asyncio",
            http="auto",  # httptools when installed (about twice the throughput), else h11
            timeout_keep_alive=30,
            timeout_graceful_shutdown=1,
            backlog=4096,
        )
        self._server = server = uvicorn.Server(config)

        def run() -> None:
            async def serve() -> None:
                self._loop = asyncio.get_running_loop()
                self._state.stopping = asyncio.Event()
                await server.serve(sockets=[sock])

            asyncio.run(serve())
            sock.close()

        self._thread = threading.Thread(target=run, name=f"loopback-{self.port}", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the loopback server did not start")
            time.sleep(0.005)
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        return self

    def _start_subprocess(self, timeout_s: float) -> LoopbackServer:
        st = self._state
        args = [
            sys.executable,
            "-m",
            "hrbench.testing.loopback",
            f"--latency-s={st.latency_s}",
            f"--reasoning-tokens={st.reasoning_tokens}",
            f"--cached-fraction={st.cached_fraction}",
            f"--model={st.model}",
        ]
        if st.vary:
            args.append("--vary")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in [_package_root(), env.get("PYTHONPATH", "")] if p)
        self._proc = subprocess.Popen(args, stdout=subprocess.PIPE, stdin=subprocess.PIPE, env=env, text=True)
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()  # "PORT <n>" once listening
        if not line.startswith("PORT "):
            self._proc.kill()
            self._proc.wait(timeout=timeout_s)
            raise RuntimeError(f"the loopback server did not start: {line!r}")
        self.port = int(line.split()[1])
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        return self

    def stop(self) -> None:
        """Stop serving: cut hanging replies short and wait for the server to exit."""
        if self._proc is not None:
            proc, self._proc = self._proc, None
            with contextlib.suppress(Exception):
                proc.stdin.close()  # the child exits when its stdin closes
            try:
                proc.wait(timeout=10)
            except Exception:
                proc.kill()
                proc.wait(timeout=10)
            proc.stdout.close()
            return
        server, thread, loop = self._server, self._thread, self._loop
        if server is None or thread is None:
            return
        server.should_exit = True
        stopping = self._state.stopping
        if loop is not None and stopping is not None:
            with contextlib.suppress(RuntimeError):  # the loop may be gone already
                loop.call_soon_threadsafe(stopping.set)
        thread.join(timeout=15)
        self._server = self._thread = self._loop = None

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def __aenter__(self) -> LoopbackServer:
        import anyio.to_thread

        return await anyio.to_thread.run_sync(self.start)

    async def __aexit__(self, *exc: object) -> None:
        import anyio.to_thread

        await anyio.to_thread.run_sync(self.stop)


def _package_root() -> str:
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _main(argv: list[str] | None = None) -> None:
    """Serve in this process until stdin closes; print ``PORT <n>`` once listening."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m hrbench.testing.loopback")
    parser.add_argument("--latency-s", type=float, default=0.0)
    parser.add_argument("--reasoning-tokens", type=int, default=0)
    parser.add_argument("--cached-fraction", type=float, default=0.0)
    parser.add_argument("--model", default="loopback-1")
    parser.add_argument("--vary", action="store_true")
    ns = parser.parse_args(argv)
    srv = LoopbackServer(
        ns.latency_s,
        vary=ns.vary,
        reasoning_tokens=ns.reasoning_tokens,
        cached_fraction=ns.cached_fraction,
        model=ns.model,
        record=False,
    )
    with srv:
        print(f"PORT {srv.port}", flush=True)
        sys.stdin.read()  # until the parent closes our stdin (or dies)


if __name__ == "__main__":
    _main()
