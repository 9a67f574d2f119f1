"""hb.judge_agreement(): confusion counts, agreement and flips, checked against tables counted by hand."""

from __future__ import annotations

import re
import warnings
from typing import Any

import pytest

import hrbench as hb
from hrbench.records import Row
from hrbench.stats._agreement import judge_agreement

COUNTRIES = {"q1": "France", "q2": "Peru", "q3": "Chad", "q4": "Fiji", "q5": "Japan", "q6": "Kenya"}
LABELS = {"q1": "Paris", "q2": "Lima", "q3": "N'Djamena", "q4": "Suva", "q5": "Tokyo", "q6": "Nairobi"}
OUTPUTS = {
    "France": "Paris",
    "Peru": "lima.",
    "Chad": "Lyon",
    "Fiji": "Suva",
    "Japan": "Tokyo",
    "Kenya": "Mombasa",
}
# the judge's reply to each output, draw by draw
VERDICTS = {
    "Paris": "CCC",  # exact right, judge right: both right
    "lima.": "CCC",  # exact wrong (the point), judge right: judge only
    "Lyon": "III",  # both wrong
    "Suva": "CIC",  # both right; the draws flip
    "Tokyo": "IIC",  # exact right, judge wrong: reference only; flips
    "Mombasa": "CII",  # both wrong; flips
}


