"""The reference: items, labels, clusters, splits, hash, lock."""

from __future__ import annotations

import subprocess
import sys

import pytest

import hrbench as hb


def test_sequence_items_get_ids_1_to_n() -> None:
    ref = hb.Reference(["a", "b", "c"], labels=["A", "B", None])
    assert ref.ids == ["1", "2", "3"]
    assert ref.labels == {"1": "A", "2": "B", "3": None}
    assert ref.clusters == {"1": "1", "2": "2", "3": "3"}
    assert ref.splits == dict.fromkeys(["1", "2", "3"], "test")


def test_labels_mapping_and_lists_of_answers() -> None:
    ref = hb.Reference({"x": 1, "y": 2}, labels={"x": ["one", "1"]}, cluster="c", split=["dev", "test"])
    assert ref.labels == {"x": ["one", "1"], "y": None}
    assert ref.clusters == {"x": "c", "y": "c"}
    assert ref.splits == {"x": "dev", "y": "test"}


@pytest.mark.parametrize(
    ("kwargs", "field", "value"),
    [
        ({"items": {"a": 1}, "labels": ["x", "y"]}, "labels", "length 2"),
        ({"items": {"a": 1}, "cluster": ["x", "y"]}, "cluster", "length 2"),
        ({"items": {"a": 1}, "split": "holdout"}, "split", "'holdout'"),
        ({"items": {"a": 1}, "labels": {"b": "x"}}, "labels", "'b'"),
        ({"items": {}}, "items", "{}"),
        ({"items": "abc"}, "items", "'abc'"),
    ],
)
def test_bad_references_name_the_field_and_value(kwargs, field, value) -> None:
    with pytest.raises(hb.ReferenceValueError) as err:
        hb.Reference(**kwargs)
    assert str(err.value).startswith(f"{field}:")
    assert value in str(err.value)
    assert isinstance(err.value, ValueError)


def test_duplicate_ids_refused() -> None:
    class Dup(dict):
        def __iter__(self):
            return iter(["a", "a"])

        def values(self):
            return [1, 2]

    with pytest.raises(hb.ReferenceValueError, match="duplicate item id"):
        hb.Reference(Dup(a=1))
    ref = hb.Reference({"a": 1})
    with pytest.raises(hb.ReferenceValueError, match="duplicate item id"):
        ref.add("a", 2)


def test_hash_is_content_and_stable_across_processes() -> None:
    ref = hb.Reference({"q1": "France", "q2": "Peru"}, labels=["Paris", "Lima"], cluster=["a", "b"])
    code = (
        "import hrbench as hb;"
        "print(hb.Reference({'q1': 'France', 'q2': 'Peru'}, labels=['Paris', 'Lima'], cluster=['a', 'b']).hash)"
    )
    other = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert other == ref.hash
    changed = hb.Reference({"q1": "France", "q2": "Peru"}, labels=["Paris", "Lima!"], cluster=["a", "b"])
    assert changed.hash != ref.hash


def test_mutation_changes_hash_and_lock_refuses_it() -> None:
    ref = hb.Reference({"a": 1}, labels=["x"])
    h = ref.hash
    ref.set_label("a", "y")
    assert ref.hash != h
    ref.add("b", 2, label="z", split="dev")
    assert ref.ids == ["a", "b"]
    ref.lock()
    for change in (lambda: ref.set_label("a", "q"), lambda: ref.add("c", 3), lambda: ref.remove("a")):
        with pytest.raises(hb.ReferenceLocked, match="locked"):
            change()


def test_benchmark_locks_reference() -> None:
    ref = hb.Reference({"a": "x"}, labels=["x"])
    hb.benchmark(hb.Arm("echo", lambda item, ctx: item), ref, runs=5)
    assert ref.locked
    with pytest.raises(hb.ReferenceLocked):
        ref.set_label("a", "y")


def test_round_trip_dict() -> None:
    ref = hb.Reference({"a": {"document": "d", "question": "q"}}, labels=[["x", 1]], cluster="c", split="dev")
    again = hb.Reference.from_dict(ref.to_dict())
    assert again.hash == ref.hash


# an empty label is not taken for every run on it to score wrong in silence (numeric alone
# refusing it): a label whose accepted answers are all blank is refused up front
BLANKS = ["", " ", "\t\n", "\u00a0", "\u2009\u3000"]
BLANK_LABELS = [
    *BLANKS,
    *([b] for b in BLANKS),
    ["", " ", "\u00a0"],
    *({"answers": [b], "scale": ""} for b in BLANKS),
    *({"answers": b} for b in BLANKS),
]


@pytest.mark.parametrize("label", BLANK_LABELS, ids=repr)
def test_a_blank_label_is_refused_naming_item_and_field(label) -> None:
    with pytest.raises(
        hb.ReferenceValueError, match=r"labels\['q3'\]: the label is (empty|only white space)"
    ) as err:
        hb.Reference({"q1": "France", "q2": "Peru", "q3": "Chad"}, labels=["Paris", "Lima", label])
    assert "NOT_IN_DOCUMENT" in str(err.value) and repr(label)[:20] in str(err.value)
    ref = hb.Reference({"q1": "France"}, labels=["Paris"])
    with pytest.raises(hb.ReferenceValueError, match=r"labels\['q1'\]"):
        ref.set_label("q1", label)
    with pytest.raises(hb.ReferenceValueError, match=r"labels\['q9'\]"):
        ref.add("q9", "Fiji", label=label)


@pytest.mark.parametrize("blank", BLANKS, ids=repr)
def test_a_blank_answer_beside_others_is_kept_and_never_matches(blank) -> None:
    # the real TAT-QA dev set holds multi-span golds with an empty span; the others decide
    ref = hb.Reference({"q1": "x"}, labels=[["Defined benefit schemes", blank]])
    label = ref.labels["q1"]
    for scorer in (hb.exact_scorer(), hb.answer_scorer()):
        assert scorer(None, "Defined benefit schemes", label).correct is True
        assert scorer(None, blank, label).failure_kind == "parse_failure"
        assert scorer(None, "something else", label).failure_kind == "wrong"


def test_the_ways_to_say_no_label_still_work() -> None:
    # partlabels.toml, written as the message advises: a `labels` table
    from hrbench.specs import build_reference

    spec = {"items": {"q1": "France", "q2": "Peru", "q3": "Chad"}, "labels": {"q1": "Paris", "q2": "Lima"}}
    ref = build_reference(spec)
    assert ref.labels == {"q1": "Paris", "q2": "Lima", "q3": None}
    with pytest.raises(hb.ReferenceValueError, match=r"labels\['q3'\]: the label is empty"):
        build_reference({**spec, "labels": ["Paris", "Lima", ""]})
    assert hb.Reference({"q1": "x"}, labels=[0]).labels == {"q1": 0}  # a zero is a label, not blank
