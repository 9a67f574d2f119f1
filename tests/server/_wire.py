"""Raw bytes to and from a real daemon: for tests of framing faults that no client would send."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

from tests._slow import slow


def frame(body: bytes, **headers: str) -> bytes:
    """``body`` framed with a correct Content-Length (plus extra headers, in order)."""
    extra = b"".join(f"{k.replace('_', '-')}: {v}\r\n".encode() for k, v in headers.items())
    return b"Content-Length: %d\r\n%s\r\n%s" % (len(body), extra, body)


def req(method: str, params: Any = None, id: Any = 1) -> bytes:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if id is not None:
        msg["id"] = id
    if params is not None:
        msg["params"] = params
    return json.dumps(msg, ensure_ascii=False).encode()


def score(id: Any, output: str = "Paris", label: str = "Paris") -> bytes:
    return req("score", {"output": output, "label": label}, id)


class RawConn:
    """A byte-level connection to a daemon's Unix socket."""

    def __init__(self, path: Path, timeout_s: float = 20.0) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(slow(timeout_s))  # a wait for a reply, scaled by the load
        self.sock.connect(str(path))
        self.rfile = self.sock.makefile("rb")

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def recv_frame(self) -> tuple[dict[str, str], bytes] | None:
        """One frame's headers (lower-case names) and body; ``None`` when the daemon closed."""
        headers: dict[str, str] = {}
        while True:
            line = self.rfile.readline()
            if not line:
                return None
            if line == b"\r\n":
                break
            assert line.endswith(b"\r\n"), line
            name, _, value = line.decode("ascii").partition(":")
            headers[name.strip().lower()] = value.strip()
        body = self.rfile.read(int(headers["content-length"]))
        assert len(body) == int(headers["content-length"])
        return headers, body

    def recv(self) -> Any:
        got = self.recv_frame()
        assert got is not None, "the daemon closed the connection"
        return json.loads(got[1])

    def recv_reply(self) -> Any:
        """The next response (or batch of responses), skipping notifications."""
        while True:
            msg = self.recv()
            if isinstance(msg, list) or "method" not in msg:
                return msg

    def shut_write(self) -> None:
        self.sock.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        self.rfile.close()
        self.sock.close()

    def __enter__(self) -> RawConn:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
