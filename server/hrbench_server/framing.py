r"""Reading LSP base-protocol frames (``Content-Length: N\r\n\r\n`` + N bytes of JSON), faults included.

Every message on the wire is a header block, one blank line, and a body of exactly
``Content-Length`` bytes (the LSP base protocol, which SPEC §4's JSON-RPC 2.0 daemon speaks on
stdio and on its socket). :class:`FrameReader` hands out bodies, and for every framing fault a
:class:`Fault` that the connection answers with a JSON-RPC error, so that no fault leaves a
caller waiting in silence and none stops the daemon (SPEC §5: "malformed requests get JSON-RPC
errors ...; the daemon keeps serving"; cases R07b, R07e). Rules, fault by fault:

- **No header at all** (a bare JSON value, e.g. a newline-delimited request): one fault per
  value, -32600 saying that messages need ``Content-Length`` framing, with the request's id when
  the value is readable.
- **Header block without a usable Content-Length** (missing, not a whole number, negative): a
  -32600 fault naming the header; when a JSON value follows the blank line it is taken as the
  message's body (so the fault carries its id) and reading resumes after it (case R07e).
- **Content-Length too long**: the body read stops early, with a -32600 fault carrying the
  message's id, when the bytes received so far form a complete JSON value and then either the
  next message's ``Content-Length`` header arrives or nothing more arrives for
  ``stall_s`` seconds. A body that is not yet a complete value is waited for (a slow sender).
- **Content-Length too short**: the body is cut; the connection answers its parse error
  (-32700, with the id when the cut text shows it) and :meth:`FrameReader.resync` then skips
  the rest of that message quietly, up to the next ``Content-Length`` header.
- **Bytes that start no header** (anything but ``Content-Length``/``Content-Type`` where a
  message should begin): one -32700 fault, then skipped up to the next ``Content-Length``.
- **A header line over** ``max_header_line`` **bytes**: a -32600 fault (with the body's id
  when the block still has a Content-Length); the line is dropped as it streams in, never held.
- **A body over** ``max_body`` **bytes**: a -32600 fault at once (with the id its first bytes
  show), then the body is read and dropped as it streams in.

A ``Content-Type`` header is accepted and ignored (the LSP base protocol allows it; case R07b).
Header names are case-insensitive; a bare ``\n`` line ending is accepted as well as ``\r\n``.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any, NamedTuple

import msgspec

__all__ = [
    "DEFAULT_MAX_HEADER_LINE",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "DEFAULT_STALL_S",
    "Fault",
    "FloatId",
    "FrameReader",
    "find_id",
    "read_id",
    "wire_id",
]

DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024
"""The largest request body accepted (bytes); larger ones are read, dropped and answered -32600."""

DEFAULT_MAX_HEADER_LINE = 8 * 1024
"""The longest header line accepted (bytes); a longer one is dropped and answered -32600."""

DEFAULT_STALL_S = 1.0
"""Seconds without new bytes after which a body that is already a complete JSON value but
shorter than its ``Content-Length`` is answered as a framing fault."""

_CHUNK = 1 << 16
_PAUSE_S = 0.05  # a sender this long without a byte has likely sent its whole value: scan it now
_HEADER_START = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}[ \t]*:")  # an RFC 7230 token, then `:`
_NAMES = (b"content-length", b"content-type")
_TOKEN = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]*[ \t]*")
_NEXT_HEADER = re.compile(rb"content-length[ \t]*:", re.IGNORECASE)
_ID = re.compile(
    rb'"id"\s*:\s*(-?\d{1,18}(?:\.\d{1,18})?(?:[eE][+-]?\d{1,3})?(?![\d.eE])|"(?:[^"\\\r\n]|\\.){0,256}")'
)
_WS = b" \t\r\n"
_json = json.JSONDecoder()

FRAMING_HINT = "each message needs a `Content-Length: <bytes>` header and a blank line before its JSON body"
"""Said in every framing fault, so a user writing a client by hand learns the rule."""

_decode_id = msgspec.json.Decoder(int | float | str | None).decode


class FloatId(float):
    """A request id that is a Number with a fraction or an exponent (``104.0``, ``104.5``, ``1e2``).

    JSON-RPC 2.0 §4 allows it (and says it SHOULD NOT be used); the response carries it back.
    It equals its value, so pygls keys the request by it and a ``$/cancelRequest`` naming the
    same number finds it, and it is written back as the caller wrote it (``raw``), not as Python
    would print the float: ``1e2`` stays ``1e2``, ``0.10000000000000000001`` keeps its digits.
    """

    __slots__ = ("raw",)
    raw: bytes


def read_id(raw: msgspec.Raw | bytes) -> int | str | FloatId | None:
    """The id of a request as sent: a string, an integer, a :class:`FloatId`, or ``None`` (``null``).

    Raises:
        msgspec.ValidationError: it is not a string, a number or ``null`` (``true``, an object),
            or a number no float holds (``1e999``).

    Example:
        >>> read_id(b"7"), read_id(b'"a-1"'), read_id(b"104.0") == 104, read_id(b"1e2").raw
        (7, 'a-1', True, b'1e2')
    """
    value = _decode_id(raw)
    if type(value) is not float:
        return value
    out = FloatId(value)
    out.raw = bytes(raw).strip()
    return out


def wire_id(msg_id: Any) -> Any:
    """An id as it goes back on the wire: a :class:`FloatId` as the caller wrote it."""
    return msgspec.Raw(msg_id.raw) if type(msg_id) is FloatId else msg_id


class Fault(NamedTuple):
    """A framing fault to answer with a JSON-RPC error.

    Attributes:
        code: -32700 (unreadable bytes) or -32600 (a message that breaks the framing rules).
        message: what was wrong, naming the header and value, and how messages are framed.
        id: the request's id when it could be read from the body, else ``None``.
    """

    code: int
    message: str
    id: int | str | FloatId | None


class _IdField(msgspec.Struct):
    id: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET


_decode_id_field = msgspec.json.Decoder(_IdField).decode


def find_id(body: bytes | bytearray | memoryview) -> int | str | FloatId | None:
    """Best-effort request id of a body that may be cut, malformed or not JSON at all.

    Lets an error about an unreadable message reach the caller waiting for that id (JSON-RPC 2.0
    asks for ``null`` only when the id cannot be detected).

    Args:
        body: the raw bytes.

    Returns:
        The string or number id (:func:`read_id`), or ``None`` when none shows.

    Example:
        >>> find_id(b'{"jsonrpc": "2.0", "id": 7, "method": "sco')
        7
        >>> find_id(b'{"id": "a-1", "params": {') , find_id(b"garbage")
        ('a-1', None)
        >>> find_id(b'{"id": 104.5, "method": 3}').raw
        b'104.5'
    """
    raw: msgspec.Raw | msgspec.UnsetType | bytes
    try:
        raw = _decode_id_field(body).id
    except (msgspec.DecodeError, RecursionError):  # not an object, or cut: look for the id's text
        m = _ID.search(body[:65536])
        if m is None:
            return None
        raw = m.group(1)
    if raw is msgspec.UNSET:
        return None
    try:
        return read_id(raw)
    except msgspec.DecodeError:  # ValidationError included: `true`, an object, `1e999`
        return None


def _json_end(buf: bytearray | bytes, start: int) -> tuple[str, int]:
    """Where the JSON value starting at ``start`` ends: ``("done", end)``, ``("more", 0)``, ``("bad", 0)``."""
    text = bytes(buf[start:]).decode("utf-8", "surrogateescape")
    try:
        _, end = _json.raw_decode(text)
    except json.JSONDecodeError as exc:
        more = exc.msg.startswith("Unterminated string") or exc.pos >= len(text.rstrip())
        return ("more" if more else "bad"), 0
    except RecursionError:
        return "bad", 0
    return "done", start + len(text[:end].encode("utf-8", "surrogateescape"))


_decode_raw = msgspec.json.Decoder(msgspec.Raw).decode
_TRAILING = re.compile(r"trailing characters \(byte (\d+)\)")


def _value_status(buf: bytes | bytearray) -> tuple[str, int]:
    """Like :func:`_json_end` from the start of ``buf``, in one pass of msgspec's C decoder.

    ``("done", end)``: a complete value ends at or before ``end`` (only white space between);
    ``("more", 0)``: what is there is the start of a value; ``("bad", 0)``: it is not JSON.
    The value is skipped, not built (``msgspec.Raw``), at about 0.3-3 GB/s.

    Example:
        >>> _value_status(b'{"id": 1}  {"id": 2}'), _value_status(b'{"id": "ab'), _value_status(b"{oops}")
        (('done', 11), ('more', 0), ('bad', 0))
    """
    try:
        _decode_raw(buf)
    except RecursionError:
        return "bad", 0
    except msgspec.DecodeError as exc:
        text = str(exc)
        if text.startswith("Input data was truncated"):
            return "more", 0
        m = _TRAILING.search(text)
        if m is None:
            return "bad", 0
        return "done", int(m.group(1)) - 1  # msgspec counts that byte from 1
    return "done", len(buf)


def _one_value(body: bytes | bytearray) -> bool:
    """``True`` when ``body`` is exactly one complete JSON value (white space around allowed)."""
    try:
        msgspec.json.decode(body)
    except (msgspec.DecodeError, RecursionError):
        return False
    return True


class FrameReader:
    r"""Split a byte stream into message bodies and framing faults.

    Args:
        reader: the connection's stream (``await reader.read(n)``; ``b""`` at its end).
        max_body: the largest body accepted (bytes).
        max_header_line: the longest header line accepted (bytes).
        stall_s: see :data:`DEFAULT_STALL_S`.

    Example:
        >>> async def demo():
        ...     r = asyncio.StreamReader()
        ...     r.feed_data(b'Content-Length: 2\r\n\r\n{}{"id": 3}\n')
        ...     r.feed_eof()
        ...     frames = FrameReader(r, 1024)
        ...     return [await frames.next() for _ in range(3)]
        >>> body, fault, end = asyncio.run(demo())
        >>> body, fault.code, fault.id, end
        (b'{}', -32600, 3, None)
    """

    def __init__(
        self,
        reader: asyncio.StreamReader,
        max_body: int,
        *,
        max_header_line: int = DEFAULT_MAX_HEADER_LINE,
        stall_s: float = DEFAULT_STALL_S,
    ) -> None:
        self._reader = reader
        self._buf = bytearray()
        self._eof = False
        self.max_body = max_body
        self.max_header_line = max_header_line
        self.stall_s = stall_s
        self._skipping = False  # inside bytes that belong to no message: drop up to the next header
        self._dropping = 0  # bytes of an over-long body still to drop (its fault already answered)
        self.scanned = 0  # bytes scanned looking for the end of unframed values (stays linear)

    # -- buffer -------------------------------------------------------------------------------
    async def _more(self, wait_s: float | None = None, size: int = _CHUNK) -> bool | None:
        """Append what the stream has: ``True`` got bytes, ``False`` end of stream, ``None`` timed out."""
        if self._eof:
            return False
        try:
            if wait_s is None:
                data = await self._reader.read(size)
            else:
                data = await asyncio.wait_for(self._reader.read(size), wait_s)
        except TimeoutError:
            return None
        if not data:
            self._eof = True
            return False
        self._buf += data
        return True

    def resync(self) -> None:
        """Skip the rest of a message whose body turned out unreadable (a too-short Content-Length).

        Bytes up to the next ``Content-Length`` header are then dropped without a second fault.
        """
        self._skipping = True

    # -- messages -----------------------------------------------------------------------------
    async def next(self) -> bytes | Fault | None:
        """The next body, or a :class:`Fault` to answer, or ``None`` at the end of the stream."""
        buf = self._buf
        if self._dropping and not await self._drop_rest():
            return None
        while True:
            i = 0
            while i < len(buf) and buf[i] in _WS:
                i += 1
            if i:
                del buf[:i]
            if not buf:
                if not await self._more():
                    return None
                continue
            if self._skipping:
                if not await self._skip_to_header():
                    return None
                continue
            if buf[0] in b"{[":  # JSON where a header should be: a message sent without framing
                return await self._unframed("no `Content-Length` header")
            if _HEADER_START.match(buf) is None:
                if len(buf) < 80 and _TOKEN.fullmatch(buf) is not None:
                    if not await self._more():  # a header name still arriving
                        return None
                    continue
                self._skipping = True
                shown = bytes(buf[:40]).decode("utf-8", "replace")
                return Fault(-32700, f"Parse error: expected a header, got {shown!r}; {FRAMING_HINT}", None)
            return await self._message()

    async def _skip_to_header(self) -> bool:
        """Drop bytes up to the next ``Content-Length`` header; ``False`` at the end of the stream."""
        buf = self._buf
        while True:
            m = _NEXT_HEADER.search(buf)
            if m is not None:
                del buf[: m.start()]
                self._skipping = False
                return True
            del buf[: max(0, len(buf) - 20)]  # keep a header name that may be cut in two
            if not await self._more():
                buf.clear()
                return False

    async def _unframed(self, why: str) -> Fault:
        """Consume one JSON value sent where a framed message should be, and fault it."""
        status, end = await self._value_end()
        if len(self._buf) > _CHUNK:  # the scan just took the loop: let other clients in first
            await asyncio.sleep(0)
        with memoryview(self._buf) as view:  # not a copy of a value that may be 64 MB
            msg_id = find_id(view[:end] if status == "done" else view)
        if status == "done":
            del self._buf[:end]
        else:
            self._skipping = True
        return Fault(-32600, f"Invalid Request: {why}; {FRAMING_HINT}", msg_id)

    async def _value_end(self) -> tuple[str, int]:
        """Wait until the buffer starts with a complete JSON value (bounded by size and stalls).

        Rule (a value that never ends must not cost time quadratic in its size, 60 MB in 263 s,
        holding the daemon's other clients up to 2 s at a time): the buffer is scanned again only
        when it has doubled since the last scan, or grown by an eighth of it while the sender
        pauses (:data:`_PAUSE_S`), or at a stall or the end of the stream. Each scan is one
        pass of msgspec's C decoder (:func:`_value_status`), so every byte is scanned a few
        times at most (``scanned`` counts them): linear, a 60 MB value in well under a second,
        and no single scan longer than one pass over at most ``max_body`` bytes.
        """
        buf = self._buf
        checked = 0  # len(buf) at the last scan
        waited = 0.0  # seconds without a new byte
        while True:
            n = len(buf)
            due = (
                not checked
                or n >= 2 * checked
                or (waited > 0 and n - checked >= max(checked // 8, 1))
                or waited >= self.stall_s
                or self._eof
                or n > self.max_body
            )
            if n != checked and due:
                status, end = _value_status(buf)
                self.scanned += n
                checked = n
                if status != "more" or n > self.max_body:
                    return status, end
            if self._eof or waited >= self.stall_s:
                return "bad", 0
            wait = min(_PAUSE_S, self.stall_s - waited)
            got = await self._more(wait)
            waited = waited + wait if got is None else 0.0

    async def _headers(self) -> tuple[int | None, str | None] | None:
        """Read a header block: ``(content length, problem)``, or ``None`` at the end of the stream."""
        buf = self._buf
        length: int | None = None
        problem: str | None = None
        dropping = False  # inside an over-long header line
        while True:
            nl = buf.find(b"\n")
            if nl < 0:
                if len(buf) > self.max_header_line:
                    if not dropping:
                        problem = problem or f"a header line is longer than {self.max_header_line} bytes"
                    dropping = True
                    buf.clear()
                if not await self._more():
                    return None
                continue
            line = bytes(buf[:nl]).rstrip(b"\r")
            del buf[: nl + 1]
            if dropping:
                dropping = False
                continue
            if len(line) > self.max_header_line:
                problem = problem or f"a header line is longer than {self.max_header_line} bytes"
                continue
            if not line:
                return length, problem
            name, sep, value = line.partition(b":")
            if not sep:
                problem = problem or f"header line {line[:40].decode('utf-8', 'replace')!r} has no `:`"
                continue
            if name.strip().lower() == b"content-length":
                v = value.strip()
                if v.isdigit():  # ASCII digits only: no sign, no space, no fraction
                    length = int(v)
                else:
                    shown = v[:40].decode("utf-8", "replace")
                    problem = problem or f"`Content-Length` must be a whole number of bytes, got {shown!r}"

    async def _message(self) -> bytes | Fault | None:
        got = await self._headers()
        if got is None:
            return None
        length, problem = got
        if length is None and problem is None:
            problem = "no `Content-Length` header"
        if length is None:
            # No usable length: take a JSON value that follows as this message's body.
            buf = self._buf
            while not buf.lstrip(_WS):
                more = await self._more(self.stall_s)
                if not more:
                    return Fault(-32600, f"Invalid Request: {problem}; {FRAMING_HINT}", None)
            del buf[: len(buf) - len(buf.lstrip(_WS))]
            if buf[0] in b"{[":
                return await self._unframed(str(problem))
            self._skipping = True
            return Fault(-32600, f"Invalid Request: {problem}; {FRAMING_HINT}", None)
        if length > self.max_body:
            # answered at once (not after that many bytes arrived); the body is dropped
            # as it streams in before the next message is read
            msg_id = await self._first_id(length)
            self._dropping = length
            return Fault(
                -32600,
                f"Invalid Request: `Content-Length` {length} exceeds the largest body accepted, "
                f"{self.max_body} bytes (the daemon's --max-message-mb); the body is dropped, send "
                "smaller messages (a large reference: `reference/put` it once, then name it)",
                msg_id,
            )
        body = await self._body(length)
        if isinstance(body, Fault) or body is None:
            return body
        if problem is not None:
            return Fault(-32600, f"Invalid Request: {problem}; {FRAMING_HINT}", find_id(body))
        return body

    async def _first_id(self, length: int) -> int | str | FloatId | None:
        """The id the first bytes of an over-long body show, waiting at most :data:`_PAUSE_S` for them."""
        buf = self._buf
        head = min(length, 4096)
        while (msg_id := find_id(buf[:head])) is None and len(buf) < head:
            if not await self._more(_PAUSE_S):
                break
        return msg_id

    async def _drop_rest(self) -> bool:
        """Drop what is left of an over-long body as it streams in; ``False`` at the end of the stream."""
        buf = self._buf
        while self._dropping:
            take = min(self._dropping, len(buf))
            del buf[:take]
            self._dropping -= take
            if self._dropping and not await self._more(size=min(self._dropping, 1 << 20)):
                self._dropping = 0
                return False
        return True

    async def _body(self, length: int) -> bytes | Fault | None:
        """Exactly ``length`` bytes, or a fault when the Content-Length overshoots the message."""
        buf = self._buf
        scanned = 0  # bytes of the body already searched for the next message's header
        while True:
            end = min(len(buf), length)
            lo, hi = max(0, scanned - 20), min(len(buf), length + 20)
            scanned = end
            # A header block ends in CR LF CR LF, which JSON holds only as white space between
            # tokens: find() it first (memchr speed), the case-blind regex only when it is there.
            m = _NEXT_HEADER.search(buf, lo, hi) if buf.find(b"\r\n\r\n", lo, hi) >= 0 else None
            if m is not None and m.start() < length and _one_value(buf[: m.start()]):  # began early
                n = m.start()
                msg_id = find_id(buf[:n])
                del buf[:n]
                return self._too_long(length, n, msg_id)
            if len(buf) >= length:
                break
            got = await self._more(self.stall_s, size=max(_CHUNK, min(length - len(buf), 1 << 22)))
            if got is False:
                return None
            if got is None and _one_value(buf):  # stalled on a complete value that claimed more
                n = len(buf)
                msg_id = find_id(buf)
                buf.clear()
                return self._too_long(length, n, msg_id)
        if bytes(buf[max(0, length - 64) : length]).rstrip(_WS)[-1:] not in (b"}", b"]"):
            # A JSON-RPC body ends in `}` or `]`; this one may run on into the next message's
            # header, cut before its blank line (the find() above cannot see that case).
            status, end = _json_end(bytes(buf[:length]), 0)
            rest = bytes(buf[end:length]).lstrip(_WS)[:16].lower()
            if status == "done" and rest and any(n.startswith(rest) or rest.startswith(n) for n in _NAMES):
                msg_id = find_id(buf[:end])
                del buf[:end]
                return self._too_long(length, end, msg_id)
        body = bytes(buf[:length])
        del buf[:length]
        return body

    @staticmethod
    def _too_long(length: int, n: int, msg_id: int | str | FloatId | None) -> Fault:
        return Fault(
            -32600,
            f"Invalid Request: `Content-Length` is {length} but the message has {n} bytes; {FRAMING_HINT}",
            msg_id,
        )
