"""Tool calls and the tool loop against a real loopback server, and their replay with it stopped.

The loopback scripts one tool call per turn (``[[tool:NAME:{json}]]``) and answers, once they are
used, with its last tool's result. Every turn is draw-keyed, cached, governed, recorded and traced;
a replay of the recording gives the same rows with the provider down.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from typing import Any

import pytest

import hrbench as hb
from hrbench.errors import ConfigError
from hrbench.testing import LoopbackServer
from hrbench.tools import function_definition, tool_definitions
from tests.unit.models.conftest import FAST

REF = hb.Reference(
    {"q1": "Paris", "q2": "Lima", "q3": "Suva", "q4": "Rome"},
    labels=["Paris", "Lima", "Suva", "Rome"],
    cluster=["a", "a", "b", "b"],
)
CAPITALS = {"France": "Paris", "Peru": "Lima", "Fiji": "Suva", "Italy": "Rome"}
COUNTRIES = {v: k for k, v in CAPITALS.items()}
TWO_TOOLS = (
    '[[tool:country_of:{{"city": "{item}"}}]] [[tool:capital_of:{{"country": "{country}"}}]] Which capital?'
)


def country_of(city: str) -> str:
    """The country a city is in."""
    return COUNTRIES.get(city, "unknown")


def capital_of(country: str) -> str:
    """The capital of a country."""
    return CAPITALS.get(country, "unknown")


TOOLS = {"country_of": country_of, "capital_of": capital_of}


def agent(item: str, ctx: hb.Context) -> str | None:
    prompt = TWO_TOOLS.format(item=item, country=COUNTRIES[item])
    return hb.tool_loop(ctx, prompt, TOOLS, max_tokens=64).text


@pytest.fixture(scope="module")
def _srv() -> Iterator[LoopbackServer]:
    with LoopbackServer() as s:
        s.set(price=(1.0, 4.0))
        yield s


@pytest.fixture
def srv(_srv: LoopbackServer) -> LoopbackServer:
    _srv.reset()
    return _srv


def _client(kind: str, srv: LoopbackServer) -> Any:
    cls = hb.OpenAIClient if kind == "openai" else hb.AnthropicClient
    return cls("loopback-1", base_url=srv.base_url, api_key_env=None, **FAST)


PRICING = hb.Pricing(overrides={"loopback-1": {"input": 1.0, "output": 4.0}})


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_two_tool_trajectory_runs_its_tools_and_answers(srv: LoopbackServer, kind: str) -> None:
    bench = hb.benchmark(
        hb.Arm("agent", agent), REF, runs=5, client=_client(kind, srv), pricing=PRICING, concurrency=1
    )
    assert [r.correct for r in bench.rows] == [True] * 20
    assert len(srv.requests) == 20 * 3  # three turns a run: two tool calls, then the answer
    trace = bench.traces[bench.rows[0].ledger_id]
    assert [s.kind for s in trace if s.source != "output"] == [
        "request",
        "tool",
        "request",
        "tool",
        "request",
    ]
    assert [(c.name, c.arguments) for s in trace if s.kind == "tool" for c in s.tool_calls or []] == [
        ("country_of", {"city": "Paris"}),
        ("capital_of", {"country": "France"}),
    ]
    assert [s.text for s in trace if s.kind == "tool"] == ["France", "Paris"]
    assert len({s.key for s in trace if s.kind == "request"}) == 3  # each turn its own request key
    assert {s.draw_index for s in trace if s.kind == "request"} == {1}  # the run's draw index
    row = bench.rows[0]
    assert row.usd == pytest.approx(sum(s.usd or 0 for s in trace)) and row.usd > 0  # every turn paid
    # each provider's own form: the tools, the assistant's calls sent back, the tools' results
    first, second = srv.requests[0].body, srv.requests[1].body
    if kind == "openai":
        assert first["tools"][0] == {
            "type": "function",
            "function": function_definition(country_of)["function"],
        }
        assert second["messages"][1]["tool_calls"][0]["function"]["name"] == "country_of"
        assert second["messages"][2] == {
            "role": "tool",
            "tool_call_id": second["messages"][1]["tool_calls"][0]["id"],
            "content": "France",
        }
    else:
        assert first["tools"][0]["name"] == "country_of" and "input_schema" in first["tools"][0]
        assert second["messages"][1]["content"][-1]["type"] == "tool_use"
        (result,) = second["messages"][2]["content"]
        assert result["type"] == "tool_result" and result["content"] == "France"


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_recorded_trajectory_replays_the_same_rows_with_the_provider_down(kind: str, tmp_path: Any) -> None:
    store = hb.Store(tmp_path / "state.sqlite3")
    with LoopbackServer() as live:
        live.set(price=(1.0, 4.0))
        client = _client(kind, live)
        first = hb.benchmark(
            hb.Arm("agent", agent), REF, runs=5, client=client, store=store, record="r1", pricing=PRICING
        )
        base_url = live.base_url
    # the provider is down now: a request that reached it would fail
    replay = hb.ReplayClient(store, recording="r1", model="loopback-1", provider=kind, base_url=base_url)
    again = hb.benchmark(hb.Arm("agent", agent), REF, runs=5, client=replay, pricing=PRICING)
    store.close()
    cols = ("cluster", "item", "arm", "run", "correct", "outcome", "failure_kind", "tokens_in", "tokens_out")
    assert [[getattr(r, c) for c in cols] for r in again.rows] == [
        [getattr(r, c) for c in cols] for r in first.rows
    ]
    for a, b in zip(first.rows, again.rows, strict=True):
        got, had = again.traces[b.ledger_id], first.traces[a.ledger_id]
        assert [s.source for s in got if s.kind == "request"] == ["recording"] * 3
        assert [(s.kind, s.key, s.tool_calls, s.text) for s in got] == [
            (s.kind, s.key, s.tool_calls, s.text) for s in had
        ]
    assert hb.report(again, warn=False).arms[0].usd_list == pytest.approx(
        hb.report(first, warn=False).arms[0].usd_list
    )


def test_the_cache_serves_every_turn_of_a_rerun(srv: LoopbackServer, tmp_path: Any) -> None:
    store = hb.Store(tmp_path / "s.sqlite3")
    first = hb.benchmark(
        hb.Arm("agent", agent), REF, runs=5, client=_client("openai", srv), cache=hb.Cache(store)
    )
    sent = len(srv.requests)
    again = hb.benchmark(
        hb.Arm("agent", agent), REF, runs=5, client=_client("openai", srv), cache=hb.Cache(store)
    )
    store.close()
    assert len(srv.requests) == sent == 60
    assert [r.correct for r in again.rows] == [r.correct for r in first.rows]
    assert {s.source for t in again.traces.values() for s in t if s.kind == "request"} == {"cache"}


def test_every_turn_is_governed(srv: LoopbackServer) -> None:
    with pytest.warns(hb.BudgetStoppedWarning):
        bench = hb.benchmark(
            hb.Arm("agent", agent),
            REF,
            runs=5,
            client=_client("openai", srv),
            governor=hb.Governor(max_calls=4),
            concurrency=1,
        )
    assert len(srv.requests) == 4
    first = bench.traces[bench.rows[0].ledger_id]
    assert [s.source for s in first if s.kind == "request"] == ["live"] * 3
    stopped = bench.traces[bench.rows[1].ledger_id]
    assert [s.kind for s in stopped] == ["request", "tool", "request"] and stopped[-1].source == "refused"
    assert bench.rows[1].failure_kind == "budget_stop"


@pytest.mark.parametrize(
    ("prompt", "tools", "said"),
    [
        ("[[tool:nope]] x", TOOLS, "error: no tool is named 'nope'"),
        ("[[tool:capital_of:{not json}]] x", TOOLS, "error: arguments are not JSON"),
        ('[[tool:capital_of:{"city": "Paris"}]] x', TOOLS, "error: TypeError"),  # a wrong argument
        ('[[tool:boom:{"x": 1}]] x', {"boom": lambda x: 1 / 0}, "error: ZeroDivisionError"),
    ],
)
def test_a_tool_that_fails_is_told_to_the_model_and_kept_in_the_trace(
    srv: LoopbackServer, prompt: str, tools: dict, said: str
) -> None:
    arm = hb.Arm("agent", lambda item, ctx: hb.tool_loop(ctx, prompt + item, tools).text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bench = hb.benchmark(arm, REF, runs=1, client=_client("openai", srv), concurrency=1)
    trace = bench.traces[bench.rows[0].ledger_id]
    (tool,) = [s for s in trace if s.kind == "tool"]
    assert tool.error is not None and tool.error.startswith(said) and tool.text is None
    assert srv.requests[1].body["messages"][-1]["content"].startswith(said)  # the model was told
    assert bench.rows[0].outcome == said.split(":")[0] or bench.rows[0].failure_kind == "wrong"


def test_a_loop_that_reaches_max_steps_stops_with_no_answer(srv: LoopbackServer) -> None:
    calls = "".join(f'[[tool:capital_of:{{"country": "C{k}"}}]]' for k in range(6))
    seen: list[Any] = []

    def arm_fn(item: str, ctx: hb.Context) -> Any:
        loop = hb.tool_loop(ctx, calls + item, TOOLS, max_steps=3)
        seen.append(loop)
        return loop.text

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bench = hb.benchmark(hb.Arm("agent", arm_fn), REF, runs=1, client=_client("openai", srv))
    loop = seen[0]
    assert loop.stopped == "max_steps" and loop.turns == 3 and loop.text is None and len(loop.calls) == 3
    assert bench.rows[0].failure_kind == "parse_failure"  # no answer to score
    assert any(
        s.kind == "note" and "max_steps" in (s.text or "") for s in bench.traces[bench.rows[0].ledger_id]
    )


def test_the_async_loop_awaits_async_tools_and_runs_sync_ones_off_the_loop(srv: LoopbackServer) -> None:
    import threading

    threads: list[tuple[str, str]] = []

    async def country_of_async(city: str) -> str:
        threads.append(("async", threading.current_thread().name))
        return COUNTRIES[city]

    def capital_sync(country: str) -> str:
        threads.append(("sync", threading.current_thread().name))
        return CAPITALS[country]

    async def arm_fn(item: str, ctx: hb.Context) -> str | None:
        prompt = TWO_TOOLS.format(item=item, country=COUNTRIES[item])
        loop = await hb.tool_loop_async(
            ctx, prompt, {"country_of": country_of_async, "capital_of": capital_sync}
        )
        return loop.text

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bench = hb.benchmark(hb.Arm("agent", arm_fn), REF, runs=1, client=_client("anthropic", srv))
    assert [r.correct for r in bench.rows] == [True] * 4
    loop_thread = {t for kind, t in threads if kind == "async"}
    assert len(threads) == 8 and len(loop_thread) == 1  # awaited on the event loop
    assert not loop_thread & {t for kind, t in threads if kind == "sync"}  # sync tools in worker threads


def test_ctx_call_returns_the_calls_in_one_form_and_the_providers_message(srv: LoopbackServer) -> None:
    got: list[hb.Result] = []

    def arm_fn(item: str, ctx: hb.Context) -> str:
        got.append(ctx.call('[[tool:capital_of:{"country": "Fiji"}]] ' + item, tools=[capital_of]))
        return "x"

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for kind in ("openai", "anthropic"):
            hb.benchmark(hb.Arm("a", arm_fn), REF, runs=1, client=_client(kind, srv))
    openai, anthropic = got[0], got[4]
    for r in (openai, anthropic):
        assert [(c.name, c.arguments) for c in r.tool_calls or []] == [("capital_of", {"country": "Fiji"})]
        assert r.finish_reason == "tool_calls" and r.text is None
    assert json.loads(openai.message["tool_calls"][0]["function"]["arguments"]) == {"country": "Fiji"}  # type: ignore[index]
    assert anthropic.message["content"][0]["type"] == "tool_use"  # type: ignore[index]


def _positional(*values: int) -> int:
    return sum(values)


@pytest.mark.parametrize(
    ("tools", "match"),
    [
        ({"bad name!": capital_of}, "tool's name"),
        ([_positional], "cannot be named"),
        ("capital_of", "expected a list"),
        ([{"nope": 1}], "expected OpenAI's"),
        ([capital_of, {"name": "capital_of", "input_schema": {}}], "two tools have this name"),
    ],
)
def test_bad_tools_are_refused(tools: Any, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        tool_definitions(tools)


def test_both_providers_forms_become_one() -> None:
    anthropic = {"name": "capital_of", "description": "d", "input_schema": {"type": "object"}}
    openai = {
        "type": "function",
        "function": {"name": "capital_of", "description": "d", "parameters": {"type": "object"}},
    }
    assert tool_definitions([anthropic]) == tool_definitions([openai]) == [openai]
