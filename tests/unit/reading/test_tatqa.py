"""The official TAT-QA metric: each rule family, then the real runs.

The literal figures below were computed by the official evaluation itself: ``tatqa_metric.py``,
``tatqa_utils.py`` and ``tatqa_eval.py`` of GitHub NExTplusplus/TAT-QA at commit 870accc, run
unmodified (numpy 2.4, scipy 1.17, pandas 3.1) by ``TaTQAEmAndF1`` over the 1,668 questions of
``tatqa_dataset_dev.json`` with each shipped run given as ``{uid: [pred_answer, pred_scale]}``
(the Program-of-Thoughts runs) or as the file is (the TAT-QA sample prediction); a question
without a prediction is passed as ``(None, None)``, as ``tatqa_eval.py`` does.
``bench/tatqa_metric.py`` prints both and explains how to rerun the official script.
"""

from __future__ import annotations

import functools
import itertools
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import hrbench as hb
from hrbench.evaluation.modules import Example, Prediction
from hrbench.reading import (
    answer_scorer,
    outputs_arm,
    tatqa_answer_string,
    tatqa_em_f1,
    tatqa_exact_match,
    tatqa_f1,
    tatqa_normalize,
    tatqa_number,
    tatqa_outputs,
    tatqa_reference,
    tatqa_scorer,
    tatqa_scores,
)
from hrbench.records import Answer
from tests._examples import examples

# -- scale words ---------------------------------------------------------------------------------

FACTORS = {"": 1, "thousand": 1000, "million": 10**6, "billion": 10**9, "percent": 0.01}


@pytest.mark.parametrize("scale", list(FACTORS))
@pytest.mark.parametrize("number", ["1496.5", "12", "-3.25", "0.4"])
def test_a_number_with_its_scale_is_written_multiplied_out(scale: str, number: str) -> None:
    expected = f"{float(number) * FACTORS[scale]:.4f}"
    assert tatqa_answer_string([number], scale) == expected
    assert tatqa_em_f1([number], scale, [number], scale, "span") == (1.0, 1.0)


@settings(max_examples=examples(200), deadline=None)
@given(cents=st.integers(-(10**6), 10**6))
def test_the_same_amount_in_another_scale_is_equal(cents: int) -> None:
    """1496.5 million is 1496500 thousand: the official script compares amounts, not words.

    (Amounts are compared as float products written with 4 decimals, so above about 10**11 the
    float noise of the product can tell two equal amounts apart, in the official script too.)
    """
    millions = cents / 100
    thousands = cents * 10
    assert tatqa_em_f1(str(thousands), "thousand", millions, "million", "arithmetic") == (1.0, 1.0)
    assert tatqa_em_f1(str(millions), "", millions, "million", "arithmetic")[0] == (cents == 0)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1.5 million", 1500000.0),
        ("1.5 Million", 1500000.0),
        ("2 billion", 2000000000),
        ("3 thousand", 3000),
        ("4 hundred", 400),
        ("12 cents", 12),  # not a scale word
        ("$3,181 million", 3181000000),
        ("7", 7),
    ],
)
def test_scale_words_written_after_a_number(text: str, value: float) -> None:
    assert tatqa_number(text) == value
    assert type(tatqa_number(text)) is type(value)


def test_a_scale_word_in_the_prediction_text_counts_without_pred_scale() -> None:
    # real: gpt3 direct on 4960801d ("$1,496.5 million", no pred_scale) against $1,496.5 million
    assert tatqa_em_f1(["$1,496.5 million"], "", ["$1,496.5"], "million", "span") == (1.0, 1.0)
    # a prediction that converts the scale writes the same amount
    assert tatqa_em_f1("1.4965 billion", "", ["$1,496.5"], "million", "span") == (1.0, 1.0)
    # only the first number-and-word run counts (official word_scale_handle)
    assert tatqa_number("5 units of 3 million") == 5


def test_non_number_spans_get_the_scale_word_appended() -> None:
    assert tatqa_answer_string(["fixed-price type"], "million") == "fixed-price type million"
    assert tatqa_em_f1(["revenue"], "million", ["revenue"], "", "span") == (0.0, 0.67)


