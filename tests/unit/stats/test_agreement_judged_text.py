"""Judge agreement compares the judge with the reference scorer on the text the judge graded.

That text is the arm's output, for every kind of arm: a prompt arm's reply, what a function
arm returned (an arm that reads its answer out of the reply), an outputs arm's text (outputs
made elsewhere, imported from another tool's log). The model's last reply is not it: an arm
that extracts its answer showed 0 of 20 rows agreeing where 20 of 20 do. Shared cases H4-19
(an Inspect log written by real Inspect, imported as an outputs arm and judged) and H4-21
(Cohen's kappa from the 2x2 counts).
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

import pytest

import hrbench as hb
from hrbench.interop import imported_arm, imported_reference
from hrbench.specs import build_arm
from hrbench.stats._agreement import judged_text

DATA = Path(__file__).resolve().parents[1] / "interop" / "data"

ITEMS = {"q1": "France", "q2": "Peru", "q3": "Chad", "q4": "Fiji"}
LABELS = {"q1": "Paris", "q2": "Lima", "q3": "N'Djamena", "q4": "Suva"}


def _graded(messages: list[dict[str, Any]]) -> str:
    m = re.search(r"Answer to grade: (.*)", messages[-1]["content"])
    assert m is not None
    return m.group(1)


def _strict_judge(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    """A judge that says CORRECT when the graded text is exactly one of the capitals."""
    return "CORRECT" if _graded(messages) in LABELS.values() else "INCORRECT"


def _bench(arm: hb.Arm, ref: hb.Reference, client: Any = None, runs: int = 5, judge: Any = None) -> hb.Bench:
    scorer = hb.judge_scorer(hb.MockClient(judge or _strict_judge))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", hb.FewRunsWarning)
        return hb.benchmark(arm, ref, runs=runs, client=client, scorer=scorer)


def _chatty(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    country = messages[-1]["content"]
    return f"Let me think about {country}. Final answer: {LABELS[next(k for k, v in ITEMS.items() if v == country)]}"


def test_an_arm_that_reads_its_answer_out_of_the_reply_agrees_on_every_row() -> None:
    """20 of 20 rows agree: the judge and the exact scorer both see the answer the arm returned."""
    arm = hb.Arm("extract", lambda item, ctx: ctx.call(item).text.rpartition("Final answer: ")[2])
    bench = _bench(arm, hb.Reference(items=ITEMS, labels=LABELS), hb.MockClient(_chatty))
    assert {r.correct for r in bench.rows} == {True}  # the judge graded "Paris", not the chatter
    a = hb.judge_agreement(bench)
    assert (a.agree, a.n, a.skipped) == (20, 20, 0)
    assert a.confusion == {"both_right": 20, "judge_only": 0, "reference_only": 0, "both_wrong": 0}
    assert judged_text(bench.traces[bench.rows[0].ledger_id]) == "Paris"
    # the report and its Markdown say the same
    rep = hb.report(bench, warn=False)
    assert rep.judge is not None and (rep.judge["agree"], rep.judge["n"]) == (20, 20)
    assert "agrees with exact_normalised on 20 of 20 rows" in str(rep)


def test_a_prompt_arm_is_compared_on_its_reply_text() -> None:
    arm = build_arm({"kind": "prompt", "name": "ask", "template": "{item}"})
    bench = _bench(arm, hb.Reference(items=ITEMS, labels=LABELS), hb.MockClient(_chatty))
    a = hb.judge_agreement(bench)
    # the judge sees the whole reply (not exactly a capital): wrong; so does the exact scorer
    assert (a.agree, a.n) == (20, 20) and a.confusion["both_wrong"] == 20


def test_an_outputs_arm_is_compared_on_its_outputs() -> None:
    """Outputs made elsewhere have no request in their trace: the text the judge graded stands."""
    outputs = {"q1": "Paris", "q2": "lima", "q3": "Lyon", "q4": "Suva"}
    arm = build_arm({"kind": "outputs", "name": "made-elsewhere", "outputs": outputs})
    bench = _bench(arm, hb.Reference(items=ITEMS, labels=LABELS))
    a = hb.judge_agreement(bench)
    # exact folds case ("lima" is right), the strict judge does not: judge wrong, exact right
    assert (a.n, a.agree, a.skipped) == (20, 15, 0)
    assert a.confusion == {"both_right": 10, "judge_only": 0, "reference_only": 5, "both_wrong": 5}


@pytest.mark.parametrize("log", ["inspect_capitals.json", "inspect_capitals.eval"])
def test_h4_19_an_inspect_log_imported_as_an_outputs_arm_has_its_judge_agreement(log: str) -> None:
    """Shared case H4-19: every judged row of an imported arm is compared (it was n=0).

    The log was written by real Inspect (its mock model answered three capital questions over
    two epochs). A judge that calls Lima wrong disagrees with the exact scorer on those rows.
    """
    path = DATA / log
    ref = imported_reference(path, "inspect")
    arm = imported_arm("inspect-mock", path, "inspect")

    def judge(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
        return "INCORRECT" if _graded(messages) == "Lima" else "CORRECT"

    bench = _bench(arm, ref, runs=2, judge=judge)
    labelled = [r for r in bench.rows if r.correct is not None]
    a = hb.judge_agreement(bench)
    assert a.n == len(labelled) == 6 and a.skipped == 0
    assert a.kappa is not None
    exact = hb.exact_scorer()
    texts = [judged_text(bench.traces[r.ledger_id]) for r in labelled]
    ref_right = [exact(None, t, ref.labels[r.item]).correct for r, t in zip(labelled, texts, strict=True)]
    judge_right = [bool(r.correct) for r in labelled]
    assert a.agree == sum(x == y for x, y in zip(ref_right, judge_right, strict=True))


def test_h4_21_kappa_is_cohens_kappa_from_the_two_by_two_counts() -> None:
    """Shared case H4-21: a native prompt arm, 6 items x 5 runs, a mock judge; kappa = (p_o - p_e) / (1 - p_e)."""
    items = {f"q{i}": f"item {i}" for i in range(6)}
    labels = {f"q{i}": f"A{i}" for i in range(6)}
    # the model's reply per item and draw: right on some draws, wrong on others
    replies = {f"item {i}": [f"A{i}" if (i + d) % 3 else f"B{i}" for d in range(1, 6)] for i in range(6)}

    def model(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
        return replies[messages[-1]["content"]][params["draw_index"] - 1]

    def judge(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
        graded = _graded(messages)
        # calls right what is right on even items, and every answer on item 1 and 3
        item = int(graded[1:])
        return "CORRECT" if graded.startswith("A") == (item % 2 == 0) or item in (1, 3) else "INCORRECT"

    arm = build_arm({"kind": "prompt", "name": "ask", "template": "{item}"})
    bench = _bench(arm, hb.Reference(items=items, labels=labels), hb.MockClient(model), judge=judge)
    a = hb.judge_agreement(bench)
    assert a.n == 30
    c = a.confusion
    n = sum(c.values())
    p_o = (c["both_right"] + c["both_wrong"]) / n
    judge_yes, ref_yes = (c["both_right"] + c["judge_only"]) / n, (c["both_right"] + c["reference_only"]) / n
    p_e = judge_yes * ref_yes + (1 - judge_yes) * (1 - ref_yes)
    assert 0 < p_e < 1 and min(c.values()) > 0  # a table with every cell filled
    assert a.kappa == pytest.approx((p_o - p_e) / (1 - p_e))
    # the counts are the rows': the judge's verdict and the exact scorer's on each
    exact = hb.exact_scorer()
    pairs = [
        (bool(r.correct), exact(None, judged_text(bench.traces[r.ledger_id]), labels[r.item]).correct)
        for r in bench.rows
    ]
    assert c == {
        "both_right": pairs.count((True, True)),
        "judge_only": pairs.count((True, False)),
        "reference_only": pairs.count((False, True)),
        "both_wrong": pairs.count((False, False)),
    }
