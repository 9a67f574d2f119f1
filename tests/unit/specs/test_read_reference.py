"""``hb.read_reference(path, format=None)``: a reference file read in Python as ``hrb ref put`` reads it."""

from __future__ import annotations

from pathlib import Path

import pytest

import hrbench as hb
from hrbench.specs import build_reference

INTEROP = Path(__file__).resolve().parents[1] / "interop" / "data"  # tests/unit/interop/data


def test_records_csv_and_the_printed_object_are_read_by_default(tmp_path: Path) -> None:
    rows = tmp_path / "r.jsonl"
    rows.write_text(
        '{"id": "q1", "item": "France", "label": "Paris", "cluster": "eu"}\n{"id": "q2", "item": "Peru"}\n'
    )
    ref = hb.read_reference(rows)
    assert (ref.ids, ref.labels, ref.clusters["q1"]) == (["q1", "q2"], {"q1": "Paris", "q2": None}, "eu")
    assert hb.read_reference(str(rows), "rows").hash == ref.hash
    csv = tmp_path / "r.csv"
    csv.write_text("id,item,label\nq1,France,Paris\n")
    assert hb.read_reference(csv).labels == {"q1": "Paris"}


@pytest.mark.parametrize(
    ("where", "fmt"),
    [("squad2-dev-500/squad2_dev_500.jsonl", "squad"), ("tatqa-dev-llm/tatqa_dataset_dev.json", "tatqa")],
)
def test_real_data_in_its_format_is_what_a_spec_reads(data: Path, where: str, fmt: str) -> None:
    ref = hb.read_reference(data / where, fmt)
    assert ref.hash == build_reference({"path": str(data / where), "format": fmt}).hash and len(ref.ids) > 100


@pytest.mark.parametrize(
    ("name", "fmt", "id_var"),
    [
        ("inspect_capitals.json", "inspect", None),
        ("lmeval_real_samples_arith.jsonl", "lm-eval", None),
        ("promptfoo_capitals.json", "promptfoo", "country"),
    ],
)
def test_other_tools_results_are_read_in_their_format(name: str, fmt: str, id_var: str | None) -> None:
    ref = hb.read_reference(INTEROP / name, fmt, id_var=id_var)
    spec = {"path": str(INTEROP / name), "format": fmt, **({"id_var": id_var} if id_var else {})}
    assert ref.ids and ref.hash == build_reference(spec).hash


def test_a_file_of_another_format_read_as_records_names_the_format(data: Path) -> None:
    with pytest.raises(hb.ConfigError, match=r"--format squad"):
        hb.read_reference(data / "squad2-dev-500" / "squad2_dev_500.jsonl")
    with pytest.raises(hb.ConfigError, match=r"reference.format"):
        hb.read_reference(data / "squad2-dev-500" / "squad2_dev_500.jsonl", "sqaud")
