"""squad_scores: SQuAD v2.0 EM and F1 of a benchmark run, on the real runs too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import hrbench as hb
from hrbench.reading import NOT_IN_DOCUMENT, is_not_found, outputs_arm, qa_reference, squad_scores
from tests.unit.evaluation.test_metrics import official_scores


@pytest.mark.parametrize(
    ("output", "label", "em", "f1"),
    [
        ("The Normans", ["Normans", "Norman people"], 1.0, 1.0),
        ("Normans in France", ["the Normans"], 0.0, 0.5),
        ("NO ANSWER", NOT_IN_DOCUMENT, 1.0, 1.0),  # an abstention is the empty answer
        ("The text does not say.", NOT_IN_DOCUMENT, 1.0, 1.0),
        ("not_in_document", NOT_IN_DOCUMENT, 1.0, 1.0),
        ("Rollo", NOT_IN_DOCUMENT, 0.0, 0.0),
        ("NO ANSWER", ["Rollo"], 0.0, 0.0),
        ({"text": "Rollo"}, ["Rollo"], 1.0, 1.0),
        (12400, [12400], 0.0, 0.0),  # not an answer text: a number is not read by output_text
        ("12,400", [12400], 1.0, 1.0),  # SQuAD drops punctuation: "12,400" is "12400"
        # a failed run scores 0 even where abstaining is right (a missing prediction)
        (None, NOT_IN_DOCUMENT, 0.0, 0.0),
        ("  ", NOT_IN_DOCUMENT, 0.0, 0.0),
        ({"ok": False, "text": "NO ANSWER"}, NOT_IN_DOCUMENT, 0.0, 0.0),
        ({"text": "NO ANSWER", "failure_kind": "refusal"}, NOT_IN_DOCUMENT, 0.0, 0.0),
    ],
)
def test_squad_scores(output: Any, label: Any, em: float, f1: float) -> None:
    got = squad_scores(None, output, label)
    assert got == {"squad_em": em, "squad_f1": pytest.approx(f1)}


def test_squad_scores_on_a_real_run_match_the_official_formulas(data: Path) -> None:
    """pipeline_v2_final on 1,000 SQuAD 2.0 questions, through the runner, against the script."""
    base = data / "squad2-dev-llama32-3b"
    questions = {q["qid"]: q for q in map(json.loads, (base / "questions.jsonl").read_text().splitlines())}
    run = base / "runs" / "pipeline_v2_final_1000.jsonl"
    preds = {r["qid"]: r["prediction"] for r in map(json.loads, run.read_text().splitlines())}
    ems, f1s = [], []
    for qid, q in questions.items():
        pred = preds[qid]
        exact, f1 = official_scores(q["answers"], "" if is_not_found(pred) else pred)
        ems.append(exact)
        f1s.append(f1)
    ref = qa_reference(base / "questions.jsonl")
    with pytest.warns(hb.FewRunsWarning):
        bench = hb.benchmark(
            outputs_arm("v2", run, id_field="qid"),
            ref,
            runs=1,
            scorer=hb.answer_scorer(),
            metrics=[squad_scores],
        )
    (s,) = bench.summary()
    assert s["metrics"]["squad_em"] == pytest.approx(sum(ems) / 1000, abs=1e-12)
    assert s["metrics"]["squad_f1"] == pytest.approx(sum(f1s) / 1000, abs=1e-12)
    assert 0.3 < s["metrics"]["squad_em"] < s["metrics"]["squad_f1"] < 0.9


# -- squad_scorer: the official EM deciding each row (the demo's SQuAD headline comes from the
# -- official metric, not from answer_contains) -------------------------------------------------


@pytest.mark.parametrize(
    ("output", "label", "correct", "kind"),
    [
        ("The Normans.", ["Normans", "Norman people"], True, None),
        ("Normans in France", ["Normans"], False, "wrong"),  # answer_contains would accept it
        ("NO ANSWER", NOT_IN_DOCUMENT, True, None),
        ("The text does not say.", NOT_IN_DOCUMENT, True, None),
        ("NO ANSWER", ["Rollo"], False, "not_in_document"),
        ("Rollo", NOT_IN_DOCUMENT, False, "wrong"),
        ("12,400", [12400], True, None),  # the official script drops punctuation
        (None, ["Rollo"], False, "parse_failure"),
        ("  ", NOT_IN_DOCUMENT, False, "parse_failure"),
        ({"ok": False, "text": "NO ANSWER"}, NOT_IN_DOCUMENT, False, "error"),
        ({"text": "Rollo", "failure_kind": "refusal"}, ["Rollo"], False, "refusal"),
        ({"text": "Rol", "notes": ["cost_cap_reached"]}, ["Rollo"], False, "budget_stop"),
        ("Rollo", None, None, None),
    ],
)
def test_squad_scorer_follows_the_seed_contract(output: Any, label: Any, correct: Any, kind: Any) -> None:
    got = hb.squad_scorer()(None, output, label)
    assert (got.correct, got.failure_kind) == (correct, kind)
    if label is not None:  # right exactly when the metric's EM is 1
        assert got.correct == (squad_scores(None, output, label)["squad_em"] == 1.0)


def test_squad_scorer_is_the_official_em_on_a_real_run(data: Path) -> None:
    base = data / "squad2-dev-llama32-3b"
    questions = {q["qid"]: q for q in map(json.loads, (base / "questions.jsonl").read_text().splitlines())}
    run = base / "runs" / "pipeline_v1_1000.jsonl"
    preds = {r["qid"]: r["prediction"] for r in map(json.loads, run.read_text().splitlines())}
    ref = qa_reference(base / "questions.jsonl")
    s = hb.squad_scorer()
    for qid, q in questions.items():
        pred = preds[qid]
        exact, _ = official_scores(q["answers"], "" if is_not_found(pred) else pred)
        assert s(ref.items[qid], pred, ref.labels[qid]).correct == bool(exact), qid


def test_answer_contains_is_a_metric_beside_the_official_scorer() -> None:
    from hrbench.reading import answer_contains_scores
    from hrbench.specs import build_metrics, build_scorer

    assert build_scorer("squad").name == "squad"
    (m,) = build_metrics(["answer_contains"])
    assert m is answer_contains_scores
    assert m(None, "Normans in France", ["Normans"]) == {"answer_contains": 1.0}
    assert m(None, "Normans", "NOT_IN_DOCUMENT") == {"answer_contains": 0.0}
