"""OpenAIClient and AnthropicClient over real loopback HTTP: replies, usage, faults, retries."""

from __future__ import annotations

import types
from typing import Any

import anyio
import msgspec
import pytest

import hrbench as hb
from hrbench.errors import BudgetRefused, ConfigError
from hrbench.models import AnthropicClient, OpenAIClient, _http, _pace
from hrbench.models._anthropic import anthropic_usage
from hrbench.models._openai import openai_usage
from hrbench.records import Usage
from hrbench.runner import Governor
from hrbench.scoring import exact_scorer
from hrbench.testing import Fault, LoopbackServer
from tests._slow import current
from tests.conftest import case
from tests.unit.models.conftest import FAST, Counter, req, send

pytestmark = pytest.mark.timeout(60)

CLIENTS = {"openai": OpenAIClient, "anthropic": AnthropicClient}


def make(kind: str, srv: LoopbackServer, **settings: Any) -> OpenAIClient | AnthropicClient:
    return CLIENTS[kind]("loopback-1", base_url=srv.base_url, api_key_env=None, **{**FAST, **settings})


both = pytest.mark.parametrize("kind", sorted(CLIENTS))


# -- plain replies --------------------------------------------------------------------------------


@both
def test_reply_fields(srv: LoopbackServer, kind: str) -> None:
    r = send(make(kind, srv), "[[reply:Paris]] capital of France", seed=1)
    assert r.ok and r.text == "Paris" and not r.refused
    assert r.finish_reason == "stop"
    assert r.model == "loopback-1"
    assert r.response_id and r.response_id.startswith("chatcmpl-" if kind == "openai" else "msg_")
    assert r.usd is None  # priced by the lead's pricing module, not the client
    assert r.seconds > 0 and r.source == "live"
    assert len(srv.requests) == 1


@both
def test_replies_deterministic_per_prompt_and_seed(srv: LoopbackServer, kind: str) -> None:
    cl = make(kind, srv)
    a, b = send(cl, "same prompt", seed=1), send(cl, "same prompt", seed=1)
    assert a.text == b.text
    assert a.response_id != b.response_id  # every reply is its own draw
    if kind == "openai":  # the Messages API has no seed; it is not sent
        assert send(cl, "same prompt", seed=2).text != a.text
    srv.set(vary=True)
    assert send(cl, "same prompt", seed=1).text != send(cl, "same prompt", seed=1).text


def test_openai_body(srv: LoopbackServer) -> None:
    send(make("openai", srv), "hi", seed=3, temperature=0.5, draw_index=2)
    body = srv.requests[-1].body
    assert body == {
        "model": "loopback-1",
        "messages": [{"role": "user", "content": "hi"}],
        "seed": 3,
        "temperature": 0.5,
    }
    assert srv.requests[-1].path == "/v1/chat/completions"


def test_anthropic_body_and_headers(srv: LoopbackServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HRB_TEST_ANTHROPIC", "k-anthropic-123")
    cl = AnthropicClient("claude-x", base_url=srv.base_url, api_key_env="HRB_TEST_ANTHROPIC", **FAST)
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}]
    from hrbench.records import Request

    r = anyio.run(cl.send, Request(messages=messages, params={"seed": 1, "stop": "\n", "temperature": 0}))
    assert r.ok and r.model == "claude-x"
    got = srv.requests[-1]
    assert got.path == "/v1/messages"
    assert got.body == {
        "model": "claude-x",
        "max_tokens": 1024,
        "messages": [{"role": "user", "content": "hi"}],
        "system": "Be brief.",
        "temperature": 0,
        "stop_sequences": ["\n"],
    }
    assert got.headers["x-api-key"] == "k-anthropic-123"
    assert got.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in got.headers


# -- usage ------------------------------------------------------------------------------------------


