"""What a report's footnotes say of runs never scored: by why they were not scored, once for alike pairs.

Rule (hrbench/stats/_unscored.py; docs/guides/budgets.md, "What a report says of a stopped
benchmark"): runs that ended in an error are not cured by a larger budget, so the footnote
names what scores them by what kept them from their scorer; an item every arm left unscored
alike (an item the outputs files all leave out) is said once for all pairs, not once per pair.
"""

from __future__ import annotations

import hrbench as hb
from hrbench.records import Row


def _rows(kind: str | None, arms: tuple[str, ...] = ("a", "b", "c"), stopped: str | None = None) -> list[Row]:
    """One run of 6 items in 3 clusters per arm; item q0 is never scored in every arm (``kind``).

    ``stopped``: an arm whose run of q1 the budget stopped as well.
    """
    out = []
    for arm in arms:
        for i in range(6):
            lost = i == 0 and kind is not None or arm == stopped and i == 1
            why = "budget_stop" if arm == stopped and i == 1 else kind
            right = not lost and (i + len(arm)) % 2 == 0
            out.append(
                Row(
                    cluster=f"c{i // 2}",
                    item=f"q{i}",
                    arm=arm,
                    run=1,
                    split="test",
                    correct=right,
                    outcome=None,
                    failure_kind=why if lost else (None if right else "wrong"),
                )
            )
    return out


def _footnotes(rows: list[Row]) -> list[str]:
    text = str(hb.report(rows, descriptive=True, warn=False)).splitlines()
    start = next(i for i, ln in enumerate(text) if ln.startswith("  * "))
    end = next(i for i, ln in enumerate(text) if ln.startswith("  Descriptive:"))
    return text[start:end]


def test_error_runs_are_not_sent_to_a_larger_budget_and_an_item_every_arm_lost_is_said_once() -> None:
    assert _footnotes(_rows("error")) == [
        "  * accuracy and interval count runs never scored as wrong (seed rule): each of the 3 arms rests on",
        "    1 of 6 run(s) never scored (1 ended in an error), counted wrong. They measure the errors, not",
        "    the arm: remove the errors' cause to score them (the benchmark's note on its failed runs says",
        "    how; a larger budget does not help).",
        "  * paired differences leave out the items where one arm has more runs never scored; in each of the",
        "    3 pairs, 1 item on which both arms have as many runs never scored counts them wrong in both, so",
        "    they cancel.",
    ]


def test_budget_stopped_runs_are_sent_to_a_larger_budget() -> None:
    assert _footnotes(_rows("budget_stop", ("a", "b"))) == [
        "  * accuracy and interval count runs never scored as wrong (seed rule): each of the 2 arms rests on",
        "    1 of 6 run(s) never scored (1 stopped by the budget), counted wrong. They measure the budget,",
        "    not the arm: resume the benchmark with a larger budget to score them.",
        "  * paired differences leave out the items where one arm has more runs never scored: a - b: 1 item",
        "    on which both arms have as many runs never scored counts them wrong in both, so they cancel.",
    ]


def test_both_reasons_say_both_remedies_and_unlike_pairs_are_named_each() -> None:
    assert _footnotes(_rows("error", stopped="b")) == [
        "  * accuracy and interval count runs never scored as wrong (seed rule): a rests on 1 of 6 run(s)",
        "    never scored (1 ended in an error), counted wrong; b rests on 2 of 6 run(s) never scored (1",
        "    stopped by the budget, 1 ended in an error), counted wrong; c rests on 1 of 6 run(s) never",
        "    scored (1 ended in an error), counted wrong. They measure the budget and the errors, not the",
        "    arm: for the runs the budget stopped, resume the benchmark with a larger budget to score them;",
        "    for those that ended in an error, remove the errors' cause to score them (the benchmark's note",
        "    on its failed runs says how; a larger budget does not help).",
        "  * paired differences leave out the items where one arm has more runs never scored: a - b: on the 5",
        "    of 6 items where both arms have as many runs scored (1 run(s) stopped by the budget or ended in",
        "    an error, on items where the other arm has fewer, are left out); 1 item on which both arms have",
        "    as many runs never scored counts them wrong in both, so they cancel; a - c: 1 item on which both",
        "    arms have as many runs never scored counts them wrong in both, so they cancel; b - c: on the 5",
        "    of 6 items where both arms have as many runs scored (1 run(s) stopped by the budget or ended in",
        "    an error, on items where the other arm has fewer, are left out); 1 item on which both arms have",
        "    as many runs never scored counts them wrong in both, so they cancel.",
    ]
