"""The JSON-RPC layer: one pygls ``JsonRPCServer`` per connection, fed by our own read loop.

What we change in stock pygls (``../shared/notes/stack.md`` §1) and why:

- **Our own read loop** (:func:`hrbench_server.connection.serve_stream`) instead of
  ``pygls.io_.run_async``: frames are read by :class:`hrbench_server.framing.FrameReader`,
  which answers every framing fault
  (missing, non-numeric, negative, too short or too long ``Content-Length``, over-long header
  lines, unframed JSON) with an error instead of a hang. Each body is decoded with msgspec into
  an envelope whose ``params`` stay raw JSON; malformed JSON is answered -32700, a body that is
  not a request object -32600, nesting deeper than the decoder allows -32600 (stock pygls only
  logs these, and the client waits forever). Errors about a message carry its id whenever it
  can be read, even from a cut body, so the caller waiting for it is answered. TCP clients
  send their token first. Well-formed messages go to pygls's dispatch (``_handle_request``,
  what ``handle_message`` calls for a request), so handlers, unknown methods (-32601) and
  ``$/cancelRequest``'s cancelling are pygls's.
- **Request ids** (JSON-RPC 2.0 §4, case S13a): every request with an id gets exactly one
  response carrying that id. ``$/cancelRequest`` sent as a request (with an id) is answered
  ``null`` once the cancel is made (the cancelled request still gets its own answer), as are
  ``initialized`` and ``exit`` sent as requests. A Number id with a fraction or an exponent
  (``104.0``, ``104.5``, ``1e2``) is written back exactly as the caller wrote it
  (:class:`~hrbench_server.framing.FloatId`; msgspec would print ``1e2`` as ``100.0``). An id
  that is ``null``, ``true``, an object or a number no float holds (``1e999``) cannot be
  echoed: -32600 with id ``null``.
- **Batches** (JSON-RPC 2.0 §6, cases R07c, R07d): an array of requests gets one array of
  responses once all have answered; notifications in it get none; ``[]`` gets one -32600.
- **The LSP base lifecycle** (any LSP client can attach): ``initialize`` answers the server's
  name, version and capabilities (hrbench's methods under ``capabilities.experimental``);
  ``initialized`` is accepted; ``shutdown`` (params ``null`` allowed) after ``initialize``
  answers ``null`` and refuses later requests (-32600); ``exit`` ends the connection (the
  process, over stdio: exit code 0 after ``shutdown``, 1 without, as LSP says). Without
  ``initialize``, ``shutdown`` keeps hrbench's meaning: stop the daemon.
- **Params stay raw** (``msgspec.Raw``): each handler decodes its own Struct, so validation
  errors carry msgspec's field path (``Expected `int`, got `str` - at `$.runs```) as -32602.
  Nothing is turned into namedtuples. ``"params": null`` counts as no params.
- **msgspec encoding** (:meth:`HrbenchProtocol._send_data`): results and notifications may be
  msgspec Structs; ``Content-Length`` counts bytes (case R07a).
- **Backpressure**: :meth:`HrbenchProtocol.drain` awaits the writer's buffer; streaming
  handlers call it every few hundred notifications.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import logging
from collections.abc import Callable
from typing import Any

import cattrs
import msgspec
from lsprotocol.types import ResponseErrorMessage
from pygls.protocol import JsonRPCNotification, JsonRPCProtocol, JsonRPCRequestMessage
from pygls.protocol.json_rpc import JsonRPCResponseMessage
from pygls.server import JsonRPCServer

from hrbench_server.framing import DEFAULT_MAX_MESSAGE_BYTES, FloatId, wire_id

__all__ = [
    "DEFAULT_MAX_MESSAGE_BYTES",
    "HrbenchProtocol",
    "INLINE_OR_TASK",
    "RpcServer",
    "frame_notification",
]

logger = logging.getLogger("hrbench_server")

COALESCE_S = 0.002
"""The longest a notification waits in the send queue (seconds): rows are sent in fewer writes."""

COALESCE_BYTES = 64 * 1024
"""Queued notification bytes that are written at once, without waiting."""

WRITE_BUFFER_BYTES = 4 * 1024 * 1024
"""Bytes a connection may hold unsent before a streaming benchmark waits for its reader.