def _arm_reply(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    return OUTPUTS[messages[-1]["content"]]


def _judge_reply(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    graded = re.search(r"Answer to grade: (.*)", messages[-1]["content"])
    assert graded is not None
    return {"C": "CORRECT", "I": "INCORRECT"}[VERDICTS[graded.group(1)][params["draw_index"] - 1]]


def _judged(judge_runs: int = 3) -> hb.Bench:
    ref = hb.Reference(items=COUNTRIES, labels=LABELS)
    arm = hb.Arm("ask", lambda item, ctx: ctx.call(item).text)
    judge = hb.judge_scorer(hb.MockClient(_judge_reply), judge_runs=judge_runs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", hb.FewRunsWarning)
        return hb.benchmark(arm, ref, client=hb.MockClient(_arm_reply), scorer=judge, runs=1)


def test_a_judged_benchmark_rescored_exactly_matches_the_table_counted_by_hand() -> None:
    a = hb.judge_agreement(_judged())
    assert a.confusion == {"both_right": 2, "judge_only": 1, "reference_only": 1, "both_wrong": 2}
    assert (a.agree, a.n, a.rate, a.skipped) == (4, 6, pytest.approx(4 / 6), 0)
    assert a.kappa == pytest.approx((4 / 6 - 0.5) / 0.5)  # both say right on 3 of 6
    assert a.ci_low is not None and a.ci_low < 4 / 6 < a.ci_high
    assert (a.judge_runs, a.n_multi, a.flipped, a.flip_rate) == (3, 6, 3, 0.5)
    assert a.reference == hb.exact_scorer().name


def test_one_judge_draw_has_no_flips_to_count() -> None:
    a = judge_agreement(_judged(judge_runs=1))
    # one draw each: the first letters, C C I C I C; exact: right, wrong, wrong, right, right, wrong
    assert a.confusion == {"both_right": 2, "judge_only": 2, "reference_only": 1, "both_wrong": 1}
    assert (a.n_multi, a.flipped, a.flip_rate, a.judge_runs) == (0, 0, None, 1)


def test_the_report_of_a_judged_benchmark_has_the_section() -> None:
    rep = hb.report(_judged(), descriptive=True, warn=False)
    text = str(rep)
    assert "Judge agreement:" in text
    assert f"agrees with {hb.exact_scorer().name} on 4 of 6 rows: 0.667 [" in text
    assert (
        "both right 2, judge only 1" in text
        and "3 of 6 rows judged 3 times flipped between draws: 0.500" in text
    )
    assert "**Judge agreement**" in rep.to_markdown() and rep.judge is not None and rep.judge["agree"] == 4
    plain = hb.benchmark(
        hb.Arm("ask", lambda item, ctx: ctx.call(item).text),
        hb.Reference(items=COUNTRIES, labels=LABELS),
        client=hb.MockClient(_arm_reply),
        runs=5,
    )
    assert hb.report(plain).judge is None and "Judge agreement" not in str(hb.report(plain))


def _row(item: str, run: int, correct: bool | None, outcome: str | None, kind: str | None = None) -> Row:
    return Row(cluster=f"c{item[-1]}", item=item, arm="a", run=run, split="test", correct=correct,
               outcome=outcome, failure_kind=kind)  # fmt: skip


def test_against_another_benchmark_pairs_rows_and_leaves_out_what_cannot_be_compared() -> None:
    judged = [
        _row("q1", 1, True, "8 9"),  # rubric grades, pass mark 7: right, right
        _row("q1", 2, True, "7 3 9"),  # right, wrong, right: majority right, a flip
        _row("q2", 1, False, "2 2"),
        _row("q2", 2, True, "9 9"),
        _row("q3", 1, False, "6 8 1"),  # a flip
        _row("q3", 2, None, None),  # no label: left out
        _row("q4", 1, False, None, "error"),  # the judge failed: left out
        _row("q4", 2, True, "10 10"),
    ]
    exact = [
        _row("q1", 1, True, "x"),
        _row("q1", 2, False, "x"),
        _row("q2", 1, False, "x"),
        _row("q2", 2, True, "x"),
        _row("q3", 1, True, "x"),
        _row("q4", 2, False, "x"),
    ]
    a = judge_agreement(judged, against=exact)
    # by hand: q1/1 both right, q1/2 judge only, q2/1 both wrong, q2/2 both right,
    # q3/1 reference only, q4/2 judge only
    assert a.confusion == {"both_right": 2, "judge_only": 2, "reference_only": 1, "both_wrong": 1}
    assert (a.agree, a.n, a.skipped) == (3, 6, 2) and a.note is not None
    assert (a.n_multi, a.flipped, a.judge_runs) == (6, 2, 3)
    # averaged as an accuracy is: per item (q1 1/2, q2 2/2, q3 0/1, q4 0/1), then over items
    assert a.rate == pytest.approx((0.5 + 1 + 0 + 0) / 4)
    # at pass mark 9, q1/1 "8 9" flips and q3/1 "6 8 1" no longer does
    assert judge_agreement(judged, against=exact, pass_mark=9).flipped == 2


def test_a_bad_level_is_named() -> None:
    with pytest.raises(hb.ConfigError, match="^level: "):
        judge_agreement([_row("q1", 1, True, "correct")], against=[], level=1.5)


def test_a_stored_judged_benchmark_is_read_at_its_judges_pass_mark() -> None:
    """The daemon's report and ``hrb view`` read a stored benchmark: rows, traces, reference, spec."""
    from hrbench.results.browse import judged_rows
    from hrbench.store import Store

    grades = {"Paris": "899", "lima.": "999", "Lyon": "222", "Suva": "999", "Tokyo": "889", "Mombasa": "333"}

    def rubric(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
        graded = re.search(r"Answer to grade: (.*)", messages[-1]["content"])
        assert graded is not None
        return grades[graded.group(1)][params["draw_index"] - 1]

    judge = hb.judge_scorer(hb.MockClient(rubric), kind="rubric", judge_runs=3, pass_mark=9)
    arm = hb.Arm("ask", lambda item, ctx: ctx.call(item).text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", hb.FewRunsWarning)
        b = hb.benchmark(arm, hb.Reference(items=COUNTRIES, labels=LABELS), client=hb.MockClient(_arm_reply),
                         scorer=judge, runs=1)  # fmt: skip
    store = Store(":memory:")
    settings = {"kind": "rubric", "judge_runs": 3, "pass_mark": 9, "client": {"kind": "mock"}}
    store.benchmark_put(
        "b1", {"params": {"scorer": "judge", "scorer_settings": settings}}, store.reference_put(b.reference)
    )
    store.rows_put("b1", list(enumerate(b.rows)), b.traces)
    rec = store.benchmark_get("b1")
    assert rec is not None
    section = hb.report(judged_rows(store, rec, store.rows_get("b1")), descriptive=True, warn=False).judge
    assert section is not None
    # at pass mark 9, "8 9 9" (Paris) and "8 8 9" (Tokyo) flip; read at the default 7 neither would
    assert (section["flipped"], section["n_multi"], section["judge_runs"]) == (2, 6, 3)
    # right at 9: Paris, lima., Suva (the judge); exact: Paris, Suva, Tokyo
    assert section["confusion"] == {"both_right": 2, "judge_only": 1, "reference_only": 1, "both_wrong": 2}
    assert judged_rows(store, {**rec, "spec": {"params": {"scorer": "exact"}}}, b.rows) is b.rows
