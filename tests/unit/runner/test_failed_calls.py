"""A run whose model call failed never reaches a scorer; a scorer gets what the docs say it gets.

A failed call (a :class:`~hrbench.records.Result` with ``ok=False``, a connection error, an
HTTP error after retries) is an ``error`` run whatever the scorer: built-in, a function of
one's own (``hb.scorer(fn, name)``), a judge. The runner sorts it out before any scorer, metric
or judge reads the output (:func:`hrbench.runner._invoke.checked`). A scorer of one's own gets a
prompt arm's reply text and a function arm's return value; the built-in scorers still read a
prompt arm's reply (its refusal).
"""

from __future__ import annotations

import re
import socket
from typing import Any

import pytest

import hrbench as hb
from hrbench.records import Answer, Result
from hrbench.runner._invoke import run_failure
from hrbench.specs import build_arm, build_client, build_scorer

ITEMS = {"q1": "France", "q2": "Peru", "q3": "Chad"}
LABELS = {"q1": "Paris", "q2": "Lima", "q3": "N'Djamena"}


def _ref() -> hb.Reference:
    return hb.Reference(items=ITEMS, labels=LABELS)


def _closed_port() -> str:
    """The base URL of a loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


class _Seen:
    """A scorer of one's own that records what it was handed (and calls everything right)."""

    def __init__(self) -> None:
        self.outputs: list[Any] = []

    def __call__(self, item: Any, output: Any, label: Any) -> bool:
        self.outputs.append(output)
        return True


def _scorers(seen: _Seen) -> list[Any]:
    """Every kind of scorer: built-in, one's own wrapped, a judge (whose model would say CORRECT)."""
    return [
        hb.exact_scorer(),
        hb.answer_scorer(),
        hb.numeric_scorer(),
        hb.scorer(seen, "mine"),
        hb.judge_scorer(hb.MockClient(lambda messages, params: "CORRECT")),
    ]


def test_a_prompt_arm_from_a_spec_against_a_server_that_is_down_is_an_error_for_every_scorer() -> None:
    base_url = _closed_port()
    for sc in _scorers(seen := _Seen()):
        arm = build_arm({"kind": "prompt", "name": "ask", "template": "Capital of {item}?"})
        client = build_client({"kind": "openai", "model": "m", "base_url": base_url, "api_key_env": None,
                               "max_attempts": 1})  # fmt: skip
        with pytest.warns(hb.ArmErrorWarning):
            bench = hb.benchmark(arm, _ref(), runs=5, client=client, scorer=sc)
        assert [r.failure_kind for r in bench.rows] == ["error"] * 15, sc.name
        assert {r.correct for r in bench.rows} == {False} and bench.status == "errors"
        cause = f"openai: cannot connect to {base_url}"
        assert bench.summary()[0]["error_causes"] == {cause: 15}, sc.name
    assert seen.outputs == []  # the user's function never saw a failed call


@pytest.mark.parametrize(
    "output",
    [
        Result(ok=False, error="openai: HTTP 500: boom", status=500),
        {"ok": False, "error": "openai: HTTP 500: boom"},
        {"text": Result(ok=False, error="openai: HTTP 500: boom"), "notes": []},
        {"answer": Result(ok=False, error="openai: HTTP 500: boom")},
    ],
    ids=["result", "dict-ok-false", "dict-carrying-a-result", "answer-carrying-a-result"],
)
def test_a_python_arm_returning_a_failed_call_is_an_error_for_every_scorer(output: Any) -> None:
    for sc in _scorers(seen := _Seen()):
        arm = hb.Arm("ask", lambda item, ctx: output)
        with pytest.warns(hb.ArmErrorWarning, match=re.escape("openai: HTTP 500")):
            bench = hb.benchmark(arm, _ref(), runs=5, scorer=sc)
        assert {r.failure_kind for r in bench.rows} == {"error"} and bench.status == "errors", sc.name
        assert bench.summary()[0]["error_causes"] == {"openai: HTTP 500": 15}, sc.name
        trace = bench.traces[bench.rows[0].ledger_id]
        assert (
            trace[-1].error == "ModelError: the model call failed, so it has no text: openai: HTTP 500: boom"
        )
    assert seen.outputs == []


def test_a_run_the_arm_reports_stopped_or_failed_keeps_that_kind_whatever_the_scorer() -> None:
    seen = _Seen()
    outputs = {"q1": {"text": None, "failure_kind": "budget_stop"}, "q2": {"text": "x", "failure_kind": "error"},
               "q3": "N'Djamena"}  # fmt: skip
    arm = hb.Arm("ask", lambda item, ctx: outputs[ctx.item_id])
    with pytest.warns(hb.ArmErrorWarning), pytest.warns(hb.BudgetStoppedWarning):
        bench = hb.benchmark(arm, _ref(), runs=5, scorer=hb.scorer(seen, "mine"))
    kinds = {r.item: r.failure_kind for r in bench.rows}
    assert kinds == {"q1": "budget_stop", "q2": "error", "q3": None}
    assert seen.outputs == ["N'Djamena"] * 5
    cause = "the arm's output reports failure_kind 'error'"
    assert bench.summary()[0]["error_causes"] == {cause: 5}


