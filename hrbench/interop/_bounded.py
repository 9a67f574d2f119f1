r"""Bounded reading of other tools' files: a JSON file, JSON lines, and a zip of JSON members.

Each loader runs inside :func:`~hrbench.interop._boundary.reading` and counts what it reads on
its :class:`~hrbench.interop._boundary.Reading`, so one file never costs more than the import
limits (:mod:`._limits`): bytes read, inflated; one member's or line's bytes; zip members;
compression ratio; JSON values and nesting. Documents come one at a time where the format
allows it (a JSON line, a zip member), tracked (:func:`~hrbench.interop._boundary.track`) so
that the boundary names the place of a malformed value.

- :func:`read_json`: a file that is one JSON document (an Inspect ``.json`` log, promptfoo's
  results);
- :func:`json_lines`: a JSON lines file, a line at a time (lm-eval samples);
- :class:`ZipDocuments`: a zip whose members are JSON (an Inspect ``.eval`` log), stored,
  deflated or zstd-compressed, a member at a time.

A string holding half of a UTF-16 surrogate pair (``"\ud800"`` in JSON, which JSON allows and UTF-8
cannot hold, so SQLite and the wire refuse it later) is refused here, naming its place.
"""

from __future__ import annotations

import contextlib
import json
import lzma
import os
import re
import struct
import sys
import zipfile
import zlib
from collections.abc import Generator, Iterator
from typing import IO, Any, cast

from hrbench._util.files import open_input, skip_bom
from hrbench._util.utf8 import not_utf8
from hrbench.errors import ConfigError
from hrbench.interop._boundary import Reading, current, place, track
from hrbench.interop._limits import RATIO_FLOOR, over_limit

__all__ = ["ZipDocuments", "json_lines", "read_json"]

_CHUNK = 1 << 20
_ZSTD = 93
"""The zip compression method number of zstd (APPNOTE 4.4.5)."""
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")
_PARSER_DEPTH = sys.getrecursionlimit() - 100
"""About how deep :func:`json.loads` nests before its ``RecursionError`` (a frame each level)."""


def _reading() -> Reading:
    found = current()
    if found is None:
        raise RuntimeError("hrbench.interop._bounded reads inside hrbench.interop._boundary.reading()")
    return found


