"""``NaN`` and ``Infinity`` in a reference file are refused naming the file, the line and the field.

Rule (hrbench/_util/strict_json.py, RFC 8259 section 6): JSON has no NaN or Infinity; Python's
json reads them, and a label read as a float NaN would score its item NA ("no label") in silence.
A CSV cell is text (a label ``nan`` is the text ``nan``, as ``4`` is the text ``4``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hrbench.errors import ConfigError
from hrbench.specs import build_arm, build_reference

GOOD = '{"id": "q1", "item": "France", "label": "Paris"}\n'


@pytest.mark.parametrize(
    ("name", "text", "said"),
    [
        ("r.jsonl", GOOD + '{"id": "q2", "item": "Peru", "label": NaN}\n', "r.jsonl line 2 is not JSON (`label` is NaN, a number JSON does not have; write null for none at column 39)"),
        ("r.jsonl", GOOD + '{"id": "q2", "item": "Peru", "label": Infinity}\n', "r.jsonl line 2 is not JSON (`label` is Infinity, a number JSON does not have"),
        ("r.jsonl", '{"id": "q2", "item": "Peru", "label": ["Lima", -Infinity]}\n', "line 1 is not JSON (`label[1]` is -Infinity, a number JSON does not have"),
        ("r.json", '[{"id": "q1", "item": "France", "label": "Paris"},\n {"id": "q2", "item": "Peru", "label": NaN}]', "not JSON: `[1].label` is NaN, a number JSON does not have; write null for none (line 2, column 40)"),
        ("r.json", '{"items": {"q1": "France"},\n "labels": {"q1": NaN}}', "not JSON: `labels.q1` is NaN, a number JSON does not have; write null for none (line 2, column 19)"),
    ],
    ids=["jsonl-nan", "jsonl-infinity", "jsonl-list", "json-list", "json-object"],
)  # fmt: skip
def test_a_constant_json_does_not_have_is_refused_naming_the_line_and_the_field(
    tmp_path: Path, name: str, text: str, said: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        build_reference({"path": str(path)})
    msg = str(info.value)
    assert msg.startswith("reference.path: ") and said in msg, msg
    assert msg.endswith(f"(got {str(path)!r})"), msg


def test_null_is_no_label_and_nan_inside_a_string_is_text(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(
        '{"id": "q1", "item": "NaN Infinity", "label": null}\n{"id": "q2", "item": "x", "label": "NaN"}\n'
    )
    ref = build_reference({"path": str(path)})
    assert ref.labels == {"q1": None, "q2": "NaN"} and ref.items["q1"] == "NaN Infinity"


def test_a_csv_cell_nan_is_the_text_nan(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text("id,item,label\nq1,0/0 in IEEE 754,NaN\nq2,none,\n")
    ref = build_reference({"path": str(path)})
    assert ref.labels == {"q1": "NaN", "q2": None}  # text, as every cell; an empty cell is no label


def test_an_outputs_file_with_nan_is_refused_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "outs.jsonl"
    path.write_text('{"item": "q1", "output": NaN}\n')
    with pytest.raises(
        ConfigError, match=r"outs.jsonl line 1 is not JSON \(`output` is NaN, a number JSON does not have"
    ):
        build_arm({"kind": "outputs", "name": "o", "path": str(path)})
