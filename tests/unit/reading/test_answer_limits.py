"""What answer_contains does not catch, as README's "Honest scoring" says.

Seed 001 makes containment the rule, so these replies stay right under ``answer_contains``;
the tests keep the README's account of its limits true, and check that the scorers it points to
do not reward them.
"""

from __future__ import annotations

import pytest

import hrbench as hb

CAPITALS = ["Paris", "Lima", "N'Djamena", "Suva"]
HEDGE = "It could be Paris, Lima, N'Djamena or Suva."
MENTIONS = [
    *((HEDGE, c) for c in CAPITALS),  # a hedge: right for each of the four labels
    ("It is not Paris.", "Paris"),  # a negation
    ("Paris is wrong.", "Paris"),
    ("yes/no", "yes"),
    ("yes/no", "no"),
    ("Either 12 or 15.", "15"),
]


@pytest.mark.parametrize(("reply", "label"), MENTIONS)
def test_answer_contains_rewards_a_mention_as_readme_says(reply: str, label: str) -> None:
    assert hb.answer_scorer()(None, reply, label).correct is True


@pytest.mark.parametrize(("reply", "label"), MENTIONS)
def test_the_scorers_readme_points_to_do_not(reply: str, label: str) -> None:
    for scorer in (hb.exact_scorer(), hb.squad_scorer()):
        assert scorer(None, reply, label).correct is False, scorer.name


def test_readme_names_the_limits_and_the_other_scorers() -> None:
    from pathlib import Path

    text = " ".join(
        (Path(__file__).parents[3] / "docs" / "rules" / "scoring.md").read_text(encoding="utf-8").split()
    )
    assert "What `answer_contains` does not catch" in text
    assert '"It could be Paris, Lima, N\'Djamena or Suva." is right for each of the four labels' in text
    assert '"It is not Paris."' in text and "`squad` (official EM)" in text and "`judge`" in text
