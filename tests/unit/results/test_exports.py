"""Rows to CSV and Parquet, reports to Markdown, read back from real files."""

from __future__ import annotations

import csv

import msgspec
import pyarrow.parquet as pq
import pytest

import hrbench as hb
from hrbench.records import ROW_COLUMNS, Row
from hrbench.stats import report
from tests.unit.runner.test_benchmark import ask_arm, capitals_client, seed_reference


@pytest.fixture(scope="module")
def bench() -> hb.Bench:
    def unpriced(item: str, ctx: hb.Context) -> str | None:
        return None if item == "Chad" else f'{item} | "quoted", comma\nline'  # NA outcome, CSV specials

    return hb.benchmark(
        [ask_arm(), hb.Arm("odd", unpriced)], seed_reference(), runs=5, client=capitals_client()
    )


def _as_csv(v: object) -> str:
    return "" if v is None else str(v)


def test_to_csv_reads_back_as_the_rows(bench: hb.Bench, tmp_path) -> None:
    path = tmp_path / "rows.csv"
    assert bench.to_csv(path) == len(bench.rows) == 40
    with open(path, newline="", encoding="utf-8") as f:
        got = list(csv.reader(f))
    assert tuple(got[0]) == (*ROW_COLUMNS, "scorer")
    assert got[1:] == [
        [_as_csv(v) for v in msgspec.structs.astuple(r)] + ["exact_normalised"] for r in bench.rows
    ]


def test_to_csv_reads_back_in_pandas_with_types(bench: hb.Bench, tmp_path) -> None:
    import pandas as pd

    path = tmp_path / "rows.csv"
    bench.to_csv(path)
    df = pd.read_csv(path, keep_default_na=False, na_values=[""])
    assert df["correct"].tolist() == [r.correct for r in bench.rows]
    assert df["run"].tolist() == [r.run for r in bench.rows]
    assert [None if pd.isna(v) else v for v in df["outcome"]] == [r.outcome for r in bench.rows]


def test_to_parquet_reads_back_typed(bench: hb.Bench, tmp_path) -> None:
    path = tmp_path / "rows.parquet"
    assert bench.to_parquet(path) == 40
    table = pq.read_table(path)
    assert table.column_names == [*ROW_COLUMNS, "scorer"]
    assert table.to_pylist() == [{**d, "scorer": "exact_normalised"} for d in bench.to_dicts()]
    types = {f.name: str(f.type) for f in table.schema}
    assert types["correct"] == "bool" and types["run"] == "int64" and types["usd"] == "double"
    assert types["failure_kind"] == "string" and types["scorer"] == "string"


def test_parquet_keeps_types_of_an_all_na_column(tmp_path) -> None:
    rows = [
        Row(
            cluster="c", item="q", arm="a", run=1, split="test", correct=None, outcome=None, failure_kind=None
        )
    ]
    b = hb.Bench(
        id="x", rows=rows, arms=[{"name": "a"}], reference=hb.Reference({"q": "q"}), runs=1, split=["test"],
        seed=0, scorer_name="exact", traces={}, governor={},
    )  # fmt: skip
    b.to_parquet(tmp_path / "na.parquet")
    schema = pq.read_schema(tmp_path / "na.parquet")
    assert str(schema.field("correct").type) == "bool" and str(schema.field("outcome").type) == "string"


def _arm_lines(md: str) -> list[list[str]]:
    return [[c.strip() for c in ln.strip("|").split(" | ")] for ln in md.splitlines() if ln.startswith("| `")]


@pytest.mark.parametrize("runs", [1, 5])
def test_markdown_report_carries_the_intervals_and_differences(runs: int, tmp_path) -> None:
    rows = [
        Row(cluster=f"c{i % 4}", item=f"q{i}", arm=arm, run=r, split="test", usd=0.001 * (arm == "b|x"),
            correct=(i + r) % (3 if arm == "a" else 4) != 0, outcome=None, failure_kind=None)
        for i in range(12) for arm in ("a", "b|x") for r in range(runs)
    ]  # fmt: skip
    rep = report(rows, descriptive=True)
    path = tmp_path / "report.md"
    path.write_text(rep.to_markdown(), encoding="utf-8")
    md = path.read_text(encoding="utf-8")
    assert ("**Descriptive only**" in md) is (runs < 5) and rep.descriptive is (runs < 5)
    got = _arm_lines(md)
    a, b = rep.arms
    assert got[0][:3] == ["`a`", f"{a.accuracy:.3f}", f"[{a.ci_low:.3f}, {a.ci_high:.3f}]"]
    assert got[1][0] == "`b\\|x`" and got[1][6] == f"{b.usd:.4f}"  # the pipe escaped, one cell
    assert all(len(r) == 9 for r in got[:2]) and got[1][7] == "-"  # no traces: no list price
    c = rep.comparisons[0]
    assert got[2][:3] == ["`a` - `b\\|x`", f"{c.diff:.3f}", f"[{c.ci_low:.3f}, {c.ci_high:.3f}]"]
    header = next(ln for ln in md.splitlines() if ln.startswith("| arm"))
    assert header.count("|") == 10 and "95% CI" in header


@pytest.mark.parametrize("scorer", [hb.answer_scorer(), hb.scorer(lambda item, output, label: True, "mine")])
def test_every_file_export_names_the_scorer_that_scored_each_row(scorer: object, tmp_path) -> None:
    """CSV, JSON lines, Parquet and Inspect logs all say which scorer scored each row (never "exact")."""
    import json

    b = hb.benchmark(ask_arm(), seed_reference(), runs=5, client=capitals_client(), scorer=scorer)
    name = b.scorer_name
    assert name in ("answer_contains", "mine")
    b.to_csv(tmp_path / "r.csv")
    with open(tmp_path / "r.csv", newline="", encoding="utf-8") as f:
        assert {r["scorer"] for r in csv.DictReader(f)} == {name}
    b.to_jsonl(tmp_path / "r.jsonl")
    assert {json.loads(x)["scorer"] for x in (tmp_path / "r.jsonl").read_text().splitlines()} == {name}
    b.to_parquet(tmp_path / "r.parquet")
    assert set(pq.read_table(tmp_path / "r.parquet").column("scorer").to_pylist()) == {name}
    (log,) = b.to_inspect(tmp_path / "logs")
    assert {k for s in json.loads(log.read_text())["samples"] for k in s["scores"]} == {name}
    assert b.to_pandas().attrs["scorer"] == name