# -- rounding to 2 decimals ----------------------------------------------------------------------


@settings(max_examples=examples(300), deadline=None)
@given(hundredths=st.integers(-(10**7), 10**7), noise=st.integers(-40, 40))
def test_numbers_are_rounded_to_two_decimals_before_comparing(hundredths: int, noise: int) -> None:
    assume(not (hundredths == 0 and noise < 0))  # -0.0 is its own string: see the test below
    gold = hundredths / 100
    pred = str(gold + noise / 10**4)  # less than half a hundredth away (a string: 0 is no answer)
    assert tatqa_em_f1(pred, "million", gold, "million", "arithmetic") == (1.0, 1.0)
    other = (hundredths + 1) / 100
    assert tatqa_em_f1(other, "million", gold, "million", "arithmetic") == (0.0, 0.0)


def test_a_negative_number_that_rounds_to_zero_is_not_zero_as_in_the_official_script() -> None:
    # The official script formats round(value, 2) with "%.4f": round(-0.0001, 2) is -0.0, printed
    # "-0.0000", which is not gold 0's "0.0000". hrbench keeps the official result.
    assert tatqa_em_f1("-0.0001", "million", 0, "million", "arithmetic") == (0.0, 0.0)
    assert tatqa_em_f1("0.0001", "million", 0, "million", "arithmetic") == (1.0, 1.0)


def test_rounding_on_real_program_outputs() -> None:
    # real: codex PoT on 05b670d3 computed -22.222222222222225 (percent) for -22.22
    assert tatqa_em_f1(-22.222222222222225, "percent", -22.22, "percent", "arithmetic") == (1.0, 1.0)
    # real: codex PoT on a0414f81 computed 178.67 million for 172 million
    assert tatqa_em_f1(178.66666666666666, "million", 172, "million", "arithmetic") == (0.0, 0.0)
    assert tatqa_em_f1("-22.21", "percent", -22.22, "percent", "arithmetic") == (0.0, 0.0)


def test_f1_is_rounded_to_two_decimals_half_to_even_as_numpy_does() -> None:
    # 1 common token of 8 predicted and 1 gold: F1 = 2/9 = 0.2222 -> 0.22
    assert tatqa_em_f1("a1 b c d e f g h", "", ["a1"], "", "span") == (0.0, 0.22)
    # precision 1/8, recall 1: F1 = 0.2222; precision 3/5, recall 3/3: 0.75
    assert tatqa_em_f1("x y z u v", "", ["x y z"], "", "span") == (0.0, 0.75)


# -- percent -------------------------------------------------------------------------------------


def test_percent_handling() -> None:
    # "%" in the text: the value already carries the percent (real: gpt3 direct on 5103aed0)
    assert tatqa_em_f1(["2.1%"], "", 2.1, "percent", "arithmetic") == (1.0, 1.0)
    # a bare fraction without a scale gets a second chance (official add_percent_pred)
    assert tatqa_em_f1("0.2342", "", 23.42, "percent", "arithmetic") == (1.0, 1.0)
    # ... that second chance is unrounded: 0.23425 is not 0.2342
    assert tatqa_em_f1("0.23425", "", 23.42, "percent", "arithmetic") == (0.0, 0.0)
    # the bare number with no scale is not a percent
    assert tatqa_em_f1("23.42", "", 23.42, "percent", "arithmetic") == (0.0, 0.0)
    # with its scale it is (real: the sample prediction on 97125a03)
    assert tatqa_em_f1(["75.1%"], "", ["75.1"], "percent", "span") == (1.0, 1.0)
    assert tatqa_number("12%") == 0.12 and tatqa_number("12 %") == 0.12


@settings(max_examples=examples(200), deadline=None)
@given(hundredths=st.integers(0, 10**6))
def test_a_percent_sign_equals_the_percent_scale(hundredths: int) -> None:
    x = f"{hundredths / 100:g}"
    assert tatqa_em_f1([f"{x}%"], "", [x], "percent", "span")[0] == 1.0
    assert tatqa_em_f1([x], "percent", [f"{x}%"], "", "span")[0] == 1.0