def _too_deep(doc: Any, limit: int) -> bool:
    """Whether ``doc`` nests deeper than ``limit`` (``[[1]]`` is 2 deep)."""
    stack = [(doc, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        for child in node.values() if type(node) is dict else node:
            if type(child) is dict or type(child) is list:
                stack.append((child, depth + 1))
    return False


def _lone_surrogate(doc: Any, label: str) -> str | None:
    """The place of the first string (or key) holding a lone UTF-16 surrogate, if any."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(doc, (label,))]
    while stack:
        node, at = stack.pop()
        if isinstance(node, str):
            try:
                node.encode("utf-8")
            except UnicodeEncodeError:
                return place(at)
        elif isinstance(node, dict):
            for k, v in node.items():
                stack.append((k, at))
                stack.append((v, (*at, k)))
        elif isinstance(node, list):
            stack.extend((v, (*at, n)) for n, v in enumerate(node))
    return None


def decode(data: bytes | bytearray, label: str, what: str, offset: int = 0) -> Any:
    """One JSON document, its values counted first, then parsed, checked and tracked.

    Args:
        data: the document's bytes (UTF-8).
        label: its place in the file: ``""`` (the file is the document), ``"line 4"``,
            ``"member header.json"``.
        what: what the file should be, for messages (``"an Inspect log"``).
        offset: the offset of ``data`` in the file (or the member), for messages (bytes).

    Raises:
        ConfigError: not UTF-8, not JSON, more values than ``max_values`` allows (all the
            file's documents together) or deeper than ``max_depth``, or a lone surrogate.
    """
    r = _reading()
    opens = data.count(b"[") + data.count(b"{")
    r.charge_values(opens + data.count(b",") + 1, label or "the file")
    surrogates = _SURROGATE.search(data) is not None
    at, why = f"{label}: " if label else "", ""
    # a refusal is raised with no name left holding the bytes, the text or the parse: the
    # traceback keeps the frame alive, and with it whatever it still names
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = ""
        said = not_utf8(bytes(data), exc, offset, None if label.startswith("line ") else 1)
        why = f"{at}{said}; is it {what}?" if label else f"is not {r.fmt} results: {said}"
    del data  # the caller keeps no name for it: the bytes go before the parse
    if why:
        raise ConfigError("path", r.source, why)
    deep = f"{label or 'the file'} nests deeper than {r.limits.max_depth}"
    try:
        doc = json.loads(text)
    except RecursionError:  # past the parser's own depth (Python's recursion limit, about 1,000)
        doc, why = None, deep
        if r.limits.max_depth >= _PARSER_DEPTH:
            why = f"{label or 'the file'} nests deeper than Python's JSON parser follows (about {_PARSER_DEPTH:,})"
    except ValueError as exc:  # json.JSONDecodeError, or an integer of more digits than Python converts
        msg = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        doc, why = (
            None,
            f"{at}not JSON ({msg}): is it {what}?" if label else f"is not {what} (not JSON: {msg})",
        )
    del text
    if not why and opens > r.limits.max_depth and _too_deep(doc, r.limits.max_depth):
        why = deep
    if not why and surrogates:
        bad = _lone_surrogate(doc, label)
        why = f"{bad}: a string holds a lone UTF-16 surrogate (\\ud800-\\udfff): not text" if bad else ""
    if why:
        del doc
        raise (
            over_limit(r.source, r.limits, "max_depth", why)
            if why == deep
            else ConfigError("path", r.source, why)
        )
    return track(doc, r, (label,))


def read_json(path: str, what: str) -> Any:
    """The one JSON document of file ``path``, read whole within ``max_bytes``.

    Args:
        path: the file.
        what: what it should be, for messages (``"promptfoo's results"``).

    Raises:
        ConfigError: over ``max_bytes`` (said from its size, before it is read), or as
            :func:`decode`.
        OSError: the file cannot be read.
    """
    with open_input(path, "path") as f:
        return decode(_whole(skip_bom(f)), "", what)  # no name keeps the bytes: they go before the parse


def _whole(f: IO[bytes]) -> bytes:
    """All of ``f``, refused from its size when over ``max_bytes`` (and counted as it is read)."""
    r = _reading()
    size, room = os.fstat(f.fileno()).st_size, r.limits.max_bytes - r.read
    if size > room:
        raise over_limit(r.source, r.limits, "max_bytes", f"the file is {size:,} bytes")
    data = f.read(room + 1)
    r.charge_bytes(len(data), "the file")
    return data


def json_lines(path: str, what: str) -> Iterator[tuple[int, Any]]:
    """The JSON documents of a JSON lines file, a line at a time: ``(line number, document)``.

    Blank lines are skipped (and counted). A line is read up to ``max_member_bytes``.

    Args:
        path: the file.
        what: what it should be, for messages (``"an lm-eval samples file"``).

    Raises:
        ConfigError: a line over ``max_member_bytes``, the lines together over ``max_bytes``,
            or a line as :func:`decode` refuses it (naming its number).
        OSError: the file cannot be read.
    """
    r = _reading()
    limit = r.limits.max_member_bytes
    f = skip_bom(r.closing.enter_context(open_input(path, "path")))
    n, offset = 0, f.tell() if f.seekable() else 0
    while line := f.readline(limit + 1):
        n += 1
        if len(line) > limit and not line.endswith(b"\n"):
            raise over_limit(
                r.source, r.limits, "max_member_bytes", f"line {n} is longer than {limit:,} bytes"
            )
        r.charge_bytes(len(line), f"line {n}")
        if line.strip():
            yield n, decode(line, f"line {n}", what, offset)
        offset += len(line)


def _zip_entries(f: IO[bytes]) -> int | None:
    """The member count a zip's end of central directory record gives (zip64 too); ``None``: none found."""
    size = f.seek(0, os.SEEK_END)
    tail_len = min(size, 22 + 0xFFFF)
    f.seek(size - tail_len)
    tail = f.read(tail_len)
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) - at < 22:
        return None
    (total,) = struct.unpack("<H", tail[at + 10 : at + 12])
    if total == 0xFFFF and at >= 20 and tail[at - 20 : at - 16] == b"PK\x06\x07":
        (offset,) = struct.unpack("<Q", tail[at - 12 : at - 4])
        f.seek(offset)
        record = f.read(40)
        if record[:4] == b"PK\x06\x06" and len(record) == 40:
            (total,) = struct.unpack("<Q", record[32:40])
    return int(total)


class _Window:
    """``size`` bytes of ``f`` from where it stands, as a file to read (a zstd member's data)."""

    def __init__(self, f: IO[bytes], size: int) -> None:
        self.f, self.left = f, size

    def read(self, n: int = -1) -> bytes:
        n = self.left if n < 0 else min(n, self.left)
        data = self.f.read(n)
        self.left -= len(data)
        return data


class ZipDocuments:
    """A zip whose members are JSON documents, each read when asked for, within the import limits.

    Opening reads the member count from the end record first (over ``max_members``: refused
    before the central directory is read), then the central directory; a member name given
    twice is refused. :meth:`document` checks a member by the size the directory declares for
    it: past ``max_member_bytes``, past ``max_bytes`` with the members read before, or past
    ``max_ratio`` times its compressed size (it, or the members read together, past the first
    MiB), it is refused before it is inflated. It is then inflated a chunk at a time into a
    buffer of that size: a member that inflates past it, or short of it, or fails its CRC-32,
    is refused as broken. The file stays open until the
    :func:`~hrbench.interop._boundary.reading` ends.

    Args:
        path: the zip.
        what: what it should be, for messages (``"an Inspect .eval log"``).

    Raises:
        ConfigError: not a zip (``is not {what} (not a zip file)``), over ``max_members``, or a
            member name given twice.
        OSError: the file cannot be read.
    """

    def __init__(self, path: str, what: str) -> None:
        r = self.reading = _reading()
        self.what = what
        self.file = r.closing.enter_context(open_input(path, "path"))
        count = _zip_entries(self.file)
        if count is not None and count > r.limits.max_members:
            raise over_limit(r.source, r.limits, "max_members", f"the zip has {count:,} members")
        try:
            self.zip = r.closing.enter_context(zipfile.ZipFile(self.file))
        except zipfile.BadZipFile:
            raise ConfigError("path", r.source, f"is not {what} (not a zip file)") from None
        except (ValueError, EOFError, struct.error, OverflowError) as exc:
            raise ConfigError("path", r.source, f"is not {what} (a broken zip: {exc})") from None
        infos = self.zip.infolist()
        if len(infos) > r.limits.max_members:
            raise over_limit(r.source, r.limits, "max_members", f"the zip has {len(infos):,} members")
        self.members: dict[str, zipfile.ZipInfo] = {}
        for info in infos:
            if self.members.setdefault(info.filename, info) is not info:
                raise ConfigError("path", r.source, f"holds member {info.filename} twice: not {what}")
        self.inflated = self.compressed = 0

    def document(self, name: str) -> Any:
        """Member ``name``'s JSON, tracked under ``member NAME``.

        Raises:
            ConfigError: over a limit (see the class), a broken member (a bad checksum, corrupt
                compressed data, an unknown compression method), or as :func:`decode`.
        """
        info, label = self.members[name], f"member {name}"
        try:
            return decode(self._inflate(info, label), label, self.what)
        except (
            zipfile.BadZipFile,
            zlib.error,
            lzma.LZMAError,
            EOFError,
            NotImplementedError,
            RuntimeError,
            OSError,
        ) as exc:
            # OSError: bz2's "Invalid data stream"; the file itself was opened and read before
            raise ConfigError("path", self.reading.source, f"{label} cannot be read: {exc}") from None

    def _inflate(self, info: zipfile.ZipInfo, label: str) -> bytearray:
        """A member's bytes, in a buffer of the size the zip declares, refused from that size when over a limit.

        A member that inflates past its declared size is cut there and refused as broken (as
        :mod:`zipfile` stops a deflated one), so what is declared bounds what is held.
        """
        r, limits, size = self.reading, self.reading.limits, info.file_size
        if size > limits.max_member_bytes:
            raise over_limit(r.source, limits, "max_member_bytes", f"{label} declares {size:,} bytes")
        found = f"{label} declares {size:,} bytes, {r.read + size:,} with the members read before it"
        r.charge_bytes(size, label, found)
        self.inflated += size
        self.compressed += info.compress_size
        for inflated, packed, whose in (
            (
                size,
                info.compress_size,
                f"{label} declares {size:,} bytes, {{}} times its {{}} compressed bytes",
            ),
            (
                self.inflated,
                self.compressed,
                f"the members read declare {self.inflated:,} bytes, {{}} times their {{}} compressed bytes",
            ),
        ):
            if inflated >= RATIO_FLOOR and inflated > limits.max_ratio * max(packed, 1):
                said = whose.format(f"{inflated / max(packed, 1):,.0f}", f"{packed:,}")
                raise over_limit(r.source, limits, "max_ratio", said)
        out, done = bytearray(size), 0
        view = memoryview(out)
        # closed on every way out: a broken member's decompressor goes at once, and so do the
        # bytes inflated so far (a traceback keeps this frame alive)
        with contextlib.closing(self._chunks(info)) as chunks:
            try:
                for chunk in chunks:
                    if done + len(chunk) > size:  # zipfile stops there itself; zstd is read here
                        raise zipfile.BadZipFile(
                            f"it inflates past the {size:,} bytes the zip declares for it"
                        )
                    view[done : done + len(chunk)] = chunk
                    done += len(chunk)
            except BaseException:
                view.release()
                out.clear()
                raise
        view.release()
        if done != size:
            raise zipfile.BadZipFile(
                f"it inflates to {done:,} bytes, not the {size:,} the zip declares for it"
            )
        return out

    def _chunks(self, info: zipfile.ZipInfo) -> Generator[bytes, None, None]:
        """A member's inflated bytes, a chunk at a time: :mod:`zipfile` for its methods, ``zstandard`` for zstd."""
        if info.compress_type != _ZSTD:
            with self.zip.open(info) as member:  # checks the CRC-32 at the end
                while chunk := member.read(_CHUNK):
                    yield chunk
            return
        import zstandard

        f = self.file
        f.seek(info.header_offset)
        head = f.read(30)
        if head[:4] != b"PK\x03\x04":
            raise zipfile.BadZipFile("no local header: not a whole zip")
        name_len, extra_len = struct.unpack("<HH", head[26:30])
        f.seek(info.header_offset + 30 + name_len + extra_len)
        # zstd's own cap on a frame's window (128 MiB) stands: a window's pages count only as written
        reader = zstandard.ZstdDecompressor().stream_reader(
            cast(IO[bytes], _Window(f, info.compress_size)), read_across_frames=True, closefd=False
        )
        crc = 0
        while True:
            try:
                chunk = reader.read(_CHUNK)
            except zstandard.ZstdError as exc:
                raise zipfile.BadZipFile(f"corrupt zstd data ({exc})") from None
            if not chunk:
                break
            crc = zlib.crc32(chunk, crc)
            yield chunk
        if crc != info.CRC:
            raise zipfile.BadZipFile("it fails its CRC-32 checksum")


class _Lazy:
    """Members of a :class:`ZipDocuments` in order, each read as the loop reaches it."""

    def __init__(self, docs: ZipDocuments, names: list[str]) -> None:
        self.docs, self.names = docs, names

    def __len__(self) -> int:
        return len(self.names)

    def __iter__(self) -> Iterator[Any]:
        for name in self.names:
            yield self.docs.document(name)


def lazy_documents(docs: ZipDocuments, names: list[str]) -> _Lazy:
    """The documents of members ``names``, read one at a time as a loop reaches each (``len`` known)."""
    return _Lazy(docs, names)