def test_openai_usage_over_http(srv: LoopbackServer) -> None:
    srv.set(reasoning_tokens=7, cached_fraction=0.5)
    r = send(make("openai", srv), "[[reply:one_two]] b c d e f g h i j")  # 10 prompt words, 1 reply word
    assert r.usage == Usage(
        tokens_in=10, tokens_out=1 + 7, tokens_reasoning=7, tokens_cached=5, provenance="reported"
    )


def test_anthropic_usage_over_http(srv: LoopbackServer) -> None:
    srv.set(reasoning_tokens=7, cached_fraction=0.5, cache_creation_tokens=2)
    r = send(make("anthropic", srv), "[[reply:one_two]] b c d e f g h i j")
    # input_tokens 3 + cache read 5 + cache write 2 (5-minute, the default lifetime); thinking
    # is inside output_tokens, not reported apart
    assert r.usage == Usage(
        tokens_in=10,
        tokens_out=1 + 7,
        tokens_reasoning=0,
        tokens_cached=5,
        provenance="reported",
        tokens_cache_write_5m=2,
    )
    assert r.text == "one_two"  # the thinking block is not part of the text


def test_case_H14b_reasoning_counted_once() -> None:
    c = case("H14b")
    u = openai_usage(c["output"]["usage"])
    assert u.total == c["label"]["tokens_charged"] == 2274
    assert (u.tokens_out, u.tokens_reasoning) == (266, 261)


def test_case_H14d_cached_tokens_read() -> None:
    c = case("H14d")
    u = openai_usage(c["output"]["usage"])
    assert u.total == c["label"]["tokens_charged"] == 2050
    assert (u.tokens_in, u.tokens_cached) == (2000, 1500)


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        (
            {
                "prompt_tokens": 2000,
                "completion_tokens": 300,
                "prompt_tokens_details": {"cached_tokens": 1024},
                "completion_tokens_details": {"reasoning_tokens": 200},
            },
            (2000, 300, 200, 1024),
        ),
        ({"prompt_tokens": 10, "completion_tokens": 5}, (10, 5, 0, 0)),
        ({"prompt_tokens": 10, "completion_tokens": 5, "prompt_cache_hit_tokens": 4}, (10, 5, 0, 4)),
        (
            {"prompt_tokens": 10, "completion_tokens": 5, "reasoning_tokens": 50},
            (10, 55, 50, 0),
        ),  # reported apart
        ({"prompt_tokens": 10, "completion_tokens": None, "prompt_tokens_details": None}, (10, 0, 0, 0)),
    ],
)
def test_openai_usage_table(usage: dict[str, Any], expected: tuple[int, int, int, int]) -> None:
    u = openai_usage(usage)
    assert (u.tokens_in, u.tokens_out, u.tokens_reasoning, u.tokens_cached) == expected
    assert u.provenance == "reported"


def test_anthropic_usage_table() -> None:
    u = anthropic_usage(
        {
            "input_tokens": 50,
            "cache_read_input_tokens": 1500,
            "cache_creation_input_tokens": 450,
            "output_tokens": 80,
        }
    )
    assert (u.tokens_in, u.tokens_out, u.tokens_reasoning, u.tokens_cached) == (2000, 80, 0, 1500)


def test_missing_usage_is_unknown() -> None:
    assert openai_usage(None).provenance is None
    assert anthropic_usage(None).provenance is None


@both
def test_reply_without_usage_is_counted_or_estimated(srv: LoopbackServer, kind: str) -> None:
    srv.set(omit_usage=True)
    r = send(make(kind, srv), "[[reply:hello world]] say hello")
    # the loopback model has no shipped tokenizer: estimated from above, a token a UTF-8 byte
    assert r.usage.provenance == "estimated" and r.usage.tokens_out == len(b"hello world")
    counted = send(
        CLIENTS[kind]("gpt-4o-mini", base_url=srv.base_url, api_key_env=None, **FAST),
        "[[reply:hello world]] x",
    )
    assert counted.usage.provenance == "counted" and counted.usage.tokens_out == 2


# -- refusals ------------------------------------------------------------------------------------


