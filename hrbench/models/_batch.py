"""What the provider batch APIs share: a batch's status, a line's result, and HTTP with retries.

:mod:`hrbench.models._batch_openai` (OpenAI's Batch API and any OpenAI-compatible ``base_url``
offering it) and :mod:`hrbench.models._batch_anthropic` (Anthropic's Message Batches) are
:class:`BatchApi` subclasses. A batch's state is said in OpenAI's words (:data:`STATES`) for
both. The runner's batch collector (:mod:`hrbench.runner.batch`) is their only user.

Calls that change nothing (a status, a list, a result file, a cancel) are retried on a
transport failure, HTTP 408/409/429 and 5xx, honouring ``Retry-After``, up to the client's
``max_attempts``; calls that create something (a file, a batch) are made once: when their reply
is lost, the caller looks the batch up by its tag (:meth:`BatchApi.find`) rather than create a
second one.
"""

from __future__ import annotations

import time
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import anyio
import msgspec

from hrbench.errors import HrbenchError
from hrbench.models import _http
from hrbench.models._replies import SNIPPET, error_detail, unusable_reply
from hrbench.models._retries import JITTER, RETRYABLE_STATUS, parse_retry_after
from hrbench.records import Result, Usage

__all__ = ["STATES", "TERMINAL", "BatchApi", "BatchError", "BatchLost", "BatchStatus", "LineResult"]

STATES = (
    "validating",
    "in_progress",
    "finalizing",
    "completed",
    "expired",
    "cancelling",
    "cancelled",
    "failed",
)
"""A batch's states, in OpenAI's words (https://platform.openai.com/docs/guides/batch, "batch
statuses"); Anthropic's ``in_progress``, ``canceling`` and ``ended`` are read into them."""

TERMINAL = frozenset({"completed", "expired", "cancelled", "failed"})
"""States after which a batch changes no more: its results can be read."""


class BatchError(HrbenchError):
    """Raised when a provider refuses a batch call for good (a 4xx, or retries spent)."""

    code = -32009


class BatchLost(BatchError):
    """Raised when a call that creates something may have reached the provider but its reply was lost."""


@dataclass
class BatchStatus:
    """What a provider says of a batch.

    Attributes:
        id: the provider's batch id.
        state: one of :data:`STATES`.
        total, done, failed: lines in all, done, and failed (errored, expired or cancelled).
        results: where its results are (OpenAI: the output file id; Anthropic: the results URL).
        errors: OpenAI's error file id (per-line errors, expired lines), or ``None``.
        error: why the whole batch failed (validation), or ``None``.
        tag: the tag hrbench gave it (OpenAI's metadata ``hrbench_tag``), when known.
        created: when the provider created it (Unix seconds), when known.
    """

    id: str
    state: str
    total: int = 0
    done: int = 0
    failed: int = 0
    results: str | None = None
    errors: str | None = None
    error: str | None = None
    tag: str | None = None
    created: float | None = None

    @property
    def ended(self) -> bool:
        """Whether the batch changes no more (its results can be read)."""
        return self.state in TERMINAL


@dataclass
class LineResult:
    """One line's outcome: its ``custom_id``, its state and the reply as a :class:`~hrbench.records.Result`.

    ``state`` is ``"done"`` (a reply, maybe unusable: then ``result.ok`` is false and its
    usage kept, as billed), ``"failed"`` (the provider refused the line: HTTP 4xx, not billed),
    ``"expired"`` or ``"cancelled"`` (never processed, not billed).
    """

    custom_id: str
    state: str
    result: Result


