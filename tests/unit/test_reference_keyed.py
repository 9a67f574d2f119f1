"""The rule that no list is paired by position with a mapping of items.

``check_keyed`` is the rule the daemon applies to what it is sent and to a JSON reference file
holding one ``{"items", "labels", ...}`` object; the library keeps pairing a Python caller's lists
by position (a dict keeps its order).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hrbench import Reference
from hrbench.errors import ConfigError, ReferenceValueError
from hrbench.reference import check_keyed
from hrbench.specs import build_reference

ITEMS = {"q2": "Peru", "q1": "France"}


@pytest.mark.parametrize("field", ["labels", "cluster", "split"])
@pytest.mark.parametrize("kind", [list, tuple])
def test_a_list_beside_a_mapping_is_refused_with_the_keyed_form(field: str, kind: type) -> None:
    value = kind(["test", "dev"] if field == "split" else ["x", "y"])
    with pytest.raises(ReferenceValueError) as got:
        check_keyed(ITEMS, {field: value})
    word = {"labels": "label"}.get(field, field)
    assert str(got.value).startswith(
        f"{field}: a list is not paired by position with `items` given as a mapping"
    )
    assert f'key it by item id, "{field}": {{"q2": <{word} of q2>, "q1": <{word} of q1>}}' in str(got.value)
    assert got.value.field == field


def test_keyed_values_one_value_for_all_and_lists_beside_a_list_are_taken() -> None:
    check_keyed(ITEMS, {"labels": {"q1": "Paris"}, "cluster": "a", "split": "test"})
    check_keyed(ITEMS, {"labels": None, "cluster": None, "split": "dev"})
    check_keyed(
        ["France", "Peru"], {"labels": ["Paris", "Lima"], "cluster": ["a", "b"], "split": ["test", "dev"]}
    )


def test_the_library_still_pairs_a_python_callers_lists_by_position() -> None:
    ref = Reference({"q1": "France", "q2": "Peru"}, labels=["Paris", "Lima"], cluster=["a", "b"])
    assert ref.labels == {"q1": "Paris", "q2": "Lima"} and ref.clusters == {"q1": "a", "q2": "b"}
    spec = build_reference({"items": {"q2": "Peru", "q1": "France"}, "labels": ["Lima", "Paris"]})
    assert spec.labels == {"q2": "Lima", "q1": "Paris"}  # in-process: the dict's own order


def _file(tmp_path: Path, obj: object, name: str = "ref.json", indent: int | None = 2) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(obj, indent=indent))
    return str(path)


def test_a_json_reference_object_is_read_keyed(tmp_path: Path) -> None:
    printed = {  # as `hrb ref get` prints a reference
        "items": {"q2": "Peru", "q1": "France"},
        "labels": {"q1": "Paris", "q2": "Lima"},
        "cluster": {"q1": "a", "q2": "b"},
        "split": {"q1": "test", "q2": "dev"},
        "path": None,
        "format": "rows",
        "limit": None,
        "ids": None,
        "ids_from": None,
        "id_field": "id",
    }
    ref = build_reference({"path": _file(tmp_path, printed)})
    assert ref.ids == ["q2", "q1"] and ref.labels == {"q2": "Lima", "q1": "Paris"}
    assert ref.clusters == {"q2": "b", "q1": "a"} and ref.splits == {"q2": "dev", "q1": "test"}
    one_line = build_reference(
        {"path": _file(tmp_path, {"items": ["a", "b"], "labels": ["x", "y"]}, indent=None)}
    )
    assert one_line.labels == {"1": "x", "2": "y"}  # a list beside a list of items pairs by position
    assert build_reference({"path": _file(tmp_path, printed), "limit": 1}).ids == ["q2"]


def test_a_json_reference_object_follows_the_wires_rule(tmp_path: Path) -> None:
    positional = _file(tmp_path, {"items": ITEMS, "labels": ["Lima", "Paris"], "cluster": ["b", "a"]})
    with pytest.raises(ReferenceValueError) as got:
        build_reference({"path": positional})
    assert str(got.value).startswith(
        "reference.path ref.json: labels: a list is not paired by position with `items` given as a mapping "
        "(id -> payload) (nor may `cluster`)"
    )
    with pytest.raises(ConfigError, match=r"reference.path ref.json: unknown field; did you mean 'labels'\?"):
        build_reference({"path": _file(tmp_path, {"items": ITEMS, "label": {"q1": "Paris"}})})
    with pytest.raises(ConfigError, match="give `limit` in the spec, beside `path`"):
        build_reference({"path": _file(tmp_path, {"items": ITEMS, "limit": 1})})
    twice = tmp_path / "twice.json"
    twice.write_text('{"items": {"q1": "France"}, "labels": {"q1": "Paris", "q1": "Lyon"}}')
    with pytest.raises(ConfigError, match="the same key 'q1'"):
        build_reference({"path": str(twice)})


def test_json_lines_records_still_read_as_records(tmp_path: Path) -> None:
    rows = tmp_path / "ref.jsonl"
    rows.write_text(
        '{"id": "z", "item": "France", "label": "Paris"}\n{"id": "a", "item": "Peru", "label": "Lima"}\n'
    )
    assert build_reference({"path": str(rows)}).labels == {"z": "Paris", "a": "Lima"}
    one = tmp_path / "one.jsonl"
    one.write_text('{"id": "z", "item": "France", "label": "Paris"}\n')
    assert build_reference({"path": str(one)}).labels == {"z": "Paris"}
