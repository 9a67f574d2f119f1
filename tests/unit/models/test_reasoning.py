"""A reply that is all reasoning is ``reasoning_exhausted``: costed, counted, never scored wrong.

OpenAI ``finish_reason: length`` with empty content and reasoning tokens; Anthropic
``stop_reason: max_tokens`` with thinking and no text (litellm-docs #559, ollama #17561). The
loopback spends ``N`` reasoning tokens for a ``[[reasoning:N]]`` marker and all of ``max_tokens``
once ``N`` reaches it. Reasoning settings are arm settings sent in each provider's fields.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import pytest

import hrbench as hb
from hrbench.errors import ConfigError, ReasoningExhausted
from hrbench.models import AnthropicClient, OpenAIClient, reasoning_params
from hrbench.records import Result, Usage
from hrbench.runner._invoke import run_failure
from hrbench.specs import build_arm, build_scorer
from hrbench.testing import LoopbackServer
from tests.unit.models.conftest import DEFAULTS, FAST

PRICE = (1.0, 4.0)  # USD per million tokens, as the loopback bills and the client prices
REF = hb.Reference({"q1": "France", "q2": "Peru"}, labels=["Paris", "Lima"], cluster=["a", "b"])


@pytest.fixture
def srv(_server: LoopbackServer) -> Iterator[LoopbackServer]:
    _server.set(**DEFAULTS, price=PRICE)
    _server.reset()
    yield _server
    _server.set(**DEFAULTS, price=None)
    _server.reset()


def _client(kind: str, srv: LoopbackServer) -> Any:
    cls = OpenAIClient if kind == "openai" else AnthropicClient
    return cls("loopback-1", base_url=srv.base_url, api_key_env=None, **FAST)


def _pricing() -> hb.Pricing:
    return hb.Pricing(overrides={"loopback-1": {"input": PRICE[0], "output": PRICE[1]}})


class CountingScorer:
    """The exact scorer, counting what it is asked to score."""

    name = "counting"

    def __init__(self) -> None:
        self.seen: list[Any] = []

    def __call__(self, item: Any, output: Any, label: Any) -> hb.Score:
        self.seen.append(output)
        return hb.exact_scorer()(item, output, label)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
@pytest.mark.parametrize("how", ["text", "reply"])  # the arm reads .text, or answers with the reply
def test_a_reply_that_is_all_reasoning_is_reasoning_exhausted_with_its_cost(
    srv: LoopbackServer, kind: str, how: str
) -> None:
    def ask(item: str, ctx: hb.Context) -> Any:
        reply = ctx.call(f"[[reasoning:500]] [[reply:Paris]] {item}", max_tokens=64)
        return reply.text if how == "text" else reply

    scorer = CountingScorer()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", hb.FewRunsWarning)
        bench = hb.benchmark(
            hb.Arm("think", ask), REF, runs=2, client=_client(kind, srv), scorer=scorer, pricing=_pricing()
        )
    assert [r.failure_kind for r in bench.rows] == ["reasoning_exhausted"] * 4
    assert [r.correct for r in bench.rows] == [False] * 4  # counts against the arm, as a failed run
    assert scorer.seen == []  # never scored: not a wrong answer
    assert [r.tokens_out for r in bench.rows] == [64] * 4  # the whole limit, billed
    if kind == "openai":
        assert [r.tokens_reasoning for r in bench.rows] == [64] * 4
    billed = sorted(b.usd for b in srv.bills)
    assert sorted(r.usd for r in bench.rows) == pytest.approx(billed)  # rows match the bill
    assert all(r.usd and r.usd > 0 for r in bench.rows)
    trace = bench.traces[bench.rows[0].ledger_id]
    assert trace[0].finish_reason == "length" and not trace[0].text
    assert any(s.source == "reasoning_exhausted" and "raise max_tokens" in (s.text or "") for s in trace)
    (arm,) = bench.summary()
    assert arm["reasoning_exhausted"] == 4 and arm["failed"] == 4 and arm["errors"] == 0
    assert "Reasoning exhausted" in str(bench) and "'think' 4" in str(bench)
    rep = hb.report(bench, descriptive=True, warn=False)
    assert rep.arms[0].reasoning_exhausted == 4 and rep.arms[0].failures == 4
    assert "reasoning_exhausted 4" in str(rep)


@pytest.mark.parametrize("form", ["prompt-arm", "dict-answer", "dict-text"])
def test_an_exhausted_reply_reaches_no_scorer_of_any_kind(srv: LoopbackServer, form: str) -> None:
    """Built-in, one's own, a judge, a trajectory scorer: none receives a reply that was all reasoning."""
    prompt = "[[reasoning:500]] [[reply:Paris]] {item}"
    if form == "prompt-arm":
        arm = build_arm({"kind": "prompt", "name": "think", "template": prompt, "params": {"max_tokens": 32}})
    else:
        key = form.split("-")[1]
        arm = hb.Arm("think", lambda item, ctx: {key: ctx.call(prompt.format(item=item), max_tokens=32)})
    seen: list[Any] = []
    judge = hb.MockClient(lambda messages, params: seen.append(messages) or "CORRECT")
    scorers = [
        hb.exact_scorer(),
        hb.answer_scorer(),
        hb.scorer(lambda item, output, label: seen.append(output) or True, "mine"),
        hb.judge_scorer(judge),
        build_scorer("step_count", {"max_steps": 9}),
    ]
    for sc in scorers:
        srv.reset()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", hb.FewRunsWarning)
            bench = hb.benchmark(
                arm, REF, runs=2, client=_client("openai", srv), scorer=sc, pricing=_pricing()
            )
        assert [r.failure_kind for r in bench.rows] == ["reasoning_exhausted"] * 4, sc.name
        assert {r.correct for r in bench.rows} == {False} and bench.status == "done", sc.name
        assert sorted(r.usd for r in bench.rows) == pytest.approx(sorted(b.usd for b in srv.bills)), sc.name
        assert all(r.usd and r.usd > 0 for r in bench.rows), sc.name
    assert seen == []


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_reasoning_under_the_limit_leaves_room_for_the_answer(srv: LoopbackServer, kind: str) -> None:
    arm = hb.Arm(
        "think", lambda item, ctx: ctx.call(f"[[reasoning:20]] [[reply:Paris]] {item}", max_tokens=64).text
    )
    bench = hb.benchmark(arm, REF, runs=5, client=_client(kind, srv), pricing=_pricing())
    assert [r.failure_kind for r in bench.rows[:5]] == [None] * 5
    assert [r.tokens_out for r in bench.rows[:5]] == [21] * 5  # 20 reasoning + the one word
    # OpenAI reports the reasoning apart; Anthropic counts thinking inside output_tokens only
    assert {r.tokens_reasoning for r in bench.rows} == ({20} if kind == "openai" else {0})


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_reply_cut_with_text_and_no_reasoning_stays_an_error(srv: LoopbackServer, kind: str) -> None:
    """Only a reply with no answer and reasoning is reasoning_exhausted; a cut answer is an error."""
    arm = hb.Arm("ask", lambda item, ctx: ctx.call("[[reply:Paris is the capital]]", max_tokens=1).text)
    with pytest.warns(hb.ArmErrorWarning):
        bench = hb.benchmark(arm, REF, runs=5, client=_client(kind, srv))
    assert {r.failure_kind for r in bench.rows} == {"error"}


