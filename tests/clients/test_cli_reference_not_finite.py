"""``hrb ref put`` and ``hrb bench`` on a reference with ``"label": NaN``: exit 2 naming the file, the line and the field.

Rule (hrbench/_util/strict_json.py): JSON has no NaN or Infinity; the daemon refuses the
file rather than read the label as "no label".
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests._slow import slow

HRB = [sys.executable, "-m", "hrbench_client.cli"]
REF = '{"id": "q1", "item": "France", "label": "Paris"}\n{"id": "q2", "item": "Peru", "label": NaN}\n'


def hrb(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*HRB, *args], capture_output=True, text=True, timeout=slow(180), cwd=cwd, env=os.environ
    )


@pytest.mark.usefixtures("shared_home")
def test_a_nan_label_is_refused_by_ref_put_and_bench(tmp_path: Path) -> None:
    (tmp_path / "ref.jsonl").write_text(REF)
    (tmp_path / "s.toml").write_text(
        'runs = 1\n[reference]\npath = "ref.jsonl"\n[[arms]]\nkind = "outputs"\nname = "o"\n'
        'outputs = {q1 = "Paris", q2 = "Lima"}\n'
    )
    for proc in (
        hrb("ref", "put", "nan-ref", "ref.jsonl", cwd=tmp_path),
        hrb("bench", "s.toml", cwd=tmp_path),
    ):
        assert proc.returncode == 2, proc.stderr
        said = "ref.jsonl line 2 is not JSON (`label` is NaN, a number JSON does not have; write null"
        assert said in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr
