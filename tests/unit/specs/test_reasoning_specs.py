"""Specs for reasoning models and multi-call arms: reasoning fields, sweeps, tools, per-run caps."""

from __future__ import annotations

import warnings
from typing import Any

import msgspec
import pytest

import hrbench as hb
from hrbench import specs
from hrbench.errors import ConfigError
from hrbench_client import protocol as p

SEEN: list[dict[str, Any]] = []


def lookup(city: str) -> str:
    """A tool the specs below name by import path."""
    return {"Paris": "France"}.get(city, "unknown")


def _model(messages: list[dict[str, Any]], params: dict[str, Any]) -> Any:
    SEEN.append(params)
    if messages[-1]["role"] == "tool":
        return messages[-1]["content"]
    if params.get("tools"):
        return hb.Result(tool_calls=[hb.ToolCall(id="c1", name="lookup", arguments={"city": "Paris"})])
    return "France"


def _run(arms: list[hb.Arm]) -> hb.Bench:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return hb.benchmark(
            arms, hb.Reference({"q1": "Paris"}, labels=["France"]), runs=1, client=hb.MockClient(_model)
        )


@pytest.mark.parametrize("wire", [False, True])
def test_a_sweep_makes_one_arm_per_value_each_sending_its_setting(wire: bool) -> None:
    spec: Any = {
        "kind": "prompt",
        "name": "ask",
        "template": "Where is {item}?",
        "sweep": {"reasoning_effort": ["low", "high"], "thinking_budget": [1024, 4096]},
    }
    if wire:
        spec = msgspec.convert(spec, p.PromptArmSpec)
    arms = specs.build_arms(spec)
    assert [a.name for a in arms] == ["ask-low-1024", "ask-low-4096", "ask-high-1024", "ask-high-4096"]
    assert arms[1].reasoning == {"reasoning_effort": "low", "thinking_budget": 4096}
    SEEN.clear()
    _run(arms)
    assert sorted((s["reasoning_effort"], s["thinking_budget"]) for s in SEEN) == [
        ("high", 1024), ("high", 4096), ("low", 1024), ("low", 4096)
    ]  # fmt: skip


def test_a_prompt_arms_reasoning_fields_are_its_settings() -> None:
    arm = specs.build_arm(
        {"kind": "prompt", "name": "a", "template": "{item}", "reasoning_effort": "minimal"}
    )
    assert arm.reasoning == {"reasoning_effort": "minimal"} and arm.settings["reasoning_effort"] == "minimal"
    other = specs.build_arm({"kind": "prompt", "name": "a", "template": "{item}", "reasoning_effort": "high"})
    assert other.hash != arm.hash


def test_an_import_arm_takes_reasoning_settings_and_a_sweep() -> None:
    arms = specs.build_arms(
        {
            "kind": "import",
            "path": f"{__name__}:lookup",
            "name": "look",
            "sweep": {"reasoning_effort": ["low"]},
        }
    )
    assert [(a.name, a.reasoning) for a in arms] == [("look-low", {"reasoning_effort": "low"})]


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        (
            {"kind": "outputs", "name": "o", "outputs": {"q1": "x"}, "sweep": {"reasoning_effort": ["low"]}},
            "outputs arm",
        ),
        (
            {
                "kind": "prompt",
                "name": "a",
                "template": "x",
                "reasoning_effort": "low",
                "sweep": {"reasoning_effort": ["high"]},
            },
            "sweep it or set it",
        ),
        (
            {"kind": "prompt", "name": "a", "template": "x", "sweep": {"temperature": [0, 1]}},
            r"sweep\.temperature",
        ),
        ({"kind": "prompt", "name": "a", "template": "x", "sweep": {}}, "sweep"),
        ({"kind": "prompt", "name": "a", "template": "x", "reasoning_effort": "turbo"}, "reasoning_effort"),
        ({"kind": "prompt", "name": "a", "template": "x", "tools": {"t": f"{__name__}:nope"}}, r"tools\.t"),
        ({"kind": "prompt", "name": "a", "template": "x", "tools": ["x"]}, "tools"),
        (
            {
                "kind": "prompt",
                "name": "a",
                "template": "x",
                "tools": {"t": f"{__name__}:lookup"},
                "max_steps": 0,
            },
            "max_steps",
        ),
        ({"kind": "prompt", "name": "a", "template": "x", "params": {"tools": []}}, r"params\.tools"),
    ],
)
def test_bad_reasoning_and_tool_fields_are_refused_naming_them(spec: dict, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        specs.build_arms(spec)


def test_a_spec_with_a_sweep_is_refused_by_build_arm() -> None:
    with pytest.raises(ConfigError, match="build_arms"):
        specs.build_arm(
            {"kind": "prompt", "name": "a", "template": "x", "sweep": {"reasoning_effort": ["low"]}}
        )


def test_a_wire_sweep_of_an_unknown_setting_is_refused_by_the_schema() -> None:
    with pytest.raises(msgspec.ValidationError, match="temperature"):
        msgspec.convert(
            {"kind": "prompt", "name": "a", "template": "x", "sweep": {"temperature": [0]}}, p.PromptArmSpec
        )


def test_a_prompt_arm_with_tools_runs_a_tool_loop() -> None:
    arm = specs.build_arm(
        {
            "kind": "prompt",
            "name": "agent",
            "template": "Where is {item}?",
            "tools": {"lookup": f"{__name__}:lookup"},
        }
    )
    assert arm.settings["tools"] == {"lookup": f"{__name__}:lookup"} and arm.settings["max_steps"] == 8
    bench = _run([arm])
    row = bench.rows[0]
    assert row.correct is True
    assert [s.kind for s in bench.traces[row.ledger_id] if s.source != "output"] == [
        "request",
        "tool",
        "request",
    ]


def test_a_prompt_arm_stopped_at_max_steps_has_no_answer() -> None:
    def always_calls(messages: list, params: dict) -> Any:
        return hb.Result(
            tool_calls=[hb.ToolCall(id=f"c{len(messages)}", name="lookup", arguments={"city": "Paris"})]
        )

    arm = specs.build_arm(
        {
            "kind": "prompt",
            "name": "agent",
            "template": "{item}",
            "tools": {"lookup": f"{__name__}:lookup"},
            "max_steps": 2,
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bench = hb.benchmark(
            arm, hb.Reference({"q1": "Paris"}, labels=["France"]), runs=1, client=hb.MockClient(always_calls)
        )
    assert bench.rows[0].failure_kind == "parse_failure"
    assert sum(s.kind == "request" for s in bench.traces[bench.rows[0].ledger_id]) == 2


def test_the_governors_per_run_caps_come_from_its_table() -> None:
    gov = specs.build_governor({"max_calls": 100, "max_calls_per_run": 3, "max_usd_per_run": 0.01})
    assert gov is not None and gov.per_run == {"max_calls_per_run": 3, "max_usd_per_run": 0.01}
    wire = msgspec.convert({"max_tokens_per_run": 500}, p.GovernorSpec)
    assert specs.build_governor(wire).per_run == {"max_tokens_per_run": 500}  # type: ignore[union-attr]
    with pytest.raises(ConfigError, match=r"governor\.max_calls_per_run"):
        specs.build_governor({"max_calls_per_run": -2})
    with pytest.raises(msgspec.ValidationError, match="max_usd_per_run"):
        msgspec.convert({"max_usd_per_run": -1}, p.GovernorSpec)
