"""A failed model call speaks (ModelError, an error row, one summary)."""

from __future__ import annotations

import socket
import warnings

import pytest

import hrbench as hb
from hrbench.testing import LoopbackServer
from tests.unit.models.conftest import FAST

KEY = "sk-test-0123456789abcdef"
REF = hb.Reference({"q1": "France", "q2": "Peru"}, labels=["Paris", "Lima"])
ASK = hb.Arm("ask", lambda item, ctx: ctx.call(item).text)
GOV = hb.Governor(max_calls=1000)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_401_raises_model_error_naming_the_key_variable(
    srv: LoopbackServer, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    srv.set(api_key="the-right-key-xyz")
    monkeypatch.setenv("HRB_WRONG_KEY", KEY)
    cls = hb.OpenAIClient if kind == "openai" else hb.AnthropicClient
    client = cls("m", base_url=srv.base_url, api_key_env="HRB_WRONG_KEY", **FAST)
    with pytest.warns(hb.ArmErrorWarning) as got:
        bench = hb.benchmark(ASK, REF, runs=5, client=client, governor=GOV)
    assert {r.failure_kind for r in bench.rows} == {"error"}  # not parse_failure
    assert bench.summary()[0]["errors"] == 10
    (text,) = [str(w.message) for w in got if issubclass(w.category, hb.ArmErrorWarning)]
    assert f"arm 'ask': 10 of 10 run(s) raised or failed (10 x {kind}: HTTP 401)" in text
    assert "HRB_WRONG_KEY" in text and "invalid API key" in text
    assert KEY not in text and KEY[8:20] not in text
    assert got[0].filename == __file__  # the warning points at the caller's line
    steps = bench.traces[bench.rows[0].ledger_id]
    assert all(KEY not in (s.error or "") for s in steps)


def test_reading_a_failed_result_raises_with_status_and_cause(
    srv: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    import anyio

    srv.set(api_key="the-right-key-xyz")
    monkeypatch.setenv("HRB_WRONG_KEY", KEY)
    client = hb.OpenAIClient("m", base_url=srv.base_url, api_key_env="HRB_WRONG_KEY", **FAST)
    r = anyio.run(client.send, hb.Request(messages=[{"role": "user", "content": "x"}]))
    assert not r.ok and r.status == 401 and r.key_env == "HRB_WRONG_KEY" and r.raw_text is None
    with pytest.raises(hb.ModelError) as err:
        r.text  # noqa: B018
    assert err.value.status == 401 and err.value.key_env == "HRB_WRONG_KEY"
    assert err.value.cause == "openai: HTTP 401"
    assert "HRB_WRONG_KEY" in str(err.value) and KEY not in str(err.value)


@pytest.mark.parametrize("setting", [None, "HRB_UNSET_KEY"])
def test_401_without_a_key_says_why(
    srv: LoopbackServer, monkeypatch: pytest.MonkeyPatch, setting: str | None
) -> None:
    import anyio

    monkeypatch.delenv("HRB_UNSET_KEY", raising=False)
    srv.set(api_key="the-right-key-xyz")
    client = hb.OpenAIClient("m", base_url=srv.base_url, api_key_env=setting, **FAST)
    r = anyio.run(client.send, hb.Request(messages=[{"role": "user", "content": "x"}]))
    want = "api_key_env is None" if setting is None else "HRB_UNSET_KEY is not set"
    assert want in (r.error or "")


def test_network_error_is_an_error_row_with_its_cause() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = hb.OpenAIClient("m", base_url=f"http://127.0.0.1:{port}/v1", api_key_env=None, trust_env=False)
    with pytest.warns(hb.ArmErrorWarning, match=r"10 x openai: cannot connect to http://127\.0\.0\.1") as got:
        bench = hb.benchmark(ASK, REF, runs=5, client=client, governor=GOV)
    assert len([w for w in got if issubclass(w.category, hb.ArmErrorWarning)]) == 1
    assert {r.failure_kind for r in bench.rows} == {"error"} and client.attempts == 10


def test_failed_runs_of_several_arms_and_causes_in_one_warning(srv: LoopbackServer) -> None:
    def boom(item: str, ctx: object) -> str:
        raise KeyError("typo")

    client = hb.OpenAIClient("m", base_url=srv.base_url, api_key_env=None, **FAST)
    flaky = hb.Arm("flaky", lambda item, ctx: ctx.call(f"[[fault:500]] {item}" if ctx.run % 2 else item).text)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        hb.benchmark([flaky, hb.Arm("boom", boom)], REF, runs=5, client=client, governor=GOV)
    said = [str(w.message) for w in got if issubclass(w.category, hb.ArmErrorWarning)]
    assert len(said) == 1
    assert "arm 'flaky': 6 of 10 run(s) raised or failed (6 x openai: HTTP 500)" in said[0]
    assert "arm 'boom': 10 of 10 run(s) raised or failed (10 x KeyError)" in said[0]


def test_a_hosted_api_key_set_nowhere_is_refused_before_the_first_call(monkeypatch) -> None:
    """The library refuses too, as the daemon does, naming the variable."""
    monkeypatch.delenv("HRB_TEST_HOSTED_KEY", raising=False)
    ref = hb.Reference({"a": "x"}, labels=["y"])
    arm = hb.Arm("ask", lambda item, ctx: ctx.call(item).text)
    for client in (
        hb.OpenAIClient("gpt-4o-mini", api_key_env="HRB_TEST_HOSTED_KEY"),
        hb.AnthropicClient("claude-3-5-haiku-latest", api_key_env="HRB_TEST_HOSTED_KEY"),
    ):
        with pytest.raises(hb.ConfigError, match="HRB_TEST_HOSTED_KEY is not set") as info:
            hb.benchmark(arm, ref, runs=5, client=client)
        assert info.value.field == "api_key_env"
    # a local server may run without a key: no refusal before sending
    local = hb.OpenAIClient(
        "llama", base_url="http://127.0.0.1:9/v1", api_key_env="HRB_TEST_HOSTED_KEY", max_attempts=1
    )
    local.require_key()
