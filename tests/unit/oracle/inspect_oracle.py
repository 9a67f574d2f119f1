"""inspect_ai's scorer tests as an oracle: load the cases, run one, tally them.

The cases (``inspect_scorer_cases.json`` beside this module) are the inputs of inspect_ai's
``tests/scorer/`` written as our own data: each names the inspect test it comes from, inspect's
outcome, the hrbench scorer that does the same job and the outcome hrbench must give by its rules
(``expected``), and a verdict: ``"same"`` as inspect, or ``"differs by rule"`` with the hrbench rule
that decides it (a file and words of its docstring). A fault is a case whose hrbench result today
is not ``expected``: a wrong answer no rule justifies. ``tests/unit/scoring/test_inspect_oracle.py`` asserts
every case; ``bench/oracle.py`` prints the tally.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

CASES = Path(__file__).with_name("inspect_scorer_cases.json")
REPO = Path(__file__).resolve().parents[3]

_SAME = {
    "correct": {"correct"},
    "incorrect": {"wrong", "parse_failure"},
    "noanswer": {"parse_failure"},
    "unscored": {"error"},
}
"""inspect's outcome -> the hrbench outcomes that say the same."""


@cache
def load() -> list[dict[str, Any]]:
    """Every case, in file order."""
    cases: list[dict[str, Any]] = json.loads(CASES.read_text(encoding="utf-8"))["cases"]
    return cases


def _outcome(score: Any) -> str:
    if score.correct is True:
        return "correct"
    return str(score.failure_kind)


def _judged(case: Mapping[str, Any]) -> tuple[str, str | None]:
    """A judge case: one benchmark run whose judge (a mock client) replies ``judge_reply``."""
    import hrbench as hb

    reply = case["judge_reply"]
    settings = dict(case["hrbench"].get("settings") or {})
    judge = hb.MockClient(lambda messages, params: reply)
    arm = hb.Arm("arm", lambda item, ctx: case["output"])
    ref = hb.Reference({"q1": "What is 1 + 1?"}, labels=[case["target"]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # one run per item; an error row warns: both expected here
        bench = hb.benchmark(arm, ref, runs=1, scorer=hb.judge_scorer(judge, **settings))
    row = bench.rows[0]
    return ("correct" if row.correct else str(row.failure_kind)), row.outcome


def run(case: Mapping[str, Any]) -> tuple[str | float, str | None]:
    """What hrbench gives on a case today: (outcome, the score's ``outcome`` text).

    The outcome is ``"correct"``, a failure kind (``"wrong"``, ``"parse_failure"``, ...),
    ``"error"`` when the scorer raises :class:`~hrbench.errors.ScorerError`, or the metric's
    number for ``exact_match`` / ``f1``.
    """
    from hrbench import metrics
    from hrbench.errors import ScorerError
    from hrbench.evaluation.modules import Example, Prediction
    from hrbench.specs import build_scorer

    how = case["hrbench"]
    if "metric" in how:
        metric = getattr(metrics, how["metric"])("answer")
        value = metric(Prediction(answer=case["output"]), Example(answer=case["target"]))
        return float(value), None
    if how["scorer"] == "judge":
        return _judged(case)
    scorer = build_scorer(how["scorer"], how.get("settings") or {})
    try:
        score = scorer(None, case["output"], case["target"])
    except ScorerError:
        return "error", None
    return _outcome(score), score.outcome


def accepted(case: Mapping[str, Any]) -> list[Any]:
    """The outcomes hrbench may give by its rules (``expected``: one, or a list)."""
    want = case["expected"]
    return list(want) if isinstance(want, list) else [want]


def matches(case: Mapping[str, Any], got: str | float, text: str | None) -> bool:
    """Whether hrbench's result is the one its rules say (``expected``, ``expected_outcome``)."""
    ok = any(
        (isinstance(w, float) and isinstance(got, float) and abs(w - got) < 0.005) or w == got
        for w in accepted(case)
    )
    if "expected_outcome" in case:
        ok = ok and text == case["expected_outcome"]
    return ok


def agrees(case: Mapping[str, Any]) -> bool:
    """Whether hrbench's expected result says what inspect's outcome says (the ``same`` verdict).

    inspect's outcome and hrbench's are of different vocabularies; ``_SAME`` pairs them
    (inspect's INCORRECT is hrbench's ``wrong`` or ``parse_failure``; NaN, unscored, is an
    ``error``). Numbers agree within 0.005 (inspect rounds F1 to two places). Where inspect's
    test asserts the answer it extracted, hrbench's outcome text must equal it, case folded.
    """
    mine = inspect_outcome = case["inspect"]["outcome"]
    wants = accepted(case)
    if isinstance(mine, float):
        same = all(isinstance(w, float) and abs(w - mine) < 0.005 for w in wants)
    else:
        same = all(w in _SAME.get(inspect_outcome, set()) for w in wants)
    if "answer" in case["inspect"]:
        theirs = case["inspect"]["answer"]
        ours = case.get("expected_outcome")
        same = same and (
            theirs is None
            and ours is None
            or (theirs is not None and ours is not None and theirs.casefold() == ours.casefold())
        )
    return same


def rule_written(case: Mapping[str, Any]) -> bool:
    """Whether the rule a ``differs by rule`` case names is written where it says."""
    rule = case["rule"]
    text = " ".join((REPO / rule["source"]).read_text(encoding="utf-8").split())
    return " ".join(rule["says"].split()) in text


def tally() -> dict[str, Any]:
    """Ported, same, differs by rule, faults (with each fault: the case, what hrbench gives)."""
    cases = load()
    faults = []
    for case in cases:
        got, text = run(case)
        if not matches(case, got, text):
            faults.append((case, got, text))
    return {
        "ported": len(cases),
        "same": sum(c["verdict"] == "same" for c in cases),
        "differs by rule": sum(c["verdict"] == "differs by rule" for c in cases),
        "faults": faults,
    }