# -- negative numbers in brackets ----------------------------------------------------------------


@settings(max_examples=examples(200), deadline=None)
@given(hundredths=st.integers(1, 10**8), money=st.sampled_from(["", "$", "£", "€"]))
def test_a_number_in_brackets_is_negative(hundredths: int, money: str) -> None:
    x = f"{hundredths / 100:.2f}"
    assert tatqa_number(f"{money}({x})") == tatqa_number(f"-{x}") == -float(x)
    assert tatqa_em_f1([f"-{x}"], "million", [f"{money}({x})"], "million", "span") == (1.0, 1.0)


def test_brackets_real_cases_and_non_numbers() -> None:
    # real: codex PoT on 3de31a7f answered [65, -114, -71] million for ["65", "(114)", "(71)"]
    assert tatqa_em_f1([65, -114, -71], "million", ["65", "(114)", "(71)"], "million", "multi-span") == (
        1.0,
        1.0,
    )
    # real: gpt3 direct on 6cdd6fc8 copied "£(8.1m)"
    assert tatqa_em_f1(["£(8.1m)"], "", ["£(8.1m)"], "", "span") == (1.0, 1.0)
    assert tatqa_normalize("(see note 5)") == "see note 5"
    assert tatqa_number("(5)") == -5 and tatqa_number("5") == 5
    # official negative_num_handle: digits, points and spaces only between the brackets, so a
    # grouped number in brackets stays positive (noted with shared case R14a)
    assert tatqa_number("(1,234)") == 1234 and tatqa_number("(1234)") == -1234


def test_the_sign_counts_unlike_squad() -> None:
    """Shared case R09f's note: SQuAD EM drops the minus sign; the TAT-QA metric keeps it."""
    assert hb.metrics.squad_exact("-154", [154]) == 1.0
    assert tatqa_em_f1("-154", "", 154, "", "arithmetic") == (0.0, 0.0)
    assert tatqa_em_f1("-154", "", -154, "", "arithmetic") == (1.0, 1.0)


# -- multi-span answers as one bag ---------------------------------------------------------------

SPANS = ["fixed-price type", "cost-plus type", "time-and-material type"]


@pytest.mark.parametrize("order", list(itertools.permutations(SPANS)))
def test_multi_span_order_does_not_matter(order: tuple[str, ...]) -> None:
    assert tatqa_em_f1(list(order), "", SPANS, "", "multi-span") == (1.0, 1.0)


def test_multi_span_partial_answers_score_the_token_set_f1() -> None:
    # gold tokens {fixedprice, type, costplus, timeandmaterial}; predicted {fixedprice, type}
    assert tatqa_em_f1(["fixed-price type"], "", SPANS, "", "multi-span") == (0.0, 0.67)
    # a repeated token counts once: "type type" is the set {type}
    assert tatqa_em_f1(["type type"], "", SPANS, "", "multi-span") == (0.0, 0.4)
    # the spans joined in one string are the same bag, but not the same exact string
    assert tatqa_em_f1(
        "cost-plus type, fixed-price type, time-and-material type", "", SPANS, "", "multi-span"
    )[1] == pytest.approx(1.0)


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.sampled_from(["alpha", "beta", "gamma", "delta", "10", "20"]), min_size=1, max_size=5))
def test_multi_span_f1_is_the_f1_of_token_sets(pred: list[str]) -> None:
    gold = ["alpha", "beta", "10"]
    p = {tatqa_normalize(x) for x in pred}
    g = {tatqa_normalize(x) for x in gold}
    common = len(p & g)
    f1 = 0.0 if not common else 2 * common / (len(p) + len(g))
    em, got = tatqa_em_f1(pred, "", gold, "", "multi-span")
    assert got == round(f1 * 100) / 100
    assert em == float(sorted(pred) == sorted(gold))


# -- arithmetic and count answers: EM only -------------------------------------------------------


@pytest.mark.parametrize("kind", ["arithmetic", "count"])
def test_arithmetic_and_count_answers_get_no_partial_credit(kind: str) -> None:
    assert tatqa_em_f1(["12", "13"], "", 12, "", kind) == (0.0, 0.0)
    assert tatqa_em_f1(["12", "13"], "", ["12"], "", "span") == (0.0, 0.67)
    assert tatqa_em_f1("12", "", 12, "", kind) == (1.0, 1.0)