def test_an_exhausted_reply_is_cached_and_served_again_as_exhausted(
    srv: LoopbackServer, tmp_path: Any
) -> None:
    store = hb.Store(tmp_path / "s.sqlite3")
    arm = hb.Arm("think", lambda item, ctx: ctx.call(f"[[reasoning:90]] {item}", max_tokens=50).text)
    first = hb.benchmark(
        arm, REF, runs=5, client=_client("openai", srv), cache=hb.Cache(store), pricing=_pricing()
    )
    sent = len(srv.requests)
    again = hb.benchmark(
        arm, REF, runs=5, client=_client("openai", srv), cache=hb.Cache(store), pricing=_pricing()
    )
    store.close()
    assert len(srv.requests) == sent  # every reply from the cache
    assert (
        [r.failure_kind for r in again.rows]
        == [r.failure_kind for r in first.rows]
        == ["reasoning_exhausted"] * 10
    )
    assert {r.usd for r in again.rows} == {0.0}  # paid nothing; at list price it costs what it did
    assert hb.report(again, warn=False).arms[0].usd_list == pytest.approx(sum(r.usd or 0 for r in first.rows))


@pytest.mark.parametrize(
    ("body", "exhausted"),
    [
        ({"content": "", "finish": "length", "reasoning": 64}, True),
        ({"content": None, "finish": "length", "reasoning": 64}, True),
        ({"content": "", "finish": "length", "reasoning": 0}, False),  # no reasoning: a cut reply
        ({"content": "Par", "finish": "length", "reasoning": 60}, False),  # an answer, cut
        ({"content": "", "finish": "stop", "reasoning": 64}, False),
    ],
)
def test_openai_exhaustion_is_read_from_finish_content_and_reasoning(body: dict, exhausted: bool) -> None:
    got = OpenAIClient("m", "http://127.0.0.1:9/v1", None).parse_reply(
        {
            "id": "x",
            "choices": [
                {
                    "message": {"role": "assistant", "content": body["content"]},
                    "finish_reason": body["finish"],
                }
            ],
            "usage": {
                "prompt_tokens": 5,
                "completion_tokens": 64,
                "completion_tokens_details": {"reasoning_tokens": body["reasoning"]},
            },
        }
    )
    assert got.reasoning_exhausted is exhausted
    if exhausted:
        with pytest.raises(ReasoningExhausted, match="raise max_tokens"):
            _ = got.text


