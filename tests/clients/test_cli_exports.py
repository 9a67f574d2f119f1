"""`hrb rows --format jsonl|csv|parquet` and `hrb report --format text|json|markdown`."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from hrbench_client import export
from hrbench_client import protocol as p
from tests._slow import slow
from tests.clients.test_cli import HRB, _bench_file, _bench_id, _stop_daemon, hrb, lines  # noqa: F401


@pytest.fixture
def bench_id(shared_bench_id: str) -> str:
    """The module's one benchmark (conftest): these tests only read it."""
    return shared_bench_id


def test_rows_csv_and_parquet_match_the_jsonl_rows(bench_id: str, tmp_path: Path) -> None:
    want = lines(hrb("rows", bench_id).stdout)
    assert len(want) == 30 and want == lines(hrb("rows", bench_id, "--format", "jsonl").stdout)
    got_csv = list(csv.DictReader(io.StringIO(hrb("rows", bench_id, "--format", "csv").stdout)))
    # the seed's columns, then these
    assert list(got_csv[0]) == [*p.Row.__struct_fields__, "scorer", "output"]
    assert {r["scorer"] for r in want} == {"exact_normalised"}
    assert got_csv == [{k: "" if v is None else str(v) for k, v in r.items()} for r in want]
    out = tmp_path / "rows.parquet"
    proc = hrb("rows", bench_id, "--format", "parquet", "-o", str(out))
    assert proc.stdout == "" and "wrote 30 row(s)" in proc.stderr
    table = pq.read_table(out)
    assert table.to_pylist() == want and str(table.schema.field("correct").type) == "bool"
    piped = subprocess.run(
        [*HRB, "rows", bench_id, "--format", "parquet"], capture_output=True, timeout=slow(120)
    )
    assert piped.returncode == 0 and pq.read_table(io.BytesIO(piped.stdout)).to_pylist() == want


def test_rows_csv_with_traces_has_a_json_trace_column(bench_id: str) -> None:
    jl = lines(hrb("rows", bench_id, "--traces", "--limit", "2").stdout)
    got = list(
        csv.DictReader(
            io.StringIO(hrb("rows", bench_id, "--traces", "--limit", "2", "--format", "csv").stdout)
        )
    )
    assert [json.loads(r["trace"]) for r in got] == [r["trace"] for r in jl] and jl[0]["trace"]


def test_report_formats(bench_id: str, tmp_path: Path) -> None:
    rep = lines(hrb("report", bench_id, "--format", "json").stdout)[0]
    assert rep == lines(hrb("report", bench_id).stdout)[0]
    assert hrb("report", bench_id, "--format", "text").stdout == hrb("report", bench_id, "--text").stdout
    md = hrb("report", bench_id, "--format", "markdown").stdout
    assert md == rep["markdown"]
    arm_rows = [ln for ln in md.splitlines() if ln.startswith("| `ask")]
    a = rep["arms"][0]
    assert arm_rows[0].startswith(
        f"| `ask` | {a['accuracy']:.3f} | [{a['ci_low']:.3f}, {a['ci_high']:.3f}] |"
    )
    assert any(ln.startswith("| `ask` - `ask2` |") for ln in arm_rows)
    assert "Descriptive only" not in md
    few = _bench_id(_bench_file(tmp_path, runs=2))
    assert "**Descriptive only**" in hrb("report", few, "--descriptive", "--format", "markdown").stdout


def test_parquet_without_pyarrow_names_the_extra(bench_id: str, tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['pyarrow'] = None; from hrbench_client.cli import main; "
        f"sys.argv = ['hrb', 'rows', {bench_id!r}, '--format', 'parquet', '-o', {str(tmp_path / 'x.pq')!r}]; sys.exit(main())"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=slow(120))
    assert proc.returncode == 2 and export.PYARROW_MISSING in proc.stderr, proc.stderr
    assert not (tmp_path / "x.pq").exists()


def test_unknown_format_is_a_usage_error() -> None:
    assert "invalid choice" in hrb("rows", "x", "--format", "xlsx", check_rc=2).stderr
    assert "invalid choice" in hrb("report", "x", "--format", "html5", check_rc=2).stderr


def test_hrb_shows_the_list_price_per_arm(tmp_path: Path) -> None:
    spec = _bench_file(tmp_path)
    first = lines(hrb("bench", str(spec), "--no-rows").stdout)[-1]
    assert [(s["arm"], s["usd_list"]) for s in first["summary"]] == [
        (s["arm"], s["usd"]) for s in first["summary"]
    ]
    rep = lines(hrb("report", first["id"]).stdout)[0]
    assert [a["usd_list"] for a in rep["arms"]] == [a["usd"] for a in rep["arms"]]
    assert "usd_list" in hrb("report", first["id"], "--text").stdout


def test_every_export_names_the_scorer_that_scored_each_row(tmp_path: Path) -> None:
    """`hrb rows` in every format, `hrb export` and `hrb report` name the scorer: never "exact" for another."""
    mine = tmp_path / "own_scorers.py"
    mine.write_text("def starts(item, output, label):\n    return output.startswith(label)\n")
    ids = {}
    for scorer, name in (("answer_contains", "answer_contains"), ("own_scorers:starts", "starts")):
        ids[name] = _bench_id(_bench_file(tmp_path, extra=f'scorer = "{scorer}"'))
    for name, bid in ids.items():
        jl = lines(hrb("rows", bid).stdout)
        assert len(jl) == 30 and {r["scorer"] for r in jl} == {name}
        got_csv = list(csv.DictReader(io.StringIO(hrb("rows", bid, "--format", "csv").stdout)))
        assert {r["scorer"] for r in got_csv} == {name}
        out = tmp_path / f"{name}.parquet"
        hrb("rows", bid, "--format", "parquet", "-o", str(out))
        assert set(pq.read_table(out).column("scorer").to_pylist()) == {name}
        scores = lines(hrb("rows", bid, "--format", "inspect-scores").stdout)
        assert scores and {x["scorer"] for x in scores} == {name}
        logs = tmp_path / f"logs-{name}"
        hrb("export", bid, "--format", "inspect", "-o", str(logs))
        for log in logs.glob("*.json"):
            samples = json.loads(log.read_text())["samples"]
            assert {k for s in samples for k in s["scores"]} == {name}
        rep = lines(hrb("report", bid).stdout)[0]
        assert rep["scorer"] == name
        assert f"; scorer `{name}`" in hrb("report", bid, "--format", "markdown").stdout.splitlines()[0]
        assert f"; scorer {name}" in hrb("report", bid, "--text").stdout.splitlines()[0]
