"""Outputs arms refused before the first run (newcomer finding: ids matching no item scored 0,
exit 0, no warning; a duplicate line in a predictions file was kept silently)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import hrbench as hb
from hrbench.errors import ConfigError
from hrbench.reading import check_outputs, outputs_arm
from hrbench.specs import build_arm, build_reference

ITEMS = {"q1": "France", "q2": "Peru", "q3": "Chad"}
REF = {"items": ITEMS, "labels": ["Paris", "Lima", "N'Djamena"]}


def _run(arm: hb.Arm, reference: dict[str, Any] = REF) -> hb.Benchmark:
    return hb.benchmark(arm, build_reference(reference), runs=3)


@pytest.mark.parametrize(
    ("outputs", "shown"),
    [
        ({"Q1": "Paris"}, "'Q1' (closest item: 'q1')"),  # the newcomer's case
        ({"Q1": "Paris", "Q2": "Lima", "Q3": "x", "Q4": "y"}, "and 1 more"),
        ({"q1 ": "Paris", "q2": "Lima"}, "'q1 ' (closest item: 'q1')"),  # spaces around an id
        ({"q1": "Paris", "q9": "Lima"}, "'q9'"),  # one id of the spec's own table is no item
        ({"a": "Paris"}, "'a'"),
    ],
)
def test_an_inline_outputs_arm_with_ids_of_no_item_is_refused_before_the_first_run(
    outputs: dict[str, str], shown: str
) -> None:
    arm = build_arm({"kind": "outputs", "name": "base", "outputs": outputs})
    with pytest.raises(ConfigError) as err:
        _run(arm)
    assert err.value.field == "arms.base.outputs" and shown in str(err.value)


@pytest.mark.parametrize(
    ("ids", "every_id", "refused"),
    [
        (["q1", "q2", "q3"], False, None),
        (["q1"], False, None),  # items without a prediction: parse failures, as before
        (["q1", "zz", "other-set-9"], False, None),  # a run file wider than the reference sample
        (["Q1", "Q2"], False, "holds no prediction for any"),
        (["q1", "Q2"], False, "spells item ids otherwise"),  # q2 would be a silent failure
        (["q2", "Q2"], False, None),  # q2 has its own prediction: Q2 is another row of the file
        (["q1", "zz"], True, "names ids that match no item"),
        (["x"], False, "holds no prediction for any"),
        (["q4"], False, "holds no prediction for any"),  # another split's items only
    ],
)
def test_check_outputs_rule_family(ids: list[str], every_id: bool, refused: str | None) -> None:
    run = {"q1": "France", "q2": "Peru", "q3": "Chad"}
    known = [*run, "q4"]
    if refused is None:
        check_outputs("a", ids, run, known, every_id=every_id)
        return
    with pytest.raises(ConfigError, match=refused) as err:
        check_outputs("a", ids, run, known, every_id=every_id)
    assert err.value.field == "arms.a.outputs"


def test_a_library_mapping_of_another_data_set_is_refused(tmp_path: Path) -> None:
    arm = outputs_arm("base", {"x1": "Paris", "x2": "Lima"})
    with pytest.raises(ConfigError, match=r"arms\.base\.outputs: holds no prediction for any of the 3"):
        _run(arm)
    preds = tmp_path / "p.jsonl"
    preds.write_text('{"id": "Q1", "prediction": "Paris"}\n{"id": "q2", "prediction": "Lima"}\n')
    with pytest.raises(ConfigError, match="'Q1' \\(closest item: 'q1'\\)"):
        _run(build_arm({"kind": "outputs", "name": "f", "path": str(preds), "id_field": "id"}))


def test_a_wider_predictions_file_scores_the_items_it_shares() -> None:
    arm = outputs_arm("base", {"q1": "Paris", "q2": "Lima", "elsewhere": "x"})
    with pytest.warns(Warning):  # few runs
        bench = hb.benchmark(arm, build_reference(REF), runs=1)
    assert [r.failure_kind for r in bench.rows] == [None, None, "parse_failure"]


@pytest.mark.parametrize(
    ("lines", "spec", "said"),
    [
        (
            [
                '{"id": "q1", "prediction": "Paris"}',
                "",
                '{"id": "q2", "prediction": "Lima"}',
                '{"id": "q1", "prediction": "Lyon"}',
            ],
            {"id_field": "id"},
            "'q1'",
        ),
        (
            [
                '{"item": "q1", "output": "Paris"}',
                '{"item": "q2", "output": "Lima"}',
                "",
                '{"item": "q1", "output": "Lyon"}',
            ],
            {},
            "lines 1 and 4 have the same item 'q1' with different outputs",
        ),
        (
            [
                '{"item": "q1", "run": 1, "output": "Paris"}',
                '{"item": "q1", "run": 2, "output": "P"}',
                '{"item": "q1", "run": 1, "output": "Lyon"}',
            ],
            {},
            "lines 1 and 3 have the same item 'q1' run 1 with different outputs",
        ),
    ],
)
def test_a_duplicate_line_in_an_outputs_file_is_refused_naming_the_id_and_both_lines(
    tmp_path: Path, lines: list[str], spec: dict[str, Any], said: str
) -> None:
    path = tmp_path / "preds.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ConfigError) as err:
        build_arm({"kind": "outputs", "name": "f", "path": str(path), **spec})
    assert said in str(err.value)
    if spec:
        assert "lines 1 and 4" in str(err.value)


@pytest.mark.parametrize("spec", [{"id_field": "id"}, {}])
def test_a_key_written_twice_in_a_json_object_of_outputs_is_refused(
    tmp_path: Path, spec: dict[str, Any]
) -> None:
    path = tmp_path / "preds.json"
    path.write_text('{"q1": "Paris",\n "q2": "Lima",\n "q1": "Lyon"}')
    assert json.loads(path.read_text()) == {"q1": "Lyon", "q2": "Lima"}  # what json keeps silently
    with pytest.raises(ConfigError, match="'q1'"):
        build_arm({"kind": "outputs", "name": "f", "path": str(path), **spec})
