"""A true worst-case reservation (cases R04a, R05a) against the loopback provider.

The loopback bills what it generates (every reply word a token, prompt tokens as words, UTF-8
bytes or the model's own tokenizer) and honours or ignores ``max_tokens`` as told.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest

import hrbench as hb
from hrbench.testing import LoopbackServer
from tests.conftest import case
from tests.unit.models.conftest import FAST

# these benchmarks run on unlabelled items on purpose (budgets, not accuracy)
pytestmark = pytest.mark.filterwarnings("ignore::hrbench.errors.NoLabelsWarning")

CLIENTS = {"openai": hb.OpenAIClient, "anthropic": hb.AnthropicClient}
ASK = hb.Arm("ask", lambda item, ctx: ctx.call(item).raw_text)


def _ref(n: int, prompt: str = "q") -> hb.Reference:
    return hb.Reference({f"i{k}": f"{prompt} {k}" for k in range(n)}, labels=None)


def _run(client: Any, gov: hb.Governor, n_items: int, **kw: Any) -> tuple[hb.Bench, list[str]]:
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        bench = hb.benchmark(
            kw.pop("arm", ASK),
            _ref(n_items, kw.pop("prompt", "q")),
            runs=5,
            client=client,
            governor=gov,
            **kw,
        )
    return bench, [f"{w.category.__name__}: {w.message}" for w in got]


def test_case_R04a_unpriced_model_under_a_usd_cap_is_refused_before_the_first_call(
    srv: LoopbackServer,
) -> None:
    c = case("R04a")
    client = hb.OpenAIClient("my-local-llama", base_url=srv.base_url, api_key_env=None, **FAST)
    srv.set(reply_words=c["output"]["reply_tokens"])
    with pytest.raises(hb.ConfigError, match="'my-local-llama' has no price") as err:
        hb.benchmark(
            ASK,
            _ref(8),
            runs=5,
            client=client,
            governor=hb.Governor(max_usd=c["output"]["governor"]["max_usd"]),
        )
    assert "Pricing(overrides=" in str(err.value) and "HRBENCH_PRICES" in str(err.value)
    assert srv.requests == []  # refused before the first call


def test_case_R04a_an_arm_asking_for_an_unpriced_model_is_budget_stop(srv: LoopbackServer) -> None:
    c = case("R04a")
    client = hb.OpenAIClient("gpt-4o-mini", base_url=srv.base_url, api_key_env=None, **FAST)
    other = hb.Arm("other", lambda item, ctx: ctx.call(item, model="my-local-llama").raw_text)
    bench, said = _run(client, hb.Governor(max_usd=0.01), 8, arm=other)
    assert {r.failure_kind for r in bench.rows} == {c["expected_failure_kind"]}
    assert srv.requests == []
    assert any("unpriced_model" in w and "my-local-llama" in w for w in said)


@pytest.mark.parametrize("concurrency", [1, 8])
def test_case_R05a_no_max_tokens_still_bounds_the_reply(srv: LoopbackServer, concurrency: int) -> None:
    c = case("R05a")
    cap = c["label"]["spend_usd_at_most"]
    srv.set(reply_words=20_000)  # the reply the provider would give: ~$0.20 at gpt-4o prices
    client = hb.OpenAIClient(c["output"]["model"], base_url=srv.base_url, api_key_env=None, **FAST)
    gov = hb.Governor(max_usd=c["output"]["governor"]["max_usd"])
    bench, said = _run(client, gov, 20, concurrency=concurrency)
    assert gov.usd <= cap
    assert all(isinstance(r.body.get("max_tokens"), int) for r in srv.requests)  # a limit was sent
    assert c["expected_failure_kind"] in {r.failure_kind for r in bench.rows}
    assert any("cost_cap_reached" in w for w in said)
    assert gov.usd >= 0.8 * cap  # a true bound, not a needlessly loose one


@pytest.mark.parametrize("kind", sorted(CLIENTS))
def test_a_reply_past_its_reservation_stops_the_benchmark_at_once(srv: LoopbackServer, kind: str) -> None:
    srv.set(reply_words=3000, honour_max_tokens=False)  # a provider that overruns max_tokens
    client = CLIENTS[kind](
        "claude-haiku-4-5" if kind == "anthropic" else "gpt-4o",
        base_url=srv.base_url,
        api_key_env=None,
        max_tokens=50,
        **FAST,
    )
    gov = hb.Governor(max_usd=5.0)
    bench, said = _run(client, gov, 10, concurrency=1)
    assert len(srv.requests) == 1  # the first overrun stops everything after it
    assert [r.failure_kind for r in bench.rows].count("budget_stop") == 49
    assert any("reservation_exceeded" in w and "stopped at once" in w and "reported" in w for w in said)


MULTIBYTE = [
    "🙂🙃🤖" * 20,
    "ᚠᚢᚦᚨᚱᚲ" * 20,
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 " * 10,
    "漢字かな交じり文" * 15,
    "plain ascii words " * 10,
]


@pytest.mark.parametrize("kind", sorted(CLIENTS))
@pytest.mark.parametrize("prompt", MULTIBYTE)
@pytest.mark.parametrize("n", [1, 3])
def test_spend_never_passes_a_usd_cap_whatever_the_script_and_n(
    srv: LoopbackServer, kind: str, prompt: str, n: int
) -> None:
    model = "claude-x-local"
    pricing = hb.Pricing(overrides={model: {"input": 3.0, "output": 15.0}})
    srv.set(reply_words=200, prompt_tokens="bytes")  # an unknown tokenizer: bytes are billed
    client = CLIENTS[kind](model, base_url=srv.base_url, api_key_env=None, **FAST)
    gov = hb.Governor(max_usd=0.05)
    arm = hb.Arm("ask", lambda item, ctx: ctx.call(item, n=n).raw_text)
    _run(client, gov, 10, concurrency=8, pricing=pricing, prompt=prompt, arm=arm)
    assert gov.usd <= 0.05 and gov.halted is None


@pytest.mark.parametrize("prompt", MULTIBYTE)
def test_tokens_never_pass_a_token_cap(srv: LoopbackServer, prompt: str) -> None:
    srv.set(reply_words=500, prompt_tokens="tiktoken")  # gpt-4o: its own tokenizer bills
    client = hb.OpenAIClient("gpt-4o", base_url=srv.base_url, api_key_env=None, **FAST)
    gov = hb.Governor(max_tokens=20_000)
    _run(client, gov, 10, concurrency=8, prompt=prompt)
    assert gov.tokens <= 20_000 and gov.halted is None
    assert gov.tokens >= 0.5 * 20_000


def test_anthropic_client_default_max_tokens_is_the_bound(srv: LoopbackServer) -> None:
    srv.set(reply_words=5000)
    client = hb.AnthropicClient(
        "claude-sonnet-4-5", base_url=srv.base_url, api_key_env=None, max_tokens=4096, **FAST
    )
    gov = hb.Governor(max_usd=0.5)
    _run(client, gov, 10, concurrency=8)
    assert gov.usd <= 0.5 and {r.body["max_tokens"] for r in srv.requests} == {4096}


@pytest.mark.parametrize("declared", [True, False])
def test_served_model_switch(srv: LoopbackServer, declared: bool) -> None:
    srv.set(reply_words=300, serve_model="gpt-4o")  # asked for the cheap model, billed as the dear one
    client = hb.OpenAIClient(
        "gpt-4o-mini",
        base_url=srv.base_url,
        api_key_env=None,
        billed_as=["gpt-4o"] if declared else (),
        **FAST,
    )
    gov = hb.Governor(max_usd=0.05)
    bench, said = _run(client, gov, 10, concurrency=1)
    if declared:  # reserved at the dearest model the reply can be billed as
        assert gov.halted is None and gov.usd <= 0.05
    else:  # the first dearer reply passed its reservation: stopped at once, and said so
        assert len(srv.requests) == 1 and "billed_as" in (gov.halted or "")
        assert any("reservation_exceeded" in w for w in said)


def test_reservation_family() -> None:
    p = hb.Pricing(overrides={"m": {"input": 1.0, "output": 2.0}, "dear": {"input": 10.0, "output": 20.0}})
    base = hb.Request(messages=[{"role": "user", "content": "é" * 10}], model="m", params={"max_tokens": 7})
    usd, tokens = p.reservation(base)
    assert tokens == 3 + 8 + 4 + 20 + 7  # bytes bound: "é" is 2 bytes
    assert p.reservation(base, ["dear"])[0] == pytest.approx(usd * 10)
    n3 = hb.Request(messages=base.messages, model="m", params={"max_tokens": 7, "n": 3})
    assert p.reservation(n3)[1] == 3 * tokens
    assert p.reservation(hb.Request(messages=[], model="unpriced"))[0] is None
    tools = hb.Request(
        messages=base.messages, model="m", params={"max_tokens": 7}, tools=[{"name": "f" * 50}]
    )
    assert p.reservation(tools)[1] > tokens + 50
    image = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]
    assert p.reservation(hb.Request(messages=image, model="m", params={"max_tokens": 1}))[1] > 6000


def test_an_undeclared_dearer_model_is_found_by_one_request_alone(srv: LoopbackServer) -> None:
    """Slow start until the bill is known: 50 allowed in flight, yet the first reply goes alone."""
    srv.set(reply_words=20, serve_model="gpt-4o", latency_s=0.05)  # asked for mini, billed as 4o
    client = hb.OpenAIClient("gpt-4o-mini", base_url=srv.base_url, api_key_env=None, max_tokens=50, **FAST)
    gov = hb.Governor(max_usd=0.05)
    bench, said = _run(client, gov, 20, concurrency=50)
    assert len(srv.requests) == 1 and srv.max_in_flight == 1  # no request sent beside or after it
    assert [r.failure_kind for r in bench.rows].count("budget_stop") == 99
    assert "billed as 'gpt-4o'" in (gov.halted or "") and "billed_as=['gpt-4o']" in (gov.halted or "")
    assert "no cap was passed" in (gov.halted or "") and gov.usd <= 0.05
    assert any("stopped at once" in w and "billed_as" in w for w in said)
    assert not any("so that no cap is passed" in w for w in said)


def test_an_undeclared_dearer_model_passes_the_cap_by_one_request_at_most_and_says_so(
    srv: LoopbackServer,
) -> None:
    srv.set(reply_words=300, serve_model="gpt-4o", prompt_tokens="bytes")
    client = hb.OpenAIClient("gpt-4o-mini", base_url=srv.base_url, api_key_env=None, max_tokens=400, **FAST)
    cap = 0.0005  # a gpt-4o-mini worst case (about $0.00025) fits; one gpt-4o reply ($0.003) does not
    gov = hb.Governor(max_usd=cap)
    _run(client, gov, 20, concurrency=50)
    assert len(srv.requests) == 1
    one = srv.bills[0]
    assert gov.usd == pytest.approx(
        hb.Pricing().cost(hb.Usage(tokens_in=one.tokens_in, tokens_out=one.tokens_out), "gpt-4o")
    )
    assert gov.usd > cap and "this one request passed the USD cap" in (gov.halted or "")


def test_a_confirmed_bill_lets_the_requests_in_flight_grow(srv: LoopbackServer) -> None:
    # every reply is held until 8 are in flight at once, but the first (the probe) goes alone
    srv.set(reply_words=5, gather=8, gather_skip=1)
    client = hb.OpenAIClient("gpt-4o-mini", base_url=srv.base_url, api_key_env=None, max_tokens=20, **FAST)
    gov = hb.Governor(max_usd=1.0)
    bench, _ = _run(client, gov, 8, concurrency=8)
    assert srv.max_in_flight == 8 and gov.halted is None
    assert all(r.failure_kind is None for r in bench.rows)
    assert gov.bill_known == {(srv.base_url, "gpt-4o-mini")}
