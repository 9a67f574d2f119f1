"""Seed 000: the scorer contract, scorer() and exact_scorer(); every shared 'exact' case."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import hrbench as hb
from hrbench.scoring import label_answers, output_text, plain_number
from hrbench.scoring._scorer import fold
from tests.conftest import load_cases

EXACT_CASES = load_cases("exact")


def test_seed000_exact_example() -> None:
    exact = hb.exact_scorer()
    s = exact("Capital of France?", "  paris ", "Paris")
    assert s == hb.Score(correct=True, outcome="paris", failure_kind=None)
    assert exact("Capital of France?", "Lyon", "Paris").failure_kind == "wrong"


def test_seed000_custom_scorer_within_1pct() -> None:
    def within(item, output, label):
        try:
            x = float(output)
        except (TypeError, ValueError):
            return {"correct": False, "outcome": None, "failure_kind": "parse_failure"}
        return {
            "correct": abs(x - label) <= 0.01 * abs(label),
            "outcome": format(x, "g"),
            "failure_kind": None,
        }

    near = hb.scorer(within, name="within_1pct")
    assert near.name == "within_1pct"
    assert near(None, "45.3", 45.2) == hb.Score(correct=True, outcome="45.3", failure_kind=None)
    assert near(None, "abc", 45.2) == hb.Score(correct=False, outcome=None, failure_kind="parse_failure")
    assert near(None, "50", 45.2).failure_kind == "wrong"


EXACT_CASE_IDS = [
    "H01e",
    "H03a",
    "H05c",
    "H05e",
    "H06a",
    "H06b",
    "H06d",
    "H07a",
    "H07c",
    "H08a",
    "H08c",
    "H08e",
    "H09a",
    "H09b",
    "H09d",
    "H09e",
    "H10g",
    "H11d",
    "H11e",
    "H11f",
    "L01a",
    "L01b",
    "R09a",
    "R11a",
    "R11b",
    "R12d",
    "S01d",
    "S01h",
]


def test_every_exact_case_is_here() -> None:
    """The shared cases this file tests, named; a case added or dropped upstream fails here."""
    assert [c["id"] for c in EXACT_CASES] == EXACT_CASE_IDS


@pytest.mark.parametrize("case", EXACT_CASES, ids=[c["id"] for c in EXACT_CASES])
def test_shared_exact_case(case: dict) -> None:
    s = hb.exact_scorer()(None, case["output"], case["label"])
    assert s.correct is case["expected_correct"], case["rule"]
    assert s.failure_kind == case["expected_failure_kind"], case["rule"]


def test_exact_names() -> None:
    assert hb.exact_scorer().name == "exact_normalised"
    assert hb.exact_scorer(normalise=False).name == "exact"
    assert hb.exact_scorer(normalise=False)(None, " Paris", "Paris").failure_kind == "wrong"


@pytest.mark.parametrize(
    ("output", "kind"),
    [
        (None, "parse_failure"),
        (float("nan"), "parse_failure"),
        ("", "parse_failure"),
        ("\t\n ", "parse_failure"),
        ({"answer": None, "text": None}, "parse_failure"),
        ({"foo": "Paris"}, "parse_failure"),
        (hb.Result(text="Paris", ok=False, error="HTTP 500"), "error"),
        (hb.Result(text=None, ok=False), "error"),
        ({"text": "Paris", "failure_kind": "refusal"}, "refusal"),
        (hb.Answer(text="NOT_IN_DOCUMENT"), "not_in_document"),
        ("not_in_document", "not_in_document"),
    ],
)
def test_outputs_that_are_not_answers(output, kind) -> None:
    s = hb.exact_scorer()(None, output, "Paris")
    assert s.correct is False
    assert s.failure_kind == kind


def test_answer_and_result_text_are_read() -> None:
    ex = hb.exact_scorer()
    assert ex(None, hb.Result(text="Paris"), "Paris").correct is True
    assert ex(None, hb.Answer(text="paris"), "Paris").correct is True
    assert ex(None, {"answer": "Paris", "text": "ignored"}, "Paris").correct is True


def test_no_label_is_na_with_failure_kind_kept() -> None:
    ex = hb.exact_scorer()
    assert ex(None, "Paris", None) == hb.Score(correct=None, outcome="paris", failure_kind=None)
    assert ex(None, "", None) == hb.Score(correct=None, outcome=None, failure_kind="parse_failure")


def test_contract_na_beside_failure_kind_is_false_and_true_beside_one_raises() -> None:
    na = hb.scorer(lambda i, o, lab: {"correct": None, "outcome": None, "failure_kind": "refusal"}, "na")
    assert na(None, "x", "y") == hb.Score(correct=False, outcome=None, failure_kind="refusal")
    bad = hb.scorer(lambda i, o, lab: {"correct": True, "outcome": None, "failure_kind": "wrong"}, "bad")
    with pytest.raises(hb.ScorerError, match="correct=True beside failure_kind 'wrong'"):
        bad(None, "x", "y")
    unknown = hb.scorer(lambda i, o, lab: {"correct": False, "failure_kind": "oops"}, "unknown")
    with pytest.raises(hb.ScorerError, match="unknown failure_kind 'oops'"):
        unknown(None, "x", "y")
    wrong = hb.scorer(lambda i, o, lab: hb.Score(correct=False), "w")
    assert wrong(None, "x", "y").failure_kind == "wrong"


def test_scorer_needs_a_name() -> None:
    with pytest.raises(hb.ConfigError, match="name"):
        hb.scorer(lambda i, o, lab: True, "")


@pytest.mark.parametrize(
    ("label", "answers"),
    [
        (100000, ["100000"]),
        (1e5, ["100000"]),
        (45.2, ["45.2"]),
        (-3, ["-3"]),
        (29.0, ["29"]),
        (["a", 2], ["a", "2"]),
        (None, None),
        (float("nan"), None),
        (0.1 + 0.2, ["0.30000000000000004", "0.3"]),  # also at 15 digits (DBL_DIG): float noise
        (1 / 3, ["0.3333333333333333", "0.333333333333333"]),
        (0.1, ["0.1"]),  # no noise: one form
    ],
)
def test_label_numbers_in_plain_digits(label, answers) -> None:
    assert label_answers(label) == answers


@given(st.integers(min_value=-(10**30), max_value=10**30))
def test_plain_number_integers_round_trip(n: int) -> None:
    assert plain_number(n) == str(n)
    assert "e" not in plain_number(float(n)).lower()


@given(st.text())
def test_fold_is_idempotent(s: str) -> None:
    assert fold(fold(s)) == fold(s)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("STRASSE", "Straße"),
        ("ＡＢＣ", "abc"),
        ("can\u2019t", "can't"),
        ("\u201cq\u201d", '"q"'),
        ("cafe\u0301", "café"),
        ("a\u00a0\u2009 b", "a b"),
    ],
)
def test_fold_family(a: str, b: str) -> None:
    assert fold(a) == fold(b)


def test_fold_no_turkic_rule() -> None:
    assert fold("ıstanbul") != fold("Istanbul")


def test_output_text_whitespace_only_is_none() -> None:
    assert output_text(" \n ") is None
    assert output_text({"text": " x "}) == " x "