@pytest.mark.parametrize(
    ("blocks", "stop", "exhausted"),
    [
        ([{"type": "thinking", "thinking": "hmm", "signature": "s"}], "max_tokens", True),
        ([{"type": "redacted_thinking", "data": "x"}], "max_tokens", True),
        ([{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "Pa"}], "max_tokens", False),
        ([], "max_tokens", False),  # no thinking: a cut reply
        ([{"type": "thinking", "thinking": "hmm"}], "end_turn", False),
    ],
)
def test_anthropic_exhaustion_is_read_from_stop_reason_and_thinking(
    blocks: list, stop: str, exhausted: bool
) -> None:
    got = AnthropicClient("m", "http://127.0.0.1:9/v1", None).parse_reply(
        {"id": "m", "content": blocks, "stop_reason": stop, "usage": {"input_tokens": 3, "output_tokens": 9}}
    )
    assert got.reasoning_exhausted is exhausted
    assert got.message == {"role": "assistant", "content": blocks}  # kept whole for the next turn


# -- reasoning settings -----------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_an_arms_reasoning_setting_is_sent_in_the_providers_field(srv: LoopbackServer, kind: str) -> None:
    setting = {"reasoning_effort": "low"} if kind == "openai" else {"thinking_budget": 2048}
    arm = hb.Arm(
        "think", lambda item, ctx: ctx.call(f"[[reply:Paris]] {item}", max_tokens=4096).text, settings=setting
    )
    hb.benchmark(arm, REF, runs=5, client=_client(kind, srv))
    sent = [r.body for r in srv.requests]
    if kind == "openai":
        assert {b["reasoning_effort"] for b in sent} == {"low"}
    else:
        assert {str(b["thinking"]) for b in sent} == {str({"type": "enabled", "budget_tokens": 2048})}