def test_count_gold_is_an_integer() -> None:
    assert tatqa_em_f1("4", "", 4, "", "count") == (1.0, 1.0)
    assert tatqa_em_f1("4.0", "", 4, "", "count") == (1.0, 1.0)  # both read as 4.0000


# -- no prediction, and the official quirks ------------------------------------------------------


@pytest.mark.parametrize("pred", [None, "", [], 0, 0.0, math.nan])
def test_no_prediction_scores_zero(pred: Any) -> None:
    """Official ``if not prediction``: the number 0 is no prediction too (a quirk, kept)."""
    assert tatqa_em_f1(pred, "", 0, "", "arithmetic") == (0.0, 0.0)


def test_normalisation_rules() -> None:
    assert tatqa_normalize("The  Revenue, in 2019.") == "revenue in 2019"
    assert tatqa_normalize("2019.0 million") == "2019.0 million"  # each piece alone: "2019.0"
    assert tatqa_normalize("(5) 3%") == "-5 0.03"
    assert tatqa_normalize("1,200") == "1200"
    assert tatqa_normalize(".5") == "None"  # official quirk: a number whose value is not read
    assert tatqa_normalize("an apple a day") == "apple day"


def test_strings_beside_numbers_cannot_be_sorted_as_in_the_official_script() -> None:
    with pytest.raises(TypeError):
        tatqa_em_f1(["a", 1], "", ["a"], "", "span")


# -- the scorer, the metrics ---------------------------------------------------------------------

ITEM = {"question": "q", "document": "d"}
LABEL = {"answers": "-12.6", "answer": -12.6, "scale": "million", "answer_type": "arithmetic"}


@pytest.mark.parametrize(
    ("output", "correct", "kind"),
    [
        ({"text": "-12.6 million", "prediction": -12.6, "scale": "million"}, True, None),
        ("-$12.6 million", True, None),
        ("-12.6", False, "wrong"),
        ("-0.0126 billion", True, None),
        (None, False, "parse_failure"),
        ("   ", False, "parse_failure"),
        ({"text": None, "failure_kind": "parse_failure"}, False, "parse_failure"),
        ({"ok": False, "text": "-12.6 million"}, False, "error"),
        ({"text": "The document does not say.", "prediction": "x", "scale": ""}, False, "not_in_document"),
        (Answer(text="-13", partial=True, notes=["cost_cap_reached"]), False, "budget_stop"),
        ({"text": "-13", "steps": [{"finish_reason": "content_filter"}]}, False, "refusal"),
        ({"text": "x", "prediction": ["a", 1], "scale": ""}, False, "wrong"),
    ],
)
def test_tatqa_scorer_follows_the_seed_contract(output: Any, correct: bool, kind: str | None) -> None:
    s = tatqa_scorer()(ITEM, output, LABEL)
    assert (s.correct, s.failure_kind) == (correct, kind)


def test_tatqa_scorer_reads_the_gold_from_the_label_never_the_item() -> None:
    s = tatqa_scorer()
    assert s(None, "-22.22%", {"answers": "-22.22", "answer": -22.22, "scale": "percent"}).correct is True
    assert s("a question", "Paris", ["Paris"]).correct is True  # a plain label is the gold answer
    assert s("a question", "Paris", None).correct is None
    assert s(ITEM, "-12.6 million", LABEL).outcome == "-12600000.0"
    # a gold answer placed in the item is not read: the item is what arms see
    assert s({"answer": -12.6, "scale": "million"}, "-12.6 million", "5").correct is False


def test_tatqa_scores_is_the_benchmark_metric() -> None:
    assert tatqa_scores(ITEM, "-12.6 million", LABEL) == {"tatqa_em": 1.0, "tatqa_f1": 1.0}
    assert tatqa_scores(ITEM, None, LABEL) == {"tatqa_em": 0.0, "tatqa_f1": 0.0}
    assert tatqa_scores(ITEM, {"ok": False, "text": "-12.6 million"}, LABEL) == {
        "tatqa_em": 0.0,
        "tatqa_f1": 0.0,
    }
    spans = {"answers": SPANS, "answer": SPANS, "scale": "", "answer_type": "multi-span"}
    assert tatqa_scores(None, {"text": "x", "prediction": ["fixed-price type"], "scale": ""}, spans) == {
        "tatqa_em": 0.0,
        "tatqa_f1": 0.67,
    }


