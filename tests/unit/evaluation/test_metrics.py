"""Metrics (seed 003); exact_match and f1 against the official SQuAD v2.0 evaluation script."""

from __future__ import annotations

import collections
import json
import math
import re
import string
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrbench import metrics as m
from hrbench.errors import ConfigError
from hrbench.evaluation.modules import Example, Prediction, Trace
from tests._examples import examples

# --------------------------------------------------------------------------------------------
# The official SQuAD v2.0 script (evaluate-v2.0.py), transcribed as the oracle.
# --------------------------------------------------------------------------------------------


def official_normalize_answer(s: str) -> str:
    def remove_articles(text: str) -> str:
        regex = re.compile(r"\b(a|an|the)\b", re.UNICODE)
        return re.sub(regex, " ", text)

    def white_space_fix(text: str) -> str:
        return " ".join(text.split())

    def remove_punc(text: str) -> str:
        exclude = set(string.punctuation)
        return "".join(ch for ch in text if ch not in exclude)

    def lower(text: str) -> str:
        return text.lower()

    return white_space_fix(remove_articles(remove_punc(lower(s))))


def official_get_tokens(s: str) -> list[str]:
    if not s:
        return []
    return official_normalize_answer(s).split()


def official_compute_exact(a_gold: str, a_pred: str) -> int:
    return int(official_normalize_answer(a_gold) == official_normalize_answer(a_pred))


def official_compute_f1(a_gold: str, a_pred: str) -> float:
    gold_toks = official_get_tokens(a_gold)
    pred_toks = official_get_tokens(a_pred)
    common = collections.Counter(gold_toks) & collections.Counter(pred_toks)
    num_same = sum(common.values())
    if len(gold_toks) == 0 or len(pred_toks) == 0:
        return int(gold_toks == pred_toks)
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(pred_toks)
    recall = 1.0 * num_same / len(gold_toks)
    return (2 * precision * recall) / (precision + recall)


def official_scores(answers: list[str], pred: str) -> tuple[int, float]:
    gold_answers = [a for a in answers if official_normalize_answer(a)]
    if not gold_answers:
        gold_answers = [""]
    return (
        max(official_compute_exact(a, pred) for a in gold_answers),
        max(official_compute_f1(a, pred) for a in gold_answers),
    )


# --------------------------------------------------------------------------------------------
# Hand-checked values
# --------------------------------------------------------------------------------------------

EXACT_CASES = [
    # (prediction, references, exact) -- checked by hand against the script's rules
    ("The Normans", ["Normans"], 1.0),  # article dropped
    ("Normans", "the Normans", 1.0),
    ("normans.", ["Normans"], 1.0),  # case, punctuation
    ("Rollo's", ["Rollos"], 1.0),  # apostrophe is punctuation
    ("U.S.", ["US"], 1.0),
    ("1,300,000", ["1300000"], 1.0),  # the comma is punctuation
    ("a  Norman\tknight", ["Norman knight"], 1.0),  # white space collapsed
    ("Normandy", ["Normans"], 0.0),
    ("theater", ["ater"], 0.0),  # articles only as whole words
    ("Anthem", ["them"], 0.0),
    ("\u201cNormans\u201d", ["Normans"], 0.0),  # curly quotes are not in string.punctuation
    ("caf\u00e9", ["cafe"], 0.0),  # no accent folding
    ("France", ["Italy", "France", "Spain"], 1.0),  # best over references
    ("", [], 1.0),  # empty prediction on an unanswerable item
    ("", None, 1.0),
    ("Normans", [], 0.0),  # any answer on an unanswerable item
    ("The", [], 1.0),  # normalises to the empty answer
    ("", ["the", "."], 1.0),  # references that normalise to nothing: unanswerable
    ("", ["Normans"], 0.0),
    (None, [], 1.0),  # None is the empty answer
    (3.0, ["3"], 1.0),  # numbers in plain digits
    (100000, "100,000", 1.0),
]

F1_CASES = [
    ("Normans in France", ["the Normans"], 0.5),  # p 1/3, r 1
    ("10th and 11th centuries", ["in the 10th and 11th centuries"], 8 / 9),  # p 1, r 4/5
    ("Normandy", ["France", "Normandy, a region in France"], 0.4),  # best: p 1, r 1/4
    ("the the cat cat", ["cat"], 2 / 3),  # bag of tokens: 1 common, p 1/2, r 1
    ("Normans", ["Normans"], 1.0),
    ("Vikings", ["Normans"], 0.0),
    ("", [], 1.0),  # both empty
    ("Normans", [], 0.0),  # answer on unanswerable
    ("", ["Normans"], 0.0),  # abstained on answerable
    ("a an the", [""], 1.0),
]


@pytest.mark.parametrize(("pred", "refs", "want"), EXACT_CASES)
def test_squad_exact_hand_checked(pred: Any, refs: Any, want: float) -> None:
    assert m.squad_exact(pred, refs) == want
    assert m.exact_match("answer")(Prediction(answer=pred), Example(answer=refs)) == want