def test_a_sweep_makes_an_arm_per_effort_whose_replies_differ_in_cost_and_exhaustion(
    srv: LoopbackServer,
) -> None:
    base = hb.Arm(
        "solve",
        lambda item, ctx: (
            ctx.call(f"[[reasoning:5:low=10:high=200]] [[reply:Paris]] {item}", max_tokens=100).text
        ),
    )
    arms = hb.sweep(base, reasoning_effort=["low", "high"])
    assert [a.name for a in arms] == ["solve-low", "solve-high"] and {a.derived_from for a in arms} == {
        "solve"
    }
    assert arms[0].hash != arms[1].hash
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bench = hb.benchmark(arms, REF, runs=5, client=_client("openai", srv), pricing=_pricing())
    kinds = {a.name: {r.failure_kind for r in bench.rows if r.arm == a.name} for a in arms}
    assert kinds == {"solve-low": {None, "wrong"}, "solve-high": {"reasoning_exhausted"}}
    summ = {s["arm"]: s for s in bench.summary()}
    assert summ["solve-high"]["reasoning_exhausted"] == 10 and summ["solve-low"]["reasoning_exhausted"] == 0
    assert summ["solve-high"]["usd"] > summ["solve-low"]["usd"]  # 100 tokens thought against 11


@pytest.mark.parametrize(
    ("reasoning", "provider", "field"),
    [
        ({"thinking_budget": 2048}, "openai", "thinking_budget"),
        ({"reasoning_effort": "low"}, "anthropic", "reasoning_effort"),
        ({"thinking_budget": 512}, "anthropic", "thinking_budget"),  # below the API's 1024
    ],
)
def test_a_setting_the_api_has_no_field_for_is_refused_not_dropped(
    reasoning: dict, provider: str, field: str
) -> None:
    with pytest.raises(ConfigError, match=field):
        reasoning_params(reasoning, provider, {})


def test_a_benchmark_refuses_such_a_setting_before_its_first_call(srv: LoopbackServer) -> None:
    arm = hb.Arm("think", lambda item, ctx: ctx.call("x").text, settings={"thinking_budget": 2048})
    with pytest.raises(
        ConfigError, match=r"arms\[0\]\.thinking_budget: an OpenAI-compatible API takes no thinking budget"
    ):
        hb.benchmark(arm, REF, runs=5, client=_client("openai", srv))
    assert srv.requests == []


@pytest.mark.parametrize(
    ("settings", "match"),
    [
        ({"reasoning_effort": "max"}, "reasoning_effort: unknown value; expected one of"),
        ({"thinking_budget": 0}, "thinking_budget"),
        ({"thinking_budget": True}, "thinking_budget"),
        ({"thinking_budget": "2048"}, "thinking_budget"),
    ],
)
def test_a_bad_reasoning_setting_is_refused_when_the_arm_is_made(settings: dict, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        hb.Arm("a", lambda item, ctx: "", settings=settings)


@pytest.mark.parametrize(
    ("axes", "match"),
    [
        ({}, "sweep"),
        ({"temperature": [0, 1]}, r"sweep\.temperature"),
        ({"reasoning_effort": []}, "non-empty"),
        ({"reasoning_effort": "low"}, "non-empty list"),
        ({"reasoning_effort": ["low", "low"]}, "twice"),
        ({"reasoning_effort": ["low", "max"]}, "reasoning_effort"),
    ],
)
def test_a_bad_sweep_is_refused(axes: dict, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        hb.sweep(hb.Arm("a", lambda item, ctx: ""), **axes)


def test_run_failure_reads_an_exhausted_reply_in_each_form_and_an_arms_own_report() -> None:
    usage = Usage(tokens_in=5, tokens_out=64, tokens_reasoning=64)
    reply = Result(text="", finish_reason="length", usage=usage, reasoning_exhausted=True)
    for output in (reply, {"answer": reply}, {"text": reply}):
        kind, err = run_failure(output)  # type: ignore[misc]
        assert kind == "reasoning_exhausted" and isinstance(err, ReasoningExhausted)
        assert "64 reasoning token(s) of 64" in str(err)
    assert run_failure({"text": None, "failure_kind": "reasoning_exhausted"}) == ("reasoning_exhausted", None)
    failed = Result(ok=False, error="openai: HTTP 500: boom", reasoning_exhausted=True)
    assert run_failure(failed)[0] == "error"  # type: ignore[index]  # a failed call stays an error
    assert run_failure(Result(text="Paris", usage=usage)) is None
