"""A spec that names the wrong format, field or metric for real data is refused up front."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import hrbench as hb
from hrbench import specs
from hrbench.errors import ConfigError
from hrbench.reading import tatqa_outputs, tatqa_reference, tatqa_scores

SQUAD = "squad2-dev-llama32-3b"
SQUAD_RUNS = [
    "baseline_raw_50",
    "course_sample_50",
    "early_pipeline_50",
    "pipeline_v1_1000",
    "pipeline_v2_final_1000",
]


@pytest.mark.parametrize("questions", [f"{SQUAD}/questions.jsonl", "squad2-dev-500/squad2_dev_500.jsonl"])
def test_tatqa_format_on_a_squad_file_names_the_file_the_line_and_the_format(
    data: Path, questions: str
) -> None:
    path = str(data / questions)
    with pytest.raises(ConfigError) as info:
        specs.build_reference({"path": path, "format": "tatqa"})
    msg = str(info.value)
    assert path in msg and "line 2 is not JSON" in msg and "TAT-QA" in msg and '"squad"' in msg


@pytest.mark.parametrize(
    ("name", "text", "needle"),
    [
        ("rows.json", json.dumps([{"id": "a", "question": "q"}]), "expected a TAT-QA"),
        ("obj.json", json.dumps({"data": []}), "expected a TAT-QA"),
        ("list.json", json.dumps([1, 2]), "expected a TAT-QA"),
        ("broken.json", '[{"questions": []},\n  nope]', "line 2 is not JSON"),
        ("lines.jsonl", '{"a": 1}\n{"a": 2}\n{"a": 3}\n', "line 2 is not JSON"),
    ],
)
def test_tatqa_reference_refuses_any_other_file(tmp_path: Path, name: str, text: str, needle: str) -> None:
    f = tmp_path / name
    f.write_text(text)
    with pytest.raises(ConfigError, match=needle) as info:
        tatqa_reference(f)
    assert str(f) in str(info.value)


@pytest.mark.parametrize("run", SQUAD_RUNS)
def test_tatqa_format_on_a_squad_run_file_is_refused(data: Path, run: str) -> None:
    path = data / SQUAD / "runs" / f"{run}.jsonl"
    with pytest.raises(ConfigError, match=r"row 1 has no `question_id`; expected a TAT-QA run"):
        tatqa_outputs(path)
    with pytest.raises(ConfigError, match="question_id"):
        specs.build_arm({"kind": "outputs", "name": "a", "path": str(path), "format": "tatqa"})


@pytest.mark.parametrize(
    "text", ['{"q1": "x"}', '{"q1": ["x"]}', "[1, 2]", '{"q1": ["x", "million"]}\n{"q2"']
)
def test_tatqa_outputs_json_must_be_the_sample_prediction_form(tmp_path: Path, text: str) -> None:
    f = tmp_path / "pred.json"
    f.write_text(text)
    with pytest.raises(ConfigError, match=r"arm\.path"):
        tatqa_outputs(f)


@pytest.mark.parametrize("run", SQUAD_RUNS)
@pytest.mark.parametrize(
    ("field", "close"), [("answer", None), ("predictions", "prediction"), ("pred", None)]
)
def test_a_prediction_field_no_row_has_is_refused_up_front(
    data: Path, run: str, field: str, close: str | None
) -> None:
    path = data / SQUAD / "runs" / f"{run}.jsonl"
    spec = {"kind": "outputs", "name": "a", "path": str(path), "id_field": "qid", "prediction_field": field}
    with pytest.raises(ConfigError) as info:
        specs.build_arm(spec)
    msg = str(info.value)
    assert msg.startswith("prediction_field:") and repr(field) in msg and "qid" in msg and path.name in msg
    if close:
        assert f"did you mean {close!r}" in msg
    specs.build_arm({**spec, "prediction_field": "prediction"})  # the right name still builds


def test_a_row_lacking_the_prediction_beside_rows_that_have_it_is_a_null_prediction(tmp_path: Path) -> None:
    f = tmp_path / "run.jsonl"
    f.write_text('{"id": "a", "prediction": "x"}\n{"id": "b"}\n')
    arm = specs.build_arm({"kind": "outputs", "name": "a", "path": str(f), "prediction_field": "prediction"})
    assert arm.settings["n"] == 2


def _squad_ref(data: Path, limit: int = 20) -> hb.Reference:
    return specs.build_reference(
        {"path": str(data / SQUAD / "questions.jsonl"), "format": "squad", "limit": limit}
    )


@pytest.mark.parametrize(
    "labels",
    [
        None,  # the SQuAD reference's own labels
        ["Paris", "Lima"],
        [3, 4.5],
        [{"answers": ["x"]}, {"answers": ["y"]}],  # answers but no TAT-QA details
        [None, "Lima"],
    ],
)
def test_the_tatqa_metric_refuses_labels_that_are_not_tatqas(data: Path, labels: list | None) -> None:
    ref = _squad_ref(data) if labels is None else hb.Reference(["a", "b"], labels=labels)
    arm = hb.Arm("a", lambda item, ctx: "x")
    with pytest.raises(ConfigError, match=r"metrics: item '.+' has the label .*TAT-QA reference"):
        hb.benchmark(arm, ref, runs=5, metrics=[tatqa_scores])
    with pytest.raises(ConfigError, match="TAT-QA"):
        hb.benchmark(arm, ref, runs=5, metrics=specs.build_metrics(["tatqa"]))


def test_the_tatqa_metric_runs_on_tatqa_labels_and_squad_on_both(data: Path) -> None:
    dev = tatqa_reference(data / "tatqa-dev-llm" / "tatqa_dataset_dev.json", limit=4)
    arm = hb.Arm("a", lambda item, ctx: "x")
    bench = hb.benchmark(arm, dev, runs=5, metrics=specs.build_metrics(["tatqa", "squad"]))
    assert set(bench.summary()[0]["metrics"]) == {"tatqa_em", "tatqa_f1", "squad_em", "squad_f1"}
    hb.benchmark(arm, _squad_ref(data, 4), runs=5, metrics=specs.build_metrics(["squad"]))
