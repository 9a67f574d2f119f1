"""A file that is not UTF-8 is refused naming the file, the byte offset and line, the bytes and what it may be.

Rule (hrbench/_util/utf8.py): every text file a caller names is UTF-8 (a UTF-8 byte-order mark
dropped); one that is not gets a :class:`~hrbench.errors.ConfigError` naming the field and the
file, the offset (from 0) and line of the first byte that is not, that byte and the bytes round
it, and what the file may be instead (UTF-16 or UTF-32, compressed, binary, an 8-bit encoding),
never a ``UnicodeDecodeError``. Each of the library's readers is tried here: references (rows,
CSV, SQuAD), outputs files, rows files, grades files, other tools' files, the price table.
"""

from __future__ import annotations

import codecs
import gzip
import io
import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import hrbench as hb
from hrbench._util.utf8 import not_utf8
from hrbench.errors import ConfigError
from hrbench.interop import read_imported
from hrbench.reading import read_outputs
from hrbench.results._grades import read_grades
from hrbench.rowfile import read_rows
from hrbench.specs import build_arm, build_reference


def _said(data: bytes) -> str:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return not_utf8(data, exc)
    raise AssertionError("the data is UTF-8")


def _zip() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("header.json", "{}")
    return buf.getvalue()


@pytest.mark.parametrize(
    ("data", "where", "guess"),
    [
        ("id,item\nq1,café\n".encode("latin-1"), "byte 14 (line 2) is 0xE9, in b'q1,caf\\xe9'", "Windows-1252 or Latin-1"),
        ("q1,“quoted”\n".encode("cp1252"), "byte 3 (line 1) is 0x93", "iconv -f CP1252 -t UTF-8"),
        ("id,item\n".encode("utf-16"), "byte 0 (line 1) is 0xFF", "it is UTF-16, little-endian (it starts with that byte-order mark)"),
        ("id,item\n".encode("utf-16-be").join([codecs.BOM_UTF16_BE, b""]), "byte 0 (line 1) is 0xFE", "it is UTF-16, big-endian"),
        ("id,item\n".encode("utf-32"), "byte 0 (line 1) is 0xFF", "it is UTF-32, little-endian"),
        ("id,item\nq1,é\n".encode("utf-16-le"), "byte 22 (line 2) is 0xE9", "it looks like UTF-16LE with no byte-order mark"),
        (gzip.compress(b"id,item\n"), "byte 1 (line 1) is 0x8B", "it is gzip-compressed: unpack it first"),
        (_zip(), "(line 1) is 0x", "it is a zip archive (an Inspect .eval log is one)"),
        (b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00>\x00\x01\x00\x00\x00\xd0a", "byte 24 (line 1) is 0xD0", "it looks like a binary file, not text"),
        ("漢字".encode("shift_jis") + b"\x81\x7f", "byte 0 (line 1) is 0x8A", "another encoding (Latin-1, Shift JIS, GBK, ...)"),
        (b"ok\xe2\x82", "byte 2 (line 1) is 0xE2 0x82", "save it as UTF-8"),  # cut inside a character
    ],
    ids=["latin-1", "cp1252", "utf-16", "utf-16-be", "utf-32", "utf-16-no-bom", "gzip", "zip", "binary", "shift-jis", "cut"],
)  # fmt: skip
def test_what_is_said_of_bytes_that_are_not_utf8(data: bytes, where: str, guess: str) -> None:
    said = _said(data)
    assert said.startswith("not UTF-8 text: "), said
    assert where in said and guess in said, said


def test_an_offset_and_line_name_the_byte_in_the_whole_file() -> None:
    data = b"abc\ndef\xff\n"
    try:
        data[4:].decode("utf-8")
    except UnicodeDecodeError as exc:
        said = not_utf8(data[4:], exc, at=4, line=2)
    assert said.startswith("not UTF-8 text: byte 7 (line 2) is 0xFF, in b'def\\xff'"), said


LATIN1 = "Zürich".encode("latin-1")  # ü is 0xFC


def _reader_cases(tmp: Path) -> list[tuple[str, bytes, Callable[[Path], Any], str, int, int]]:
    """``(name, bytes, read, field, offset of 0xFC, line)`` of each reader of a caller's file."""
    line1 = b'{"id": "q1", "item": "France", "label": "Paris"}\n'
    jsonl = line1 + b'{"id": "q2", "item": "' + LATIN1 + b'", "label": "x"}\n'
    at = len(line1) + len(b'{"id": "q2", "item": "Z')
    row = {"cluster": "c", "item": "q1", "arm": "a", "run": 1, "correct": True}
    rows = (
        json.dumps(row).encode()
        + b"\n"
        + json.dumps(row | {"arm": "b"}).encode()[:-1]
        + b', "x": "'
        + LATIN1
        + b'"}\n'
    )
    rows_at = rows.index(b"\xfc")
    csv = b"id,item,label\nq1," + LATIN1 + b",x\n"
    rows_csv = b"cluster,item,arm,run,correct\nc," + LATIN1 + b",a,1,True\n"
    grades = b"id,item,arm,run,score\nb1,q1," + LATIN1 + b",1,1\n"
    squad = b'{"data": [{"title": "' + LATIN1 + b'"}]}'
    lmeval = b'{"doc_id": 0, "doc": {"q": "' + LATIN1 + b'"}}\n'
    promptfoo = b'{"results": {"results": [{"x": "' + LATIN1 + b'"}]}}'
    return [
        ("reference.jsonl", jsonl, lambda p: build_reference({"path": str(p)}), "reference.path", at, 2),
        ("reference.csv", csv, lambda p: build_reference({"path": str(p)}), "reference.path", csv.index(b"\xfc"), 2),
        ("squad.json", squad, lambda p: build_reference({"path": str(p), "format": "squad"}), "source", squad.index(b"\xfc"), 1),
        ("reference.jsonl", jsonl, lambda p: hb.read_reference(p), "reference.path", at, 2),
        ("outputs.jsonl", jsonl, lambda p: build_arm({"kind": "outputs", "name": "o", "path": str(p)}), "path", at, 2),
        ("outputs.json", jsonl, lambda p: read_outputs(str(p)), "path", at, 2),
        ("rows.jsonl", rows, lambda p: read_rows(p), "path", rows_at, 2),
        ("rows.csv", rows_csv, lambda p: read_rows(p), "path", rows_csv.index(b"\xfc"), 2),
        ("grades.csv", grades, lambda p: read_grades(p), "grades", grades.index(b"\xfc"), 2),
        ("samples_x.jsonl", lmeval, lambda p: read_imported(p, "lm-eval"), "path", lmeval.index(b"\xfc"), 0),
        ("p.json", promptfoo, lambda p: read_imported(p, "promptfoo"), "path", promptfoo.index(b"\xfc"), 1),
    ]  # fmt: skip


@pytest.mark.parametrize("case", range(11))
def test_every_reader_of_a_callers_file_names_the_file_the_byte_and_the_encoding(
    tmp_path: Path, case: int
) -> None:
    name, data, read, field, at, line = _reader_cases(tmp_path)[case]
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(ConfigError) as info:
        read(path)
    msg = str(info.value)
    assert msg.startswith(f"{field}: "), msg
    where = f"byte {at} (line {line}) is 0xFC" if line else f"byte {at} is 0xFC"  # lm-eval: "line 1: ..."
    assert where in msg and "it may be Windows-1252 or Latin-1" in msg, msg
    assert msg.endswith(f"(got {str(path)!r})"), msg


def test_a_price_table_that_is_not_utf8_is_refused_naming_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hrbench.models import _pricing

    path = tmp_path / "prices.json"
    path.write_bytes(b'{"m\xfc": {"input": 1}}')
    monkeypatch.setenv("HRBENCH_PRICES", str(path))
    with pytest.raises(ConfigError, match=r"^HRBENCH_PRICES: is not UTF-8 text: byte 3 \(line 1\) is 0xFC"):
        _pricing._table_named()
