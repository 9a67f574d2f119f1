"""The loopback's scripted replies: ``[[reasoning:N]]`` spends reasoning tokens, ``[[tool:...]]`` calls tools.

Raw HTTP against the server, both API flavours: what a provider sends, as hrbench's clients read it.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from hrbench.testing import LoopbackServer


@pytest.fixture(scope="module")
def srv() -> Iterator[LoopbackServer]:
    with LoopbackServer() as s:
        yield s


def _post(srv: LoopbackServer, flavour: str, body: dict[str, Any]) -> dict[str, Any]:
    path = "/chat/completions" if flavour == "openai" else "/messages"
    req = urllib.request.Request(
        srv.base_url + path,
        data=json.dumps({"model": "m", **body}).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=10) as reply:
        return json.loads(reply.read())  # type: ignore[no-any-return]


def _user(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}]


def test_openai_reasoning_under_the_limit_answers_and_reports_it(srv: LoopbackServer) -> None:
    got = _post(srv, "openai", {"messages": _user("[[reasoning:30]] [[reply:Paris]]"), "max_tokens": 100})
    assert got["choices"][0]["message"]["content"] == "Paris" and got["choices"][0]["finish_reason"] == "stop"
    assert got["usage"]["completion_tokens"] == 31
    assert got["usage"]["completion_tokens_details"]["reasoning_tokens"] == 30


@pytest.mark.parametrize("n", [100, 250])  # at the limit, or past it
def test_openai_reasoning_that_reaches_max_tokens_leaves_no_content(srv: LoopbackServer, n: int) -> None:
    got = _post(srv, "openai", {"messages": _user(f"[[reasoning:{n}]] [[reply:Paris]]"), "max_tokens": 100})
    choice = got["choices"][0]
    assert choice["message"]["content"] == "" and choice["finish_reason"] == "length"
    assert got["usage"]["completion_tokens"] == 100
    assert got["usage"]["completion_tokens_details"]["reasoning_tokens"] == 100
    assert srv.bills[-1].tokens_out == 100  # billed the whole limit


def test_anthropic_reasoning_that_reaches_max_tokens_is_a_thinking_block_alone(srv: LoopbackServer) -> None:
    got = _post(srv, "anthropic", {"messages": _user("[[reasoning:500]] [[reply:Paris]]"), "max_tokens": 64})
    assert [b["type"] for b in got["content"]] == ["thinking"] and got["stop_reason"] == "max_tokens"
    assert got["usage"]["output_tokens"] == 64


def test_anthropic_reasoning_under_the_limit_thinks_then_answers(srv: LoopbackServer) -> None:
    got = _post(srv, "anthropic", {"messages": _user("[[reasoning:10]] [[reply:Paris]]"), "max_tokens": 64})
    assert [b["type"] for b in got["content"]] == ["thinking", "text"] and got["stop_reason"] == "end_turn"
    assert got["usage"]["output_tokens"] == 11


@pytest.mark.parametrize(
    ("setting", "spent"),
    [
        ({"reasoning_effort": "low"}, 10),
        ({"reasoning_effort": "high"}, 90),
        ({}, 40),  # the bare number is the default
        ({"reasoning_effort": "medium"}, 40),
    ],
)
def test_a_value_per_effort_is_picked_by_the_requests_setting(
    srv: LoopbackServer, setting: dict, spent: int
) -> None:
    got = _post(
        srv, "openai", {"messages": _user("[[reasoning:40:low=10:high=90]] x"), "max_tokens": 200, **setting}
    )
    assert got["usage"]["completion_tokens_details"]["reasoning_tokens"] == spent


def test_anthropic_picks_by_its_thinking_budget(srv: LoopbackServer) -> None:
    thinking = {"type": "enabled", "budget_tokens": 2048}
    got = _post(
        srv,
        "anthropic",
        {"messages": _user("[[reasoning:5:2048=70]] x"), "max_tokens": 4096, "thinking": thinking},
    )
    assert got["usage"]["output_tokens"] == 71


def test_openai_tool_markers_script_one_call_a_turn_then_the_last_results_text(srv: LoopbackServer) -> None:
    prompt = '[[tool:lookup:{"city": "Paris"}]] [[tool:convert:{"x": [1, 2]}]] go'
    first = _post(srv, "openai", {"messages": _user(prompt)})
    msg = first["choices"][0]["message"]
    assert first["choices"][0]["finish_reason"] == "tool_calls" and msg["content"] is None
    (call,) = msg["tool_calls"]
    assert call["function"] == {"name": "lookup", "arguments": '{"city": "Paris"}'}
    turn2 = [*_user(prompt), msg, {"role": "tool", "tool_call_id": call["id"], "content": "France"}]
    second = _post(srv, "openai", {"messages": turn2})
    assert second["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "convert"
    turn3 = [
        *turn2,
        second["choices"][0]["message"],
        {"role": "tool", "tool_call_id": "c2", "content": "EUR 3"},
    ]
    third = _post(srv, "openai", {"messages": turn3})
    assert (
        third["choices"][0]["message"]["content"] == "EUR 3"
        and third["choices"][0]["finish_reason"] == "stop"
    )


def test_anthropic_tool_markers_are_tool_use_blocks(srv: LoopbackServer) -> None:
    prompt = '[[reasoning:5]] [[tool:lookup:{"city": "Paris"}]] go'
    first = _post(srv, "anthropic", {"messages": _user(prompt), "max_tokens": 100})
    assert first["stop_reason"] == "tool_use"
    thinking, use = first["content"]
    assert thinking["type"] == "thinking" and use["type"] == "tool_use"
    assert use["name"] == "lookup" and use["input"] == {"city": "Paris"}
    result = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": use["id"], "content": "France"}],
    }
    second = _post(
        srv,
        "anthropic",
        {
            "messages": [*_user(prompt), {"role": "assistant", "content": first["content"]}, result],
            "max_tokens": 100,
        },
    )
    assert second["stop_reason"] == "end_turn" and second["content"][-1] == {"type": "text", "text": "France"}


def test_a_reply_marker_answers_after_the_tools_and_malformed_arguments_go_as_given(
    srv: LoopbackServer,
) -> None:
    first = _post(srv, "openai", {"messages": _user("[[tool:t:{oops}]] [[reply:Done]]")})
    assert first["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] == "{oops}"
    msgs = [
        *_user("[[tool:t:{oops}]] [[reply:Done]]"),
        first["choices"][0]["message"],
        {"role": "tool", "tool_call_id": "c", "content": "r"},
    ]
    assert _post(srv, "openai", {"messages": msgs})["choices"][0]["message"]["content"] == "Done"


def test_markers_in_a_tools_result_are_not_read(srv: LoopbackServer) -> None:
    """A tool's output is data, not the script: its markers do not make more calls."""
    prompt = '[[tool:t:{"a": 1}]] go'
    first = _post(srv, "openai", {"messages": _user(prompt)})["choices"][0]["message"]
    msgs = [*_user(prompt), first, {"role": "tool", "tool_call_id": "c", "content": '[[tool:evil:{"b": 2}]]'}]
    second = _post(srv, "openai", {"messages": msgs})["choices"][0]
    assert second["finish_reason"] == "stop" and "tool_calls" not in second["message"]