@pytest.mark.parametrize(("pred", "refs", "want"), F1_CASES)
def test_squad_f1_hand_checked(pred: Any, refs: Any, want: float) -> None:
    assert m.squad_f1(pred, refs) == pytest.approx(want)
    assert m.f1("answer")(Prediction(answer=pred), Example(answer=refs)) == pytest.approx(want)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("The  Normans!", "normans"),
        ("an apple, a day", "apple day"),
        ("A.B.C.", "abc"),
        ("the-end", "theend"),  # punctuation goes before articles are removed
        ("Theodore the Great", "theodore great"),
        ("", ""),
    ],
)
def test_normalize_answer(text: str, want: str) -> None:
    assert m.normalize_answer(text) == want == official_normalize_answer(text)


_pieces = st.sampled_from(
    list("abcdeAnThE .,!?'\"-\t\n\u00e9\u201c\u00a0\u0130") + ["the", " an ", " a ", "The ", "cat", "Normans"]
)
_texts = st.lists(_pieces, max_size=12).map("".join)


@settings(max_examples=examples(400), deadline=None)
@given(pred=_texts, refs=st.lists(_texts, max_size=3))
def test_matches_official_script_on_random_text(pred: str, refs: list[str]) -> None:
    exact, f1 = official_scores(refs, pred)
    assert m.normalize_answer(pred) == official_normalize_answer(pred)
    assert m.squad_exact(pred, refs) == exact
    assert m.squad_f1(pred, refs) == f1


