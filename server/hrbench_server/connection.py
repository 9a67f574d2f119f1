"""Serving one connection: the read loop, the TCP token check, and dispatching each message.

:func:`serve_stream` reads frames with :class:`hrbench_server.framing.FrameReader`, answers
framing faults, checks a TCP client's token first, and hands each body to :func:`_dispatch`:
a request, a notification or a batch of them (JSON-RPC 2.0 §6), the LSP lifecycle
notifications and ``$/cancelRequest`` (answered when sent as a request). Well-formed requests go
to pygls's dispatch on the connection's :class:`~hrbench_server.rpc.HrbenchProtocol`; what
the protocol changes in stock pygls, and why, is told in :mod:`hrbench_server.rpc`.
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

import msgspec
from pygls.protocol import JsonRPCNotification

from hrbench_server.framing import DEFAULT_STALL_S, Fault, FloatId, FrameReader, find_id, read_id
from hrbench_server.rpc import (
    DEFAULT_MAX_MESSAGE_BYTES,
    WRITE_BUFFER_BYTES,
    HrbenchProtocol,
    RpcServer,
    _Batch,
)

__all__ = ["serve_stream"]

logger = logging.getLogger("hrbench_server")


class _Envelope(msgspec.Struct, omit_defaults=True):
    jsonrpc: str | msgspec.UnsetType = msgspec.UNSET
    id: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET  # read_id: a Number is echoed as sent
    method: str | msgspec.UnsetType = msgspec.UNSET
    params: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    result: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    error: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET


_decode_envelope = msgspec.json.Decoder(_Envelope).decode
_decode_cancel = msgspec.json.Decoder(dict[str, int | float | str]).decode
_EMPTY = msgspec.Raw(b"{}")

_decode_batch = msgspec.json.Decoder(list[msgspec.Raw]).decode
_NULL = b"null"


def _dispatch(proto: HrbenchProtocol, body: bytes) -> bool:
    """Dispatch one body (a request, a notification or a batch of them).

    Returns:
        ``False`` when the body is not readable JSON (the frame reader then skips what is left
        of that message: its Content-Length was probably too short).
    """
    i = 0
    while i < len(body) and body[i] in b" \t\r\n":
        i += 1
    if body[i : i + 1] != b"[":
        return _dispatch_one(proto, body, None)
    try:
        items = _decode_batch(body)
    except RecursionError:
        proto.send_error(find_id(body), -32600, _TOO_DEEP, {"name": "InvalidRequest"})
        return True
    except msgspec.DecodeError as exc:
        proto.send_error(None, -32700, f"Parse error: {exc}", {"name": "ParseError"})
        return False
    if not items:
        proto.send_error(None, -32600, "Invalid Request: an empty batch", {"name": "InvalidRequest"})
        return True
    batch = _Batch(proto)
    for raw in items:
        _dispatch_one(proto, bytes(raw), batch)
    batch.close()
    return True


_TOO_DEEP = "Invalid Request: JSON nested deeper than the daemon decodes (about 900 levels)"


def _dispatch_one(proto: HrbenchProtocol, body: bytes, batch: _Batch | None) -> bool:
    def fail(msg_id: int | str | FloatId | None, code: int, message: str, name: str) -> None:
        proto.send_error(msg_id, code, message, {"name": name}, batch=batch)

    try:
        env = _decode_envelope(body)
    except msgspec.ValidationError as exc:
        fail(find_id(body), -32600, f"Invalid Request: {exc}", "InvalidRequest")
        return True
    except msgspec.DecodeError as exc:
        fail(find_id(body), -32700, f"Parse error: {exc}", "ParseError")
        return False
    except RecursionError:
        fail(find_id(body), -32600, _TOO_DEEP, "InvalidRequest")
        return True
    is_request = env.id is not msgspec.UNSET
    msg_id = None
    if is_request:
        try:
            msg_id = read_id(env.id)  # type: ignore[arg-type]
        except msgspec.ValidationError as exc:  # `true`, an object, `1e999`: no id to answer with
            fail(None, -32600, f"Invalid Request: {exc} - at `$.id`", "InvalidRequest")
            return True
    if env.jsonrpc != "2.0":
        fail(msg_id, -32600, 'Invalid Request: `jsonrpc` must be "2.0"', "InvalidRequest")
        return True
    method = env.method
    if method is msgspec.UNSET:
        if env.result is not msgspec.UNSET or env.error is not msgspec.UNSET:
            return True  # a response: the daemon sends no requests, so nothing waits for it
        fail(msg_id, -32600, "Invalid Request: missing `method`", "InvalidRequest")
        return True
    if is_request and msg_id is None:
        fail(None, -32600, "Invalid Request: `id` must be a string or a number, not null", "InvalidRequest")
        return True
    if proto.shutdown_requested and method != "exit":
        if is_request:
            fail(msg_id, -32600, _SHUTTING_DOWN, "InvalidRequest")
        return True
    if method in _LIFECYCLE:
        if method == "exit":
            proto.exit_requested = True
        if msg_id is not None:
            proto.send_result(msg_id, None, batch=batch)
        return True
    params = env.params
    if params is msgspec.UNSET or (len(params) == 4 and bytes(params) == _NULL):
        params = _EMPTY  # LSP clients send `"params": null` (shutdown, exit)
    if method == "$/cancelRequest":
        try:
            target = _decode_cancel(params)["id"]
        except (msgspec.DecodeError, KeyError):
            if msg_id is not None:
                fail(msg_id, -32602, 'Invalid params: expected {"id": ...}', "InvalidParams")
            return True
        proto.handle_message(
            JsonRPCNotification(method=method, jsonrpc="2.0", params=types.SimpleNamespace(id=target))
        )
        if msg_id is not None:  # sent as a request (case S13a): answered, as every request is
            proto.send_result(msg_id, None, batch=batch)
        return True
    if msg_id is None:
        proto.handle_message(JsonRPCNotification(method=method, jsonrpc="2.0", params=params))
        return True
    if batch is not None:
        if msg_id in proto._batches:
            fail(msg_id, -32600, f"Invalid Request: id {msg_id!r} is already in flight", "InvalidRequest")
            return True
        batch.expect(msg_id)
    # What JsonRPCProtocol.handle_message does for a request, without its runtime-Protocol
    # isinstance checks (a few microseconds a message): dispatch in a fresh context.
    contextvars.copy_context().run(proto._handle_request, msg_id, method, params)  # type: ignore[arg-type]
    return True


_LIFECYCLE = frozenset({"initialized", "exit"})
"""LSP lifecycle notifications handled by the connection itself (see :class:`HrbenchProtocol`)."""

_SHUTTING_DOWN = "Invalid Request: `shutdown` was received; only the `exit` notification is accepted now"

_FAULT_NAMES = {-32700: "ParseError", -32600: "InvalidRequest"}


async def serve_stream(
    server: RpcServer,
    reader: asyncio.StreamReader,
    writer: Any,
    *,
    max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    token: str | None = None,
    on_close: Callable[[], Awaitable[None]] | None = None,
    keep_open: bool = False,
    stall_s: float = DEFAULT_STALL_S,
) -> None:
    """Serve one connection until the peer closes it or sends the LSP ``exit`` notification.

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
        stall_s: see :data:`hrbench_server.framing.DEFAULT_STALL_S`.
    """
    proto = server.protocol
    proto.set_writer(writer)
    transport = getattr(writer, "transport", None)
    if transport is not None and hasattr(transport, "set_write_buffer_limits"):
        transport.set_write_buffer_limits(high=WRITE_BUFFER_BYTES)
    authed = token is None
    frames = FrameReader(reader, max_bytes, stall_s=stall_s)
    try:
        while True:
            got = await frames.next()
            if got is None:
                break
            if isinstance(got, Fault):
                proto.send_error(got.id, got.code, got.message, {"name": _FAULT_NAMES[got.code]})
                if not authed:
                    await proto.drain()
                    break
                continue
            if not authed:
                authed = _authenticate(proto, got, token or "")
                if not authed:
                    await proto.drain()
                    break
                continue
            try:
                readable = _dispatch(proto, got)
            except Exception as exc:  # a last guard: no message may end the connection
                logger.exception("dispatch failed")
                proto.send_error(find_id(got), -32603, f"internal error ({type(exc).__name__})")
                readable = True
            if not readable:
                frames.resync()
            if proto.exit_requested:
                break
    except (ConnectionError, OSError):
        pass
    finally:
        # A benchmark whose submitting connection closed is cancelled (it
        # stays resumable, its saved rows kept) unless it was submitted with `detach`; other
        # in-flight work finishes. Over stdio the end of input is not the end of the caller.
        if not keep_open:  # as `hrb cancel` does: the requests sent finish within the grace first
            for task in list(proto.owned):
                proto.cancel_task(task)
        if on_close is not None:
            await on_close()
        if not keep_open:
            proto.flush()
            proto.mark_closed()
            with contextlib.suppress(Exception):
                close = writer.close()
                if asyncio.iscoroutine(close):
                    await close


def _authenticate(proto: HrbenchProtocol, body: bytes, token: str) -> bool:
    try:
        env = _decode_envelope(body)
        msg_id = None if env.id is msgspec.UNSET else read_id(env.id)
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
