"""How the client reaches a server: Content-Length framing over a socket or a pair of pipes.

The JSON-RPC envelopes the client sends and reads, their decoders, and the server's command line
(:func:`_server_command`, for a private stdio server or a daemon).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Callable
from typing import IO, Any

import msgspec

from hrbench_client.errors import DaemonError, from_error


class _Envelope(msgspec.Struct):
    jsonrpc: str = "2.0"
    id: int | str | None | msgspec.UnsetType = msgspec.UNSET
    method: str | msgspec.UnsetType = msgspec.UNSET
    params: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    result: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    error: dict[str, Any] | msgspec.UnsetType = msgspec.UNSET


class _Request(msgspec.Struct):
    jsonrpc: str
    id: int
    method: str
    params: Any


class _Notification(msgspec.Struct):
    jsonrpc: str
    method: str
    params: Any


_decode_envelope = msgspec.json.Decoder(_Envelope).decode
_encode = msgspec.json.Encoder().encode
_DECODERS: dict[Any, msgspec.json.Decoder[Any]] = {}


def _decode(raw: msgspec.Raw | msgspec.UnsetType, typ: Any) -> Any:
    if raw is msgspec.UNSET:
        return None
    dec = _DECODERS.get(typ)
    if dec is None:
        dec = _DECODERS[typ] = msgspec.json.Decoder(typ)
    return dec.decode(raw)


class _Stream:
    """Content-Length framing over a pair of binary files."""

    def __init__(self, rfile: IO[bytes], sendall: Callable[[bytes], Any], closer: Callable[[], None]) -> None:
        self.rfile, self.sendall, self.closer = rfile, sendall, closer
        self.lock = threading.Lock()

    def send(self, body: bytes) -> None:
        with self.lock:
            try:
                self.sendall(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            except (OSError, ValueError) as exc:
                raise DaemonError(f"the connection to the daemon broke ({type(exc).__name__})") from None

    def recv(self) -> bytes:
        length = None
        try:
            while True:
                line = self.rfile.readline(1 << 16)
                if not line:
                    raise DaemonError("the daemon closed the connection")
                if line in (b"\r\n", b"\n"):
                    if length is not None:
                        break
                    continue
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            body = self.rfile.read(length)
        except OSError as exc:
            raise DaemonError(f"the connection to the daemon broke ({type(exc).__name__})") from None
        if len(body) != length:
            raise DaemonError("the daemon closed the connection mid-message")
        return body

    def close(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.closer()


def _raise_for(error: dict[str, Any]) -> None:
    raise from_error(error)


def _python() -> str:
    return os.environ.get("HRBENCH_PYTHON") or sys.executable


def _server_command() -> list[str]:
    """``python -P -m hrbench_server``: ``-P`` keeps the working directory off the import path.

    Rule: a file in the caller's directory named like a dependency must never run
    inside the server; the server imports user code only from a spec's explicit ``python_path``.
    """
    return [_python(), "-P", "-m", "hrbench_server"]
