"""inspect_ai's scorer tests as an oracle for hrbench's scorers.

Each case of ``tests/unit/oracle/inspect_scorer_cases.json`` is an input of one of inspect_ai's
``tests/scorer/`` tests (match, pattern, answer, choice, exact, f1, math, model-graded grade
parsing), run through the hrbench scorer that does the same job. The test asserts the outcome
hrbench's rules give, so a fault (a wrong answer no rule justifies) fails here; where that outcome
is not inspect's, the case names the rule that decides it and a test checks that the rule is
written there. Test ids are the inspect test's file and name.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.oracle.inspect_oracle import accepted, agrees, load, matches, rule_written, run

CASES = load()
DIFFERS = [c for c in CASES if c["verdict"] == "differs by rule"]


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_hrbench_gives_what_its_rules_say(case: dict[str, Any]) -> None:
    got, text = run(case)
    want = accepted(case)
    shown = f"{case['output']!r} against {case['target']!r} by {case['hrbench']}"
    assert matches(case, got, text), (
        f"{shown}: hrbench gives {got!r} (outcome {text!r}); its rules say {want} "
        f"(outcome {case.get('expected_outcome', '-')!r}); inspect says {case['inspect']['outcome']!r}"
    )


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_verdict_is_what_the_outcomes_say(case: dict[str, Any]) -> None:
    # "same" only where hrbench's expected outcome says what inspect's does; otherwise a rule
    assert case["verdict"] in ("same", "differs by rule")
    assert ("answer" not in case["inspect"]) or ("expected_outcome" in case), (
        "inspect asserts an answer: give ours"
    )
    assert (case["verdict"] == "same") == agrees(case), case["verdict"]
    assert (case["verdict"] == "differs by rule") == ("rule" in case)


@pytest.mark.parametrize("case", DIFFERS, ids=[c["id"] for c in DIFFERS])
def test_the_rule_that_decides_a_difference_is_written(case: dict[str, Any]) -> None:
    assert rule_written(case), f"{case['rule']['source']} does not say {case['rule']['says']!r}"


def test_the_oracle_is_large_and_ids_are_unique() -> None:
    ids = [c["id"] for c in CASES]
    assert len(ids) == len(set(ids))
    assert len(CASES) >= 150
    families = {c["inspect"]["test"].split("::")[0] for c in CASES}
    assert {
        "tests/scorer/test_match.py",
        "tests/scorer/test_pattern.py",
        "tests/scorer/test_answer.py",
        "tests/scorer/test_choice.py",
        "tests/scorer/test_classification.py",
        "tests/scorer/math_cases.json",
        "tests/scorer/test_math.py",
        "tests/scorer/test_model_graded.py",
    } <= families