def test_evaluate_metrics() -> None:
    row = Example(answer=["$1,496.5"], scale="million", answer_type="span")
    assert tatqa_exact_match()(Prediction(answer="1496.5", scale="million"), row) == 1.0
    assert tatqa_exact_match()(Prediction(answer="1496.5"), row) == 0.0  # no scale field: no scale
    assert tatqa_exact_match(scale_field=None)(Prediction(answer="1496.5 million", scale="x"), row) == 1.0
    spans = Example(gold=SPANS, answer_type="multi-span")
    assert tatqa_f1("out", "gold")(Prediction(out=["fixed-price type"]), spans) == 0.67
    assert tatqa_f1("out", "gold")(Prediction(out="12"), Example(gold=12)) == 1.0  # a number: arithmetic
    assert hb.metrics.as_metric("tatqa_f1").name == "tatqa_f1"


def test_evaluate_runs_the_tatqa_metric() -> None:
    data = [
        {"q": "a", "answer": ["$1,496.5"], "scale": "million", "answer_type": "span"},
        {"q": "b", "answer": SPANS, "scale": "", "answer_type": "multi-span"},
    ]
    replies = {"a": ("1496.5", "million"), "b": (["fixed-price type"], "")}

    def module(q: str) -> dict[str, Any]:
        answer, scale = replies[q]
        return {"answer": answer, "scale": scale}

    mod = hb.module_fn("q -> answer, scale", module)
    assert hb.evaluate(mod, data, metric=tatqa_f1()).scores == [1.0, 0.67]
    assert hb.evaluate(mod, data, metric="tatqa_exact_match").scores == [1.0, 0.0]


# -- real data -----------------------------------------------------------------------------------

# (run, question uid) -> (EM, F1), as the official script scores them (see the module docstring)
OFFICIAL_PER_QUESTION = {
    ("codex_code-davinci-002_pot", "23801627-ff77-4597-8d24-1c99e2452082"): (0.0, 0.98),
    ("codex_code-davinci-002_pot", "05b670d3-5b19-438c-873f-9bf6de29c69e"): (1.0, 1.0),
    ("codex_code-davinci-002_pot", "d47306cf-e276-4836-a827-ebebdc47e078"): (0.0, 0.53),
    ("codex_code-davinci-002_pot", "a0414f81-8dc2-44b2-a441-2c9d9c805c4d"): (0.0, 0.0),
    ("codex_code-davinci-002_pot", "c2c72e15-a955-4c45-bc51-95112d7db982"): (1.0, 1.0),
    ("codex_code-davinci-002_pot", "3de31a7f-0d57-4471-a3ab-4f698274be0c"): (1.0, 1.0),
    ("gpt3_text-davinci-002_direct", "23801627-ff77-4597-8d24-1c99e2452082"): (0.0, 0.91),
    ("gpt3_text-davinci-002_direct", "4960801d-277d-4f79-8eca-c4d0200fa9d6"): (1.0, 1.0),
    ("gpt3_text-davinci-002_direct", "5103aed0-b4e8-4fae-bf78-e2c9f4ba84cf"): (1.0, 1.0),
    ("gpt3_text-davinci-002_direct", "d47306cf-e276-4836-a827-ebebdc47e078"): (0.0, 0.5),
    ("gpt3_text-davinci-002_direct", "6cdd6fc8-6173-4515-a307-ee067f99ff2b"): (1.0, 1.0),
    ("tatqa_repo_sample_prediction", "23801627-ff77-4597-8d24-1c99e2452082"): (0.0, 0.96),
    ("tatqa_repo_sample_prediction", "593c4388-5209-4462-8b83-b429c8612c25"): (0.0, 0.17),
    ("tatqa_repo_sample_prediction", "5103aed0-b4e8-4fae-bf78-e2c9f4ba84cf"): (0.0, 0.0),
    ("tatqa_repo_sample_prediction", "ba6783f3-8207-419a-b407-3f688682caef"): (1.0, 1.0),
    ("tatqa_repo_sample_prediction", "97125a03-6fc4-4782-a1d7-77fea738df4f"): (1.0, 1.0),
    ("tatqa_repo_sample_prediction", "3de31a7f-0d57-4471-a3ab-4f698274be0c"): (1.0, 1.0),
}

