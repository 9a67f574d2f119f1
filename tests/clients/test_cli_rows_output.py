"""`hrb rows` exports each run's output text (the `output` column) in every format, from a real daemon.

The text is what the run's arm returned as its scorer received it, not the model's last reply:
an arm that extracts its answer from the reply exports the answer. A scorer of the spec's own
echoes the text it read as its outcome, so every row's `output` is checked against what the
scorer saw. `--output-chars N` cuts it, `--no-output-text` leaves it out, a run whose arm raised
has none, and a benchmark stored before outputs were kept reads as none.
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from hrbench.records import Row, Step
from hrbench.store import Store
from hrbench_client import protocol as p
from tests._slow import slow
from tests.server._daemon import Daemon

ARMS = '''
import json


def read_back(item, output, label):
    """A scorer that gives as its outcome the text it received (as the docs say a scorer reads it)."""
    if isinstance(output, str):
        text = output
    elif isinstance(output, dict):
        text = output.get("answer")
    elif hasattr(output, "text"):
        text = output.text
    else:
        text = json.dumps(output)
    return {"correct": text == label, "outcome": text, "failure_kind": None}


def extract(item, ctx):
    reply = ctx.call(f"Capital of {item}").text  # "The capital of France is Paris."
    return {"answer": reply.rsplit(" ", 1)[-1].rstrip("."), "notes": ["extracted"]}


def number(item, ctx):
    return 42


def boom(item, ctx):
    if item == "Chad":
        raise RuntimeError("no capital today")
    return "Ndjamena"
'''

SPEC = """
name = "outs"
runs = 5
scorer = "score_arms:read_back"
python_path = [{path!r}]
[reference]
items = {{q1 = "France", q2 = "Peru", q3 = "Chad"}}
labels = ["Paris", "Lima", "N'Djamena"]
[client]
kind = "mock"
replies = {{"Capital of France" = "The capital of France is Paris.", "Capital of Peru" = "The capital of Peru is Lima.", "Capital of Chad" = "The capital of Chad is N'Djamena."}}
[[arms]]
kind = "prompt"
name = "ask"
template = "Capital of {{item}}"
[[arms]]
kind = "import"
name = "extract"
path = "score_arms:extract"
[[arms]]
kind = "import"
name = "number"
path = "score_arms:number"
[[arms]]
kind = "import"
name = "boom"
path = "score_arms:boom"
"""

REPLY = {
    "q1": "The capital of France is Paris.",
    "q2": "The capital of Peru is Lima.",
    "q3": "The capital of Chad is N'Djamena.",
}
WANT = {
    "ask": REPLY,
    "extract": {"q1": "Paris", "q2": "Lima", "q3": "N'Djamena"},
    "number": dict.fromkeys(REPLY, "42"),
    "boom": {"q1": "Ndjamena", "q2": "Ndjamena", "q3": None},
}


def _hrb(home: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    cmd = [sys.executable, "-m", "hrbench_client.cli", "--home", str(home), "--no-autostart", *args]
    return subprocess.run(cmd, capture_output=True, timeout=slow(120))


def _jsonl(out: bytes) -> list[dict]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("rows-output")
    (tmp / "score_arms.py").write_text(ARMS)
    spec = tmp / "outs.toml"
    spec.write_text(textwrap.dedent(SPEC.format(path=str(tmp))))
    with Daemon(tmp / "home") as daemon:
        bench = _hrb(daemon.home, "bench", str(spec), "--no-rows")
        assert bench.returncode == 3, bench.stderr  # boom's runs on Chad ended in errors
        yield daemon, tmp


def test_every_row_exports_the_text_its_scorer_received(stored) -> None:
    daemon, _ = stored
    rows = _jsonl(_hrb(daemon.home, "rows", "outs").stdout)
    assert len(rows) == 60 and list(rows[0]) == [*p.Row.__struct_fields__, "scorer", "output"]
    for r in rows:
        assert r["output"] == WANT[r["arm"]][r["item"]], r
        if r["failure_kind"] != "error":
            assert r["output"] == r["outcome"], r  # what the scorer read, character for character
    assert {r["output"] for r in rows if r["arm"] == "extract"} == {"Paris", "Lima", "N'Djamena"}


@pytest.mark.parametrize("fmt", ["csv", "parquet", "inspect-scores"])
def test_every_format_carries_the_output(stored, fmt: str) -> None:
    daemon, tmp = stored
    want = _jsonl(_hrb(daemon.home, "rows", "outs").stdout)
    if fmt == "csv":
        got = list(
            csv.DictReader(io.StringIO(_hrb(daemon.home, "rows", "outs", "--format", "csv").stdout.decode()))
        )
        assert list(got[0])[-1] == "output"
        assert [g["output"] for g in got] == ["" if w["output"] is None else w["output"] for w in want]
    elif fmt == "parquet":
        out = tmp / "rows.parquet"
        assert _hrb(daemon.home, "rows", "outs", "--format", "parquet", "-o", str(out)).returncode == 0
        table = pq.read_table(out)
        assert str(table.schema.field("output").type) == "string"
        assert table.column("output").to_pylist() == [w["output"] for w in want]
    else:
        got = _jsonl(_hrb(daemon.home, "rows", "outs", "--format", "inspect-scores").stdout)
        assert [g["metadata"]["output"] for g in got] == [
            w["output"] for w in want if w["correct"] is not None
        ]


def test_output_chars_cuts_and_no_output_text_leaves_the_column_out(stored) -> None:
    daemon, tmp = stored
    cut = _jsonl(_hrb(daemon.home, "rows", "outs", "--arm", "ask", "--output-chars", "11").stdout)
    assert {r["output"] for r in cut} == {"The capital"}
    none = _hrb(daemon.home, "rows", "outs", "--no-output-text", "--format", "csv").stdout.decode()
    assert next(csv.reader(io.StringIO(none))) == [*p.Row.__struct_fields__, "scorer"]
    zero = _jsonl(_hrb(daemon.home, "rows", "outs", "--arm", "number", "--output-chars", "0").stdout)
    assert {r["output"] for r in zero} == {""}
    traced = _jsonl(_hrb(daemon.home, "rows", "outs", "--limit", "1", "--traces").stdout)[0]
    assert list(traced)[-2:] == ["output", "trace"]
    for bad in (
        ["--output-chars", "-1"],
        ["--output-chars", "x"],
        ["--output-chars", "3", "--no-output-text"],
    ):
        proc = _hrb(daemon.home, "rows", "outs", *bad)
        assert proc.returncode == 2 and b"--output-chars" in proc.stderr, proc.stderr


def test_a_benchmark_stored_without_outputs_reads_as_none(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    store = Store(home / "hrbench.sqlite3")  # rows and a trace as they were stored before outputs
    row = Row(cluster="c", item="q1", arm="a", run=1, split="test", correct=True, outcome="paris",
              failure_kind=None, ledger_id="old/a/q1/1")  # fmt: skip
    store.benchmark_put("old", {"params": {"name": "old"}}, "", "done")
    store.rows_put("old", [(0, row)], {"old/a/q1/1": [Step(ledger_id="old/a/q1/1", text="Paris")]})
    store.close()
    with Daemon(home):
        rows = _jsonl(_hrb(home, "rows", "old").stdout)
    assert [(r["outcome"], r["output"]) for r in rows] == [("paris", None)]
