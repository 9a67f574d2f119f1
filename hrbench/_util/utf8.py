"""Text files are UTF-8: the words for one that is not, naming the place, the bytes and what it may be.

Every file a caller names is read as UTF-8 (a leading UTF-8 byte-order mark is dropped, as
Excel's "CSV UTF-8" writes one). A file that is not UTF-8 is refused with :func:`not_utf8`'s
words: the byte offset (counted from 0, as ``xxd`` and ``hexdump`` count) and line of the first
byte that is not, that byte, the bytes round it, and what the file may be instead, from its
first bytes: UTF-16 or UTF-32 (a byte-order mark, or NUL bytes between ASCII letters), a
compressed file or archive (its magic number), a binary file (NUL bytes), or an 8-bit encoding
(Windows-1252, Latin-1), with the command that converts it.

Standard library only: ``hrb`` words its own refusals (a spec's data file, stdin) with the same
code, a copy that ``make schema`` writes to ``hrbench_client/utf8.py`` (the client imports
nothing of the core; a test fails when the copy is stale). :mod:`hrbench._util.files` turns it
into the :class:`~hrbench.errors.ConfigError` of a file a caller named.
"""

from __future__ import annotations

import codecs

__all__ = ["client_copy", "not_utf8"]

_BOMS = (
    (codecs.BOM_UTF32_LE, "UTF-32", "little-endian"),
    (codecs.BOM_UTF32_BE, "UTF-32", "big-endian"),
    (codecs.BOM_UTF16_LE, "UTF-16", "little-endian"),
    (codecs.BOM_UTF16_BE, "UTF-16", "big-endian"),
)
"""Byte-order marks, UTF-32's first (``FF FE 00 00`` starts with UTF-16LE's ``FF FE``)."""

_MAGIC = (
    (b"\x1f\x8b", "gzip-compressed: unpack it first (gunzip)"),
    (
        b"PK\x03\x04",
        "a zip archive (an Inspect .eval log is one): unpack it, or name the format that reads it",
    ),
    (b"BZh", "bzip2-compressed: unpack it first (bunzip2)"),
    (b"\xfd7zXZ\x00", "xz-compressed: unpack it first (unxz)"),
    (b"(\xb5/\xfd", "zstd-compressed: unpack it first (unzstd)"),
    (b"%PDF", "a PDF document, not text"),
    (b"SQLite format 3\x00", "an SQLite database, not text"),
)
"""Magic numbers of files that are not text at all, and what to say of each."""

_NL = b"\n"

_HEAD = 4096
"""How many first bytes are looked at to tell UTF-16 with no byte-order mark, or a binary file."""


def _guess(data: bytes, start: int, at: int) -> str:
    """What ``data`` (at offset ``at`` of its file) may be instead of UTF-8, and how to convert it."""
    if at == 0:
        for bom, name, order in _BOMS:
            if data.startswith(bom):
                return (
                    f"it is {name}, {order} (it starts with that byte-order mark): save it as UTF-8 "
                    f"(iconv -f {name} -t UTF-8)"
                )
        for magic, what in _MAGIC:
            if data.startswith(magic):
                return f"it is {what}"
    head = data[:_HEAD]
    if b"\x00" in head:
        half = len(head) // 2
        for name, zeros in (("UTF-16LE", head[1::2]), ("UTF-16BE", head[0::2])):
            if half and zeros.count(0) >= 0.9 * half:
                return f"it looks like {name} with no byte-order mark: save it as UTF-8 (iconv -f {name} -t UTF-8)"
        return "it holds NUL bytes: it looks like a binary file, not text"
    try:
        data[max(0, start - 64) : start + 64].decode("cp1252")
    except UnicodeDecodeError:
        return "it is in another encoding (Latin-1, Shift JIS, GBK, ...): save it as UTF-8"
    return "it may be Windows-1252 or Latin-1: save it as UTF-8 (iconv -f CP1252 -t UTF-8)"


def not_utf8(data: bytes, exc: UnicodeDecodeError, at: int = 0, line: int | None = 1) -> str:
    r"""Why ``data`` is not UTF-8 text: where, which bytes, and what it may be (this module's docstring).

    Args:
        data: the bytes that were decoded: a whole file, or a part of one.
        exc: what decoding ``data`` raised (its ``start`` and ``end`` index ``data``).
        at: the offset of ``data`` in its file (bytes).
        line: the line of the file ``data`` starts on; ``None`` names no line (the caller does).

    Returns:
        The words, to follow ``is`` after the file's name in an error.

    Example:
        >>> data = "id,item\nq1,café au lait\n".encode("latin-1")
        >>> try:
        ...     data.decode("utf-8")
        ... except UnicodeDecodeError as exc:
        ...     print(not_utf8(data, exc))
        not UTF-8 text: byte 14 (line 2) is 0xE9, in b'q1,caf\xe9 au lait'; it may be Windows-1252 or Latin-1: save it as UTF-8 (iconv -f CP1252 -t UTF-8)
        >>> data = "id\n".encode("utf-16")
        >>> try:
        ...     data.decode("utf-8")
        ... except UnicodeDecodeError as exc:
        ...     print(not_utf8(data, exc))
        not UTF-8 text: byte 0 (line 1) is 0xFF, in b'\xff\xfei\x00d\x00'; it is UTF-16, little-endian (it starts with that byte-order mark): save it as UTF-8 (iconv -f UTF-16 -t UTF-8)
    """
    start, end = exc.start, max(exc.end, exc.start + 1)
    nl = data.rfind(b"\n", max(0, start - 24), start)
    begin = nl + 1 if nl >= 0 else max(0, start - 24)
    nl = data.find(b"\n", end, end + 16)
    shown = data[begin : nl if nl >= 0 else end + 16]
    bad = " ".join(f"0x{b:02X}" for b in data[start:end][:4])
    where = f"byte {at + start}"
    if line is not None:
        where += f" (line {line + data.count(_NL, 0, start)})"
    return f"not UTF-8 text: {where} is {bad}, in {shown!r}; {_guess(data, start, at)}"


def client_copy() -> str:
    """The text of ``hrbench_client/utf8.py``: this module for a client that imports no core.

    ``make schema`` writes it; a test fails when the file differs (it is never hand-edited).
    """
    from hrbench._util.atomic import client_copy as copy

    return copy(__file__)