# run -> (questions with EM 1, sum of F1 x 100) over the 1,668 dev questions, official script;
# printed by it as EM / F1: cot 61.39 / 68.56, direct 54.98 / 62.06, pot 68.94 / 75.86,
# gpt3 cot 42.51 / 52.77, gpt3 direct 37.83 / 46.70, sample 45.92 / 58.88
OFFICIAL_TOTALS = {
    "codex_code-davinci-002_cot": (1024, 114356),
    "codex_code-davinci-002_direct": (917, 103515),
    "codex_code-davinci-002_pot": (1150, 126530),
    "gpt3_text-davinci-002_cot": (709, 88014),
    "gpt3_text-davinci-002_direct": (631, 77894),
    "tatqa_repo_sample_prediction": (766, 98211),
}


def _run_file(data: Path, run: str) -> Path:
    runs = data / "tatqa-dev-llm" / "runs"
    return runs / (f"{run}.json" if run == "tatqa_repo_sample_prediction" else f"{run}.jsonl")


@pytest.fixture
def dev(data: Path) -> hb.Reference:
    return _dev(data)


@functools.cache
def _dev(data: Path) -> hb.Reference:
    return tatqa_reference(data / "tatqa-dev-llm" / "tatqa_dataset_dev.json")


def test_official_scores_of_real_questions(data: Path, dev: hb.Reference) -> None:
    outputs = {run: tatqa_outputs(_run_file(data, run), scaled=True) for run, _ in OFFICIAL_PER_QUESTION}
    for (run, qid), expected in OFFICIAL_PER_QUESTION.items():
        got = tatqa_scores(dev.items[qid], outputs[run][qid], dev.labels[qid])
        assert (got["tatqa_em"], got["tatqa_f1"]) == expected, (run, qid)


@pytest.mark.parametrize("run", list(OFFICIAL_TOTALS))
def test_hrbench_reproduces_the_official_figures_on_every_run(
    data: Path, dev: hb.Reference, run: str
) -> None:
    """The whole dev set through the runner: scorer tatqa (EM) and metrics (EM, F1); 1,668 rows."""
    outputs = tatqa_outputs(_run_file(data, run), scaled=True)
    absent = sorted(set(dev.ids) - set(outputs))  # the LLM runs leave out one question
    assert len(absent) == (0 if run == "tatqa_repo_sample_prediction" else 1)
    if absent:
        with pytest.raises(hb.ConfigError, match=f"1 of 1668 item\\(s\\) run have no output: '{absent[0]}'"):
            hb.benchmark(outputs_arm(run, outputs), dev, runs=1)  # refused unless the arm allows it
    arm = outputs_arm(run, outputs, missing="error")
    with pytest.warns((hb.FewRunsWarning, hb.ArmErrorWarning)) as said:  # one prediction per question
        bench = hb.benchmark(arm, dev, runs=1, scorer=tatqa_scorer(), metrics=[tatqa_scores])
    for item in absent:  # an error run with its cause, never a parse_failure
        assert any(f"no output for item '{item}'" in str(w.message) for w in said)
        assert [r.failure_kind for r in bench.rows if r.item == item] == ["error"]
    (summary,) = bench.summary()
    em_hits, f1_sum = OFFICIAL_TOTALS[run]
    assert summary["runs"] == 1668
    assert summary["accuracy"] == pytest.approx(em_hits / 1668, abs=1e-12)
    assert summary["metrics"]["tatqa_em"] == pytest.approx(em_hits / 1668, abs=1e-12)
    assert summary["metrics"]["tatqa_f1"] == pytest.approx(f1_sum / 100 / 1668, abs=1e-9)
    # the printed figures, to 0.01 as the official script prints them
    assert f"{100 * summary['metrics']['tatqa_f1']:.2f}" == f"{f1_sum / 1668:.2f}"


