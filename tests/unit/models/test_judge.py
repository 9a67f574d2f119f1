"""judge_scorer against a loopback judge that sometimes replies garbage."""

from __future__ import annotations

import re
import warnings
from collections import Counter
from typing import Any

import pytest

import hrbench as hb
from hrbench.errors import ScorerError
from hrbench.scoring import JUDGE_SUFFIX
from hrbench.scoring._judge import parse_grade
from hrbench.testing import LoopbackServer
from tests.unit.models.conftest import FAST

PRICING = hb.Pricing(overrides={"judge-1": {"input": 1.0, "output": 1.0}})  # USD per million tokens
REF = hb.Reference(
    {"q1": "France", "q2": "Peru", "q3": "Chad", "q4": "Fiji", "q5": "Mali"},
    labels=["Paris", "Lima", "N'Djamena", "Suva", None],
)
OUTPUTS = {"France": "Paris", "Peru": "Quito", "Chad": "Ndjamena", "Fiji": "Suva", "Mali": "Bamako"}
FIXED = hb.Arm("fixed", lambda item, ctx: OUTPUTS[item])


def _fields(prompt: str) -> tuple[str, str]:
    ref = re.search(r"Reference answer: (.*)", prompt)
    out = re.search(r"Answer to grade: (.*)", prompt)
    assert ref and out, prompt
    return ref.group(1), out.group(1)


def grader(seen: Counter[str]) -> Any:
    """A judge: right on Paris/Quito, lenient on Ndjamena, garbage on Suva (a sentence)."""

    def reply(prompt: str, seed: Any, call: int) -> str:
        ref, out = _fields(prompt)
        seen[out] += 1
        if out == "Suva":
            return "The answer Suva is CORRECT because it matches."  # not a bare grade
        if out == "Ndjamena":  # draws disagree: correct, incorrect, correct, ...
            return "**Correct**" if seen[out] % 2 else "incorrect."
        return "CORRECT" if out == ref else "INCORRECT"

    return reply


def _judge(srv: LoopbackServer, **kw: Any) -> Any:
    client = hb.OpenAIClient("judge-1", base_url=srv.base_url, api_key_env=None, **FAST)
    return hb.judge_scorer(client, **kw)


def _bench(srv: LoopbackServer, scorer: Any, **kw: Any) -> hb.Bench:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", hb.ArmErrorWarning)
        return hb.benchmark(FIXED, REF, runs=5, scorer=scorer, pricing=PRICING, **kw)


def _by_item(bench: hb.Bench, run: int = 1) -> dict[str, tuple[Any, Any, Any]]:
    return {r.item: (r.correct, r.outcome, r.failure_kind) for r in bench.rows if r.run == run}


def test_verdicts_garbage_is_an_error_with_its_cause_and_costs_are_in_the_row(srv: LoopbackServer) -> None:
    seen: Counter[str] = Counter()
    srv.set(reply_fn=grader(seen))
    bench = _bench(srv, _judge(srv))
    assert _by_item(bench) == {
        "q1": (True, "correct", None),
        "q2": (False, "incorrect", "wrong"),
        "q3": (True, "correct", None),
        "q4": (False, None, "error"),  # garbage: never a silent wrong
        "q5": (None, None, None),  # no label: the judge is not asked (seed 000)
    }
    q4 = bench.traces[next(r.ledger_id for r in bench.rows if r.item == "q4")]
    assert any(s.kind == "error" and "judge reply is not a grade" in (s.error or "") for s in q4)
    assert seen["Bamako"] == 0 and seen["Paris"] == 5  # no cache: each run asks again
    q1 = [r for r in bench.rows if r.item == "q1"]
    note, *rest = bench.traces[q1[0].ledger_id]  # the text the judge graded, then its request
    assert (note.kind, note.source, note.text) == ("note", "judged", "Paris")
    steps = [s for s in rest if s.kind == "request"]
    assert [s.model for s in steps] == ["judge-1"] and steps[0].usd > 0
    assert q1[0].usd == pytest.approx(steps[0].usd) and q1[0].tokens_in == steps[0].usage.tokens_in > 0
    arm_usd = bench.summary()[0]["usd"]
    assert arm_usd == pytest.approx(sum(s.usd for t in bench.traces.values() for s in t))
    assert bench.governor["calls"] == 20  # 4 labelled items x 5 runs, through the governor


def test_a_rerun_re_judges_nothing_and_majority_over_distinct_draws(srv: LoopbackServer, tmp_path) -> None:
    seen: Counter[str] = Counter()
    srv.set(reply_fn=grader(seen))
    store = hb.Store(tmp_path / "state.db")
    scorer = _judge(srv, judge_runs=3)
    first = _bench(srv, scorer, cache=hb.Cache(store), store=store)
    # Ndjamena's three draws: correct, incorrect, correct -> a majority of 2 of 3
    assert _by_item(first)["q3"] == (True, "correct incorrect correct", None)
    assert seen["Ndjamena"] == 3 and seen["Paris"] == 3  # runs 2-5 share run 1's draws of the same output
    keys = {s.key for t in first.traces.values() for s in t if s.kind == "request"}
    assert len(keys) == 3 * 3 + 1  # three distinct draws per output; Suva's first is garbage: no more
    n = len(srv.requests)
    again = _bench(srv, _judge(srv, judge_runs=3), cache=hb.Cache(store), store=store)
    assert len(srv.requests) == n  # re-judged nothing
    assert [(r.correct, r.outcome, r.failure_kind) for r in again.rows] == [
        (r.correct, r.outcome, r.failure_kind) for r in first.rows
    ]
    assert {s.source for t in again.traces.values() for s in t if s.kind == "request"} == {"cache"}
    assert again.summary()[0]["usd"] == 0 and again.summary()[0]["usd_list"] == pytest.approx(
        first.summary()[0]["usd_list"]
    )


