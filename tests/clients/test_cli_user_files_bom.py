"""Files a user gives, saved with a UTF-8 byte-order mark, through `hrb` and a real daemon.

Rule (docs/guides/shell.md, "Stored references"): Excel's "CSV UTF-8" and Windows' Notepad
write the bytes ``EF BB BF`` before the text; every text file a user names (a CSV or JSON lines
reference, a TOML spec) is read as if they were not there. A header in another case
(``ID,Item,Label``) is still refused, naming the field that differs only by case.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests._slow import slow

HRB = [sys.executable, "-m", "hrbench_client.cli"]
BOM = b"\xef\xbb\xbf"

CSV = b"id,item,label\nq1,France,Paris\nq2,Peru,Lima\n"
JSONL = b'{"id": "q1", "item": "France", "label": "Paris"}\n{"id": "q2", "item": "Peru", "label": "Lima"}\n'


def hrb(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*HRB, *args], capture_output=True, text=True, timeout=slow(180), cwd=cwd, env=os.environ
    )


@pytest.mark.parametrize(("name", "body"), [("ref.csv", CSV), ("ref.jsonl", JSONL)])
def test_a_reference_with_a_byte_order_mark_is_stored_as_the_one_without(
    tmp_path: Path, shared_home: Path, name: str, body: bytes
) -> None:
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / name).write_bytes(body)
    (tmp_path / name).write_bytes(BOM + body)
    marked = hrb("ref", "put", f"bom-{name}", str(tmp_path / name))
    assert marked.returncode == 0, marked.stderr
    plain = hrb("ref", "put", f"plain-{name}", str(tmp_path / "plain" / name))
    assert plain.returncode == 0, plain.stderr
    assert json.loads(marked.stdout)["hash"] == json.loads(plain.stdout)["hash"]
    got = hrb("ref", "get", f"bom-{name}")
    assert got.returncode == 0, got.stderr
    assert json.loads(got.stdout)["items"] == {"q1": "France", "q2": "Peru"}, got.stdout


def test_a_toml_spec_with_a_byte_order_mark_runs(tmp_path: Path, shared_home: Path) -> None:
    (tmp_path / "ref.csv").write_bytes(BOM + CSV)
    (tmp_path / "s.toml").write_bytes(
        BOM + b'runs = 2\n[reference]\npath = "ref.csv"\n[[arms]]\nkind = "outputs"\nname = "o"\n'
        b'outputs = {q1 = "Paris", q2 = "Lim"}\n'
    )
    proc = hrb("bench", "s.toml", "--no-rows", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    (arm,) = json.loads(proc.stdout.splitlines()[-1])["summary"]
    assert (arm["runs"], arm["wrong"]) == (4, 2)


def test_a_header_in_another_case_is_refused_naming_the_field_it_differs_from_by_case(
    tmp_path: Path, shared_home: Path
) -> None:
    (tmp_path / "upper.csv").write_bytes(b"ID,Item,Label\nq1,France,Paris\n")
    proc = hrb("ref", "put", "upper", "upper.csv", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "unknown field; did you mean 'id'?" in proc.stderr, proc.stderr
    assert "(got 'ID')" in proc.stderr, proc.stderr
