"""Reference input that must not pass silently: record fields, ids, labels."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

import hrbench as hb
from hrbench import specs
from hrbench.errors import ConfigError, ReferenceValueError


def _write(tmp_path: Path, records: list[Any], name: str = "r.jsonl") -> str:
    f = tmp_path / name
    f.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return str(f)


@pytest.mark.parametrize(
    ("typo", "close"),
    [("labl", "label"), ("lable", "label"), ("itme", "item"), ("splt", "split"), ("clusters", "cluster")],
)
def test_an_unknown_record_field_is_refused_with_its_line_and_the_close_name(
    tmp_path: Path, typo: str, close: str
) -> None:
    rec = {"id": "b", "item": "Peru", "label": "Lima"}
    bad = {"id": "a", "item": "France", typo: "Paris"}
    if typo == "itme":
        bad = {"id": "a", "item": "France", typo: "x"}
    path = _write(tmp_path, [rec, bad])
    with pytest.raises(ConfigError) as info:
        specs.build_reference({"path": path})
    msg = str(info.value)
    assert "line 2" in msg and repr(typo) in msg and f"did you mean {close!r}" in msg


def test_an_unknown_field_far_from_any_name_lists_the_known_ones(tmp_path: Path) -> None:
    path = _write(tmp_path, [{"id": "a", "item": "x", "label": "y", "zzzzzz": 1}])
    with pytest.raises(
        ConfigError, match=r"line 1.*expected one of id, item, label, cluster, split.*'zzzzzz'"
    ):
        specs.build_reference({"path": path})


@pytest.mark.parametrize(("first", "second"), [(1, 2), (1, 3), (2, 4)])
def test_two_records_with_one_id_are_refused_naming_the_id_and_both_lines(
    tmp_path: Path, first: int, second: int
) -> None:
    records = [{"id": f"u{n}", "item": f"x{n}", "label": "y"} for n in range(1, 5)]
    records[second - 1]["id"] = records[first - 1]["id"]
    path = _write(tmp_path, records)
    with pytest.raises(ConfigError) as info:
        specs.build_reference({"path": path})
    assert f"lines {first} and {second} have the same id 'u{first}'" in str(info.value)


def test_duplicate_ids_in_a_json_list_name_the_records(tmp_path: Path) -> None:
    f = tmp_path / "r.json"
    f.write_text(json.dumps([{"id": 7, "item": "x"}, {"id": "7", "item": "y"}]))
    with pytest.raises(ConfigError, match="records 1 and 2 have the same id '7'"):
        specs.build_reference({"path": str(f)})


def test_line_numbers_count_blank_lines(tmp_path: Path) -> None:
    f = tmp_path / "r.jsonl"
    f.write_text('{"id": "a", "item": "x"}\n\n{"id": "a", "item": "y"}\n')
    with pytest.raises(ConfigError, match="lines 1 and 3"):
        specs.build_reference({"path": str(f)})


BAD_LABELS = [
    {"k": 1},
    {"answer": "x"},
    True,
    False,
    {"a": 2},
    [{"a": 2}],
    ["x", None],
    [True],
    [],
    {"answers": {"k": 1}},
]
GOOD_LABELS = [
    "Paris",
    3,
    2.5,
    ["Paris", 100000.0],
    {"answers": ["-12.6"], "scale": "million"},
    {"answers": 4},
    None,
]


@pytest.mark.parametrize("label", BAD_LABELS, ids=repr)
def test_a_label_no_scorer_can_read_is_refused_naming_the_item_and_value(tmp_path: Path, label: Any) -> None:
    path = _write(
        tmp_path, [{"id": "ok", "item": "x", "label": "y"}, {"id": "q7", "item": "x", "label": label}]
    )
    with pytest.raises(ReferenceValueError) as info:
        specs.build_reference({"path": path})
    assert "labels['q7']" in str(info.value) and repr(label)[:40] in str(info.value)
    # the inline form (a spec's `labels = [...]`) and the library's own constructor refuse it too
    with pytest.raises(ReferenceValueError, match=r"labels\['2'\]"):
        specs.build_reference({"items": ["France", "Peru"], "labels": ["Paris", label]})
    ref = hb.Reference({"q1": "x"}, labels=["y"])
    with pytest.raises(ReferenceValueError, match=r"labels\['q1'\]"):
        ref.set_label("q1", label)
    with pytest.raises(ReferenceValueError, match=r"labels\['q2'\]"):
        ref.add("q2", "x", label=label)


@pytest.mark.parametrize("label", GOOD_LABELS, ids=repr)
def test_the_label_kinds_scorers_read_are_kept(tmp_path: Path, label: Any) -> None:
    path = _write(tmp_path, [{"id": "q7", "item": "x", "label": label}])
    assert specs.build_reference({"path": path}).labels == {"q7": label}


def test_a_misspelt_label_no_longer_stores_the_same_hash_as_no_label(tmp_path: Path) -> None:
    unlabelled = specs.build_reference({"path": _write(tmp_path, [{"id": "a", "item": "x"}], "u.jsonl")})
    labelled = specs.build_reference({"path": _write(tmp_path, [{"id": "a", "item": "x", "label": "y"}])})
    assert unlabelled.hash != labelled.hash
    with pytest.raises(ConfigError, match="labl"):
        specs.build_reference({"path": _write(tmp_path, [{"id": "a", "item": "x", "labl": "y"}], "t.jsonl")})


def _arm() -> hb.Arm:
    return hb.Arm("a", lambda item, ctx: "y")


@pytest.mark.parametrize("n_items", [1, 3])
def test_a_benchmark_where_no_item_has_a_label_warns(n_items: int) -> None:
    ref = hb.Reference([f"q{i}" for i in range(n_items)])
    with pytest.warns(hb.NoLabelsWarning, match="no item .* has a label"):
        bench = hb.benchmark(_arm(), ref, runs=5)
    assert all(r.correct is None for r in bench.rows)


@pytest.mark.parametrize("labels", [["y", None, None], [None, None, 3]])
def test_one_labelled_item_is_enough_not_to_warn(labels: list[Any]) -> None:
    ref = hb.Reference(["a", "b", "c"], labels=labels)
    with warnings.catch_warnings():
        warnings.simplefilter("error", hb.NoLabelsWarning)
        hb.benchmark(_arm(), ref, runs=5)


def test_labels_only_on_a_split_not_run_still_warn() -> None:
    ref = hb.Reference(["a", "b"], labels=["y", None], split=["dev", "test"])
    with pytest.warns(hb.NoLabelsWarning, match="split"):
        hb.benchmark(_arm(), ref, runs=5, split="test")


def test_a_labels_table_that_leaves_items_out_is_counted_and_named() -> None:
    """A `labels` table that leaves an item out makes it unlabelled, never in silence."""
    arm = hb.Arm("fixed", lambda item, ctx: "Paris")
    items = {f"q{n}": "France" for n in range(1, 9)}
    ref = hb.Reference(items, labels={"q1": "Paris", "q2": "Paris"})
    with pytest.warns(hb.UnlabelledItemsWarning) as caught:
        bench = hb.benchmark(arm, ref, runs=5)
    (w,) = caught
    assert str(w.message).startswith(
        "6 of 8 items on split(s) test are given no label "
        "('q3', 'q4', 'q5', 'q6', 'q7' and 1 more: left out of a `labels` table"
    )
    assert "accuracy averages the 2 labelled items" in str(w.message)
    assert bench.summary()[0]["accuracy"] == 1.0
    # a null label says "no label" on purpose: not counted
    explicit = hb.Reference({"q1": "France", "q2": "Peru"}, labels={"q1": "Paris", "q2": None})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hb.benchmark(arm, explicit, runs=5)
    assert hb.Reference(items, labels={"q1": "Paris"}).labels_omitted == frozenset(items) - {"q1"}
    assert hb.Reference(items, labels=["Paris"] * 8).labels_omitted == frozenset()


def test_a_reference_file_row_with_an_empty_or_missing_label_is_counted_and_named(tmp_path: Path) -> None:
    # an empty CSV cell (or a JSON line without `label`) is no label, as a labels table's
    # omission is: said, with the ids; an explicit null in JSON lines is not
    from hrbench.specs import build_reference

    arm = hb.Arm("fixed", lambda item, ctx: "Paris")
    csv_file = tmp_path / "r.csv"
    csv_file.write_text("id,item,label,cluster\nfr,France,Paris,eu\nde,Germany,,eu\npe,Peru,Lima,am\n")
    lines = tmp_path / "r.jsonl"
    lines.write_text(
        '{"id": "fr", "item": "France", "label": "Paris"}\n{"id": "de", "item": "Germany"}\n'
        '{"id": "pe", "item": "Peru", "label": null}\n'
    )
    for path, left in ((csv_file, ["de"]), (lines, ["de"])):
        ref = build_reference({"path": str(path)})
        assert sorted(ref.labels_omitted) == left and ref.labels["de"] is None
        with pytest.warns(
            hb.UnlabelledItemsWarning,
            match=r"1 of 3 items .* given no label \('de': .*empty or missing `label`",
        ):
            hb.benchmark(arm, ref, runs=5)
