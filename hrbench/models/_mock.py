"""An in-process mock client (the seed's ``gr_mock_client``)."""

from __future__ import annotations

import hashlib
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from hrbench._util.fingerprint import Unfingerprintable, fingerprint
from hrbench.records import Request, Result, Usage

__all__ = ["MockClient"]


class MockClient:
    """A client that answers with a function of ``(messages, params)``.

    The function returns a string (the reply text), a :class:`~hrbench.Result`, a dict of
    ``Result`` fields, or an awaitable of one of these. A mock keeps no cache (seed 002): under
    it, an arm that leaves the draw index out is not refused; under a cache it would be.

    Under a benchmark's cache, a mock's replies are keyed on a fingerprint of its function
    (SPEC section 6): its code, constants, defaults, closure and the module-level
    values it reads, taken when the client is made; a changed function is a different key.
    When the function holds something that cannot be fingerprinted (an object of unknown
    type), :attr:`cacheable` is ``False``: the benchmark does not cache its replies and says so
    once with a :class:`~hrbench.errors.NotCachedWarning`.
    Usage is estimated from whitespace-separated words (provenance ``"estimated"``) unless the
    function returns its own.

    Args:
        fn: ``fn(messages, params)``; ``params`` holds the sampling parameters,
            ``draw_index`` and, when the request sends tools, ``tools`` (their definitions).
        model: the model name reported.

    Example:
        >>> import anyio
        >>> from hrbench.records import Request
        >>> cl = MockClient(lambda messages, params: "Paris")
        >>> anyio.run(cl.send, Request(messages=[{"role": "user", "content": "x"}])).text
        'Paris'
    """

    provider = "mock"
    base_url = ""

    def __init__(
        self, fn: Callable[[list[dict[str, Any]], dict[str, Any]], Any], model: str = "mock"
    ) -> None:
        self.fn = fn
        self.model = model
        # a sync function answers without suspending: a sync arm's requests can be served in
        # its worker thread without a hop to the event loop
        self.inline = not inspect.iscoroutinefunction(fn)
        self.calls = 0
        self.not_cacheable_why = ""
        try:
            fp = hashlib.sha256(msgspec.json.encode(fingerprint(fn, strict=True), order="sorted")).hexdigest()
        except (Unfingerprintable, TypeError, msgspec.EncodeError, RecursionError) as exc:
            fp, self.not_cacheable_why = None, str(exc)
        self.fingerprint: str | None = fp
        """sha256 hex of the function's fingerprint, or ``None`` when it cannot be taken."""
        self.cacheable = fp is not None
        self.warned = False

    def wire(self, request: Request) -> dict[str, Any]:
        """The responder's fingerprint: part of the cache key (a changed function misses)."""
        return {"responder": self.fingerprint}

    def __repr__(self) -> str:
        return f"MockClient(model={self.model!r})"

    async def send(
        self, request: Request, before_attempt: Callable[[], Awaitable[None] | None] | None = None
    ) -> Result:
        """Answer ``request`` by calling the function; an exception becomes ``ok=False``.

        Raises:
            BudgetRefused: from ``before_attempt`` when the governor refuses the request.
        """
        if before_attempt is not None:
            pending = before_attempt()
            if pending is not None:  # a priced mock waits for its reservation's commit
                await pending
        self.calls += 1
        params = dict(request.params)
        params["draw_index"] = request.draw_index
        if request.tools:  # the tool definitions sent (OpenAI's form), for a mock that calls tools
            params["tools"] = request.tools
        start = time.perf_counter()
        try:
            out = self.fn(request.messages, params)
            if type(out) is not str and inspect.isawaitable(out):
                out = await out
        except Exception as exc:  # the arm's mock failed: an error reply, not a crash
            return Result(ok=False, error=f"{type(exc).__name__}: {exc}", model=request.model or self.model)
        seconds = time.perf_counter() - start
        if isinstance(out, Result):
            return out
        if isinstance(out, dict):
            return msgspec.convert(out, Result)
        text = None if out is None else str(out)
        words_in = sum(len(str(m.get("content", "")).split()) for m in request.messages)
        usage = Usage(tokens_in=words_in, tokens_out=len(text.split()) if text else 0, provenance="estimated")
        return Result(
            text=text, finish_reason="stop", usage=usage, model=request.model or self.model, seconds=seconds
        )