def test_judge_keys_are_apart_from_the_arms(srv: LoopbackServer, tmp_path) -> None:
    srv.set(reply_fn=grader(Counter()))
    store = hb.Store(tmp_path / "state.db")
    bench = _bench(srv, _judge(srv), cache=hb.Cache(store), store=store, record="rec")
    exported = store.recording_export("rec")
    assert exported and {e["arm"] for e in exported} == {"fixed" + JUDGE_SUFFIX}
    assert {e["draw_index"] for e in exported} == {1} and len(bench.rows) == 25


def test_the_governor_caps_judge_spend(srv: LoopbackServer) -> None:
    srv.set(reply_fn=grader(Counter()))
    gov = hb.Governor(max_usd=6e-4, max_calls=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bench = _bench(srv, _judge(srv, max_tokens=5), governor=gov, concurrency=1)
    kinds = Counter(r.failure_kind for r in bench.rows)
    assert kinds["budget_stop"] > 0 and gov.usd <= 6e-4
    judged = [r for r in bench.rows if r.failure_kind != "budget_stop" and r.item != "q5"]
    assert judged and len(srv.requests) == len(judged) == gov.calls


@pytest.mark.parametrize(
    ("kind", "reply", "grade"),
    [
        ("correct", "CORRECT", "correct"),
        ("correct", "incorrect", "incorrect"),
        ("correct", "  **Incorrect**.\n", "incorrect"),
        ("correct", "`correct`", "correct"),
        ("rubric", "0", "0"),
        ("rubric", "10", "10"),
        ("rubric", "7/10", "7"),
        ("rubric", " 3. ", "3"),
    ],
)
def test_parse_grade_accepts_the_bare_grade(kind: str, reply: str, grade: str) -> None:
    assert parse_grade(kind, reply) == grade


@pytest.mark.parametrize(
    ("kind", "reply"),
    [
        ("correct", ""),
        ("correct", None),
        ("correct", "CORRECT INCORRECT"),
        ("correct", "I'd say correct"),
        ("correct", "yes"),
        ("rubric", "11"),
        ("rubric", "-1"),
        ("rubric", "7.5"),
        ("rubric", "seven"),
        ("rubric", "Grade: 7 because"),
    ],
)
def test_parse_grade_refuses_anything_else(kind: str, reply: str | None) -> None:
    with pytest.raises(ScorerError, match="not a grade"):
        parse_grade(kind, reply)


def test_rubric_pass_mark_and_user_template(srv: LoopbackServer) -> None:
    grades = {"Paris": "8", "Quito": "6", "Ndjamena": "7"}  # 7: the pass mark itself passes
    srv.set(reply_fn=lambda prompt, seed, call: next((g for o, g in grades.items() if o in prompt), "0"))
    template = "Q {item}; gold {label}; graded {output}. Score 0-10."
    bench = _bench(srv, _judge(srv, kind="rubric", template=template, pass_mark=7))
    got = _by_item(bench)
    assert got["q1"] == (True, "8", None) and got["q2"] == (False, "6", "wrong")
    assert got["q3"] == (True, "7", None)
    asked = [r.body["messages"][0]["content"] for r in srv.requests]  # in any order: they run at once
    assert any(a.startswith("Q France; gold Paris; graded ") for a in asked), asked


@pytest.mark.parametrize(
    ("kw", "field"),
    [
        ({"kind": "likert"}, "kind"),
        ({"template": "no placeholder"}, "template"),
        ({"template": "{output} {score}"}, "template"),
        ({"judge_runs": 0}, "judge_runs"),
        ({"pass_mark": 11}, "pass_mark"),
    ],
)
def test_bad_settings_name_the_field(kw: dict[str, Any], field: str) -> None:
    with pytest.raises(hb.ConfigError, match=field):
        hb.judge_scorer(hb.MockClient(lambda m, p: "CORRECT"), **kw)


def test_outside_a_benchmark_a_judge_says_it_needs_one() -> None:
    with pytest.raises(hb.ConfigError, match="inside a benchmark"):
        hb.judge_scorer(hb.MockClient(lambda m, p: "CORRECT"))("q", "a", "a")


def test_a_judge_runs_on_the_local_executor_only() -> None:
    judge = hb.judge_scorer(hb.MockClient(lambda m, p: "CORRECT"))
    with pytest.raises(hb.ConfigError, match="executor"):
        hb.benchmark(FIXED, REF, runs=5, scorer=judge, executor="ray")


def test_a_spec_names_the_judge_with_its_client() -> None:
    from hrbench.specs import build_scorer

    judge = build_scorer("judge", {"client": {"kind": "mock", "reply": "INCORRECT"}, "judge_runs": 3})
    assert judge.name == "judge_correct" and judge.judge_runs == 3
    bench = hb.benchmark(FIXED, REF, runs=5, scorer=judge)
    assert _by_item(bench)["q1"] == (False, "incorrect incorrect incorrect", "wrong")
    with pytest.raises(hb.ConfigError, match="scorer_settings.client"):
        build_scorer("judge", {"kind": "rubric"})