@both
def test_content_filter_is_refused(srv: LoopbackServer, kind: str) -> None:
    r = send(make(kind, srv), "[[fault:content_filter]] bad")
    assert r.ok and r.refused and r.text is None
    assert r.finish_reason == ("content_filter" if kind == "openai" else "refusal")


@both
def test_refusal_field_is_refused(srv: LoopbackServer, kind: str) -> None:
    r = send(make(kind, srv), "[[fault:refusal]] bad")
    assert r.ok and r.refused and r.finish_reason == "refusal"
    assert r.text == "I can't help with that."  # case H10c: the refusal's words are the text


# -- faults and retries ---------------------------------------------------------------------------


@both
@pytest.mark.parametrize("fault", ["429:retry_after=0", "500", "503", "529", "drop"])
def test_transient_fault_retried_then_ok(srv: LoopbackServer, kind: str, fault: str) -> None:
    srv.push(fault, fault)
    count = Counter()
    r = send(make(kind, srv), "[[reply:fine]] x", count)
    assert r.ok and r.text == "fine"
    assert len(srv.requests) == 3 and count.n == 3  # every attempt charged before it was sent
    assert [q.fault for q in srv.requests] == [Fault.of(fault).kind] * 2 + ["ok"]


@both
def test_a_429_is_retried_past_max_attempts(srv: LoopbackServer, kind: str) -> None:
    """A rate limit is bounded by time (max_total_s), not attempts: five 429s, then the reply."""
    srv.push(*["429:retry_after=0.01"] * 5)
    count = Counter()
    r = send(make(kind, srv, max_attempts=3), "[[reply:fine]] x", count)
    assert r.ok and r.text == "fine"
    assert len(srv.requests) == 6 and count.n == 6  # every attempt charged before it was sent


@both
@pytest.mark.parametrize("fault", ["500", "503", "drop"])
def test_persistent_fault_fails_after_max_attempts(srv: LoopbackServer, kind: str, fault: str) -> None:
    srv.push(*[fault] * 5)
    count = Counter()
    r = send(make(kind, srv, max_attempts=3), "x", count)
    assert not r.ok and r.raw_text is None
    with pytest.raises(hb.ModelError, match="after 3 attempts"):
        r.text  # noqa: B018 - reading the text of a failed reply raises
    assert "after 3 attempts" in (r.error or "")
    assert len(srv.requests) == 3 and count.n == 3
    assert r.usage.provenance is None


@both
def test_hang_past_timeout(srv: LoopbackServer, kind: str) -> None:
    # the server must read each attempt before its timeout, on a loaded machine too: the timeout
    # is stretched with the load (at most 10 times, 3 s, far inside the 20 s hang)
    timeout_s = 0.3 * min(current(), 10.0)
    cl = make(kind, srv, timeout_s=timeout_s, max_attempts=2)
    r = send(cl, "[[fault:hang:hang=20]] x")
    assert not r.ok and f"no reply within {timeout_s:g} s" in (r.error or "")
    assert len(srv.requests) == 2
    # the error names the client's timeout: the client cut the hang (the server hangs for 20 s)


@both
def test_malformed_json_retried_then_fails(srv: LoopbackServer, kind: str) -> None:
    count = Counter()
    r = send(make(kind, srv), "[[fault:malformed]] x", count)
    assert not r.ok and "malformed reply" in (r.error or "")
    assert len(srv.requests) == 3 and count.n == 3  # FAST: max_attempts=3


@both
def test_client_error_not_retried(srv: LoopbackServer, kind: str) -> None:
    r = send(make(kind, srv), "[[fault:unauthorized]] x")
    assert not r.ok and "HTTP 401" in (r.error or "")
    assert len(srv.requests) == 1


