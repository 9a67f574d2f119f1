"""Every loader of outputs or references: one record per id, never "the last one wins".

``tatqa_outputs`` never keeps the last of two rows with one ``question_id`` silently. The rule
(:mod:`hrbench._util.unique`): two records of one id that differ are refused,
naming the id field, the id and both places; an identical repeat is read once. Each loader is
one row of the table below, and the same assertions run on all of them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrbench.errors import ConfigError
from hrbench.reading import outputs_arm, qa_reference, tatqa_outputs, tatqa_reference
from hrbench.specs import build_arm, build_reference
from tests._examples import examples

DOC = "Sheffield produced 12,400 units."


def _jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _json_object(path: Path, pairs: list[tuple[str, Any]]) -> Path:
    """A JSON object that may write one key twice (``json.dumps`` of a dict cannot)."""
    body = ",\n".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in pairs)
    path.write_text("{" + body + "}\n")
    return path


def _tatqa_file(path: Path, records: list[tuple[str, Any]]) -> Path:
    questions = [
        {"uid": uid, "order": n, "question": f"q {v}", "answer": [str(v)], "answer_type": "span", "scale": ""}
        for n, (uid, v) in enumerate(records, 1)
    ]
    ctx = {"table": {"uid": "t1", "table": [["a", "1"]]}, "paragraphs": [{"order": 1, "text": DOC}]}
    path.write_text(json.dumps([{**ctx, "questions": questions}]))
    return path


@dataclass
class Loader:
    """One loader: how to write ``(id, value)`` records to a file, load it, and what it says."""

    name: str
    write: Callable[[Path, list[tuple[str, Any]]], Path]
    load: Callable[[Path], dict[str, Any]]
    field: str  # the spec field said first
    id_name: str  # the id field said with the id
    where: str  # the unit of a place, plural


def _outputs_table(arm: Any) -> dict[str, Any]:
    return dict(arm.fn.outputs)


LOADERS = [
    Loader(
        "tatqa_outputs jsonl",
        lambda p, rs: _jsonl(
            p / "run.jsonl", [{"question_id": i, "pred_answer": [v], "pred_scale": ""} for i, v in rs]
        ),
        lambda f: tatqa_outputs(f),
        "arm.path",
        "question_id",
        "lines",
    ),
    Loader(
        "tatqa_outputs json object",
        lambda p, rs: _json_object(p / "pred.json", [(i, [[v], ""]) for i, v in rs]),
        lambda f: tatqa_outputs(f),
        "arm.path",
        "key",
        "entries",
    ),
    Loader(
        "outputs_arm jsonl",
        lambda p, rs: _jsonl(p / "preds.jsonl", [{"qid": i, "prediction": v} for i, v in rs]),
        lambda f: _outputs_table(outputs_arm("a", f, id_field="qid")),
        "outputs",
        "qid",
        "lines",
    ),
    Loader(
        "outputs_arm json list",
        lambda p, rs: (
            (p / "preds.json").write_text(json.dumps([{"id": i, "prediction": v} for i, v in rs]))
            and p / "preds.json"
        ),
        lambda f: _outputs_table(outputs_arm("a", f)),
        "outputs",
        "id",
        "records",
    ),
    Loader(
        "outputs_arm json object (SQuAD predictions)",
        lambda p, rs: _json_object(p / "preds.json", list(rs)),
        lambda f: _outputs_table(outputs_arm("a", f)),
        "arm.path",
        "key",
        "entries",
    ),
    Loader(
        "outputs arm spec jsonl",
        lambda p, rs: _jsonl(p / "out.jsonl", [{"item": i, "output": v} for i, v in rs]),
        lambda f: dict(build_arm({"kind": "outputs", "name": "a", "path": str(f)}).settings["outputs"]),
        "path",
        "item",
        "lines",
    ),
    Loader(
        "outputs arm spec json object",
        lambda p, rs: _json_object(p / "out.json", list(rs)),
        lambda f: dict(build_arm({"kind": "outputs", "name": "a", "path": str(f)}).settings["outputs"]),
        "path",
        "key",
        "entries",
    ),
    Loader(
        "reference rows jsonl",
        lambda p, rs: _jsonl(p / "ref.jsonl", [{"id": i, "item": "x", "label": v} for i, v in rs]),
        lambda f: build_reference({"path": str(f)}).labels,
        "reference.path",
        "id",
        "lines",
    ),
    Loader(
        "reference rows json list",
        lambda p, rs: (
            (p / "ref.json").write_text(json.dumps([{"id": i, "item": "x", "label": v} for i, v in rs]))
            and p / "ref.json"
        ),
        lambda f: build_reference({"path": str(f)}).labels,
        "reference.path",
        "id",
        "records",
    ),
    Loader(
        "qa_reference (SQuAD rows)",
        lambda p, rs: _jsonl(
            p / "squad.jsonl",
            [{"id": i, "context": DOC, "question": "q", "answers": [str(v)]} for i, v in rs],
        ),
        lambda f: qa_reference(f).labels,
        "source",
        "id",
        "rows",
    ),
    Loader(
        "qa_reference (official SQuAD JSON)",
        lambda p, rs: (
            (p / "squad.json").write_text(
                json.dumps(
                    {
                        "data": [
                            {
                                "title": "t",
                                "paragraphs": [
                                    {
                                        "context": DOC,
                                        "qas": [
                                            {"id": i, "question": "q", "answers": [{"text": str(v)}]}
                                            for i, v in rs
                                        ],
                                    }
                                ],
                            }
                        ]
                    }
                )
            )
            and p / "squad.json"
        ),
        lambda f: qa_reference(f).labels,
        "source",
        "id",
        "rows",
    ),
    Loader(
        "tatqa_reference",
        lambda p, rs: _tatqa_file(p / "tatqa.json", rs),
        lambda f: tatqa_reference(f).labels,
        "path",
        "uid",
        "questions",
    ),
]


@pytest.mark.parametrize("loader", LOADERS, ids=[x.name for x in LOADERS])
def test_two_records_of_one_id_that_differ_are_refused_naming_the_id_and_both_places(
    tmp_path: Path, loader: Loader
) -> None:
    f = loader.write(tmp_path, [("q1", "12"), ("q2", "7"), ("q3", "5"), ("q2", "8")])
    with pytest.raises(ConfigError) as info:
        loader.load(f)
    said = str(info.value)
    assert said.startswith(f"{loader.field}: {loader.where} 2 and 4 have the same {loader.id_name} 'q2'"), (
        said
    )
    assert "with different" in said and str(f) in said


@pytest.mark.parametrize("loader", LOADERS, ids=[x.name for x in LOADERS])
def test_a_record_repeated_identically_is_read_once(tmp_path: Path, loader: Loader) -> None:
    (tmp_path / "once").mkdir()
    once = loader.load(loader.write(tmp_path / "once", [("q1", "12"), ("q2", "7")]))
    twice = loader.load(loader.write(tmp_path, [("q1", "12"), ("q2", "7"), ("q1", "12")]))
    assert twice == once and list(twice) == ["q1", "q2"]


def test_the_tatqa_run_of_the_finding_names_the_question_id_and_both_lines(tmp_path: Path) -> None:
    # a run file with one question twice (the second answer differs)
    run = [
        {"question_id": "a1", "pred_answer": [1496.5], "pred_scale": "million"},
        {"question_id": "b2", "pred_answer": ["2019"], "pred_scale": ""},
        {"question_id": "a1", "pred_answer": [1500], "pred_scale": "million"},
    ]
    f = _jsonl(tmp_path / "gpt3_cot.jsonl", run)
    with pytest.raises(ConfigError, match="lines 1 and 3 have the same question_id 'a1' with different"):
        tatqa_outputs(f)
    # the same answer, scale and all, written twice: read once
    f.write_text("".join(json.dumps(r) + "\n" for r in [run[0], run[1], run[0]]))
    assert tatqa_outputs(f) == {"a1": "1496.5 million", "b2": "2019"}


_PROPERTY_LOADERS = [x for x in LOADERS if x.name in ("tatqa_outputs jsonl", "outputs_arm jsonl")]


@pytest.mark.parametrize("loader", _PROPERTY_LOADERS, ids=[x.name for x in _PROPERTY_LOADERS])
@settings(max_examples=examples(40), deadline=None)
@given(
    records=st.lists(st.tuples(st.sampled_from("abc"), st.sampled_from(["1", "2"])), min_size=1, max_size=6)
)
def test_a_file_loads_as_the_first_record_of_each_id_or_names_the_first_conflict(
    tmp_path_factory: pytest.TempPathFactory, loader: Loader, records: list[tuple[str, str]]
) -> None:
    f = loader.write(tmp_path_factory.mktemp("p"), records)
    first: dict[str, tuple[str, int]] = {}
    conflict = None
    for n, (i, v) in enumerate(records, 1):
        if i in first and first[i][0] != v:
            conflict = (first[i][1], n, i)
            break
        first.setdefault(i, (v, n))
    if conflict is None:
        assert loader.load(f) == {i: v for i, (v, _) in first.items()}
    else:
        a, b, i = conflict
        with pytest.raises(ConfigError, match=f"lines {a} and {b} have the same {loader.id_name} '{i}'"):
            loader.load(f)
