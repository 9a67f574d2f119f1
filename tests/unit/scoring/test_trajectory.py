"""Trajectory scorers score a scripted two-tool trajectory per run, read from the run's trace.

The loopback scripts each arm's tool calls; every scorer (tool sequence exact, in order, subset;
argument match; step count; a judge of the trajectory) scores every run, so the report's
intervals, the paired differences and the gate read them as any scorer's.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import pytest

import hrbench as hb
from hrbench.errors import ConfigError
from hrbench.scoring._trajectory import render_trajectory, tool_calls
from hrbench.specs import build_scorer
from hrbench.testing import LoopbackServer

COUNTRY = {
    "Paris": "France", "Lima": "Peru", "Suva": "Fiji", "Rome": "Italy", "Oslo": "Norway",
    "Cairo": "Egypt", "Quito": "Ecuador", "Hanoi": "Vietnam", "Accra": "Ghana", "Dakar": "Senegal",
}  # fmt: skip
ITEMS = {f"q{i}": c for i, c in enumerate(COUNTRY)}
CLUSTERS = [f"c{i}" for i in range(len(ITEMS))]  # ten clusters: enough for a paired test to decide
REF = hb.Reference(ITEMS, labels=list(COUNTRY.values()), cluster=CLUSTERS)


def country_of(city: str) -> str:
    return COUNTRY[city]


def search(query: str) -> str:
    return f"results for {query}"


TOOLS = {"country_of": country_of, "search": search}


def _arm(name: str, script: str) -> hb.Arm:
    """An arm whose model calls the scripted tools (``{city}`` is the item), then answers with the last result."""

    def fn(item: str, ctx: hb.Context) -> str | None:
        return hb.tool_loop(ctx, script.replace("CITY", item) + f" Where is {item}?", TOOLS).text

    return hb.Arm(name, fn)


DIRECT = _arm("direct", '[[tool:search:{"query": "CITY"}]] [[tool:country_of:{"city": "CITY"}]]')
DETOUR = _arm(
    "detour",
    '[[tool:search:{"query": "CITY"}]] [[tool:search:{"query": "more"}]] [[tool:country_of:{"city": "CITY"}]]',
)
GUESS = _arm("guess", '[[tool:search:{"query": "CITY"}]]')  # never looks the country up: answers wrong


@pytest.fixture(scope="module")
def srv() -> Iterator[LoopbackServer]:
    with LoopbackServer() as s:
        yield s


def _bench(srv: LoopbackServer, scorer: Any, arms: list[hb.Arm] | None = None) -> hb.Bench:
    client = hb.OpenAIClient("loopback-1", base_url=srv.base_url, api_key_env=None)
    return hb.benchmark(
        arms or [DIRECT, DETOUR, GUESS],
        REF,
        runs=5,
        client=client,
        scorer=scorer,
        governor=hb.Governor(max_calls=5000),
    )


def _accuracy(bench: hb.Bench) -> dict[str, float | None]:
    return {s["arm"]: s["accuracy"] for s in bench.summary()}


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("exact", {"direct": 1.0, "detour": 0.0, "guess": 0.0}),
        ("in_order", {"direct": 1.0, "detour": 1.0, "guess": 0.0}),
        ("subset", {"direct": 1.0, "detour": 1.0, "guess": 0.0}),
    ],
)
def test_tool_sequence_scores_every_run(srv: LoopbackServer, mode: str, expected: dict) -> None:
    bench = _bench(srv, hb.tool_sequence_scorer(["search", "country_of"], mode))
    assert _accuracy(bench) == expected
    row = next(r for r in bench.rows if r.arm == "detour")
    assert row.outcome == "search > search > country_of"
    assert {r.failure_kind for r in bench.rows if not r.correct} <= {"wrong"}


def test_in_order_and_subset_differ_on_order(srv: LoopbackServer) -> None:
    backwards = ["country_of", "search"]
    assert _accuracy(_bench(srv, hb.tool_sequence_scorer(backwards, "in_order"))) == {
        "direct": 0.0,
        "detour": 0.0,
        "guess": 0.0,
    }
    assert _accuracy(_bench(srv, hb.tool_sequence_scorer(backwards, "subset")))["direct"] == 1.0


def test_tool_args_matches_each_items_arguments_from_its_field(srv: LoopbackServer) -> None:
    ref = hb.Reference(
        {k: {"city": c, "args": {"city": c}} for k, c in ITEMS.items()},
        labels=list(COUNTRY.values()),
        cluster=CLUSTERS,
    )

    def fn(item: dict, ctx: hb.Context) -> str | None:
        city = item["city"] if item["city"] != "Rome" else "Milan"  # one item: the wrong argument
        return hb.tool_loop(
            ctx, f'[[tool:country_of:{{"city": "{city}"}}]] {item["city"]}', {"country_of": lambda city: "x"}
        ).text

    client = hb.OpenAIClient("loopback-1", base_url=srv.base_url, api_key_env=None)
    bench = hb.benchmark(
        hb.Arm("a", fn),
        ref,
        runs=5,
        client=client,
        scorer=hb.tool_args_scorer("country_of", field="args"),
        governor=hb.Governor(max_calls=5000),
    )
    assert {r.item: r.correct for r in bench.rows} == {k: c != "Rome" for k, c in ITEMS.items()}
    rome = next(r for r in bench.rows if r.item == "q3")
    assert rome.outcome == 'country_of({"city": "Milan"})'


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"max_steps": 3}, {"direct": 1.0, "detour": 0.0, "guess": 1.0}),
        ({"min_steps": 3, "max_steps": 3}, {"direct": 1.0, "detour": 0.0, "guess": 0.0}),
        ({"max_steps": 2, "count": "tool_calls"}, {"direct": 1.0, "detour": 0.0, "guess": 1.0}),
    ],
)
def test_step_count_scores_turns_or_tool_calls(srv: LoopbackServer, kwargs: dict, expected: dict) -> None:
    bench = _bench(srv, hb.step_count_scorer(**kwargs))
    assert _accuracy(bench) == expected
    assert next(r for r in bench.rows if r.arm == "detour").outcome == (
        "4 turns" if "count" not in kwargs else "3 tool_calls"
    )


@pytest.mark.filterwarnings("ignore::hrbench.UsageEstimatedWarning")  # a mock judge reports no usage
def test_a_judge_reads_the_rendered_trajectory(srv: LoopbackServer) -> None:
    seen: list[str] = []

    def judge_model(messages: list, params: dict) -> str:
        prompt = messages[-1]["content"]
        seen.append(prompt)
        return "CORRECT" if "country_of(" in prompt and "Final answer: " in prompt else "INCORRECT"

    bench = _bench(srv, hb.trajectory_judge(hb.MockClient(judge_model)))
    assert _accuracy(bench) == {"direct": 1.0, "detour": 1.0, "guess": 0.0}
    assert any(
        '1. search({"query": "Paris"}) -> results for Paris\n2. country_of({"city": "Paris"}) -> France\n'
        "Final answer: France" in p
        for p in seen
    )
    row = next(r for r in bench.rows if r.arm == "guess")
    steps = [s.kind for s in bench.traces[row.ledger_id] if s.source != "output"]  # the output's note aside
    assert steps[-1] == "request"  # the judge's turn is traced


def test_a_trajectory_score_gets_intervals_paired_differences_and_the_gate(srv: LoopbackServer) -> None:
    bench = _bench(srv, hb.tool_sequence_scorer(["search", "country_of"], "exact"))
    rep = hb.report(bench, warn=False)
    direct, detour, guess = rep.arms
    assert direct.accuracy == 1.0 and direct.ci_low is not None and direct.ci_low < 1.0  # an interval
    diff = hb.compare(bench, "direct", "detour", warn=False)
    assert diff.diff == 1.0 and diff.ci_low is not None and diff.ci_low > 0
    rows = {a: [r for r in bench.rows if r.arm == a] for a in ("direct", "detour")}
    assert hb.gate(rows["detour"], rows["direct"], arm=None).decision == "fail"


def test_the_scorers_are_built_from_spec_names() -> None:
    s = build_scorer("tool_sequence", {"expected": ["a", "b"], "mode": "in_order"})
    assert s.name == "tool_sequence_in_order" and s.needs_context
    assert build_scorer("tool_args", {"tool": "a", "expected": {"x": 1}}).name == "tool_args_a"
    assert build_scorer("step_count", {"max_steps": 3}).name == "step_count"
    judge = build_scorer("trajectory_judge", {"client": {"kind": "mock", "reply": "CORRECT"}})
    assert judge.needs_context and judge.settings["trajectory"] is True


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: hb.tool_sequence_scorer(["a"], "fuzzy"), "mode"),
        (lambda: hb.tool_sequence_scorer(), "expected"),
        (lambda: hb.tool_sequence_scorer("ab"), "list of tool names"),
        (lambda: hb.tool_args_scorer("t"), "expected"),
        (lambda: hb.tool_args_scorer("t", {"a": 1}, match="fuzzy"), "match"),
        (lambda: hb.step_count_scorer(), "max_steps"),
        (lambda: hb.step_count_scorer(2, 3), "min_steps"),
        (lambda: hb.step_count_scorer(-1), "max_steps"),
        (lambda: hb.step_count_scorer(2, count="words"), "count"),
        (lambda: hb.trajectory_judge(hb.MockClient(lambda m, p: "x"), template="no output here"), "output"),
    ],
)
def test_bad_settings_are_refused(make: Any, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        make()


def test_a_trajectory_scorer_refuses_an_output_alone() -> None:
    with pytest.raises(ConfigError, match="reads a run's trace"):
        hb.tool_sequence_scorer(["a"])("item", "output", "label")


def test_an_item_without_the_expected_field_is_an_error_run_naming_it(srv: LoopbackServer) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bench = _bench(srv, hb.tool_sequence_scorer(field="tools"), [DIRECT])
    assert {r.failure_kind for r in bench.rows} == {"error"}
    errors = [s.error for s in bench.traces[bench.rows[0].ledger_id] if s.kind == "error"]
    assert any("'tools' field" in (e or "") for e in errors)


def test_the_trajectory_helpers_read_only_answered_requests() -> None:
    call = hb.ToolCall(id="1", name="a", arguments={"x": 1})
    trace = [
        hb.Step(ledger_id="r", tool_calls=[call]),
        hb.Step(ledger_id="r", kind="tool", source="tool", tool_calls=[call], text="ok"),
        hb.Step(ledger_id="r", source="refused"),
    ]
    assert [c.name for c in tool_calls(trace)] == ["a"]
    assert render_trajectory(trace, "done") == '1. a({"x": 1}) -> ok\nFinal answer: done'
