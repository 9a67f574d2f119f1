"""outputs_arm: scoring predictions a user already has, through the runner."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

import hrbench as hb
from hrbench.arm import Context
from hrbench.errors import ConfigError
from hrbench.reading import answer_scorer, outputs_arm, qa_reference, tatqa_outputs

DOC = "Sheffield produced 12,400 units; Leeds produced 8,050."


def ref() -> hb.Reference:
    return qa_reference(
        [
            {"id": "a", "context": DOC, "question": "Sheffield?", "answers": [12400]},
            {"id": "b", "context": DOC, "question": "Leeds?", "answers": ["8050"]},
            {"id": "c", "context": DOC, "question": "CEO?", "answers": []},
        ]
    )


def call(arm: hb.Arm, item_id: str) -> object:
    ctx = Context(
        arm=arm.name,
        item_id=item_id,
        run=1,
        draw_index=1,
        seed=1,
        client=None,
        ledger_id=f"x/{arm.name}/{item_id}/1",
    )
    return anyio.run(arm.fn, None, ctx)


def test_mapping_and_missing_prediction() -> None:
    arm = outputs_arm("stored", {"a": "12,400 units", "b": 8050.0})
    assert arm.is_async and arm.settings["n"] == 2 and arm.settings["source"] == "mapping"
    assert call(arm, "a") == "12,400 units"
    assert call(arm, "b") == "8050"  # a number in plain digits
    # an item without a prediction is refused before the first run (check_outputs); called
    # anyway, the arm raises (an error run), never a quiet parse_failure
    with pytest.raises(LookupError, match="no output for item 'zz'"):
        call(arm, "zz")


def test_values_become_outputs() -> None:
    arm = outputs_arm("v", {"l": ["a", 1.5, None], "n": None, "d": {"text": "x", "notes": []}, "t": True})
    assert call(arm, "l") == "a; 1.5"
    assert call(arm, "n") is None
    assert call(arm, "d") == {"text": "x", "notes": []}
    assert call(arm, "t") == "true"


def test_hash_follows_the_predictions() -> None:
    a = outputs_arm("x", {"a": "1"})
    assert a.hash == outputs_arm("x", {"a": "1"}).hash
    assert a.hash != outputs_arm("x", {"a": "2"}).hash


def test_jsonl_and_json_files(tmp_path: Path) -> None:
    jl = tmp_path / "run.jsonl"
    jl.write_text(
        '{"qid": "a", "prediction": "12,400"}\n{"qid": "b", "prediction": "NO ANSWER"}\n', encoding="utf-8"
    )
    arm = outputs_arm("run", jl, id_field="qid")
    assert arm.settings["source"] == "run.jsonl" and arm.settings["prediction_field"] == "prediction"
    assert call(arm, "b") == "NO ANSWER"
    js = tmp_path / "pred.json"
    js.write_text(json.dumps({"a": "12400", "b": ""}), encoding="utf-8")
    assert call(outputs_arm("squad-format", js), "a") == "12400"
    nested = tmp_path / "nested.json"
    nested.write_text(json.dumps({"model_name": "m", "predictions": {"a": "x"}}), encoding="utf-8")
    assert call(outputs_arm("example-format", nested), "a") == "x"
    listed = tmp_path / "rows.json"
    listed.write_text(json.dumps([{"id": "a", "answer": "y"}]), encoding="utf-8")
    assert call(outputs_arm("rows", listed, prediction_field="answer"), "a") == "y"
    assert (
        call(outputs_arm("fn", jl, id_field="qid", prediction_field=lambda r: r["prediction"].lower()), "b")
        == "no answer"
    )


def test_file_errors(tmp_path: Path) -> None:
    dup = tmp_path / "dup.jsonl"
    dup.write_text('{"id": "a", "prediction": "1"}\n{"id": "a", "prediction": "2"}\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="lines 1 and 2 have the same id 'a' with different predictions"):
        outputs_arm("d", dup)
    with pytest.raises(ConfigError, match="no such field"):
        outputs_arm("d", dup, id_field="qid")
    with pytest.raises(ConfigError):
        outputs_arm("d", 42)  # type: ignore[arg-type]


def test_through_the_runner() -> None:
    arm = outputs_arm("stored", {"a": "It made 12,400.", "c": "The passage does not say."})
    other = outputs_arm("other", {"a": "12,40", "b": "8\u00a0050", "c": "Bob"})
    with pytest.raises(
        ConfigError, match=r"arms\[0\]\.outputs: arm 'stored': 1 of 3 item\(s\) run have no output: 'b'"
    ):
        hb.benchmark([arm, other], ref(), runs=5, scorer=answer_scorer())
    arm = outputs_arm("stored", {"a": "It made 12,400.", "c": "The passage does not say."}, missing="error")
    with pytest.warns(hb.ArmErrorWarning, match="no output for item 'b'"):
        bench = hb.benchmark([arm, other], ref(), runs=5, scorer=answer_scorer())
    assert len(bench.rows) == 3 * 2 * 5
    kinds = {(r.arm, r.item): (r.correct, r.failure_kind) for r in bench.rows}
    assert kinds[("stored", "a")] == (True, None)
    assert kinds[("stored", "b")] == (False, "error")  # no prediction: an error run, never a parse failure
    assert kinds[("stored", "c")] == (True, None)
    assert kinds[("other", "a")] == (False, "wrong")
    assert kinds[("other", "b")] == (True, None)
    assert kinds[("other", "c")] == (False, "wrong")
    summary = {s["arm"]: s for s in bench.summary()}
    assert summary["stored"]["accuracy"] == pytest.approx(2 / 3)
    assert bench.scorer_name == "answer_contains"


# -- the real runs -----------------------------------------------------------------------------
def test_real_squad_runs_through_the_runner(data: Path) -> None:
    base = data / "squad2-dev-llama32-3b"
    runs = {f.stem: f for f in sorted((base / "runs").glob("*.jsonl"))}
    assert "baseline_raw_50" in runs, f"shared data missing: SQuAD runs under {base} (set HRBENCH_DATA)"
    shared = [json.loads(x)["qid"] for x in runs["baseline_raw_50"].read_text().splitlines()]
    reference = qa_reference(base / "questions.jsonl", ids=shared)
    arms = [
        outputs_arm(name, runs[name], id_field="qid") for name in ("baseline_raw_50", "early_pipeline_50")
    ]
    bench = hb.benchmark(arms, reference, runs=5, scorer=answer_scorer())
    assert len(bench.rows) == 50 * 2 * 5
    assert {r.failure_kind for r in bench.rows} <= {None, "wrong", "not_in_document"}
    for s in bench.summary():
        assert 0.2 < s["accuracy"] < 0.9


def test_real_tatqa_outputs(data: Path) -> None:
    pot = data / "tatqa-dev-llm" / "runs" / "codex_code-davinci-002_pot.jsonl"
    assert pot.exists(), f"shared data missing: {pot} (set HRBENCH_DATA)"
    out = tatqa_outputs(pot)
    assert out["4960801d-277d-4f79-8eca-c4d0200fa9d6"] == "1496.5 million"
    assert out["eb787966-fa02-401f-bfaf-ccabf3828b23"] == "-12.6 million"
    assert out["05b670d3-5b19-438c-873f-9bf6de29c69e"] == "-22.2222222222%"
    assert tatqa_outputs(pot, decimals=2)["05b670d3-5b19-438c-873f-9bf6de29c69e"] == "-22.22%"
    direct = tatqa_outputs(data / "tatqa-dev-llm" / "runs" / "gpt3_text-davinci-002_direct.jsonl")
    assert sum(v is None for v in direct.values()) == 62  # empty completions: 12 empty lists, 50 [""]
    sample = tatqa_outputs(data / "tatqa-dev-llm" / "runs" / "tatqa_repo_sample_prediction.json")
    assert sample["4960801d-277d-4f79-8eca-c4d0200fa9d6"] == "$1,496.5 million"
    with pytest.raises(ConfigError):
        tatqa_outputs(pot, field="nope")
    from hrbench.specs import build_reference  # a sample of the data set the run file covers

    reference = build_reference(
        {"path": str(data / "tatqa-dev-llm" / "tatqa_dataset_dev.json"), "format": "tatqa", "limit": 40}
    )
    bench = hb.benchmark(outputs_arm("pot", out), reference, runs=5, scorer=answer_scorer())
    assert 0.3 < bench.summary()[0]["accuracy"] < 1.0
