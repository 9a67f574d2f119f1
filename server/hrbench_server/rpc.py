"""The JSON-RPC layer: one pygls ``JsonRPCServer`` per connection, fed by our own read loop.

What we change in stock pygls (``../shared/notes/stack.md`` §1) and why:

- **Our own read loop** (:func:`serve_stream`) instead of ``pygls.io_.run_async``: it decodes
  each body with msgspec into an envelope whose ``params`` stay raw JSON, answers malformed
  JSON with -32700, a body that is not a request object with -32600 and an oversized body with
  -32600 (stock pygls only logs these, and the client waits forever), and asks TCP clients for
  their token first. Well-formed messages go to pygls's dispatch (``_handle_request``, what
  ``handle_message`` calls for a request), so request ids, handlers, unknown methods (-32601)
  and ``$/cancelRequest`` are pygls's.
- **Params stay raw** (``msgspec.Raw``): each handler decodes its own Struct, so validation
  errors carry msgspec's field path (``Expected `int`, got `str` - at `$.runs```) as -32602.
  Nothing is turned into namedtuples.
- **msgspec encoding** (:meth:`HrbenchProtocol._send_data`): results and notifications may be
  msgspec Structs; ``Content-Length`` counts bytes.
- **Backpressure**: :meth:`HrbenchProtocol.drain` awaits the writer's buffer; streaming
  handlers call it every few hundred notifications.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import hmac
import logging
import types
from collections.abc import Awaitable, Callable
from typing import Any

import cattrs
import msgspec
from lsprotocol.types import ResponseErrorMessage
from pygls.exceptions import JsonRpcException
from pygls.protocol import JsonRPCNotification, JsonRPCProtocol, JsonRPCRequestMessage
from pygls.protocol.json_rpc import JsonRPCResponseMessage
from pygls.server import JsonRPCServer

__all__ = [
    "DEFAULT_MAX_MESSAGE_BYTES",
    "HrbenchProtocol",
    "RpcServer",
    "serve_stream",
]

logger = logging.getLogger("hrbench_server")

DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024
"""The largest request body accepted (bytes); larger ones are read, dropped and answered -32600."""


class _Envelope(msgspec.Struct, omit_defaults=True):
    jsonrpc: str | msgspec.UnsetType = msgspec.UNSET
    id: int | str | None | msgspec.UnsetType = msgspec.UNSET
    method: str | msgspec.UnsetType = msgspec.UNSET
    params: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    result: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    error: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET


class _Out(msgspec.Struct, omit_defaults=True):
    jsonrpc: str
    id: int | str | None | msgspec.UnsetType = msgspec.UNSET
    method: str | msgspec.UnsetType = msgspec.UNSET
    params: Any = msgspec.UNSET
    result: Any = msgspec.UNSET
    error: Any = msgspec.UNSET


class _Error(msgspec.Struct, omit_defaults=True):
    code: int
    message: str
    data: Any = None


_decode_envelope = msgspec.json.Decoder(_Envelope).decode
_decode_cancel = msgspec.json.Decoder(dict[str, int | str]).decode
_EMPTY = msgspec.Raw(b"{}")


class HrbenchProtocol(JsonRPCProtocol):
    """pygls's JSON-RPC protocol with msgspec encoding and writer backpressure."""

    def __init__(self, server: Any, converter: cattrs.Converter) -> None:
        super().__init__(server, converter)
        self._encoder = msgspec.json.Encoder()
        self._closed = False
        self._out: list[bytes] = []
        self._flush_scheduled = False

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
        more than encoding it. Responses (``now``) are written at once, after what is queued,
        so a request's latency does not wait for the next tick.
        """
        if self.writer is None or self._closed:
            return
        self._out.append(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        if now:
            self.flush()
        elif not self._flush_scheduled:
            self._flush_scheduled = True
            try:
                asyncio.get_running_loop().call_soon(self.flush)
            except RuntimeError:  # no loop (a test calling from outside): write now
                self.flush()

    def flush(self) -> None:
        """Write every queued message to the transport."""
        self._flush_scheduled = False
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
            out = _Out(jsonrpc="2.0", id=data.id, result=data.result)
        elif isinstance(data, ResponseErrorMessage):
            err = data.error
            error = (
                _Error(-32603, "internal error") if err is None else _Error(err.code, err.message, err.data)
            )
            out = _Out(jsonrpc="2.0", id=data.id, error=error)
        elif isinstance(data, JsonRPCNotification):
            out, now = _Out(jsonrpc="2.0", method=data.method, params=data.params), False
        elif isinstance(data, JsonRPCRequestMessage):
            out = _Out(jsonrpc="2.0", id=data.id, method=data.method, params=data.params)
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
        self._write(body, now)

    def send_notification(self, method: str, params: Any) -> None:
        """Send a notification (``params`` may be a Struct) without pygls's per-message overhead."""
        self._write(self._encoder.encode(_Out(jsonrpc="2.0", method=method, params=params)))

    def send_error(self, msg_id: Any, code: int, message: str, data: Any = None) -> None:
        """Send an error response (``msg_id`` may be ``None`` when the request had no readable id)."""
        self._write(
            self._encoder.encode(_Out(jsonrpc="2.0", id=msg_id, error=_Error(code, message, data))), True
        )

    def send_result(self, msg_id: Any, result: Any) -> None:
        """Send a result response outside pygls's dispatch (used by the auth handshake)."""
        self._write(self._encoder.encode(_Out(jsonrpc="2.0", id=msg_id, result=result)), True)

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
    and left to the cyclic garbage collector at every connection (issue 13).
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


