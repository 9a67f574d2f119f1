"""CSV references through `hrb` and a real daemon: `hrb ref put NAME ref.csv` and `reference.path = "ref.csv"`.

Rule (docs/guides/shell.md, "Stored references"): a ``.csv`` reference has a header row naming
columns of ``id,item,label,cluster,split`` (``item`` required) and is read as the JSON lines
records with those fields are; an error names the file (never a spec field `hrb ref put` was
not given), the columns found, or the line.
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

CSV = 'id,item,label,cluster,split\nq1,France,Paris,eu,test\nq2,Peru,Lima,sa,test\nq3,"Chad, Africa",N\'Djamena,af,\n'
JSONL = "".join(
    json.dumps(r) + "\n"
    for r in (
        {"id": "q1", "item": "France", "label": "Paris", "cluster": "eu", "split": "test"},
        {"id": "q2", "item": "Peru", "label": "Lima", "cluster": "sa", "split": "test"},
        {"id": "q3", "item": "Chad, Africa", "label": "N'Djamena", "cluster": "af"},
    )
)


def hrb(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*HRB, *args], capture_output=True, text=True, timeout=slow(180), cwd=cwd, env=os.environ
    )


def test_a_csv_reference_is_stored_as_the_same_records_in_json_lines_are(
    tmp_path: Path, shared_home: Path
) -> None:
    (tmp_path / "ref.csv").write_text(CSV)
    (tmp_path / "ref.jsonl").write_text(JSONL)
    by_csv = hrb("ref", "put", "csvref", str(tmp_path / "ref.csv"))
    assert by_csv.returncode == 0, by_csv.stderr
    by_json = hrb("ref", "put", "jsonref", str(tmp_path / "ref.jsonl"))
    assert json.loads(by_csv.stdout)["hash"] == json.loads(by_json.stdout)["hash"]


def test_a_spec_reads_a_csv_reference_path(tmp_path: Path, shared_home: Path) -> None:
    (tmp_path / "ref.csv").write_text(CSV)
    (tmp_path / "s.toml").write_text(
        'runs = 5\n[reference]\npath = "ref.csv"\n[[arms]]\nkind = "outputs"\nname = "o"\n'
        'outputs = {q1 = "Paris", q2 = "Lima", q3 = "Ndjamena"}\n'
    )
    proc = hrb("bench", "s.toml", "--no-rows", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    (arm,) = json.loads(proc.stdout.splitlines()[-1])["summary"]
    assert (arm["runs"], arm["wrong"]) == (15, 5)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("id,question,label\nq1,France,Paris\n", "bad.csv header: unknown field"),
        ("id,label\nq1,Paris\n", "bad.csv has no `item` column (columns found: id, label"),
        ("id,item,label\nq1,France\n", "bad.csv line 2 has 2 cell(s), the header 3"),
        ("", "bad.csv has no header row"),
    ],
)
def test_a_bad_csv_reference_names_the_file_and_no_spec_field(
    tmp_path: Path, shared_home: Path, text: str, said: str
) -> None:
    (tmp_path / "bad.csv").write_text(text)
    proc = hrb("ref", "put", "bad", "bad.csv", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert said in proc.stderr and "reference.path" not in proc.stderr, proc.stderr


def test_a_reference_file_that_is_not_json_says_what_a_reference_file_may_be(
    tmp_path: Path, shared_home: Path
) -> None:
    (tmp_path / "ref.txt").write_text("id,item,label\nq1,France,Paris\n")
    proc = hrb("ref", "put", "txt", "ref.txt", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "ref.txt line 1 is not JSON" in proc.stderr and ".csv file with a header row" in proc.stderr
    assert "reference.path" not in proc.stderr, proc.stderr
