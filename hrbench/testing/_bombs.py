"""Hostile Inspect ``.eval`` logs, for the tests and ``bench/``: zip bombs of a few KB that inflate to 1 GiB.

The zips are written byte by byte (:mod:`zipfile` writes no zstd and never lies about sizes).
A zstd frame of RLE blocks holds 128 KiB of one repeated byte in 4 bytes, so 1 GiB of JSON
text fits in 32 KiB (RFC 8878, section 3.1.1.2: ``Block_Type`` 1, ``RLE_Block``). Deflate
cannot go past about 1,032 to 1, so a 32 KiB deflated member inflates to 32 MiB, and reaching
1 GiB takes overlapping members: central directory entries that all point at one member.

:data:`BOMBS` names each kind; :func:`write_bombs` writes them into a folder.

Example:
    >>> data = BOMBS["zstd-one-member"]()
    >>> len(data) < 40_000
    True
"""

from __future__ import annotations

import functools
import struct
import zlib
from collections.abc import Callable
from pathlib import Path

__all__ = ["BOMBS", "GiB", "Member", "crc32_combine", "eval_zip", "write_bombs", "zstd_frame"]

GiB = 1 << 30
_BLOCK = 128 << 10
_HEADER = b'{"version": 2, "eval": {"model": "bomb", "task": "bomb"}, "status": "success"}'


def zstd_frame(*parts: bytes | tuple[int, int]) -> bytes:
    """A zstd frame whose parts are raw bytes (``b"..."``) or ``(byte, count)`` runs (RLE blocks).

    Example:
        >>> import zstandard
        >>> zstandard.ZstdDecompressor().decompress(zstd_frame(b"[", (ord(" "), 3), b"]"), max_output_size=9)
        b'[   ]'
    """
    blocks: list[tuple[int, int, bytes]] = []  # (type, size, content)
    for part in parts:
        if isinstance(part, bytes):
            blocks += [
                (0, len(part[i : i + _BLOCK]), part[i : i + _BLOCK]) for i in range(0, len(part), _BLOCK)
            ]
        else:
            byte, count = part
            while count > 0:
                size = min(count, _BLOCK)
                blocks.append((1, size, bytes([byte])))
                count -= size
    out = bytearray(b"\x28\xb5\x2f\xfd")  # magic
    out += bytes([0x00, 0x50])  # no content size, no checksum; a 1 MiB window (log 20)
    for n, (kind, size, content) in enumerate(blocks):
        last = n == len(blocks) - 1
        out += (int(last) | kind << 1 | size << 3).to_bytes(3, "little") + content
    return bytes(out)


class Member:
    """One zip member as :func:`eval_zip` writes it.

    Its name, compression method (0 stored, 8 deflate, 93 zstd), data as compressed, and the
    size and CRC-32 its headers declare.
    """

    def __init__(self, name: str, method: int, data: bytes, size: int, crc: int) -> None:
        self.name, self.method, self.data, self.size, self.crc = name.encode(), method, data, size, crc

    @classmethod
    def of(cls, name: str, content: bytes, method: int = 93) -> Member:
        """A member holding ``content``, compressed by ``method``, with its true size and CRC-32."""
        if method == 93:
            import zstandard

            data = zstandard.ZstdCompressor().compress(content)
        elif method == 8:
            packer = zlib.compressobj(9, zlib.DEFLATED, -15)
            data = packer.compress(content) + packer.flush()
        else:
            data = content
        return cls(name, method, data, len(content), zlib.crc32(content))


def eval_zip(members: list[Member], overlap: int = 1) -> bytes:
    """A zip of ``members`` as given (sizes and checksums unchecked); the last listed ``overlap`` times.

    ``overlap`` > 1 writes the last member once and lists it that many times in the central
    directory, every entry pointing at the same data.
    """
    out, central, count = bytearray(), bytearray(), 0
    for n, m in enumerate(members):
        offset = len(out)
        fixed = struct.pack(
            "<HHHHHIIIHH", 20, 0, m.method, 0, 0x21, m.crc, len(m.data), m.size, len(m.name), 0
        )
        out += b"PK\x03\x04" + fixed + m.name + m.data
        for _ in range(overlap if n == len(members) - 1 else 1):
            central += (
                b"PK\x01\x02" + struct.pack("<H", 20) + fixed + struct.pack("<HHHII", 0, 0, 0, 0, offset)
            )
            central += m.name
            count += 1
    end = struct.pack("<HHHHIIH", 0, 0, count, count, len(central), len(out), 0)
    return bytes(out + central + b"PK\x05\x06" + end)


def _header() -> Member:
    return Member.of("header.json", _HEADER, 8)


def _gf2_times(matrix: list[int], vector: int) -> int:
    out, n = 0, 0
    while vector:
        if vector & 1:
            out ^= matrix[n]
        vector, n = vector >> 1, n + 1
    return out


def _gf2_square(matrix: list[int]) -> list[int]:
    return [_gf2_times(matrix, row) for row in matrix]