asyncio's default (64 KiB) is less than one batch of rows (~1,000 rows of ~330 bytes), so every
batch waited for the client to read it, and the runner with it, whenever the client was not
scheduled at that moment. A slow reader still slows the benchmark rather
than grow the daemon's memory: by at most this much per connection.
"""


class _Out(msgspec.Struct, omit_defaults=True):
    jsonrpc: str
    id: int | str | msgspec.Raw | None | msgspec.UnsetType = msgspec.UNSET
    method: str | msgspec.UnsetType = msgspec.UNSET
    params: Any = msgspec.UNSET
    result: Any = msgspec.UNSET
    error: Any = msgspec.UNSET


class _Error(msgspec.Struct, omit_defaults=True):
    code: int
    message: str
    data: Any = None


def _enc_hook(obj: Any) -> Any:
    """A :class:`FloatId` anywhere in a message (a notification naming its request) as it was sent."""
    if type(obj) is FloatId:
        return msgspec.Raw(obj.raw)
    raise NotImplementedError(f"Encoding objects of type {type(obj).__name__} is unsupported")


def frame_notification(encoder: msgspec.json.Encoder, method: str, params: Any) -> bytes:
    r"""A notification encoded and framed (``Content-Length`` header) as ``send_notification`` sends it.

    Pure: a worker thread may frame messages (with its own ``encoder``) for the event loop to
    queue with :meth:`HrbenchProtocol.send_framed`.

    Example:
        >>> frame_notification(msgspec.json.Encoder(), "hrbench/x", {"a": 1})
        b'Content-Length: 55\r\n\r\n{"jsonrpc":"2.0","method":"hrbench/x","params":{"a":1}}'
    """
    body = encoder.encode(_Out(jsonrpc="2.0", method=method, params=params))
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


INLINE_OR_TASK = "hrbench_inline_or_task"
"""The attribute that marks a handler returning either its result or an awaitable (see
:meth:`HrbenchProtocol._execute_handler`)."""


class HrbenchProtocol(JsonRPCProtocol):
    """pygls's JSON-RPC protocol with msgspec encoding and writer backpressure."""

    def __init__(self, server: Any, converter: cattrs.Converter) -> None:
        super().__init__(server, converter)
        self._encoder = msgspec.json.Encoder(enc_hook=_enc_hook)
        self._closed = False
        self._out: list[bytes] = []
        self._queued = 0  # bytes in _out
        self._flush_scheduled = False
        self._batches: dict[Any, _Batch] = {}  # request id -> the batch waiting for its response
        self.lsp_session = False  # `initialize` was received
        self.shutdown_requested = False  # LSP `shutdown` was received: only `exit` is accepted now
        self.exit_requested = False  # LSP `exit` was received: the connection ends
        self.owned: set[asyncio.Task[Any]] = set()  # benchmarks cancelled when this connection ends
        self.graceful_cancel: Callable[[asyncio.Future[Any]], bool] | None = None
        """Cancels a request's task cleanly in the background, ``False`` when it does not take it
        (``App.cancel_soon``: a benchmark's sent requests finish within the grace first)."""

    def _execute_handler(
        self,
        msg_id: Any,
        handler: Any,
        callback: Any,
        args: tuple[Any, ...] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        """Run a handler; one marked :data:`INLINE_OR_TASK` answers at once or becomes a task.

        Such a handler (``score``) is called here, as pygls calls a plain function: when it
        returns a result, the answer is written before the next message is read (no task, no
        reordering behind later requests); when it returns an awaitable (work it moved off the
        event loop), that runs as a task, registered as pygls registers a coroutine handler's,
        so ``$/cancelRequest`` finds it.
        """
        if not getattr(handler, INLINE_OR_TASK, False):
            super()._execute_handler(msg_id, handler, callback, args, kwargs)
            return
        done: concurrent.futures.Future[Any] = concurrent.futures.Future()
        try:
            out = handler(*(args or ()), **(kwargs or {}))
        except Exception as exc:
            done.add_done_callback(callback)
            done.set_exception(exc)
            return
        if inspect.isawaitable(out):
            task = asyncio.ensure_future(out)
            self._request_futures[msg_id] = task  # type: ignore[assignment]
            task.add_done_callback(callback)
            task.add_done_callback(lambda _: self._forget(msg_id, task))  # a notification's too
            return
        done.add_done_callback(callback)
        done.set_result(out)

    def _forget(self, msg_id: Any, task: asyncio.Future[Any]) -> None:
        if self._request_futures.get(msg_id) is task:
            del self._request_futures[msg_id]

    def cancel_task(self, task: asyncio.Future[Any]) -> None:
        """Cancel a request's task: by :attr:`graceful_cancel` when it takes it, else at once."""
        if self.graceful_cancel is None or not self.graceful_cancel(task):
            task.cancel()

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        """``$/cancelRequest``: a running benchmark is cancelled cleanly (Ctrl-C in ``hrb bench``).

        As ``hrb cancel`` does, its sent requests finish within the grace first; the
        request is then answered ``RequestCancelled`` as pygls answers any cancelled request.
        """
        future = self._request_futures.get(msg_id)
        if isinstance(future, asyncio.Future) and self.graceful_cancel is not None:
            if self.graceful_cancel(future):
                return
        super()._handle_cancel_notification(msg_id)

    @property
    def closed(self) -> bool:
        """``True`` once the peer went away; later sends are dropped."""
        return self._closed

    def mark_closed(self) -> None:
        """Drop every later send (the connection is gone)."""
        self._closed = True

    def _write(self, body: bytes, now: bool = False) -> None:
        """Queue one framed message; the queue is written once per event-loop tick.

        Coalescing matters when rows stream: one ``send`` system call per notification costs
        more than encoding it, and wakes the reader once per message. Notifications wait at most
        :data:`COALESCE_S` seconds or until :data:`COALESCE_BYTES` are queued (about 5
        rows per send when written once per tick). Responses (``now``) are written
        at once, after what is queued, so a request's latency does not wait.
        """
        if self.writer is None or self._closed:
            return
        self._out.append(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self._queued += len(body)
        self._coalesce(now)

    def send_framed(self, frames: list[bytes]) -> None:
        """Queue messages already framed by :func:`frame_notification` (rows encoded off the loop)."""
        if self.writer is None or self._closed or not frames:
            return
        self._out.extend(frames)
        self._queued += sum(map(len, frames))
        self._coalesce(False)

    def _coalesce(self, now: bool) -> None:
        if now or self._queued >= COALESCE_BYTES:
            self.flush()
        elif not self._flush_scheduled:
            self._flush_scheduled = True
            try:
                asyncio.get_running_loop().call_later(COALESCE_S, self.flush)
            except RuntimeError:  # no loop (a test calling from outside): write now
                self.flush()

    def flush(self) -> None:
        """Write every queued message to the transport."""
        self._flush_scheduled = False
        self._queued = 0
        if not self._out:
            return
        data = b"".join(self._out) if len(self._out) > 1 else self._out[0]
        self._out.clear()
        writer = self.writer
        if writer is None or self._closed:
            return
        if getattr(writer, "is_closing", None) is not None and writer.is_closing():  # type: ignore[union-attr]
            self._closed = True
            return
        try:
            writer.write(data)
        except (ConnectionError, RuntimeError, OSError):
            self._closed = True

    def _send_data(self, data: Any) -> None:
        """Encode an outgoing message with msgspec (Structs allowed anywhere inside)."""
        if not data:
            return
        now = True  # a response: written at once
        if isinstance(data, JsonRPCResponseMessage):
            out = _Out(jsonrpc="2.0", id=wire_id(data.id), result=data.result)
        elif isinstance(data, ResponseErrorMessage):
            err = data.error
            error = (
                _Error(-32603, "internal error") if err is None else _Error(err.code, err.message, err.data)
            )
            out = _Out(jsonrpc="2.0", id=wire_id(data.id), error=error)
        elif isinstance(data, JsonRPCNotification):
            out, now = _Out(jsonrpc="2.0", method=data.method, params=data.params), False
        elif isinstance(data, JsonRPCRequestMessage):
            out = _Out(jsonrpc="2.0", id=wire_id(data.id), method=data.method, params=data.params)
        else:  # pragma: no cover - pygls sends nothing else through here
            out = data
        try:
            body = self._encoder.encode(out)
        except (TypeError, ValueError, OverflowError) as exc:
            logger.error("cannot encode a reply: %s", type(exc).__name__)
            if isinstance(out, _Out) and out.id is not msgspec.UNSET:
                body = self._encoder.encode(
                    _Out(jsonrpc="2.0", id=out.id, error=_Error(-32603, "internal error: unencodable result"))
                )
            else:
                return
        if now and self._batches and isinstance(out, _Out):
            batch = self._batches.pop(getattr(data, "id", None), None)
            if batch is not None:
                batch.answered(body)
                return
        self._write(body, now)

    def send_notification(self, method: str, params: Any) -> None:
        """Send a notification (``params`` may be a Struct) without pygls's per-message overhead."""
        self._write(self._encoder.encode(_Out(jsonrpc="2.0", method=method, params=params)))

    def send_error(
        self, msg_id: Any, code: int, message: str, data: Any = None, batch: _Batch | None = None
    ) -> None:
        """Send an error response (``msg_id`` may be ``None`` when the request had no readable id)."""
        self._reply(
            self._encoder.encode(_Out(jsonrpc="2.0", id=wire_id(msg_id), error=_Error(code, message, data))),
            batch,
        )

    def send_result(self, msg_id: Any, result: Any, batch: _Batch | None = None) -> None:
        """Send a result response outside pygls's dispatch (the auth handshake, ``exit`` sent as a request)."""
        self._reply(self._encoder.encode(_Out(jsonrpc="2.0", id=wire_id(msg_id), result=result)), batch)

    def _reply(self, body: bytes, batch: _Batch | None) -> None:
        if batch is None:
            self._write(body, True)
        else:
            batch.add(body)

    async def drain(self) -> None:
        """Wait until the writer's buffer is below its high-water mark (a slow client)."""
        self.flush()
        writer = self.writer
        drain = getattr(writer, "drain", None)
        if drain is None or self._closed:
            return
        try:
            await drain()
        except (ConnectionError, RuntimeError, OSError):
            self._closed = True


_CONVERTER: cattrs.Converter | None = None


def _shared_converter() -> cattrs.Converter:
    """One cattrs converter for every connection.

    Messages are encoded with msgspec; a converter per connection was built, filled with hooks
    and left to the cyclic garbage collector at every connection.
    """
    global _CONVERTER
    if _CONVERTER is None:
        _CONVERTER = cattrs.Converter()
    return _CONVERTER


class RpcServer(JsonRPCServer):
    """A pygls server for one connection; errors pygls reports are logged quietly."""

    protocol: HrbenchProtocol

    def __init__(self) -> None:
        super().__init__(protocol_cls=HrbenchProtocol, converter_factory=_shared_converter)

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Log at debug level only: the client already got its error response."""
        logger.debug("request failed: %s", type(error).__name__)


class _Batch:
    """The responses of one JSON-RPC batch, written as one array once every request has answered.

    JSON-RPC 2.0 §6 (case R07c): a batch gets an array of responses in any order; notifications
    get none, and a batch of notifications only gets nothing at all.
    """

    __slots__ = ("is_open", "parts", "proto", "waiting")

    def __init__(self, proto: HrbenchProtocol) -> None:
        self.proto = proto
        self.parts: list[bytes] = []
        self.waiting = 0
        self.is_open = True

    def expect(self, msg_id: int | str | FloatId) -> None:
        self.proto._batches[msg_id] = self
        self.waiting += 1

    def answered(self, body: bytes) -> None:
        self.waiting -= 1
        self.add(body)

    def add(self, body: bytes) -> None:
        self.parts.append(body)
        self._maybe_send()

    def close(self) -> None:
        self.is_open = False
        self._maybe_send()

    def _maybe_send(self) -> None:
        if not self.is_open and self.waiting == 0 and self.parts:
            self.proto._write(b"[" + b",".join(self.parts) + b"]", True)
            self.parts = []