def test_tatqa_answer_contains_is_unchanged_by_the_scaled_outputs(data: Path, dev: hb.Reference) -> None:
    run = _run_file(data, "codex_code-davinci-002_pot")
    plain, scaled = tatqa_outputs(run), tatqa_outputs(run, scaled=True)
    assert {k: v["text"] for k, v in scaled.items()} == plain
    assert scaled["05b670d3-5b19-438c-873f-9bf6de29c69e"] == {
        "text": "-22.2222222222%",
        "prediction": -22.222222222222225,
        "scale": "percent",
    }
    s = answer_scorer()
    ids = dev.ids[:200]
    assert [s(dev.items[i], plain.get(i), dev.labels[i]) for i in ids] == [
        s(dev.items[i], scaled.get(i), dev.labels[i]) for i in ids
    ]


def test_outputs_arm_reads_a_scale_field(tmp_path: Path) -> None:
    f = tmp_path / "run.jsonl"
    f.write_text(
        '{"question_id": "a", "pred_answer": ["1496.5"], "pred_scale": "million"}\n'
        '{"question_id": "b", "pred_answer": 36, "pred_scale": "percent"}\n'
        '{"question_id": "c", "pred_answer": "x"}\n',
        encoding="utf-8",
    )
    arm = outputs_arm(
        "r", f, id_field="question_id", prediction_field="pred_answer", scale_field="pred_scale"
    )
    ref = hb.Reference(
        {"a": "qa", "b": "qb", "c": "qc"},
        labels=[
            {"answers": ["1496.5"], "answer": ["$1,496.5"], "scale": "million", "answer_type": "span"},
            {"answers": "36", "answer": 36, "scale": "percent", "answer_type": "arithmetic"},
            {"answers": ["y"], "answer": ["y"], "scale": "", "answer_type": "span"},
        ],
    )
    with pytest.warns(hb.FewRunsWarning):
        bench = hb.benchmark(arm, ref, runs=1, scorer=tatqa_scorer())
    assert [r.correct for r in bench.rows] == [True, True, False]
    assert arm.settings["scale_field"] == "pred_scale"
    outs = arm.fn.outputs  # type: ignore[attr-defined]
    assert outs["a"] == {"text": "1496.5 million", "prediction": ["1496.5"], "scale": "million"}
    assert outs["b"] == {"text": "36%", "prediction": 36, "scale": "percent"}
    assert outs["c"] == {"text": "x", "prediction": "x", "scale": ""}


def test_tatqa_reference_carries_answer_scale_and_type_in_the_label(dev: hb.Reference) -> None:
    label = dev.labels["eb787966-fa02-401f-bfaf-ccabf3828b23"]
    assert (label["answer"], label["scale"], label["answer_type"]) == (-12.6, "million", "arithmetic")
    label = dev.labels["3de31a7f-0d57-4471-a3ab-4f698274be0c"]
    assert (label["answer"], label["answer_type"]) == (["65", "(114)", "(71)"], "multi-span")
    assert {lab["answer_type"] for lab in dev.labels.values()} == {
        "span",
        "multi-span",
        "arithmetic",
        "count",
    }
    # the item an arm sees holds no part of the answer
    assert all(set(item) == {"document", "question"} for item in dev.items.values())


def test_an_evaluate_spec_names_the_tatqa_metrics() -> None:
    from hrbench.evaluation.evaluate import build_from_spec

    spec = {"module": {"signature": "q -> out", "fn": "json:dumps"}, "data": [{"q": "a"}]}
    _, metric, _ = build_from_spec({**spec, "metric": {"name": "tatqa_f1", "field": "out", "column": "gold"}})
    assert (metric.name, metric.fields, metric.columns) == ("tatqa_f1", ("out",), ("gold",))
    _, metric, _ = build_from_spec({**spec, "metric": "tatqa_exact_match"})
    assert metric.name == "tatqa_exact_match"
