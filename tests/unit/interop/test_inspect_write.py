"""``Bench.to_inspect``: one Inspect eval log (format version 2) per arm, and back as an arm.

That the real Inspect reads these logs is checked in ``tests/interop`` (``make test-interop``);
here the fields the issue names are checked against the benchmark's rows and report.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

import hrbench as hb
from hrbench.interop._imported import imported_arm, imported_reference
from hrbench.stats import report_payload

ITEMS = {"q1": "France", "q2": "Peru", "q3": "Chad", "q4": "Oman"}
LABELS = ["Paris", "Lima", "N'Djamena", "Muscat"]
ANSWERS = {"France": "Paris", "Peru": "Lima", "Chad": "Lyon", "Oman": "Muscat"}


def _answer(item: str, ctx: Any) -> str:
    if item == "Oman" and ctx.run == 2:
        raise RuntimeError("the model fell over")
    return ANSWERS[item]


def _bench(**kw: Any) -> Any:
    ref = hb.Reference(ITEMS, labels=LABELS, cluster={"q1": "eu", "q2": "am", "q3": "af", "q4": "as"})
    arms = [hb.Arm("good", _answer), hb.Arm("paris", lambda item, ctx: "Paris")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return hb.benchmark(arms, ref, runs=5, **kw)


def test_one_log_per_arm_with_the_rows_scores_and_report(tmp_path: Path) -> None:
    b = _bench()
    paths = b.to_inspect(tmp_path / "logs", name="capitals")
    assert [x.name.split("_")[1:3] for x in paths] == [["capitals", "good"], ["capitals", "paris"]]
    log = json.loads(paths[0].read_text())
    assert log["version"] == 2 and log["status"] == "success"
    assert log["eval"]["task"] == "capitals" and log["eval"]["model"] == "good"
    assert log["eval"]["config"]["epochs"] == 5 and log["eval"]["dataset"]["sample_ids"] == list(ITEMS)
    rows = {(r.item, r.draw_index): r for r in b.rows if r.arm == "good"}
    samples = log["samples"]
    assert len(samples) == 20 and {(s["id"], s["epoch"]) for s in samples} == set(rows)
    for s in samples:
        r = rows[(s["id"], s["epoch"])]
        score = s["scores"][b.scorer_name]
        assert score["value"] == ("C" if r.correct else "I") and score["explanation"] == r.failure_kind
        assert s["metadata"]["cluster"] == r.cluster and s["metadata"]["split"] == "test"
        assert s["metadata"]["draw_index"] == r.draw_index and s["metadata"]["usd"] == r.usd
        assert "usd_list" in s["metadata"] and s["target"] == LABELS[list(ITEMS).index(s["id"])]
        assert s["input"] == ITEMS[s["id"]]
    [fell] = [s for s in samples if (s["id"], s["epoch"]) == ("q4", 2)]
    assert fell["error"]["message"].startswith("RuntimeError") and "fell over" in fell["error"]["message"]
    assert fell["scores"][b.scorer_name] == {
        "value": "I", "answer": None, "explanation": "error", "metadata": fell["metadata"],
    }  # fmt: skip
    [chad] = {s["output"]["completion"] for s in samples if s["id"] == "q3"}
    assert chad == "lyon"  # what the scorer saw (a function arm sends no request)
    rep = report_payload(b.rows, traces=b.traces)
    want = next(a for a in rep["arms"] if a["arm"] == "good")
    metrics = log["results"]["scores"][0]["metrics"]
    assert metrics["accuracy"]["value"] == pytest.approx(want["accuracy"])
    assert (metrics["ci_low"]["value"], metrics["ci_high"]["value"]) == pytest.approx(
        (want["ci_low"], want["ci_high"])
    )
    assert (
        metrics["stderr"]["value"] == pytest.approx(want["se"])
        and metrics["accuracy"]["params"]["level"] == 0.95
    )
    [cmp] = log["results"]["metadata"]["comparisons"]
    assert (cmp["arm_a"], cmp["arm_b"]) == ("good", "paris") and cmp["diff"] == pytest.approx(
        rep["comparisons"][0]["diff"]
    )
    assert log["results"]["total_samples"] == 20 and log["results"]["scores"][0]["scored_samples"] == 20


def test_an_exported_log_imports_back_with_the_same_ids_runs_and_verdicts(tmp_path: Path) -> None:
    b = _bench()
    good = b.to_inspect(tmp_path)[0]
    ref = imported_reference(good, "inspect")
    assert ref.labels == dict(zip(ITEMS, LABELS, strict=True)) and ref.clusters == b.reference.clusters
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = hb.benchmark(imported_arm("good", good, "inspect"), ref, runs=5)
    assert [(r.item, r.run, r.correct, r.failure_kind) for r in again.rows] == [
        (r.item, r.run, r.correct, r.failure_kind) for r in b.rows if r.arm == "good"
    ]
    back = json.loads(again.to_inspect(tmp_path / "back")[0].read_text())
    first = json.loads(good.read_text())
    key = [(s["id"], s["epoch"], s["scores"][b.scorer_name]["value"]) for s in first["samples"]]
    assert [(s["id"], s["epoch"], s["scores"][b.scorer_name]["value"]) for s in back["samples"]] == key


def test_few_runs_give_descriptive_results_and_unlabelled_rows_no_score(tmp_path: Path) -> None:
    ref = hb.Reference({"q1": "France", "q2": "Peru"}, labels={"q1": "Paris", "q2": None})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b = hb.benchmark(hb.Arm("a", lambda item, ctx: "Paris"), ref, runs=2)
    log = json.loads(b.to_inspect(tmp_path)[0].read_text())
    assert log["eval"]["task"] == f"hrbench-{b.id}" and log["results"]["metadata"]["descriptive"] is True
    unlabelled = [s for s in log["samples"] if s["id"] == "q2"]
    assert [s["scores"] for s in unlabelled] == [None, None] and unlabelled[0]["target"] == ""
    assert log["results"]["scores"][0]["unscored_samples"] == 2
    # Inspect's default target is "", which reads back as no label: the item stays unlabelled
    ref = imported_reference(b.to_inspect(tmp_path / "again")[0], "inspect")
    assert ref.labels == {"q1": "Paris", "q2": None}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = hb.benchmark(
            imported_arm("a", tmp_path / "again" / log_name(tmp_path / "again"), "inspect"), ref, runs=2
        )
    assert [(r.item, r.run, r.correct, r.failure_kind) for r in again.rows] == [
        (r.item, r.run, r.correct, r.failure_kind) for r in b.rows
    ]


def log_name(folder: Path) -> str:
    [one] = [p.name for p in folder.iterdir()]
    return one


def test_a_benchmark_without_rows_is_refused(tmp_path: Path) -> None:
    b = _bench(keep_rows=False)
    with pytest.raises(ValueError, match="keep_rows=False"):
        b.to_inspect(tmp_path)
