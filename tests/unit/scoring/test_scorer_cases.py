"""Every shared ``choice``, ``numeric`` and ``pattern`` case, by id, through the scorer of its name.

A case's ``settings`` are the scorer's keyword settings, built by name as a TOML spec or the
daemon builds them (:func:`hrbench.specs.build_scorer`), so the cases check the path users take.
"""

from __future__ import annotations

import pytest

from hrbench.specs import build_scorer
from tests.conftest import load_cases

KINDS = ("choice", "numeric", "pattern")
CASES = [c for kind in KINDS for c in load_cases(kind)]

CASE_IDS = [
    # numeric
    "S01a", "S01c", "S02a", "S02b", "S02c", "S03a", "S03b", "S03c",
    "S04a", "S04b", "S04c", "S04g", "S15a", "S15b", "S15c",
    # choice
    "S05a", "S05b", "S05c", "S06a", "S06b", "S06c", "S06f",
    "S07a", "S07b", "S07c", "S07d", "S07e", "S08a", "S08c",
    # pattern
    "S08b", "S11a", "S11c", "S11d",
]  # fmt: skip


def test_every_choice_numeric_and_pattern_case_is_here() -> None:
    """The shared cases this file tests, named; a case added or dropped upstream fails here."""
    assert sorted(c["id"] for c in CASES) == sorted(CASE_IDS)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_shared_scorer_case(case: dict) -> None:
    s = build_scorer(case["scorer"], case.get("settings"))(None, case["output"], case["label"])
    assert s.correct is case["expected_correct"], (case["rule"], s)
    assert s.failure_kind == case["expected_failure_kind"], (case["rule"], s)
