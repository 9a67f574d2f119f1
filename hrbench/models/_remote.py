"""What the HTTP model clients share: attempts, retries, failure classes, key handling.

:class:`HttpModelClient` sends one request as a series of attempts:

1. wait for the pace of the key and model (:mod:`hrbench.models._pace`: the rate the provider
   allows, read from its limit headers and its 429s; shared by every client of the process),
   then for a slot of the endpoint (``max_connections``, a ceiling shared per
   ``(provider, base_url)``);
2. call ``before_attempt()`` (the governor charges the attempt, or raises ``BudgetRefused``
   and nothing is sent);
3. read the API key from its environment variable and POST the request, under a total
   per-attempt deadline of ``timeout_s``;
4. classify the reply:

   ========================================  ==============================================
   reply                                     outcome
   ========================================  ==============================================
   2xx with a well-formed body               the ``Result``
   402; 429 or 400/403 whose body says the   ``Result(ok=False, halts="quota")`` at once, no
   quota or credit is exhausted              retry: the provider's error, not a budget stop;
                                             the runner sends no other request of the
                                             benchmark to this client
   429 (rate limit)                          retried after its ``retry-after-ms`` /
                                             ``Retry-After`` (a little jitter on top), which
                                             also holds every request of the key and model;
                                             bounded by time (``max_total_s``), not attempts
   408, 409, 5xx, transport error,           retried with stamina, honouring ``Retry-After``
   timeout, 2xx with a truncated or          as a floor with full jitter on top, bounded by
   unparsable body, 2xx with no text         ``max_attempts`` and ``max_total_s``; after the
   (:func:`unusable_reply`)                  last attempt ``Result(ok=False, error=...)``
   2xx cut at the output limit               ``Result(ok=False)`` at once, its usage kept:
   (``finish_reason`` ``length``)            an ``error`` run "reply cut at the output limit"
   connection refused (nothing listens)      ``Result(ok=False)`` at once, one clear error;
                                             no call counted (nothing was sent)
   any other status (400, 401, 404, ...)     ``Result(ok=False)`` at once; after a 401 the
                                             runner sends no other request to this client,
                                             after a 403/404 none for that model
   ========================================  ==============================================

Retries log through stamina's ``stamina`` logger, which is silent unless the application
configures logging.

A retry is an attempt of the same request, so it never creates a second row; every attempt
is charged to the governor before it is sent (case H15a). A request that failed for good
is ``ok=False``, which the exact scorer calls ``"error"``, not ``budget_stop`` (case H15b).

The API key is read from the named environment variable at each attempt and only ever placed
in a request header; error messages are scrubbed of it and of anything shaped like a key.
"""

from __future__ import annotations

import functools
import logging
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import msgspec
import stamina

from hrbench._util.environ import env_value
from hrbench._util.redact import note_key_env, redact, scrub_reply, scrub_value
from hrbench.errors import HrbenchError
from hrbench.models import _http, _pace
from hrbench.models._deadline import deadline
from hrbench.models._replies import (
    SNIPPET,
    book_lost,
    error_detail,
    estimated_usage,
    give_back,
    keep_billed,
    unusable_reply,
)
from hrbench.models._retries import (
    LOST_STATUS,
    QUOTA,
    RETRYABLE_STATUS,
    FinalFailure,
    RetryableFailure,
    Tries,
    http_date,
    parse_retry_after,
)
from hrbench.records import Request, Result, Usage

__all__ = ["HttpModelClient", "http_date", "parse_retry_after", "redact"]


logging.getLogger("stamina").addHandler(logging.NullHandler())


_CREDENTIAL_HEADER = re.compile(r"auth|key|token|secret|cookie|session|password|signature", re.IGNORECASE)
"""Header names that may carry a credential: never part of a cache key."""