@both
@pytest.mark.parametrize(("fault", "status"), [("quota", 402), ("quota429", 429)])
def test_quota_refusal_is_the_providers_error_not_a_budget_stop(
    srv: LoopbackServer, kind: str, fault: str, status: int
) -> None:
    """A quota refusal is the provider's error, not BudgetRefused(limit_refused), which reads as an hrbench budget stop."""
    count = Counter()
    r = send(make(kind, srv), f"[[fault:{fault}]] x", count)
    assert not r.ok and r.halts == "quota" and r.status == status
    assert (r.error or "").startswith(f"{kind}: quota exhausted (HTTP {status}): ")
    assert "exceeded your current quota" in (r.error or "") and "does not help" in (r.error or "")
    assert len(srv.requests) == 1 and count.n == 1  # no retry


@both
@pytest.mark.parametrize(("fault", "halts"), [("unauthorized", "auth"), ("500", None), ("429", None)])
def test_a_refused_key_halts_the_client_a_server_error_does_not(
    srv: LoopbackServer, kind: str, fault: str, halts: str | None
) -> None:
    srv.push(*[fault] * 10)
    r = send(make(kind, srv, max_attempts=2, max_total_s=1.5), "x")  # 429s wait 1 s each: time ends them
    assert not r.ok and r.halts == halts


@both
def test_before_attempt_refusal_stops_retries(srv: LoopbackServer, kind: str) -> None:
    srv.push("500", "500", "500")
    count = Counter(refuse_at=2)
    with pytest.raises(BudgetRefused) as info:
        send(make(kind, srv), "x", count)
    assert info.value.limit == "call_cap_reached"
    assert len(srv.requests) == 1  # the refused attempt was never sent


def test_before_attempt_refusal_sends_nothing(srv: LoopbackServer) -> None:
    with pytest.raises(BudgetRefused):
        send(make("openai", srv), "x", Counter(refuse_at=1))
    assert srv.requests == []


@both
def test_retry_after_respected(srv: LoopbackServer, kind: str) -> None:
    srv.push("429:retry_after=0.4")
    r = send(make(kind, srv), "[[reply:ok]] x")
    assert r.ok
    first, second = srv.requests
    gap = second.at - first.at
    assert gap >= 0.35, gap  # Retry-After is a floor; no tight upper bound (loaded machines)


def test_retry_after_past_budget_is_not_waited(srv: LoopbackServer) -> None:
    srv.push("429:retry_after=30")
    r = send(make("openai", srv, max_retry_wait_s=5), "x")
    assert not r.ok and "Retry-After 30 s" in (r.error or "")
    assert len(srv.requests) == 1  # given up at once: not retried after the 30 s


def test_case_H15a_429_then_ok_charges_each_attempt(srv: LoopbackServer) -> None:
    # case H15a: a 429 with Retry-After, then 200: scored normally, no budget_stop
    srv.push("429:retry_after=0.5")
    gov = Governor(max_calls=10)
    gate = gov.gate(0.0, 0)
    r = send(make("openai", srv), "[[reply:42]] x", gate.attempt)
    gate.settle(0.0, r.usage.total)
    assert r.ok and not r.refused and r.text == "42"  # scored normally on the reply
    assert gov.calls == 2 and gov.refused == 0  # no budget stop; both attempts went through the governor
    assert exact_scorer()(None, r, "42").correct is True


def test_case_H15b_every_attempt_429_is_error_not_budget_stop(srv: LoopbackServer) -> None:
    # every attempt 429 until the request's time (max_total_s: 429s are bounded by time) is up
    count = Counter()
    r = send(make("openai", srv, max_attempts=3, max_total_s=1.0), "[[fault:429:retry_after=0.05]] x", count)
    assert r.ok is False and count.n == len(srv.requests) >= 1
    assert "HTTP 429" in (r.error or "")
    assert exact_scorer()(None, r, "42").failure_kind == "error"


# -- the API key ------------------------------------------------------------------------------------


SECRET = "hrbKEY_" + "Zq9xW2" * 5


def _windows(secret: str, n: int = 8) -> list[str]:
    return [secret[i : i + n] for i in range(len(secret) - n + 1)]