class _TooLarge(Exception):
    pass


async def _read_frame(reader: asyncio.StreamReader, max_bytes: int) -> bytes | None:
    """Read one ``Content-Length`` framed body; ``None`` at end of stream."""
    length: int | None = None
    while True:
        line = await reader.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            if length is None:
                continue  # stray blank line between messages
            break
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            try:
                length = int(value.strip())
            except ValueError:
                length = None
            if length is not None and length < 0:
                length = None
    if length > max_bytes:
        left = length
        while left:
            chunk = await reader.read(min(left, 1 << 20))
            if not chunk:
                return None
            left -= len(chunk)
        raise _TooLarge(length)
    return await reader.readexactly(length)


def _dispatch(proto: HrbenchProtocol, body: bytes) -> None:
    try:
        env = _decode_envelope(body)
    except msgspec.ValidationError as exc:
        proto.send_error(None, -32600, f"Invalid Request: {exc}", {"name": "InvalidRequest"})
        return
    except msgspec.DecodeError as exc:
        proto.send_error(None, -32700, f"Parse error: {exc}", {"name": "ParseError"})
        return
    msg_id = None if env.id is msgspec.UNSET else env.id
    if env.jsonrpc != "2.0":
        proto.send_error(
            msg_id, -32600, 'Invalid Request: `jsonrpc` must be "2.0"', {"name": "InvalidRequest"}
        )
        return
    if env.method is msgspec.UNSET:
        if env.result is not msgspec.UNSET or env.error is not msgspec.UNSET:
            return  # a response: the daemon sends no requests, so nothing waits for it
        proto.send_error(msg_id, -32600, "Invalid Request: missing `method`", {"name": "InvalidRequest"})
        return
    params = _EMPTY if env.params is msgspec.UNSET else env.params
    if env.method == "$/cancelRequest":
        try:
            target = _decode_cancel(params)["id"]
        except (msgspec.DecodeError, KeyError):
            if env.id is not msgspec.UNSET:
                proto.send_error(
                    msg_id, -32602, 'Invalid params: expected {"id": ...}', {"name": "InvalidParams"}
                )
            return
        proto.handle_message(
            JsonRPCNotification(method=env.method, jsonrpc="2.0", params=types.SimpleNamespace(id=target))
        )
        return
    if env.id is msgspec.UNSET:
        proto.handle_message(JsonRPCNotification(method=env.method, jsonrpc="2.0", params=params))
    elif env.id is None:
        proto.send_error(
            None, -32600, "Invalid Request: `id` must be a string or an integer", {"name": "InvalidRequest"}
        )
    else:
        # What JsonRPCProtocol.handle_message does for a request, without its runtime-Protocol
        # isinstance checks (a few microseconds a message): dispatch in a fresh context.
        contextvars.copy_context().run(proto._handle_request, env.id, env.method, params)


async def serve_stream(
    server: RpcServer,
    reader: asyncio.StreamReader,
    writer: Any,
    *,
    max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    token: str | None = None,
    on_close: Callable[[], Awaitable[None]] | None = None,
    keep_open: bool = False,
) -> None:
    """Serve one connection until the peer closes it.

    Args:
        server: this connection's server (handlers registered).
        reader: the byte stream of requests.
        writer: where replies go (``write(bytes)``, and ``drain()`` when it has one).
        max_bytes: the largest body accepted.
        token: when set (TCP), the first message must be ``auth`` with this token; anything
            else is answered -32098 and the connection is closed.
        on_close: awaited when the connection ends.
        keep_open: at end of input, leave the writer open for replies still to come (stdio);
            the caller closes it.
    """
    proto = server.protocol
    proto.set_writer(writer)
    authed = token is None
    try:
        while True:
            try:
                body = await _read_frame(reader, max_bytes)
            except _TooLarge as exc:
                proto.send_error(
                    None,
                    -32600,
                    f"Invalid Request: body of {exc.args[0]} bytes exceeds {max_bytes}",
                    {"name": "InvalidRequest"},
                )
                continue
            if body is None:
                break
            if not authed:
                authed = _authenticate(proto, body, token or "")
                if not authed:
                    await proto.drain()
                    break
                continue
            try:
                _dispatch(proto, body)
            except JsonRpcException as exc:  # pragma: no cover - pygls answers these itself
                proto.send_error(None, exc.code, exc.message)
    except (asyncio.IncompleteReadError, ConnectionError, OSError):
        pass
    finally:
        # In-flight work keeps running (a benchmark's rows go on to the store).
        if on_close is not None:
            await on_close()
        if not keep_open:
            proto.mark_closed()
            with contextlib.suppress(Exception):
                close = writer.close()
                if asyncio.iscoroutine(close):
                    await close


def _authenticate(proto: HrbenchProtocol, body: bytes, token: str) -> bool:
    try:
        env = _decode_envelope(body)
        msg_id = None if env.id is msgspec.UNSET else env.id
        given = msgspec.json.decode(env.params)["token"] if env.method == "auth" and env.params else None
    except (msgspec.DecodeError, KeyError, TypeError):
        msg_id, given = None, None
    if isinstance(given, str) and hmac.compare_digest(given.encode(), token.encode()):
        proto.send_result(msg_id, {"ok": True})
        return True
    proto.send_error(
        msg_id,
        -32098,
        "Unauthorized: send `auth` with the token file's content first",
        {"name": "Unauthorized"},
    )
    return False
