"""Seed 003's SQuAD metrics on every shared ``evaluate.*`` case, and the numbers normalisation.

The cases pin the official SQuAD v2.0 rules, hazards included (R09e, R09f, R10a, R10b, R11c);
``normalise="numbers"`` is the decided way out for non-SQuAD data (SPEC section 6).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrbench import metrics as m
from hrbench.errors import ConfigError
from hrbench.evaluation.modules import Example, Prediction
from tests.conftest import load_cases

CASES = [c for c in load_cases() if c["scorer"].startswith("evaluate.")]
EVALUATE_CASE_IDS = ["R09e", "R09f", "R10a", "R10b", "R11c", "R11d", "R11e", "R11f"]


def test_every_evaluate_case_is_here() -> None:
    """The shared cases this file tests, named; a case added or dropped upstream fails here."""
    assert [c["id"] for c in CASES] == EVALUATE_CASE_IDS


def run(metric_name: str, output: object, label: object, normalise: object = True) -> float:
    metric = {"evaluate.exact_match": m.exact_match, "evaluate.f1": m.f1}[metric_name]
    return metric("answer", normalise=normalise)(Prediction(answer=output), Example(answer=label))  # type: ignore[operator]


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_shared_evaluate_case(case: dict) -> None:
    score = run(case["scorer"], case["output"], case["label"])
    assert (score == 1.0) is case["expected_correct"], case["rule"]


# -- the hazards the SQuAD rules leave, and normalise="numbers" -----------------------------------
@pytest.mark.parametrize(
    ("output", "label"),
    [
        ("314", "3.14"),  # R09e
        ("-154", 154),  # R09f
        ("", "A"),  # R10a
        ("An", "A"),  # R10b
        ("} ] )", ") ] }"),  # R11c (F1 is a bag of tokens, so it stays 1 there)
        ("357", "3,5,7"),
        ("1012.5", "10-12.5"),
    ],
)
def test_numbers_normalisation_keeps_what_squad_drops(output: str, label: object) -> None:
    assert run("evaluate.exact_match", output, label) == 1.0  # the official rule
    assert run("evaluate.exact_match", output, label, "numbers") == 0.0
    assert run("evaluate.f1", output, label, "numbers") < 1.0 or "]" in output


@pytest.mark.parametrize(
    ("output", "label"),
    [
        ("The answer is 3.14.", "3.14"),
        ("1,204", 1204),
        ("$1,204.00", "$1204"),
        ("\u2212154", -154),
        ("A", "a"),
        ("(A)", "A"),
        ("the Normans", "Normans"),
        ("29.0", 29),
        ("-$12.60", "$-12.6"),
    ],
)
def test_numbers_normalisation_still_folds_what_does_not_matter(output: str, label: object) -> None:
    assert run("evaluate.exact_match", output.removeprefix("The answer is "), label, "numbers") == 1.0


def test_numbers_f1_keeps_sign_and_point_tokens() -> None:
    assert run("evaluate.f1", "minus 3.14 million", "3.14 million", "numbers") == pytest.approx(0.8)
    assert run("evaluate.f1", "-3.14 million", "3.14 million", "numbers") == pytest.approx(0.5)
    assert run("evaluate.f1", "-3.14 million", "3.14 million") == 1.0  # SQuAD drops the sign


@given(st.integers(min_value=-(10**9), max_value=10**9), st.integers(min_value=0, max_value=99))
def test_property_numbers_are_equal_only_to_themselves(n: int, frac: int) -> None:
    x = f"{n}.{frac:02d}" if frac else str(n)
    assert m.normalize_numbers(x) == m.normalize_numbers(f"{n:,}" + (f".{frac:02d}" if frac else ""))
    assert m.normalize_numbers(x) != m.normalize_numbers(str(-n) if n else "1")
    if frac % 10:
        assert m.normalize_numbers(x) != m.normalize_numbers(x.replace(".", ""))


@given(st.text(max_size=20))
def test_property_a_nonblank_answer_never_normalises_to_nothing(s: str) -> None:
    assert bool(m.normalize_numbers(s)) == bool(s.strip())


def test_bad_normalise_names_the_field() -> None:
    with pytest.raises(ConfigError, match="normalise"):
        m.exact_match("answer", normalise="sqaud")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="normalise"):
        m.f1("answer", normalise=False)


def test_evaluate_spec_takes_the_numbers_normalisation() -> None:
    from hrbench.evaluation.evaluate import evaluate_spec

    spec = {
        "module": {"signature": "q -> answer", "fn": "tests.unit.evaluation.test_metric_cases:echo"},
        "data": [{"q": "-154", "answer": "154"}, {"q": "3.14", "answer": "3.14"}],
        "metric": {"name": "exact_match", "field": "answer", "normalise": "numbers"},
    }
    assert evaluate_spec(spec)["mean_score"] == 0.5
    spec["metric"] = {"name": "exact_match", "field": "answer"}
    assert evaluate_spec(spec)["mean_score"] == 1.0


def echo(q: str) -> dict[str, str]:
    return {"answer": q}
