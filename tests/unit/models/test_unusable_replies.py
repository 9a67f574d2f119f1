"""Replies that cannot be scored are error runs with their cause, never wrong.

A reply cut at the output limit (``finish_reason: "length"``) is not scored ``wrong``, sent once,
with no warning; ``content: null`` is not a ``parse_failure``. README: "retry truncated replies"; SPEC
section 6: "a failed model call surfaces". Real loopback servers, both providers.
"""

from __future__ import annotations

import warnings

import pytest

import hrbench as hb
from hrbench.testing import LoopbackServer
from tests.unit.models.conftest import FAST

REF = hb.Reference({"q1": "France", "q2": "Peru"}, labels=["Paris", "Lima"])
GOV = hb.Governor(max_calls=1000)


def _ask(prompt: str, params: dict | None = None) -> hb.Arm:
    return hb.Arm("ask", lambda item, ctx: ctx.call(prompt.format(item=item), **(params or {})).text)


def _client(kind: str, srv: LoopbackServer) -> object:
    cls = hb.OpenAIClient if kind == "openai" else hb.AnthropicClient
    return cls("m", base_url=srv.base_url, api_key_env=None, **FAST)


CASES = [
    # (prompt, call params, cause said, attempts per run)
    ("[[reply:Paris is the capital]] {item}", {"max_tokens": 1}, "reply cut at the output limit", 1),
    ("[[fault:null_content]] {item}", {}, "reply has no text", 3),
]


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
@pytest.mark.parametrize(("prompt", "params", "cause", "attempts"), CASES)
def test_an_unusable_reply_is_an_error_run_with_its_cause(
    srv: LoopbackServer, kind: str, prompt: str, params: dict, cause: str, attempts: int
) -> None:
    with pytest.warns(hb.ArmErrorWarning) as got:
        bench = hb.benchmark(_ask(prompt, params), REF, runs=5, client=_client(kind, srv), governor=GOV)
    assert {r.failure_kind for r in bench.rows} == {"error"}  # never wrong, never parse_failure
    assert len(srv.requests) == 10 * attempts  # a reply with no text is retried (max_attempts 3)
    (text,) = [str(w.message) for w in got if issubclass(w.category, hb.ArmErrorWarning)]
    assert f"10 of 10 run(s) raised or failed (10 x {kind}: {cause}" in text
    assert ("(after 3 attempts)" in text) == (attempts == 3)
    # the provider billed the reply that failed each run (its last attempt): the row says so
    assert sorted(r.tokens_out for r in bench.rows) == sorted(
        b.tokens_out for b in srv.bills[attempts - 1 :: attempts]
    )
    assert all(r.tokens_in for r in bench.rows)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_reply_with_no_text_that_a_retry_completes_is_scored(srv: LoopbackServer, kind: str) -> None:
    """A reply with no text, then a whole one: the run is scored on the whole one."""
    srv.push("null_content", "ok")
    srv.set(reply_fn=lambda prompt, seed, call: "Paris")
    arm = hb.Arm("ask", lambda item, ctx: ctx.call("x").text)
    with pytest.warns(hb.FewRunsWarning):
        bench = hb.benchmark(arm, hb.Reference({"q1": "France"}, labels=["Paris"]), runs=1,
                             client=_client(kind, srv), governor=GOV)  # fmt: skip
    assert [(r.correct, r.failure_kind) for r in bench.rows] == [(True, None)]
    assert len(srv.requests) == 2


def test_a_tool_call_or_a_refusal_with_no_text_is_not_an_unusable_reply() -> None:
    from hrbench.models._replies import unusable_reply

    assert unusable_reply(hb.Result(text=None, finish_reason="tool_calls")) is None
    assert unusable_reply(hb.Result(text=None, refused=True, finish_reason="content_filter")) is None
    assert unusable_reply(hb.Result(text="", finish_reason="stop")) is None  # an empty answer is an answer
    assert unusable_reply(hb.Result(text="Par", finish_reason="length")) is not None
    assert unusable_reply(hb.Result(text=None, finish_reason="stop")) is not None


@pytest.mark.parametrize(("model", "provenance"), [("gpt-4o", "counted"), ("my-llama", "estimated")])
def test_replies_without_usage_are_said_to_be_counted_not_reported(
    srv: LoopbackServer, model: str, provenance: str
) -> None:
    """Replies with no usage block (errserver's `nousage`): the rows say so and a warning names them, never looking reported."""
    srv.set(omit_usage=True, reply_fn=lambda prompt, seed, call: "Paris")
    client = hb.OpenAIClient(model, base_url=srv.base_url, api_key_env=None, **FAST)
    with pytest.warns(hb.UsageEstimatedWarning) as got:
        bench = hb.benchmark(_ask("{item}"), REF, runs=5, client=client, governor=GOV)
    assert {r.usd_provenance for r in bench.rows} == {provenance}
    (text,) = [str(w.message) for w in got if issubclass(w.category, hb.UsageEstimatedWarning)]
    assert "arm 'ask': 10 run(s)" in text and ("one token per UTF-8 byte" in text) == (
        provenance == "estimated"
    )
    srv.set(omit_usage=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", hb.UsageEstimatedWarning)  # reported usage: no warning
        hb.benchmark(_ask("{item} again"), REF, runs=5, client=client, governor=GOV)
