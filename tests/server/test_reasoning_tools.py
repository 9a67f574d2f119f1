"""Reasoning sweeps, tool loops, per-run caps and trajectory scorers over the wire, against a loopback.

A real daemon runs specs sent as JSON: a prompt arm swept over two reasoning efforts (one of
which spends its whole output limit reasoning), a prompt arm whose model calls two tools named
by import path, scored by a trajectory scorer, replayed with the loopback stopped, and per-run
caps that stop the nth call of each run while the benchmark goes on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import hrbench_client as hc
from hrbench.testing import LoopbackServer
from tests.server._daemon import HERE, Daemon

CITIES = {"q1": "Paris", "q2": "Lima", "q3": "Suva", "q4": "Rome"}
LABELS = {"q1": "France", "q2": "Peru", "q3": "Fiji", "q4": "Italy"}
TOOLS = '[[tool:search:{{"query": "{item}"}}]] [[tool:country_of:{{"city": "{item}"}}]] Where is {item}?'


def _client(srv: LoopbackServer) -> dict[str, Any]:
    return {
        "kind": "openai",
        "model": "loopback-1",
        "base_url": srv.base_url,
        "api_key_env": None,
        "max_attempts": 1,
        "price": {"input": 1.0, "output": 4.0},
    }


def _spec(arms: list[dict[str, Any]], client: dict[str, Any], **kw: Any) -> dict[str, Any]:
    return {
        "arms": arms,
        "reference": {
            "items": CITIES,
            "labels": LABELS,
            "cluster": {"q1": "a", "q2": "a", "q3": "b", "q4": "b"},
        },
        "client": client,
        "runs": 5,
        "governor": {"max_calls": 2000},
        "python_path": [str(HERE)],
        **kw,
    }


def _run(c: Any, spec: dict[str, Any]) -> tuple[list[Any], Any]:
    stream = c.benchmark(spec)
    rows = list(stream)
    assert stream.result is not None
    return rows, stream.result


def test_a_swept_effort_that_exhausts_its_reasoning_is_counted_not_scored(shared_daemon: Daemon) -> None:
    arm = {
        "kind": "prompt",
        "name": "think",
        "template": "[[reasoning:5:low=10:high=400]] [[reply:France]] Where is {item}?",
        "params": {"max_tokens": 100},
        "sweep": {"reasoning_effort": ["low", "high"]},
    }
    with LoopbackServer() as srv, shared_daemon.client() as c:
        rows, res = _run(c, _spec([arm], _client(srv), name="sweep-effort"))
        sent = {r.body["reasoning_effort"] for r in srv.requests}
        view = c.view(res.id)
        rep = c.report(res.id)
    assert sent == {"low", "high"}
    kinds = {(r.arm, r.failure_kind) for r in rows}
    assert {a for a, _ in kinds} == {"think-low", "think-high"}
    assert {k for a, k in kinds if a == "think-high"} == {"reasoning_exhausted"}
    assert {k for a, k in kinds if a == "think-low"} <= {None, "wrong"}
    summary = {s.arm: s for s in res.summary}
    assert summary["think-high"].reasoning_exhausted == 20 and summary["think-low"].reasoning_exhausted == 0
    assert summary["think-high"].usd > summary["think-low"].usd  # it paid for 100 tokens of thought
    assert res.status == "done"
    failures = {a.arm: a.failures for a in view.arms}
    assert failures["think-high"] == {"reasoning_exhausted": 20}
    arms = {a["arm"]: a for a in rep["arms"]}
    assert arms["think-high"]["reasoning_exhausted"] == 20
    assert arms["think-low"]["accuracy"] == 0.25 and arms["think-high"]["accuracy"] == 0.0
    assert rep["frontier"] == []  # the high effort is dearer and less accurate: no step along the frontier


def test_a_tool_arm_named_by_import_path_is_scored_on_its_trajectory_and_replayed(
    shared_daemon: Daemon,
) -> None:
    arm = {
        "kind": "prompt",
        "name": "agent",
        "template": TOOLS,
        "tools": {"search": "_agent_tools:search", "country_of": "_agent_tools:country_of"},
    }
    scorer = {
        "scorer": "tool_sequence",
        "scorer_settings": {"expected": ["search", "country_of"], "mode": "exact"},
    }
    with LoopbackServer() as srv, shared_daemon.client() as c:
        client = _client(srv)
        rows, res = _run(c, _spec([arm], client, name="agent-live", record="agent-rec", **scorer))
        traced = c.rows(res.id, traces=True)
    assert [r.correct for r in rows] == [True] * 20
    assert {r.outcome for r in rows} == {"search > country_of"}
    trace = traced.traces[rows[0].ledger_id]  # type: ignore[index]
    assert [s.kind for s in trace if s.source != "output"] == [
        "request",
        "tool",
        "request",
        "tool",
        "request",
    ]
    assert [c.name for s in trace if s.kind == "tool" for c in s.tool_calls or []] == ["search", "country_of"]
    # the loopback is stopped: the replay answers every turn from the recording
    replay = {"kind": "replay", "recording": "agent-rec"}
    with shared_daemon.client() as c:
        again, res2 = _run(c, _spec([arm], replay, name="agent-replay", **scorer))
    cols = ("item", "run", "correct", "outcome", "failure_kind", "tokens_in", "tokens_out")
    assert sorted([getattr(r, k) for k in cols] for r in again) == sorted(
        [getattr(r, k) for k in cols] for r in rows
    )
    assert res2.status == "done"


def test_per_run_caps_stop_each_runs_nth_call_and_the_benchmark_goes_on(shared_daemon: Daemon) -> None:
    arm = {
        "kind": "prompt",
        "name": "agent",
        "template": TOOLS,
        "tools": {"search": "_agent_tools:search", "country_of": "_agent_tools:country_of"},
    }
    with LoopbackServer() as srv, shared_daemon.client() as c:
        spec = _spec([arm], _client(srv), name="agent-capped", cache=False)
        spec["governor"] = {"max_calls": 2000, "max_calls_per_run": 2}
        rows, res = _run(c, spec)
        sent = len(srv.requests)
    assert sent == 20 * 2  # each run's third turn was refused before it was sent
    assert {r.failure_kind for r in rows} == {"budget_stop"}
    (arm_summary,) = res.summary
    assert arm_summary.budget_stop == arm_summary.run_capped == 20
    assert res.status == "done"  # not budget_stopped: each run stopped, the benchmark did not
    assert any("per-run cap" in w for w in res.warnings)


@pytest.mark.parametrize(
    ("arm", "where"),
    [
        (
            {"kind": "prompt", "name": "a", "template": "x", "reasoning_effort": "turbo"},
            "arms[0].reasoning_effort",
        ),
        ({"kind": "prompt", "name": "a", "template": "x", "sweep": {"top_p": [1]}}, "arms[0].sweep"),
        ({"kind": "prompt", "name": "a", "template": "x", "tools": {"t": "_agent_tools:nope"}}, "tools.t"),
        ({"kind": "prompt", "name": "a", "template": "{item}", "thinking_budget": 2048}, "thinking_budget"),
    ],
)
def test_bad_reasoning_and_tool_fields_are_refused_naming_them(
    shared_daemon: Daemon, arm: dict[str, Any], where: str
) -> None:
    client = {"kind": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1", "api_key_env": None}
    with shared_daemon.client() as c, pytest.raises(hc.HrbenchError) as err:
        list(c.benchmark(_spec([arm], client)))
    assert where in str(err.value), str(err.value)


def test_a_per_run_cap_below_zero_is_refused_naming_it(shared_daemon: Daemon, tmp_path: Path) -> None:
    spec = _spec([{"kind": "prompt", "name": "a", "template": "x"}], {"kind": "mock", "reply": "x"})
    spec["governor"] = {"max_calls_per_run": -1}
    with shared_daemon.client() as c, pytest.raises(hc.HrbenchError) as err:
        list(c.benchmark(spec))
    assert "max_calls_per_run" in str(err.value)