@functools.cache
def _zeros(k: int) -> list[int]:
    """The operator that appends 2**k zero bytes to a CRC-32 (a 32 x 32 matrix over GF(2))."""
    if k == 0:
        one_bit = [0xEDB88320] + [1 << n for n in range(31)]  # one zero bit
        return _gf2_square(_gf2_square(_gf2_square(one_bit)))  # eight: one byte
    return _gf2_square(_zeros(k - 1))


def crc32_combine(crc1: int, crc2: int, len2: int) -> int:
    """The CRC-32 of two byte strings joined, from theirs and the second's length (zlib's ``crc32_combine``).

    Example:
        >>> crc32_combine(zlib.crc32(b"ab"), zlib.crc32(b"cde"), 3) == zlib.crc32(b"abcde")
        True
    """
    k = 0
    while len2:
        if len2 & 1:
            crc1 = _gf2_times(_zeros(k), crc1)
        len2, k = len2 >> 1, k + 1
    return crc1 ^ crc2


@functools.cache
def _crc_of_run(byte: int, count: int) -> int:
    """The CRC-32 of ``count`` copies of ``byte``, without writing them (doubling with :func:`crc32_combine`)."""
    crc, have = 0, 0  # of the bytes done so far
    piece, size = zlib.crc32(bytes([byte])), 1  # of 2**k copies
    while count:
        if count & 1:
            crc, have = (crc32_combine(crc, piece, size) if have else piece), have + size
        piece, size = crc32_combine(piece, piece, size), size * 2
        count >>= 1
    return crc


def _crc(*parts: bytes | tuple[int, int]) -> int:
    """The CRC-32 of what :func:`zstd_frame` of ``parts`` inflates to."""
    crc = 0
    for part in parts:
        if isinstance(part, bytes):
            crc = zlib.crc32(part, crc)
        elif part[1]:
            crc = crc32_combine(crc, _crc_of_run(*part), part[1])
    return crc


def _sample_zstd(name: str, size: int, declared: int | None = None, n: int = 1) -> Member:
    """Sample ``n``, whose input is a string of ``size`` bytes (zstd, RLE blocks), with its true CRC-32."""
    head, tail = b'{"id": %d, "epoch": 1, "input": "' % n, b'", "target": "a"}'
    parts = (head, (ord("a"), size - len(head) - len(tail)), tail)
    return Member(name, 93, zstd_frame(*parts), size if declared is None else declared, _crc(*parts))


def _zstd_one_member() -> bytes:
    return eval_zip([_header(), _sample_zstd("samples/1_epoch_1.json", GiB)])


def _zstd_size_lies() -> bytes:
    return eval_zip([_header(), _sample_zstd("samples/1_epoch_1.json", GiB, declared=2_000)])


def _zstd_many_members() -> bytes:
    each = 8 << 20
    return eval_zip(
        [_header(), *(_sample_zstd(f"samples/{n}_epoch_1.json", each, n=n) for n in range(GiB // each))]
    )


def _deflate_member() -> bytes:
    data = b'{"id": 1, "epoch": 1, "input": "' + b"a" * (32 << 20) + b'"}'
    return eval_zip([_header(), Member.of("samples/1_epoch_1.json", data, 8)])


def _deflate_overlap() -> bytes:
    data = b'{"id": 1, "epoch": 1, "input": "' + b"a" * (32 << 20) + b'"}'
    return eval_zip([_header(), Member.of("samples/1_epoch_1.json", data, 8)], overlap=32)


def _nested(depth: int) -> bytes:
    """``[[[...]]]`` ``depth`` deep as header.json (zstd)."""
    parts = ((ord("["), depth), (ord("]"), depth))
    return eval_zip([Member("header.json", 93, zstd_frame(*parts), 2 * depth, _crc(*parts))])


def _nested_small() -> bytes:
    inner = b"[" * 150 + b"]" * 150
    header = b'{"version": 2, "eval": {"model": "bomb"}, "deep": ' + inner + b"}"
    return eval_zip([Member.of("header.json", header, 8)])


BOMBS: dict[str, Callable[[], bytes]] = {
    "zstd-one-member": _zstd_one_member,
    "zstd-size-lies": _zstd_size_lies,
    "zstd-many-members": _zstd_many_members,
    "deflate-member": _deflate_member,
    "deflate-overlap": _deflate_overlap,
    "nested-1gib": lambda: _nested(GiB // 2),
    "nested-100k": lambda: _nested(100_000),
    "nested-150": _nested_small,
}
"""Each bomb by name: zstd one member of 1 GiB (its size declared, or a lie of 2,000 bytes), 128
zstd members of 8 MiB, one deflated member of 32 MiB, that member listed 32 times (1 GiB),
``[[[...]]]`` 1 GiB deep, 100,000 deep (200 KB) and 150 deep."""


def write_bombs(folder: str | Path) -> dict[str, Path]:
    """Write every bomb of :data:`BOMBS` as ``NAME.eval`` into ``folder``; their paths by name."""
    out = {}
    for name, make in BOMBS.items():
        path = Path(folder) / f"{name}.eval"
        path.write_bytes(make())
        out[name] = path
    return out
