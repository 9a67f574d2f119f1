"""qa_reference (SQuAD-style files and rows) and tatqa_reference (TAT-QA), on the real data too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hrbench.errors import ConfigError, ReferenceValueError
from hrbench.reading import (
    NOT_IN_DOCUMENT,
    answer_scorer,
    document_id,
    example_document,
    example_questions,
    qa_reference,
    read_rows,
    tatqa_reference,
)
from hrbench.reading._reference import _span_answers

DOC_A = "Normans came into Scotland. Alexander I married Sybilla of Normandy."
DOC_B = "The Sky plc was formed in 1990."


def rows() -> list[dict]:
    return [
        {
            "id": "q1",
            "context": DOC_A,
            "question": "Who did Alexander I marry?",
            "is_impossible": False,
            "answers": ["Sybilla of Normandy", "Sybilla of Normandy", "Sybilla"],
        },
        {
            "id": "q2",
            "context": DOC_A,
            "question": "Who did Alexander II marry?",
            "is_impossible": True,
            "answers": [],
        },
        {
            "id": "q3",
            "context": DOC_B,
            "question": "When was Sky formed?",
            "is_impossible": False,
            "answers": ["1990"],
        },
    ]


def test_rows() -> None:
    ref = qa_reference(rows())
    assert ref.ids == ["q1", "q2", "q3"]
    assert ref.items["q1"] == {"document": DOC_A, "question": "Who did Alexander I marry?"}
    assert ref.labels == {"q1": ["Sybilla of Normandy", "Sybilla"], "q2": NOT_IN_DOCUMENT, "q3": ["1990"]}
    assert ref.clusters["q1"] == ref.clusters["q2"] == document_id(DOC_A) != ref.clusters["q3"]
    assert set(ref.splits.values()) == {"test"}


def test_document_id_is_short_and_stable() -> None:
    assert document_id(DOC_A) == document_id(DOC_A)
    assert document_id(DOC_A).startswith("doc-") and len(document_id(DOC_A)) == 14
    assert document_id(DOC_A, "Sky (United Kingdom)").startswith("Sky_(United_Kingdom)-")


def test_files_jsonl_and_json(tmp_path: Path) -> None:
    jl = tmp_path / "qa.jsonl"
    jl.write_text("\n".join(json.dumps(r) for r in rows()) + "\n\n", encoding="utf-8")
    js = tmp_path / "qa.json"
    js.write_text(json.dumps(rows()), encoding="utf-8")
    assert qa_reference(jl).hash == qa_reference(js).hash == qa_reference(rows()).hash
    assert qa_reference(str(jl)).ids == ["q1", "q2", "q3"]


def test_official_squad_json(tmp_path: Path) -> None:
    squad = {
        "version": "v2.0",
        "data": [
            {
                "title": "Normans",
                "paragraphs": [
                    {
                        "context": DOC_A,
                        "qas": [
                            {
                                "id": "a",
                                "question": "Who?",
                                "answers": [{"text": "Sybilla", "answer_start": 40}],
                                "is_impossible": False,
                            },
                            {
                                "id": "b",
                                "question": "Whom?",
                                "answers": [],
                                "plausible_answers": [{"text": "x"}],
                                "is_impossible": True,
                            },
                        ],
                    }
                ],
            }
        ],
    }
    p = tmp_path / "dev-v2.0.json"
    p.write_text(json.dumps(squad), encoding="utf-8")
    for source in (p, squad):
        ref = qa_reference(source)
        assert ref.labels == {"a": ["Sybilla"], "b": NOT_IN_DOCUMENT}
        assert ref.clusters["a"] == document_id(DOC_A, "Normans")


def test_hugging_face_squad_v2_rows() -> None:
    hf = [
        {
            "id": "a",
            "title": "Normans",
            "context": DOC_A,
            "question": "Who?",
            "answers": {"text": ["Sybilla", "Sybilla"], "answer_start": [40, 40]},
        },
        {
            "id": "b",
            "title": "Normans",
            "context": DOC_A,
            "question": "Whom?",
            "answers": {"text": [], "answer_start": []},
        },
    ]
    ref = qa_reference(hf)
    assert ref.labels == {"a": ["Sybilla"], "b": NOT_IN_DOCUMENT}  # no is_impossible: empty answers


def test_column_mapping_and_options() -> None:
    data = [
        {
            "key": 7,
            "passage_text": DOC_B,
            "q": "When was Sky formed?",
            "gold": 1990,
            "part": "dev",
            "topic": "sky",
        },
        {"key": 8, "passage_text": DOC_B, "q": "Who owns Sky?", "gold": None, "part": "test", "topic": "sky"},
    ]
    cols = {"id": "key", "document": "passage_text", "question": "q", "answers": "gold", "split": "part"}
    ref = qa_reference(data, columns=cols, cluster="topic", keep=["topic"])
    assert ref.ids == ["7", "8"]
    assert ref.labels == {"7": [1990], "8": NOT_IN_DOCUMENT}
    assert ref.splits == {"7": "dev", "8": "test"}
    assert ref.clusters == {"7": "sky", "8": "sky"}
    assert ref.items["7"] == {"document": DOC_B, "question": "When was Sky formed?", "topic": "sky"}
    assert qa_reference(data, columns=cols, cluster="item").clusters == {"7": "7", "8": "8"}
    assert qa_reference(data, columns=cols, cluster=lambda r: f"k{r['key'] % 2}").clusters == {
        "7": "k1",
        "8": "k0",
    }
    assert qa_reference(data, columns=cols, ids=["8"]).ids == ["8"]
    assert qa_reference(data, columns=cols, limit=1).ids == ["7"]


def test_rows_without_ids_are_numbered() -> None:
    ref = qa_reference([{"context": DOC_B, "question": "When?", "answers": "1990"}])
    assert ref.ids == ["1"] and ref.labels["1"] == ["1990"]


def test_example_document_reference() -> None:
    doc = example_document()
    ref = qa_reference([{**q, "context": doc} for q in example_questions()], columns={"answers": "label"})
    assert len(ref) == 10 and len(set(ref.clusters.values())) == 1
    assert ref.labels["ceo"] == NOT_IN_DOCUMENT and ref.labels["units-sheffield"] == [12400]


@pytest.mark.parametrize(
    ("data", "kwargs", "error"),
    [
        (rows(), {"columns": {"passage": "context"}}, ConfigError),
        ([{"id": "a", "question": "x", "answers": ["y"]}], {}, ConfigError),
        (
            [{"id": "a", "context": "d", "question": "x", "answers": [], "is_impossible": False}],
            {},
            ConfigError,
        ),
        ([*rows(), {**rows()[0], "question": "another"}], {}, ReferenceValueError),
        (rows(), {"split": "validation"}, ReferenceValueError),
        ([], {}, ConfigError),
        (42, {}, ConfigError),
        ({"foo": 1}, {}, ConfigError),
    ],
)
def test_errors(data: object, kwargs: dict, error: type) -> None:
    with pytest.raises(error):
        qa_reference(data, **kwargs)


def test_bad_jsonl_line(tmp_path: Path) -> None:
    p = tmp_path / "x.jsonl"
    p.write_text('{"id": 1}\nnot json\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="x.jsonl line 2 is not JSON"):
        read_rows(p)


def test_data_frames() -> None:
    pd = pytest.importorskip("pandas")
    pl = pytest.importorskip("polars")
    flat = [
        {k: v for k, v in r.items() if k != "answers"} | {"answers": r["answers"] or None} for r in rows()
    ]
    expected = qa_reference(rows()).labels
    assert qa_reference(pd.DataFrame(flat)).labels == expected
    assert qa_reference(pl.DataFrame(flat)).labels == expected


# -- the real data -----------------------------------------------------------------------------
def test_real_squad_llama_questions(data: Path) -> None:
    path = data / "squad2-dev-llama32-3b" / "questions.jsonl"
    raw = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    ref = qa_reference(path)
    assert len(ref) == 1000 and ref.ids[0] == "gs1000-0000"
    assert sum(label == NOT_IN_DOCUMENT for label in ref.labels.values()) == 489
    assert len(set(ref.clusters.values())) == len({r["context"] for r in raw})
    assert all(set(p) == {"document", "question"} for p in ref.items.values())
    assert ref.labels["gs1000-0000"] == ["Sybilla of Normandy", "Sybilla"]
    assert ref.clusters["gs1000-0000"].startswith("Normans-")


def test_real_squad_500(data: Path) -> None:
    ref = qa_reference(data / "squad2-dev-500" / "squad2_dev_500.jsonl")
    assert len(ref) == 500
    assert sum(label == NOT_IN_DOCUMENT for label in ref.labels.values()) == 258


TATQA_FIRST = {
    "4960801d-277d-4f79-8eca-c4d0200fa9d6": (["1496.5"], "million", "span"),
    "eb787966-fa02-401f-bfaf-ccabf3828b23": ("-12.6", "million", "arithmetic"),
    "05b670d3-5b19-438c-873f-9bf6de29c69e": ("-22.22", "percent", "arithmetic"),
    "593c4388-5209-4462-8b83-b429c8612c25": (
        ["fixed-price type", "cost-plus type", "time-and-material type"],
        "",
        "multi-span",
    ),
}


def test_real_tatqa(data: Path) -> None:
    ref = tatqa_reference(data / "tatqa-dev-llm" / "tatqa_dataset_dev.json")
    assert len(ref) == 1668 and len(set(ref.clusters.values())) == 278
    for qid, (label, scale, kind) in TATQA_FIRST.items():
        assert ref.labels[qid]["answers"] == label
        assert ref.labels[qid]["scale"] == scale and ref.labels[qid]["answer_type"] == kind
    doc = ref.items["4960801d-277d-4f79-8eca-c4d0200fa9d6"]["document"]
    assert "Total sales | $1,496.5 | $1,202.9 | $1,107.7" in doc
    assert "On a cost-plus type contract, we are paid" in doc
    assert ref.clusters["4960801d-277d-4f79-8eca-c4d0200fa9d6"] == "3ffd9053-a45d-491c-957a-1b2fa0af0570"
    assert not any(label == NOT_IN_DOCUMENT for label in ref.labels.values())
    s = answer_scorer()
    assert s(None, "-$12.6 million", ref.labels["eb787966-fa02-401f-bfaf-ccabf3828b23"]).correct is True
    assert s(None, "$1,496.5 million", ref.labels["4960801d-277d-4f79-8eca-c4d0200fa9d6"]).correct is True
    assert (
        s(None, "-22.21%", ref.labels["05b670d3-5b19-438c-873f-9bf6de29c69e"]).correct is False
    )  # no tolerance
    small = tatqa_reference(data / "tatqa-dev-llm" / "tatqa_dataset_dev.json", limit=5, split="dev")
    assert len(small) == 5 and set(small.splits.values()) == {"dev"}


@pytest.mark.parametrize(
    ("span", "accepted"),
    [
        ("$1,496.5", ["1496.5"]),
        ("36%", ["36"]),
        ("$85.1 million", ["85.1"]),
        ("$(9.8) million", ["-9.8", "(9.8)"]),
        ("-3.5", ["-3.5"]),
        ("2019", ["2019"]),
        ("2.5 years", ["2.5 years"]),
        ("3.45 cents per Ordinary share", ["3.45 cents per Ordinary share"]),
        ("(12", ["(12"]),
    ],
)
def test_tatqa_numeric_spans(span: str, accepted: list[str]) -> None:
    assert _span_answers(span) == accepted


def test_tatqa_not_a_tatqa_file(tmp_path: Path) -> None:
    p = tmp_path / "x.json"
    p.write_text(json.dumps([{"foo": 1}]), encoding="utf-8")
    with pytest.raises(ConfigError):
        tatqa_reference(p)
