"""Files the daemon is sent that are not UTF-8: refused by name over the wire, and the daemon keeps serving.

Rule (hrbench/_util/utf8.py): a reference, an outputs arm's file or a recording the daemon
reads for a caller is UTF-8 text; one that is not is a ``ConfigError`` naming the field, the
file, the byte offset and line, the bytes, and what the file may be instead, never an internal
error, and the daemon answers the next request.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hrbench_client.errors import ConfigError
from tests.server._daemon import Daemon, spec

LINE1 = b'{"id": "q1", "item": "France", "label": "Paris"}\n'
LATIN1 = LINE1 + b'{"id": "q2", "item": "Z\xfcrich", "label": "x"}\n'  # 0xFC: Latin-1's u-umlaut
AT = len(LINE1) + len(b'{"id": "q2", "item": "Z')
UTF16 = "id,item,label\nq1,France,Paris\n".encode("utf-16")


def _refused(call: Any) -> str:
    with pytest.raises(ConfigError) as info:
        call()
    return str(info.value)


@pytest.mark.parametrize(
    ("name", "data", "where", "guess"),
    [
        ("ref.jsonl", LATIN1, f"byte {AT} (line 2) is 0xFC", "it may be Windows-1252 or Latin-1"),
        ("ref.csv", UTF16, "byte 0 (line 1) is 0xFF", "it is UTF-16, little-endian"),
        ("ref.bin", bytes(range(256)), "byte 128 (line 2) is 0x80", "it looks like a binary file, not text"),
    ],
)
def test_a_reference_that_is_not_utf8_is_refused_by_name(
    shared_daemon: Daemon, tmp_path: Path, name: str, data: bytes, where: str, guess: str
) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    with shared_daemon.client() as c:
        put = _refused(lambda: c.references.put({"path": str(path)}, name="latin"))
        run = _refused(lambda: list(c.benchmark(spec(reference={"path": str(path)}))))
        for msg in (put, run):
            assert "reference.path: is not UTF-8 text: " in msg and where in msg and guess in msg, msg
            assert str(path) in msg, msg
        assert c.references.put({"items": {"a": "x"}}, name="after-latin").n_items == 1  # still serving


def test_an_outputs_file_and_a_recording_that_are_not_utf8_are_refused_by_name(
    shared_daemon: Daemon, tmp_path: Path
) -> None:
    path = tmp_path / "outs.jsonl"
    path.write_bytes(LATIN1)
    arm = {"kind": "outputs", "name": "o", "path": str(path)}
    with shared_daemon.client() as c:
        outs = _refused(lambda: list(c.benchmark(spec(arms=[arm]))))
        assert f"arms[0].path: is not UTF-8 text: byte {AT} (line 2) is 0xFC" in outs, outs
        rec = _refused(lambda: c.recording_import(path, name="latin-rec"))
        assert f"path: is not UTF-8 text: byte {AT} (line 2) is 0xFC" in rec, rec
        assert "Windows-1252" in outs and "Windows-1252" in rec
        assert len(list(c.benchmark(spec(n=2, runs=1)))) == 2  # still serving
