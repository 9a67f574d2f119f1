"""Files and input `hrb` reads that are not UTF-8: exit 2 with the file, the byte and the encoding, no traceback.

Rule (hrbench/_util/utf8.py, copied to hrbench_client/utf8.py): a TOML spec, the data file of
an ``hrb eval`` spec, JSON lines on ``hrb score``'s stdin, and a reference the daemon reads for
``hrb bench`` are UTF-8 text; one that is not is refused naming the file (or stdin), the byte
offset and line of the first byte that is not, the bytes, and what it may be instead.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests._slow import slow

HRB = [sys.executable, "-m", "hrbench_client.cli"]
LATIN1 = b'{"question": "Z\xfcrich", "answer": "x"}\n'  # 0xFC: Latin-1's u-umlaut


def hrb(*args: str, cwd: Path, stdin: bytes = b"") -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [*HRB, *args], input=stdin, capture_output=True, timeout=slow(180), cwd=cwd, env=os.environ
    )
    out, err = proc.stdout.decode(), proc.stderr.decode()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.parametrize(
    ("data", "where", "guess"),
    [
        (b'{"question": "a", "answer": "b"}\n' + LATIN1, "byte 48 (line 2) is 0xFC", "it may be Windows-1252 or Latin-1"),
        ('{"question": "a", "answer": "b"}\n'.encode("utf-16"), "byte 0 (line 1) is 0xFF", "it is UTF-16, little-endian"),
        (bytes(range(256)), "byte 128 (line 2) is 0x80", "it looks like a binary file"),
    ],
    ids=["latin-1", "utf-16", "binary"],
)  # fmt: skip
def test_hrb_eval_on_a_data_file_that_is_not_utf8_names_it(
    tmp_path: Path, data: bytes, where: str, guess: str
) -> None:
    (tmp_path / "d.jsonl").write_bytes(data)
    (tmp_path / "e.toml").write_text('data = "d.jsonl"\n')
    proc = hrb("eval", "e.toml", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "UnicodeDecodeError" not in proc.stderr, proc.stderr
    assert f"data {tmp_path / 'd.jsonl'} is not UTF-8 text: {where}" in proc.stderr, proc.stderr
    assert guess in proc.stderr, proc.stderr


def test_a_toml_spec_that_is_not_utf8_names_the_byte(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_bytes(b'runs = 1\nname = "Z\xfcrich"\n')
    proc = hrb("bench", "s.toml", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "s.toml is not valid TOML: not UTF-8 text: byte 18 (line 2) is 0xFC" in proc.stderr, proc.stderr
    assert "Windows-1252" in proc.stderr, proc.stderr


def test_score_stdin_that_is_not_utf8_names_the_line(tmp_path: Path, shared_home: Path) -> None:
    first = b'{"output": "a", "label": "a"}\n'
    proc = hrb("score", cwd=tmp_path, stdin=first + b'{"output": "Z\xfcrich", "label": "x"}\n')
    assert proc.returncode == 2, proc.stderr
    at = len(first) + len(b'{"output": "Z')
    assert f"stdin is not UTF-8 text: byte {at} (line 2) is 0xFC" in proc.stderr, proc.stderr
    assert '"correct":true' in proc.stdout.replace(" ", ""), proc.stdout  # the line before is scored


def test_hrb_bench_on_a_reference_that_is_not_utf8_names_it(tmp_path: Path, shared_home: Path) -> None:
    (tmp_path / "ref.csv").write_bytes(b"id,item,label\nq1,Z\xfcrich,x\n")
    (tmp_path / "s.toml").write_text(
        'runs = 1\n[reference]\npath = "ref.csv"\n[[arms]]\nkind = "outputs"\nname = "o"\noutputs = {q1 = "x"}\n'
    )
    proc = hrb("bench", "s.toml", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "reference.path: is not UTF-8 text: byte 18 (line 2) is 0xFC, in b'q1,Z\\xfcrich,x'" in proc.stderr
    assert str(tmp_path / "ref.csv") in proc.stderr, proc.stderr