def test_matches_official_script_on_real_llama_answers(data: Any) -> None:
    """Every answer of a real Llama-3.2-3B SQuAD 2.0 run, scored by both, item by item."""
    base = data / "squad2-dev-llama32-3b"
    questions = {}
    for line in (base / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        q = json.loads(line)
        questions[q["qid"]] = q
    n = 0
    ems, f1s = [], []
    for run in ("pipeline_v2_final_1000", "pipeline_v1_1000", "baseline_raw_50"):
        for line in (base / "runs" / f"{run}.jsonl").read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            answers = questions[rec["qid"]]["answers"]
            mapped = "" if rec["prediction"] == "NO ANSWER" else rec["prediction"]
            for k, pred in enumerate((rec["prediction"], mapped)):
                exact, f1 = official_scores(answers, pred)
                assert m.squad_exact(pred, answers) == exact, (rec["qid"], pred)
                assert m.squad_f1(pred, answers) == f1, (rec["qid"], pred)
                if run == "pipeline_v2_final_1000" and k == 1:
                    ems.append(exact)
                    f1s.append(f1)
                n += 1
    assert n == 2 * (1000 + 1000 + 50)
    assert len(ems) == 1000
    # a sanity check on the totals (abstentions mapped to the empty answer)
    assert 0 < sum(ems) / 1000 <= sum(f1s) / 1000 < 1


def test_unanswerable_squad_items_from_the_500_sample(data: Any) -> None:
    rows = [
        json.loads(x) for x in (data / "squad2-dev-500" / "squad2_dev_500.jsonl").read_text().splitlines()
    ]
    unans = [r for r in rows if r["is_impossible"]]
    assert len(unans) == 258
    assert all(r["answers"] == [] for r in unans)
    em = m.exact_match("answer", column="answers")
    assert all(em(Prediction(answer=""), Example(r)) == 1.0 for r in unans)
    assert all(em(Prediction(answer="Normans"), Example(r)) == 0.0 for r in unans)


# --------------------------------------------------------------------------------------------
# Metric objects
# --------------------------------------------------------------------------------------------


def test_exact_match_field_and_column() -> None:
    metric = m.exact_match(field="sentiment", column="label")
    assert metric.name == "exact_match"
    assert metric.fields == ("sentiment",) and metric.columns == ("label",)
    assert metric(Prediction(sentiment="Positive"), Example(label="positive")) == 1.0
    assert metric(Prediction(sentiment="negative"), Example(label="positive")) == 0.0


def test_exact_match_without_normalising_is_literal() -> None:
    metric = m.exact_match("a", normalise=False)
    assert metric(Prediction(a="Paris"), Example(a=["Lima", "Paris"])) == 1.0
    assert metric(Prediction(a="paris"), Example(a="Paris")) == 0.0
    assert metric(Prediction(a=""), Example(a=[])) == 1.0


def test_missing_reference_values_are_unanswerable() -> None:
    metric = m.exact_match("a")
    assert metric(Prediction(a=""), Example(a=float("nan"))) == 1.0
    assert metric(Prediction(a=""), Example(a=None)) == 1.0
    pd = pytest.importorskip("pandas")
    assert metric(Prediction(a=""), Example(a=pd.NA)) == 1.0
    assert metric(Prediction(a=pd.NA), Example(a=[])) == 1.0
    import numpy as np

    assert metric(Prediction(a="x"), Example(a=np.array(["X", "y"]))) == 1.0


def test_missing_field_raises_key_error() -> None:
    with pytest.raises(KeyError, match="no field 'sentiment'"):
        m.exact_match("sentiment")(Prediction(label="x"), Example(sentiment="x"))
    with pytest.raises(KeyError, match="data row has no field 'sentiment'"):
        m.exact_match("sentiment")(Prediction(sentiment="x"), Example(text="x"))


def test_unbound_field_uses_the_only_output_and_bind_fills_it() -> None:
    metric = m.exact_match()
    assert metric(Prediction(sentiment="positive"), Example(sentiment="positive")) == 1.0
    bound = metric.bind(["sentiment"])
    assert bound.fields == ("sentiment",) and bound.columns == ("sentiment",)
    with pytest.raises(ConfigError, match="name the field"):
        metric.bind(["a", "b"])
    assert m.threshold(m.f1(), 0.5).bind(["answer"]).fields == ("answer",)
    assert m.exact_match("x").bind(["a", "b"]).fields == ("x",)


@pytest.mark.parametrize(
    ("pred", "ref", "want"),
    [
        ("It was Paris, France.", "paris", 1.0),
        ("concatenate", "cat", 0.0),  # whole tokens only
        ("The city of New York", ["new york", "NYC"], 1.0),
        ("", [], 1.0),
        ("something", [], 0.0),
    ],
)
def test_contains(pred: str, ref: Any, want: float) -> None:
    assert m.contains("a")(Prediction(a=pred), Example(a=ref)) == want


def test_contains_plain_substring() -> None:
    assert m.contains("a", normalise=False)(Prediction(a="concatenate"), Example(a="cat")) == 1.0


def test_field_match() -> None:
    p = Prediction(city="Paris", country="Spain")
    e = Example(city="paris", country="France", extra=1)
    assert m.field_match(["city", "country"])(p, e) == 0.5
    assert m.field_match({"city": "city"})(p, e) == 1.0
    assert m.field_match()(p, e) == 0.5
    assert m.field_match(normalise=False)(p, e) == 0.0
    with pytest.raises(ConfigError):
        m.field_match([])


def test_threshold_keeps_feedback() -> None:
    metric = m.threshold(m.f1("a"), at=0.5)
    assert metric.name == "threshold(f1, 0.5)"
    assert metric(Prediction(a="Normans in France"), Example(a="the Normans")) == 1.0
    assert metric(Prediction(a="Normans in northern France"), Example(a="the Normans")) == 0.0
    fb = m.threshold(lambda p, e: {"score": 0.9, "feedback": "close"}, at=0.95)
    assert fb(Prediction(a=1), Example()) == m.MetricResult(0.0, "close")


def test_with_feedback_both_styles() -> None:
    own = m.with_feedback(lambda p, e: (p.a == e.a, "same" if p.a == e.a else "differs"))
    assert own(Prediction(a=1), Example(a=2)) == m.MetricResult(0.0, "differs")
    explained = m.with_feedback(m.exact_match("a"), lambda p, e, s: f"score {s:g}")
    assert explained(Prediction(a="x"), Example(a="x")) == m.MetricResult(1.0, "score 1")


def test_with_trace_gets_the_trace() -> None:
    seen = []
    metric = m.with_trace(lambda p, e, t: seen.append(t) or 1.0, name="t")
    trace = Trace(ledger_id="x", module="m", draw_index=1)
    assert metric(Prediction(a=1), Example(), trace) == 1.0
    assert seen == [trace] and metric.wants_trace
    with pytest.raises(ConfigError, match="three arguments"):
        m.with_trace(lambda p, e: 1.0)


def test_custom_and_as_metric() -> None:
    def same_label(prediction: Any, expected: Any) -> bool:
        return prediction.sentiment == expected.sentiment

    metric = m.custom(same_label)
    assert metric.name == "same_label"
    assert m.as_metric(same_label).name == "same_label"
    assert m.as_metric("f1").name == "f1"
    assert m.as_metric(metric) is metric
    with pytest.raises(ConfigError, match="unknown metric"):
        m.as_metric("bleu")
    with pytest.raises(ConfigError):
        m.as_metric(42)


@pytest.mark.parametrize(
    ("value", "want"),
    [
        (True, (1.0, None)),
        (False, (0.0, None)),
        (1, (1.0, None)),
        (0.25, (0.25, None)),
        ({"score": 0.5, "feedback": "half"}, (0.5, "half")),
        (m.MetricResult(True, "ok"), (1.0, "ok")),
    ],
)
def test_score_of(value: Any, want: tuple[float, str | None]) -> None:
    assert m.score_of(value) == want


@pytest.mark.parametrize("value", [None, "1", float("nan"), {"feedback": "x"}, object()])
def test_score_of_rejects(value: Any) -> None:
    with pytest.raises(TypeError):
        m.score_of(value)


def test_references() -> None:
    assert m.references(["a", None, 3]) == ["a", "3"]
    assert m.references(("x",)) == ["x"]
    assert m.references(math.nan) == []
    assert m.references(7) == ["7"]