def test_a_python_arm_that_reads_the_text_of_a_failed_call_is_an_error_as_before() -> None:
    client = hb.MockClient(
        lambda messages, params: Result(ok=False, error="mock: HTTP 503: busy", status=503)
    )
    arm = hb.Arm("ask", lambda item, ctx: ctx.call(item).text)
    seen = _Seen()
    with pytest.warns(hb.ArmErrorWarning):
        bench = hb.benchmark(arm, _ref(), runs=5, client=client, scorer=hb.scorer(seen, "mine"))
    assert {r.failure_kind for r in bench.rows} == {"error"} and seen.outputs == []


def _replies(messages: list[dict[str, Any]], params: dict[str, Any]) -> Any:
    country = messages[-1]["content"].removeprefix("Capital of ").rstrip("?")
    if country == "Chad":  # the provider refused
        return Result(text="I can't help with that.", refused=True, finish_reason="content_filter")
    return {"France": "  Paris ", "Peru": "Lima"}[country]


def test_a_scorer_of_ones_own_gets_a_prompt_arms_reply_text_and_a_built_in_its_reply() -> None:
    seen = _Seen()
    arm = build_arm({"kind": "prompt", "name": "ask", "template": "Capital of {item}?"})
    client = hb.MockClient(_replies)
    hb.benchmark(arm, _ref(), runs=5, client=client, scorer=hb.scorer(seen, "mine"))
    assert sorted(set(seen.outputs)) == [
        "  Paris ",
        "I can't help with that.",
        "Lima",
    ]  # text, never a Result
    # the docs' example works on a prompt arm: `output.strip()`
    docs = hb.scorer(lambda item, output, label: output.strip().lower().startswith(label.lower()), "starts")
    bench = hb.benchmark(arm, _ref(), runs=5, client=client, scorer=docs)
    assert {r.item: r.failure_kind for r in bench.rows} == {"q1": None, "q2": None, "q3": "wrong"}
    # a built-in scorer still reads the reply: a refused one is a refusal (seeds 000 and 001)
    judge = hb.judge_scorer(hb.MockClient(lambda messages, params: "CORRECT"))
    for sc in (build_scorer("exact"), build_scorer("answer_contains"), build_scorer("squad"), judge):
        bench = hb.benchmark(arm, _ref(), runs=5, client=client, scorer=sc)
        assert {r.item: r.failure_kind for r in bench.rows}["q3"] == "refusal", sc.name


def test_a_function_arm_returning_a_reply_hands_it_to_a_scorer_as_returned() -> None:
    seen = _Seen()
    arm = hb.Arm("ask", lambda item, ctx: ctx.call(f"Capital of {item}?"))
    hb.benchmark(arm, _ref(), runs=5, client=hb.MockClient(_replies), scorer=hb.scorer(seen, "mine"))
    assert all(isinstance(o, Result) for o in seen.outputs) and len(seen.outputs) == 15
    answer = Answer(text="Paris", partial=True, notes=["cost_cap_reached"])
    arm = hb.Arm("read", lambda item, ctx: answer)  # a partial answer a limit stopped is scored (seed 001)
    hb.benchmark(arm, _ref(), runs=5, scorer=hb.scorer(seen, "mine"))
    assert seen.outputs[-1] is answer


def test_metrics_get_the_arm_s_output_and_no_failed_call() -> None:
    got: list[Any] = []

    def metric(item: Any, output: Any, label: Any) -> float:
        got.append(output)
        return 1.0

    arm = build_arm({"kind": "prompt", "name": "ask", "template": "Capital of {item}?"})
    hb.benchmark(arm, _ref(), runs=5, client=hb.MockClient(_replies), metrics=[metric])
    assert sorted(set(got)) == ["  Paris ", "I can't help with that.", "Lima"] and len(got) == 15


def test_run_failure_reads_each_form_of_a_failed_call() -> None:
    assert run_failure("Paris") is None and run_failure(None) is None and run_failure(3) is None
    assert run_failure(Result(text="x", refused=True)) is None  # a refusal is a reply: scored
    assert run_failure({"text": "x", "failure_kind": "refusal"}) is None
    kind, err = run_failure({"ok": False, "error": "HTTP 401", "status": 401})  # type: ignore[misc]
    assert kind == "error" and str(err).endswith(": HTTP 401")
    assert (
        run_failure(Answer(text=None, partial=True, notes=["call_cap_reached"])) is None
    )  # seed 001 scores it
