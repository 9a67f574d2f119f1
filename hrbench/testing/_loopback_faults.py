"""What the loopback server can be told to do and what it keeps.

The faults it injects, the requests it received, the bills of its replies, and its shared state.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import random
import re
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from hrbench.testing._loopback_limits import Limits, Spike

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


def echo(key: str, encoding: str) -> str:
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


MARKER = re.compile(r"\[\[fault:([a-z0-9_]+)((?::[a-z_]+=[^:\]]+)*)\]\]")


REPLY = re.compile(r"\[\[reply:(.*?)\]\]", re.DOTALL)


LOG = logging.getLogger("hrbench.testing._loopback")


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


class Drop(Exception):
    """Raised by the app to make uvicorn close the connection mid-reply."""


@dataclass
class State:
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
    limits: Limits | None = None
    latency_sigma: float = 0.0
    spike: Spike | None = None
    rng: random.Random = field(default_factory=lambda: random.Random(0))
    arrivals: int = 0