class BatchApi:
    """A provider's batch API, for the requests of one HTTP model client.

    Args:
        client: the :class:`~hrbench.models._remote.HttpModelClient` whose requests go in
            batches: its base URL, key, headers, body and reply format are the batch lines'.
    """

    provider = "http"
    max_lines = 50_000
    """The most lines one batch may hold at this provider."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.base_url: str = client.base_url
        self._http: Any = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_url!r})"

    # -- what subclasses provide ---------------------------------------------------------------
    def line(self, custom_id: str, body: dict[str, Any]) -> bytes:
        """One request of a batch, encoded as this provider takes it (``body``: the client's)."""
        raise NotImplementedError

    async def submit(self, tag: str, lines: list[bytes]) -> BatchStatus:
        """Upload ``lines`` as one batch tagged ``tag``; its status.

        Raises:
            BatchLost: the provider may have made the batch but its reply was lost (look it up
                with :meth:`find`).
            BatchError: the provider refused it.
        """
        raise NotImplementedError

    async def find(
        self, tag: str, lines: int, since: float, taken: Collection[str] = ()
    ) -> BatchStatus | None:
        """The batch tagged ``tag`` (``lines`` lines, made after ``since``, Unix seconds), if the provider has it.

        ``taken``: batch ids already known to be other batches (never the one looked for).
        """
        raise NotImplementedError

    async def status(self, batch_id: str) -> BatchStatus:
        """A batch's status now."""
        raise NotImplementedError

    async def results(self, status: BatchStatus) -> list[LineResult]:
        """The results of an ended batch's lines, in the order the provider gives them."""
        raise NotImplementedError

    async def cancel(self, batch_id: str) -> BatchStatus:
        """Ask the provider to cancel a batch; its status then."""
        raise NotImplementedError

    # -- shared ------------------------------------------------------------------------------------
    def url(self, path: str) -> str:
        """The URL of ``path`` under the client's base URL."""
        return self.base_url + path

    def reply(self, body: Any, custom_id: str) -> Result:
        """A line's reply body read by the client, as the synchronous API's reply is read.

        A reply the runner cannot score (cut at the output limit, no text) is a failed
        :class:`~hrbench.records.Result` keeping its usage (it was billed; :func:`unusable_reply`).
        """
        try:
            result = self.client.parse_reply(body)
        except (ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
            return self.failed(f"malformed reply in the batch results: {type(exc).__name__}: {exc}", None)
        why = unusable_reply(result)
        if why is not None:
            result = msgspec.structs.replace(result, ok=False, error=f"{self.provider}: {why}")
        return result

    def failed(self, what: str, status: int | None) -> Result:
        """A line that failed with no bill (refused by the provider, expired, cancelled)."""
        return Result(
            ok=False,
            error=self.client._redact(f"{self.provider}: {what}"),
            usage=Usage(provenance=None),
            usd=0.0,
            status=status,
        )

    def refused(self, status: int, body: Any) -> Result:
        """A line the provider refused with HTTP ``status`` (its error body as the message)."""
        text = body if isinstance(body, str) else msgspec.json.encode(body).decode()
        return self.failed(f"HTTP {status}: {error_detail(text)[:SNIPPET]}", status)

    async def pool(self) -> Any:
        """This API's HTTP client (made on first use, in a worker thread: it loads certificates)."""
        if self._http is None:
            c = self.client
            self._http = await anyio.to_thread.run_sync(
                lambda: _http.make_async_client(
                    4, max(c.timeout_s, 60.0), connect_timeout_s=c.connect_timeout_s, trust_env=c.trust_env
                )
            )
        return self._http

    async def aclose(self) -> None:
        """Close this API's HTTP client."""
        if self._http is not None:
            http, self._http = self._http, None
            await http.aclose()

    def headers(self, json: bool = True) -> dict[str, str]:
        """The client's headers (its key included); without the JSON content type for an upload."""
        headers = self.client._headers(self.client._key())
        if not json:
            headers.pop("content-type", None)
        return headers

    async def once(self, method: str, path: str, **kwargs: Any) -> Any:
        """A call that creates something, made once: its decoded JSON reply.

        Raises:
            BatchLost: no reply (a transport failure, a timeout, HTTP 5xx): it may have been made.
            BatchError: the provider refused it (HTTP 4xx), naming the status and its message.
        """
        http = await self.pool()
        try:
            response = await http.request(
                method, self.url(path), headers=self.headers("files" not in kwargs), **kwargs
            )
        except _http.ConnectError as exc:  # nothing was sent: not lost, refused
            raise BatchError(self._say(f"cannot connect to {self.base_url} ({type(exc).__name__})")) from None
        except (TimeoutError, _http.TimeoutError_, _http.TransportError) as exc:
            raise BatchLost(self._say(f"{method} {path}: no reply ({type(exc).__name__})")) from None
        return self._decoded(method, path, response, lost_on_5xx=True)

    async def call(self, method: str, path: str, *, raw: bool = False, **kwargs: Any) -> Any:
        """A call that changes nothing (or may be repeated), retried: its decoded JSON reply (``raw``: bytes).

        Raises:
            BatchError: refused for good (HTTP 4xx), or every attempt failed.
        """
        c = self.client
        http = await self.pool()
        start = time.monotonic()
        attempt = 0
        while True:
            attempt += 1
            wait: float | None = None
            try:
                response = await http.request(method, self.url(path), headers=self.headers(), **kwargs)
            except (TimeoutError, _http.TimeoutError_, _http.TransportError) as exc:
                why = f"{method} {path}: {type(exc).__name__}: {self.client._redact(str(exc))}"
            else:
                status = response.status_code
                if not (status in RETRYABLE_STATUS or status >= 500):
                    return response.content if raw and status < 300 else self._decoded(method, path, response)
                why = f"{method} {path}: HTTP {status}: {error_detail(response.text)[:SNIPPET]}"
                wait = parse_retry_after(response.headers)
            if attempt >= c.max_attempts or time.monotonic() - start > c.max_total_s:
                raise BatchError(self._say(f"{why} (after {attempt} attempts)"))
            backoff = min(c.wait_max_s, c.wait_initial_s * 2 ** (attempt - 1))
            await anyio.sleep((wait if wait is not None else backoff) + JITTER.uniform(0.0, c.wait_jitter_s))

    def _decoded(self, method: str, path: str, response: Any, lost_on_5xx: bool = False) -> Any:
        status = response.status_code
        if lost_on_5xx and status >= 500:
            raise BatchLost(
                self._say(f"{method} {path}: HTTP {status}: {error_detail(response.text)[:SNIPPET]}")
            )
        if status >= 300:
            raise BatchError(
                self._say(f"{method} {path}: HTTP {status}: {error_detail(response.text)[:SNIPPET]}")
            )
        try:
            return msgspec.json.decode(response.content)
        except msgspec.DecodeError:
            raise BatchError(
                self._say(f"{method} {path}: a reply that is not JSON (HTTP {status})")
            ) from None

    def _say(self, what: str) -> str:
        return self.client._redact(f"{self.provider} batch: {what}")


def jsonl(data: bytes) -> list[Any]:
    """The JSON values of a JSON Lines file (blank lines skipped; a bad line is ``None``)."""
    out: list[Any] = []
    for raw in data.splitlines():
        if not raw.strip():
            continue
        try:
            out.append(msgspec.json.decode(raw))
        except msgspec.DecodeError:
            out.append(None)
    return out