class HttpModelClient:
    """The shared body of the HTTP clients; subclasses say how to build and read a request.

    Args:
        model: the default model (a request's own ``model`` wins).
        base_url: the API's base URL, e.g. ``"https://api.openai.com/v1"``.
        api_key_env: the environment variable holding the API key, read at each attempt;
            ``None`` (or an unset variable) sends no key, for local servers.
        timeout_s: the most one attempt may take, connect to last byte (seconds).
        connect_timeout_s: the connect timeout (seconds), at most ``timeout_s``.
        max_connections: the most requests in flight to this endpoint and the pool size; a
            ceiling, not a target: within it requests go at the rate the provider allows.
        max_attempts: attempts per request, the first one included; a 429 (rate limit) is not
            counted: it is retried for as long as ``max_total_s`` allows.
        max_total_s: the most time spent on one request, retries and waits included (seconds);
            the time its first attempt waits behind other requests (for the pace or a slot) is
            not counted.
        max_retry_wait_s: the longest ``Retry-After`` honoured (seconds); a longer one ends
            the request as failed rather than stall the benchmark.
        wait_initial_s: the first backoff when the server gives no ``Retry-After`` (seconds);
            it doubles per retry, with up to ``wait_jitter_s`` of jitter, capped at
            ``wait_max_s``.
        wait_max_s: the longest backoff without ``Retry-After`` (seconds).
        wait_jitter_s: the most random jitter added to a backoff (seconds). On top of a
            ``Retry-After`` (a floor), a uniform draw from 0 to ``max(wait_jitter_s,
            Retry-After / 2)`` is added, so requests told the same wait do not come back in
            lockstep (case R02a). A 429 gets less jitter, at most
            ``min(wait_jitter_s, Retry-After / 2)``: the pace spaces its retries.
        trust_env: honour proxy and certificate environment variables.
        headers: extra headers sent with every request (never put a key here; use
            ``api_key_env``).
        billed_as: other models a reply may be billed as (a router that picks the model, an
            alias that resolves to a dearer one): the governor reserves at the dearest of them
            and the model asked for. A reply billed as a model beyond them that costs more than
            was reserved stops the benchmark.
    """

    provider = "http"
    path = ""
    default_base_url = ""
    bills = True
    """A provider bills its replies: the governor reserves USD for them."""

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key_env: str | None = None,
        *,
        timeout_s: float = 60.0,
        connect_timeout_s: float = 10.0,
        max_connections: int = 100,
        max_attempts: int = 5,
        max_total_s: float = 300.0,
        max_retry_wait_s: float = 60.0,
        wait_initial_s: float = 0.5,
        wait_max_s: float = 30.0,
        wait_jitter_s: float = 1.0,
        trust_env: bool = True,
        headers: dict[str, str] | None = None,
        billed_as: Sequence[str] = (),
    ) -> None:
        from hrbench._util.forms import check_env_name, check_name, check_number, check_url

        # every field with a form, before any request (a base_url of "${VAR}" never reaches
        # 200 runs of 5 attempts each); `hrbench.specs` names them under `client.`
        check_name("model", model)
        check_url("base_url", self.default_base_url if base_url is None else base_url)
        check_env_name("api_key_env", api_key_env)
        seconds = {"timeout_s": timeout_s, "connect_timeout_s": connect_timeout_s, "max_total_s": max_total_s}
        for name, value in seconds.items():
            check_number(name, value, low=0, above=True, unit=" seconds")
        waits = {"max_retry_wait_s": max_retry_wait_s, "wait_initial_s": wait_initial_s}
        waits.update(wait_max_s=wait_max_s, wait_jitter_s=wait_jitter_s)
        for name, value in waits.items():
            check_number(name, value, low=0, unit=" seconds")
        check_number("max_connections", max_connections, low=1, whole=True)
        check_number("max_attempts", max_attempts, low=1, whole=True)
        self.model = model
        self.base_url = (base_url or self.default_base_url).rstrip("/")
        self.api_key_env = api_key_env
        note_key_env(api_key_env)  # its value is masked in every message, whatever its name
        self.timeout_s = float(timeout_s)
        self.connect_timeout_s = float(connect_timeout_s)
        self.max_connections = int(max_connections)
        self.max_attempts = int(max_attempts)
        self.max_total_s = float(max_total_s)
        self.max_retry_wait_s = float(max_retry_wait_s)
        self.wait_initial_s = float(wait_initial_s)
        self.wait_max_s = float(wait_max_s)
        self.wait_jitter_s = float(wait_jitter_s)
        self.trust_env = bool(trust_env)
        self.extra_headers = dict(headers or {})
        self.billed_as = tuple(billed_as)
        self.url = self.base_url + self.path
        self._wire_made: tuple[dict[str, str], dict[str, str]] | None = None
        self.attempts = 0
        """Attempts sent by this client (retries included)."""

    # -- description -------------------------------------------------------------------------

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r}, "
            f"api_key_env={self.api_key_env!r})"
        )

    @property
    def spec(self) -> dict[str, Any]:
        """What rebuilds this client: provider, model, base URL, key variable name, settings.

        Never the key itself.
        """
        return {
            "provider": self.provider,
            "model": self.model,
            "base_url": self.base_url,
            "api_key_env": self.api_key_env,
            "timeout_s": self.timeout_s,
            "max_connections": self.max_connections,
            "max_attempts": self.max_attempts,
            "max_total_s": self.max_total_s,
        }

    def body_defaults(self) -> dict[str, Any]:
        """Body fields this client sets when a request does not (none by default)."""
        return {}

    def wire(self, request: Request) -> dict[str, Any]:
        """What this client adds to ``request`` on the wire, for its cache and recording key.

        Case R03a: the key is the request as sent, so it covers the endpoint, the
        body fields the client fills in (:meth:`body_defaults`) and the extra headers that
        change the reply (``anthropic-version``, a beta flag), never a header whose name says
        it may carry a credential (``authorization``, ``x-api-key``, ``*token*``, ...).

        Returns:
            ``{"endpoint": url, "defaults": {...}, "headers": {...}}``.

        Example:
            >>> c = HttpModelClient("m", "http://127.0.0.1:9/v1", headers={"X-Beta": "on", "X-Api-Key": "k"})
            >>> c.wire(Request(messages=[]))["headers"]
            {'x-beta': 'on'}
        """
        return {"endpoint": self.url, "defaults": self.body_defaults(), "headers": self._wire_headers()}

    def _wire_headers(self) -> dict[str, str]:
        """:meth:`wire`'s headers, made again only when ``extra_headers`` changed since the last call.

        A request's wire is read, never changed (the cache and recording key hash it), so
        every request of a client shares one such dict.
        """
        made = self._wire_made
        if made is not None and made[0] == self.extra_headers:
            return made[1]
        headers = {
            k.lower(): v for k, v in sorted(self.extra_headers.items()) if not _CREDENTIAL_HEADER.search(k)
        }
        self._wire_made = (dict(self.extra_headers), headers)
        return headers

    # -- what subclasses provide ----------------------------------------------------------------

    def build_body(self, request: Request, model: str) -> dict[str, Any]:
        """The JSON body of ``request`` for this API."""
        raise NotImplementedError

    def auth_headers(self, key: str) -> dict[str, str]:
        """The headers carrying ``key``."""
        raise NotImplementedError

    def parse_reply(self, body: Any) -> Result:
        """Read a 2xx reply body into a ``Result`` (``seconds`` is filled by the caller).

        Raises:
            ValueError, KeyError, TypeError, IndexError: when the body is malformed.
        """
        raise NotImplementedError

    # -- sending ----------------------------------------------------------------------------------

    def require_key(self) -> None:
        """Refuse, before the first call, a client of a hosted API whose key is set nowhere.

        Rule (as the daemon's for specs): a client that talks to its provider's
        hosted API (the host of ``default_base_url``) and names an ``api_key_env`` needs that
        variable set (in the caller's environment sent with a daemon request, or the process's);
        a local server (another ``base_url``) may run without a key. The benchmark runner calls
        this before it sends anything.

        Raises:
            ConfigError: naming ``api_key_env``, the variable and how to set it.
        """
        from urllib.parse import urlsplit

        from hrbench.errors import ConfigError

        if not self.api_key_env or env_value(self.api_key_env) is not None:
            return
        hosted = urlsplit(self.default_base_url).hostname
        if hosted and urlsplit(self.base_url).hostname == hosted:
            raise ConfigError(
                "api_key_env",
                self.api_key_env,
                f"the variable {self.api_key_env} is not set, and {hosted} refuses requests without a key: "
                f"`export {self.api_key_env}=...` in the shell that runs this, then run again",
            )

    def _key(self) -> str | None:
        if not self.api_key_env:
            return None
        return env_value(self.api_key_env)

    def _headers(self, key: str | None) -> dict[str, str]:
        """An attempt's headers, carrying ``key`` (read from its variable for that attempt) when set."""
        headers = {"content-type": "application/json", "accept": "application/json", **self.extra_headers}
        if key is not None:
            headers.update(self.auth_headers(key))
        return headers

    def _redact(self, text: str) -> str:
        return redact(text, self._key())

    async def aclose(self) -> None:
        """Close the pooled connections of the running event loop (they reopen on use)."""
        await _http.aclose_all()

    async def __aenter__(self) -> HttpModelClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def send(
        self, request: Request, before_attempt: Callable[[], Awaitable[None] | None] | None = None
    ) -> Result:
        """Send ``request``, retrying what a retry can fix.

        Args:
            request: the request; an empty ``model`` means this client's model.
            before_attempt: called before every attempt is sent, retries included; it charges
                the attempt to the governor and raises ``BudgetRefused`` to stop it. What it
                returns, when not ``None``, is awaited before the attempt is sent (the
                reservation committed to the ledger).

        Returns:
            The reply with usage, model as served, response id and seconds (the wall time of
            the whole request, retries included); ``usd`` is left ``None`` for the pricing
            module. A failure is ``Result(ok=False, error=...)``; a quota or billing refusal
            (HTTP 402, or a 429 saying so) is one with ``halts="quota"``.

        Raises:
            BudgetRefused: from ``before_attempt``.
        """
        model = request.model or self.model
        tries = Tries(
            self.max_attempts, self.max_total_s, self.max_retry_wait_s, self.wait_jitter_s, self._redact
        )
        try:
            payload = msgspec.json.encode(self.build_body(request, model))
        except (TypeError, msgspec.EncodeError) as exc:
            return self._failed(f"request not JSON-encodable: {exc}", model, tries.start)
        ep = _http.endpoint(self.provider, self.base_url, self.max_connections)
        settings = (self.max_connections, self.timeout_s, self.connect_timeout_s, self.trust_env)
        http = ep.built(*settings) or await ep.pool(*settings)
        pace = _pace.pace_for(self.provider, self.base_url, self._key(), model)
        try:
            try:  # the first attempt before the retry loop (:meth:`_retried`)
                result = await self._attempt(ep, pace, http, payload, before_attempt, tries)
            except RetryableFailure as first:
                again = functools.partial(self._attempt, ep, pace, http, payload, before_attempt, tries)
                result = await self._retried(first, tries, again)
        except RetryableFailure as exc:
            plural = "s" if tries.attempts != 1 else ""
            error = f"{exc.message} (after {tries.attempts} attempt{plural})"
            failed = tries.keep(self._failed(error, model, tries.start, exc.status))
            return keep_billed(failed, exc.usage, exc.model)
        except FinalFailure as exc:
            failed = tries.keep(self._failed(exc.message, model, tries.start, exc.status))
            failed.halts = exc.halts
            return keep_billed(failed, exc.usage, exc.model)
        except HrbenchError:  # BudgetRefused from the governor
            raise
        except Exception as exc:  # a bug or a surprise: a failed reply, never a crash of the run
            return self._failed(
                f"{self.provider} request failed: {type(exc).__name__}: {exc}", model, tries.start
            )
        tries.keep(result)
        result.seconds = time.perf_counter() - tries.start
        if result.model is None:
            result.model = model
        if result.usage.provenance is None:  # no usage block: count with the model's tokenizer
            result.usage = estimated_usage(request, result)
        return result

    @staticmethod
    def _scrub(result: Result, key: str | None) -> None:
        """Remove ``key``, the one the reply's attempt sent, from the reply: its text, its message and its tool calls' arguments.

        A reply echoing the key never reaches the cache, recordings, traces or rows (SPEC §5).
        """
        if not key:
            return
        if result.raw_text:
            result.text = scrub_reply(result.raw_text, key)
        if result.message is not None:
            result.message = scrub_value(result.message, key)
        for call in result.tool_calls or ():
            call.arguments = scrub_value(call.arguments, key)

    async def _retried(
        self,
        first: RetryableFailure,
        should_retry: Callable[[BaseException], bool | float],
        make_attempt: Callable[[], Awaitable[Result]],
    ) -> Result:
        """The retries of a request whose first attempt failed: stamina's retry loop.

        The first attempt is made before the loop (most succeed, and building the loop cost a
        tenth of a request's CPU at 100 requests in flight); its failure is replayed into the
        loop as the loop's first attempt, which then decides (``should_retry``) and waits
        exactly as if it had made it.

        Raises:
            RetryableFailure: the last attempt's failure, when no retry is left.
            FinalFailure: a failure a retry cannot fix.
        """
        pending: RetryableFailure | None = first
        result: Result | None = None
        async for attempt in stamina.retry_context(
            on=should_retry,
            attempts=None,  # should_retry bounds them: max_attempts, and max_total_s for 429s
            timeout=None,
            wait_initial=self.wait_initial_s,
            wait_max=self.wait_max_s,
            wait_jitter=self.wait_jitter_s,
        ):
            with attempt:
                if pending is not None:
                    replayed, pending = pending, None
                    raise replayed
                result = await make_attempt()
        assert result is not None  # the loop ends with a reply, or raises
        return result

    def _failed(self, error: str, model: str, start: float, status: int | None = None) -> Result:
        return Result(
            ok=False,
            error=self._redact(error),
            usage=Usage(provenance=None),
            model=model,
            seconds=time.perf_counter() - start,
            status=status,
            key_env=self.api_key_env if status in (401, 403) else None,
        )

    async def _attempt(
        self,
        ep: _http.Endpoint,
        pace: _pace.Pace,
        http: Any,
        payload: bytes,
        before_attempt: Callable[[], Awaitable[None] | None] | None,
        tries: Tries,
    ) -> Result:
        tries.attempts += 1
        waited = time.perf_counter()
        try:
            ticket = pace.take_now() or await pace.acquire(self.max_retry_wait_s, tries.left_s())
        except _pace.PaceRefused as exc:
            past = (
                f"max_retry_wait_s ({self.max_retry_wait_s:g} s)"
                if exc.held
                else f"the time left of max_total_s ({self.max_total_s:g} s)"
            )
            raise FinalFailure(f"{self.provider}: {exc} (HTTP 429), past {past}", status=429) from None
        try:
            async with ep.slots.slot():
                if tries.attempts == 1:  # its wait behind other requests is not its own time
                    tries.queued_s = time.perf_counter() - waited
                if before_attempt is not None:
                    try:
                        pending = before_attempt()
                        if pending is not None:  # the reservation is committed before the send
                            await pending
                    except BaseException:
                        pace.unsent(ticket)
                        raise
                self.attempts += 1
                key = self._key()  # read at each attempt: a key changed between attempts is used at once
                ticket.sent_at = pace.clock()
                response = await self._post(pace, ticket, http, payload, self._headers(key), before_attempt)
                status = response.status_code
                if status == 429 and not QUOTA.search(response.text):
                    pace.on_rate_limited(ticket, parse_retry_after(response.headers), response.headers)
                else:
                    pace.on_reply(ticket, response.headers, status)
            try:
                result = self._classify(response)
            except (RetryableFailure, FinalFailure) as exc:
                if exc.usage is not None or status in LOST_STATUS or (200 <= status < 300):
                    # a 2xx that cannot be used (garbled, no text, cut) or a gateway's lost reply:
                    # billed, or it may have been; booked before any retry
                    book_lost(before_attempt, exc.usage, exc.model)
                raise
        finally:
            pace.release(ticket)
        if result.usage.provenance == "reported":
            pace.on_usage(result.usage.tokens_in, result.usage.tokens_out)
        self._scrub(result, key)
        return result

    async def _post(
        self,
        pace: _pace.Pace,
        ticket: _pace.Ticket,
        http: Any,
        payload: bytes,
        headers: dict[str, str],
        before_attempt: Callable[[], Awaitable[None] | None] | None,
    ) -> _http.HttpResponse:
        """POST one attempt with ``headers`` under ``timeout_s``; a transport failure raised as ours."""
        sent = _http.Body(payload)
        try:
            with deadline(self.timeout_s):
                response: _http.HttpResponse = await http.post(self.url, sent, headers)
                return response
        except _http.ConnectError as exc:  # nothing listens there: retrying will not help
            give_back(before_attempt)  # nothing was sent: no call is counted
            pace.unsent(ticket)
            raise FinalFailure(
                f"{self.provider}: cannot connect to {self.base_url} ({type(exc).__name__}: "
                f"{self._redact(str(exc)) or 'connection refused'}); is the server running and "
                "is base_url right?"
            ) from None
        except (TimeoutError, _http.TimeoutError_, _http.TransportError) as exc:
            # an attempt whose request was not written whole (no connection, or it broke while
            # writing) never reached the server, so its call is given back; one written whole may
            # have been read and billed, so it stays a call whatever the failure after
            what = (
                f"no reply within {self.timeout_s:g} s ({type(exc).__name__})"
                if isinstance(exc, (TimeoutError, _http.TimeoutError_))
                else f"transport error: {type(exc).__name__}: {self._redact(str(exc))}"
            )
            if not sent.whole:
                give_back(before_attempt)
                what += "; the request was not sent (no call counted)"
            else:  # it may have been billed: booked at its worst case
                book_lost(before_attempt)
                what += "; the request was sent whole (counted at its worst case)"
            raise RetryableFailure(f"{self.provider}: {what}") from None

    def _classify(self, response: _http.HttpResponse) -> Result:
        status = response.status_code
        if 200 <= status < 300:
            try:
                body = msgspec.json.decode(response.content)
                result = self.parse_reply(body)
            except (msgspec.DecodeError, ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
                # a truncated or garbled body is a transfer fault as often as a server's: retried
                raise RetryableFailure(
                    f"{self.provider}: malformed reply (HTTP {status}): {type(exc).__name__}: "
                    f"{str(exc)[:SNIPPET]}"
                ) from None
            unusable = unusable_reply(result)
            if unusable:  # never scored as if it were an answer
                why = f"{self.provider}: {unusable}"
                if result.finish_reason == "length":  # the same limit would be billed and cut again
                    raise FinalFailure(why, status, usage=result.usage, model=result.model)
                raise RetryableFailure(why, None, status, usage=result.usage, model=result.model)
            return result
        text = response.text
        detail = self._redact(error_detail(text))[:SNIPPET]  # redacted whole, then cut
        if status == 402 or (status in (400, 403, 429) and QUOTA.search(text)):
            # the provider's error, with its message and advice, not an hrbench budget stop
            # (whose advice, higher --max-* limits, cannot help)
            raise FinalFailure(
                f"{self.provider}: quota exhausted (HTTP {status}): {detail}; the provider refuses "
                "requests until credit is added or the quota raised with it (an hrbench limit, "
                "--max-calls or --max-usd, does not help); then run these runs again",
                status=status,
                halts="quota",
            )
        if status in RETRYABLE_STATUS or status >= 500:
            raise RetryableFailure(
                f"{self.provider}: HTTP {status}: {detail}",
                retry_after_s=parse_retry_after(response.headers),
                status=status,
            )
        if status in (401, 403):  # name the key's variable, never the key
            if not self.api_key_env:
                detail += " (this client sends no API key: api_key_env is None)"
            elif self._key() is None:
                detail += f" (environment variable {self.api_key_env} is not set)"
            else:
                detail += f" (the API key is read from the environment variable {self.api_key_env})"
        # a key refused (401) fails every request of the client, a model refused (403, 404) every
        # one for that model: the runner sends no other (not N identical errors)
        halts = {401: "auth", 403: "model", 404: "model"}.get(status)
        raise FinalFailure(f"{self.provider}: HTTP {status}: {detail}", status=status, halts=halts)