@both
def test_key_never_leaks(
    srv: LoopbackServer, kind: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("DEBUG")
    cl = CLIENTS[kind](
        "loopback-1", base_url=srv.base_url, api_key_env="HRB_TEST_KEY", **{**FAST, "timeout_s": 0.3}
    )
    monkeypatch.setenv("HRB_TEST_KEY", SECRET)  # set after the client was made: read at request time
    srv.set(api_key=SECRET)
    results = [send(cl, "[[reply:fine]] x")]
    assert results[0].ok
    header = srv.requests[-1].headers["authorization" if kind == "openai" else "x-api-key"]
    assert SECRET in header
    srv.push("echo_key", *["500"] * 3, *["drop"] * 3, *["malformed"] * 3, *["hang:hang=5"] * 3)
    for _ in range(5):
        results.append(send(cl, "x"))
    assert [r.ok for r in results] == [True, False, False, False, False, False]
    shown = [
        repr(cl),
        str(cl.spec),
        str(vars(cl)),
        msgspec.json.encode(results).decode(),
        caplog.text,
        *(f"{rec.getMessage()} {rec.__dict__!r}" for rec in caplog.records),
    ]
    for text in shown:
        assert SECRET not in text
        for piece in _windows(SECRET):
            assert piece not in text, (piece, text[:300])
    quota = send(cl, "[[fault:quota]] x")
    assert not quota.ok and SECRET not in (quota.error or "")


def test_key_rotation_and_missing_key(srv: LoopbackServer, monkeypatch: pytest.MonkeyPatch) -> None:
    cl = OpenAIClient("loopback-1", base_url=srv.base_url, api_key_env="HRB_TEST_KEY", **FAST)
    srv.set(api_key="key-two-2222")
    monkeypatch.setenv("HRB_TEST_KEY", "key-one-1111")
    assert not send(cl, "x").ok
    monkeypatch.setenv("HRB_TEST_KEY", "key-two-2222")
    assert send(cl, "x").ok
    monkeypatch.delenv("HRB_TEST_KEY")
    r = send(cl, "x")
    assert not r.ok and "HRB_TEST_KEY is not set" in (r.error or "")
    assert "authorization" not in srv.requests[-1].headers


def test_a_key_changed_between_attempts_is_sent_by_the_next_and_scrubbed_from_its_reply(
    srv: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key is read at each attempt: a retry sends the key set since, and its reply loses that key."""
    first, second = "key-first-1111aaaa", "key-second-2222bbbb"
    monkeypatch.setenv("HRB_TEST_KEY", first)
    srv.set(reply_fn=lambda prompt, seed, call: f"Paris ({second})")
    srv.push("500")
    cl = OpenAIClient("loopback-1", base_url=srv.base_url, api_key_env="HRB_TEST_KEY", **FAST)
    attempts = []

    def before_attempt() -> None:
        attempts.append(1)
        if len(attempts) == 2:
            monkeypatch.setenv("HRB_TEST_KEY", second)

    r = send(cl, "x", before_attempt)
    assert r.ok and len(attempts) == 2
    assert [q.headers["authorization"] for q in srv.requests] == [f"Bearer {first}", f"Bearer {second}"]
    assert r.text == "Paris (***)" and second not in msgspec.json.encode(r).decode()


def test_wire_follows_the_extra_headers_as_they_are_now() -> None:
    """A client's wire headers are those of its ``extra_headers`` when the request is keyed, changed or not."""
    cl = OpenAIClient("m", base_url="http://127.0.0.1:9/v1", api_key_env=None, headers={"X-Beta": "on"})
    request = req("x")
    assert cl.wire(request)["headers"] == {"x-beta": "on"}
    cl.extra_headers["X-Beta"] = "off"
    cl.extra_headers["X-Api-Key"] = "never-in-the-wire"
    assert cl.wire(request) == {"endpoint": cl.url, "defaults": {}, "headers": {"x-beta": "off"}}
    del cl.extra_headers["X-Beta"]
    assert cl.wire(request)["headers"] == {}


def test_redact_key_shaped_tokens() -> None:
    from hrbench.models._remote import redact

    assert (
        redact("Incorrect API key provided: sk-proj-abc1********wxyz.", None)
        == "Incorrect API key provided: ***."
    )
    assert redact("token Bearer abcdefghijkl", None) == "token ***"
    assert redact("nothing here", "secret-value-1") == "nothing here"


# -- limits and pools -------------------------------------------------------------------------------


def test_100_in_flight_at_concurrency_100(srv: LoopbackServer) -> None:
    srv.set(
        gather=100, gather_timeout_s=60
    )  # replies wait until 100 are in flight: no race with a loaded machine
    cl = make("openai", srv, max_connections=100, timeout_s=60)
    results: list[Any] = [None] * 100

    async def main() -> None:
        async def one(i: int) -> None:
            results[i] = await cl.send(req(f"[[reply:r{i}]] q{i}"))

        async with anyio.create_task_group() as tg:
            for i in range(100):
                tg.start_soon(one, i)

    anyio.run(main)
    assert all(r.ok for r in results), [r.error for r in results if not r.ok][:3]
    assert [r.text for r in results] == [f"r{i}" for i in range(100)]
    assert len(srv.requests) == 100  # no retries were needed: no pool timeout, no dropped request
    assert (
        srv.max_in_flight == 100
    )  # in flight together, not one after another (timing: bench/concurrency.py)


def test_more_requests_than_connections_wait_not_fail(srv: LoopbackServer) -> None:
    srv.set(latency_s=0.05)
    cl = make("openai", srv, max_connections=4, timeout_s=5)

    async def main() -> list[Any]:
        out: list[Any] = []

        async def one(i: int) -> None:
            out.append(await cl.send(req(f"q{i}")))

        async with anyio.create_task_group() as tg:
            for i in range(40):
                tg.start_soon(one, i)
        return out

    results = anyio.run(main)
    assert len(results) == 40 and all(r.ok for r in results)
    assert srv.max_in_flight <= 4
    assert len(srv.requests) == 40


def test_client_survives_successive_event_loops(srv: LoopbackServer) -> None:
    cl = make("openai", srv)
    assert send(cl, "a").ok
    assert send(cl, "b").ok  # a new loop gets new pooled connections; the old ones were closed


@pytest.mark.anyio
async def test_async_context_managers(srv: LoopbackServer) -> None:
    async with LoopbackServer() as other, make("anthropic", other) as cl:
        r = await cl.send(req("[[reply:yes]] x"))
        assert r.ok and r.text == "yes"


def test_endpoint_shared_per_provider_and_base_url(srv: LoopbackServer) -> None:
    async def main() -> None:
        a = _http.endpoint("openai", srv.base_url, 10)
        b = _http.endpoint("openai", srv.base_url, 20)
        c = _http.endpoint("anthropic", srv.base_url, 10)
        assert a is b and a is not c
        assert a.slots.ceiling == 20

    anyio.run(main)


def test_a_429_lowers_the_rate_not_the_slots(srv: LoopbackServer) -> None:
    cl = make("openai", srv, max_connections=16)

    async def main() -> tuple[int, float | None, float | None]:
        ep = _http.endpoint("openai", srv.base_url, 16)
        pace = _pace.pace_for("openai", srv.base_url, None, "loopback-1")
        for i in range(5):
            assert (await cl.send(req(f"ok{i}"))).ok
        before = pace.rate()
        srv.push(*["429:retry_after=0"] * 3)  # a storm: 3 of 8 replies
        assert (await cl.send(req("x"))).ok
        return ep.slots.ceiling, before, pace.rate()

    ceiling, before, after = anyio.run(main)
    assert ceiling == 16 and before is None  # no limit stated: unmetered
    assert after is not None and after > 0  # a rate learned from what the provider accepted


def test_slots_bound_in_flight_and_rise_with_the_ceiling() -> None:
    slots = _http.Slots(6)
    seen: list[int] = []

    async def main() -> None:
        async def one(i: int) -> None:
            async with slots.slot():
                seen.append(slots.in_flight)
                await anyio.sleep(0.01)
                if i == 10:
                    slots.raise_ceiling(8)

        async with anyio.create_task_group() as tg:
            for i in range(60):
                tg.start_soon(one, i)

    anyio.run(main)
    assert len(seen) == 60 and max(seen[:6]) <= 6 and max(seen) <= 8 and slots.in_flight == 0
    assert max(seen) == 8  # the raised ceiling let two more in


# -- the loopback server itself -----------------------------------------------------------------------


def test_separate_process_server() -> None:
    with LoopbackServer(separate_process=True, reasoning_tokens=2) as other:
        r = send(make("openai", other), "[[reply:sub]] x")
    assert r.ok and r.text == "sub" and r.usage.tokens_reasoning == 2


def test_unknown_fault_rejected() -> None:
    with pytest.raises(ValueError, match="unknown fault"):
        Fault.of("teapot")


def test_config_errors() -> None:
    with pytest.raises(ConfigError):
        OpenAIClient("")
    with pytest.raises(ConfigError):
        OpenAIClient("m", max_connections=0)


# -- shared cases over HTTP ---------------------------------------------------------------------------


def test_case_H13a_concurrent_admission_over_http(srv: LoopbackServer) -> None:
    c = case("H13a")["output"]
    gov = Governor(max_usd=c["spend_cap_usd"])
    gov.usd = c["spent_usd"]
    srv.set(latency_s=0.2)  # all four are in flight together
    cl = make("openai", srv)
    outcomes: list[str] = []

    async def one(i: int) -> None:
        gate = gov.gate(c["estimate_each_usd"], 0)
        try:
            r = await cl.send(req(f"q{i}"), gate.attempt)
        except BudgetRefused as exc:
            outcomes.append(exc.limit)
            return
        gate.settle(c["estimate_each_usd"], r.usage.total)
        outcomes.append("ok" if r.ok else "error")

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            for i in range(c["concurrent_requests"]):
                tg.start_soon(one, i)

    anyio.run(main)
    label = case("H13a")["label"]
    assert (
        outcomes.count("ok") == label["admitted"] and outcomes.count("cost_cap_reached") == label["refused"]
    )
    assert len(srv.requests) == label["admitted"]  # refused requests were never sent
    assert gov.usd <= label["final_spend_usd_at_most"]


def test_case_H14b_over_http(srv: LoopbackServer) -> None:
    c = case("H14b")["output"]["usage"]
    srv.set(reasoning_tokens=c["reasoning_tokens"], reply_fn=lambda p, s, n: "a b c d e")
    r = send(make("openai", srv), " ".join(["w"] * c["prompt_tokens"]))
    assert (r.usage.tokens_in, r.usage.tokens_out, r.usage.tokens_reasoning) == (2008, 266, 261)
    assert r.usage.total == case("H14b")["label"]["tokens_charged"]


def test_case_H14d_over_http(srv: LoopbackServer) -> None:
    from hrbench.models import Pricing

    srv.set(cached_fraction=0.75, reply_fn=lambda p, s, n: " ".join(["x"] * 50))
    r = send(make("openai", srv), " ".join(["w"] * 2000))
    assert (r.usage.tokens_in, r.usage.tokens_cached, r.usage.tokens_out) == (2000, 1500, 50)
    assert r.usage.total == case("H14d")["label"]["tokens_charged"]
    assert len(srv.requests) == case("H14d")["label"]["provider_calls_added"]
    price = Pricing(overrides={"loopback-1": {"input": 2.0, "cached_input": 0.5, "output": 8.0}})
    assert price.cost(r.usage, r.model) == pytest.approx((500 * 2.0 + 1500 * 0.5 + 50 * 8.0) / 1e6)


def test_pool_is_sharded_and_requests_go_to_the_least_busy_shard() -> None:
    from hrbench.models._http import SHARD_CONNECTIONS, ShardedPool

    async def main() -> None:
        pool = ShardedPool.build(100, 5.0, 5.0, False)
        small = ShardedPool.build(16, 5.0, 5.0, False)
        real = list(pool.shards)
        try:
            assert len(pool.shards) == 7 and SHARD_CONNECTIONS == 16
            assert len(small.shards) == 1
            gates = [anyio.Event() for _ in pool.shards]

            class Held:
                def __init__(self, i: int) -> None:
                    self.i = i

                def build_request(self, method: str, url: str, **kw: Any) -> Any:
                    return types.SimpleNamespace(method=method, url=url, **kw)

                async def send(self, request: Any) -> Any:
                    await gates[self.i].wait()
                    return self.i

            pool.shards = [Held(i) for i in range(len(gates))]  # type: ignore[misc]
            got: list[int] = []

            async def one() -> None:
                got.append(await pool.post("u", _http.Body(b"{}"), {}))

            async with anyio.create_task_group() as tg:
                for _ in range(14):
                    tg.start_soon(one)
                await anyio.wait_all_tasks_blocked()
                assert pool.in_flight == [2] * 7  # spread evenly, two a shard
                for g in gates:
                    g.set()
            assert sorted(got) == sorted(list(range(7)) * 2) and pool.in_flight == [0] * 7
        finally:
            for shard in real:
                await shard.aclose()
            await small.aclose()

    anyio.run(main)


def test_a_pools_shards_share_one_tls_context_made_as_a_client_makes_its_own() -> None:
    import ssl

    from hrbench.models._http import ShardedPool, make_async_client

    async def main() -> None:
        pool = ShardedPool.build(100, 5.0, 5.0, False)
        alone = make_async_client(16, 5.0, trust_env=False)
        try:
            contexts = [s._transport._pool._ssl_context for s in pool.shards]
            own = alone._transport._pool._ssl_context
            assert len(contexts) == 7 and all(c is contexts[0] for c in contexts)
            assert isinstance(contexts[0], ssl.SSLContext) and contexts[0] is not own
            # it verifies as a client's own context does: the same mode, host check and CA store
            assert (contexts[0].verify_mode, contexts[0].check_hostname) == (ssl.CERT_REQUIRED, True)
            assert (own.verify_mode, own.check_hostname) == (ssl.CERT_REQUIRED, True)
            assert contexts[0].cert_store_stats() == own.cert_store_stats()
        finally:
            for shard in pool.shards:
                await shard.aclose()
            await alone.aclose()

    anyio.run(main)


def test_requests_waiting_for_the_pool_all_go_on_in_one_turn_once_it_is_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first requests of a loop wait for one build of the pool, then all go on at once.

    Behind a lock they went on one per turn of the event loop (a turn of a loop busy with 100
    requests is milliseconds): the requests in flight climbed one by one for seconds.
    """
    import threading

    release = threading.Event()
    builds: list[int] = []

    def build(*args: Any) -> Any:
        builds.append(1)
        release.wait(30)
        if len(builds) == 1:
            raise OSError("no certificates")  # the first build fails: the next waiter builds again
        return "pool"

    monkeypatch.setattr(_http.ShardedPool, "build", build)

    async def main() -> None:
        ep = _http.Endpoint("openai", "http://127.0.0.1:9/v1", 100)
        got: list[Any] = []

        async def one() -> None:
            try:
                got.append(await ep.pool(100, 5.0, 5.0, False))
            except OSError as exc:
                got.append(exc)

        async with anyio.create_task_group() as tg:
            for _ in range(50):
                tg.start_soon(one)
            await anyio.wait_all_tasks_blocked()
            release.set()
            while not ep._pools:  # the failed build, then the next waiter's, turn by turn
                await anyio.lowlevel.checkpoint()
            turns = 0
            while len(got) < 50 and turns < 200:
                await anyio.lowlevel.checkpoint()
                turns += 1
            assert len(got) == 50 and turns <= 3, (len(got), turns)  # not one turn per waiter
        assert len(builds) == 2 and isinstance(got[0], OSError) and got[1:] == ["pool"] * 49

    anyio.run(main)
