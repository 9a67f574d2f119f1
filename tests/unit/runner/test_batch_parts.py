"""Batch mode's parts: its settings, the batch prices, the providers' result lines, hostile uploads."""

from __future__ import annotations

import math
from typing import Any

import anyio
import msgspec
import pytest

import hrbench as hb
from hrbench.errors import ConfigError
from hrbench.models import AnthropicBatchApi, BatchError, BatchPricing, OpenAIBatchApi, Pricing
from hrbench.models._batch_prices import package_batch_price
from hrbench.records import Request, Usage
from hrbench.runner.batch import Batch, batch_of
from hrbench.store import Store

pytest.importorskip("starlette")
from hrbench.testing import LoopbackServer  # noqa: E402


@pytest.mark.parametrize(
    ("kw", "field"),
    [
        ({"wave": 0}, "batch.wave"),
        ({"wave": 2.5}, "batch.wave"),
        ({"max_lines": -1}, "batch.max_lines"),
        ({"poll_s": math.nan}, "batch.poll_s"),
        ({"poll_s": -1}, "batch.poll_s"),
        ({"max_wait_s": math.inf}, "batch.max_wait_s"),
        ({"gather_s": "1"}, "batch.gather_s"),
        ({"discount": 1.5}, "batch.discount"),
        ({"expired": "later"}, "batch.expired"),
        ({"wave": True}, "batch.wave"),
    ],
)
def test_a_bad_setting_is_refused_naming_it(kw: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        Batch(**kw)


def test_batch_of_and_the_wave_a_stop_rule_gets() -> None:
    assert batch_of(True) == Batch() and batch_of(False) is None and batch_of({"wave": 3}) == Batch(wave=3)
    with pytest.raises(ConfigError, match="batch"):
        batch_of("yes")
    with pytest.raises(ConfigError, match="unknown setting"):
        batch_of({"wav": 3})
    plan = hb.power(
        0.08, 0.05, var_within=0.2, var_between=0.05, var_cluster=0.01, runs=5, items_per_cluster=5
    )
    rule = hb.StopWhenSure(plan=plan)
    assert Batch().wave_for(84, rule) == max(2, math.ceil(plan.n_clusters / 4))
    assert Batch().wave_for(40, hb.StopWhenSure()) == 5 and Batch().wave_for(40) == 40


def test_batch_prices_come_from_the_package_else_half_the_standard_price() -> None:
    listed = package_batch_price("claude-haiku-4-5", "anthropic")
    assert listed is not None and (listed.input, listed.output) == (0.5, 2.5)
    base = Pricing()
    batch = BatchPricing(base, "anthropic")
    assert batch.price("claude-haiku-4-5") == listed  # the package's batch variant
    own = Pricing(overrides={"m": {"input": 2.0, "cached_input": 1.0, "output": 6.0}})
    p = BatchPricing(own, "openai").price("m")
    assert p is not None and (p.input, p.cached_input, p.output, p.write_5m) == (1.0, 0.5, 3.0, 1.25)
    usage = Usage(tokens_in=1000, tokens_out=100)
    assert BatchPricing(own, "openai").cost(usage, "m") == pytest.approx(own.cost(usage, "m") / 2)
    r = Request(messages=[{"role": "user", "content": "hi"}], model="m", params={"max_tokens": 10})
    full, _ = own.reservation(r)
    half, _ = BatchPricing(own, "openai").reservation(r)
    assert full is not None and half == pytest.approx(full / 2)
    assert BatchPricing(own, "openai").price("no-such-model") is None
    assert BatchPricing(own, "openai", discount=0.25).price("m").output == 1.5  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="0 to 1"):
        BatchPricing(own, "openai", discount=2.0)


def test_batch_prices_keep_the_long_context_tiers() -> None:
    listed = package_batch_price("claude-sonnet-4-5", "anthropic")
    assert listed is not None and [(a, t.input, t.output) for a, t in listed.tiers] == [(200_000, 3.0, 11.25)]
    tiered = {"input": 2.0, "output": 8.0, "tiers": [{"above": 200_000, "input": 4.0, "output": 12.0}]}
    own = Pricing(overrides={"m": tiered})
    batch = BatchPricing(own, "anthropic")
    long = Usage(tokens_in=250_000, tokens_out=1_000)
    assert batch.cost(long, "m") == pytest.approx(own.cost(long, "m") / 2)  # the tier's rates, halved
    r = Request(
        messages=[{"role": "user", "content": "word " * 300_000}], model="m", params={"max_tokens": 10}
    )
    full, _ = own.reservation(r)
    half, _ = batch.reservation(r)
    assert full is not None and half == pytest.approx(full / 2)


def _openai() -> OpenAIBatchApi:
    return OpenAIBatchApi(hb.OpenAIClient("m", base_url="http://127.0.0.1:9/v1", api_key_env=None))


@pytest.mark.parametrize(
    ("raw", "state", "error"),
    [
        (
            {"custom_id": "k", "response": {"status_code": 200, "body": {"choices": []}}},
            "done",
            "malformed reply",
        ),
        ({"custom_id": "k", "response": {"status_code": 200, "body": "nope"}}, "done", "malformed reply"),
        (
            {"custom_id": "k", "response": {"status_code": 400, "body": {"error": {"message": "bad"}}}},
            "failed",
            "HTTP 400",
        ),
        (
            {"custom_id": "k", "response": None, "error": {"code": "batch_expired", "message": "x"}},
            "expired",
            "expired",
        ),
        (
            {"custom_id": "k", "response": None, "error": {"code": "batch_cancelled"}},
            "cancelled",
            "cancelled",
        ),
        ({"custom_id": "k", "response": None, "error": {"code": "weird", "message": "x"}}, "failed", "weird"),
        ({"custom_id": "k"}, "failed", "no response"),
        (
            {
                "custom_id": "k",
                "response": {
                    "status_code": 200,
                    "body": {"choices": [{"message": {"content": "Par"}, "finish_reason": "length"}]},
                },
            },
            "done",
            "cut at the output limit",
        ),
    ],
)
def test_an_openai_result_line_of_any_shape_is_read_into_a_state_never_raised(
    raw: dict[str, Any], state: str, error: str
) -> None:
    got = _openai()._line(raw)
    assert got is not None and got.state == state and not got.result.ok and error in (got.result.error or "")


@pytest.mark.parametrize("raw", [None, 3, "x", [], {"custom_id": 5}, {"result": {}}])
def test_a_result_line_without_a_custom_id_is_left_out(raw: Any) -> None:
    api = AnthropicBatchApi(hb.AnthropicClient("m", base_url="http://127.0.0.1:9/v1"))
    assert _openai()._line(raw) is None and api._line(raw) is None


def test_anthropic_result_lines_and_a_status_read_into_openais_words() -> None:
    api = AnthropicBatchApi(hb.AnthropicClient("m", base_url="http://127.0.0.1:9/v1"))
    errored = {
        "custom_id": "k",
        "result": {
            "type": "errored",
            "error": {"type": "error", "error": {"type": "invalid_request_error", "message": "no"}},
        },
    }
    got = api._line(errored)
    assert (
        got is not None and got.state == "failed" and "invalid_request_error: no" in (got.result.error or "")
    )
    assert api._line({"custom_id": "k", "result": {"type": "expired"}}).state == "expired"  # type: ignore[union-attr]
    status = api._status(
        {
            "id": "msgbatch_1",
            "processing_status": "ended",
            "cancel_initiated_at": "t",
            "request_counts": {"succeeded": 2, "canceled": 3},
        }
    )
    assert (status.state, status.total, status.done, status.failed) == ("cancelled", 5, 2, 3)
    with pytest.raises(BatchError):
        api._status({"processing_status": "ended"})


def test_a_malformed_upload_fails_its_batch_with_the_providers_cause(tmp_path: Any) -> None:
    async def go(srv: LoopbackServer) -> Any:
        api = _openai()
        api.base_url = srv.base_url
        line = api.line("k", {"model": "m"})  # no messages: the provider's validation refuses the file
        status = await api.submit("tag", [line, b"not json\n"])
        while not status.ended:
            await anyio.sleep(0.01)
            status = await api.status(status.id)
        await api.aclose()
        return status

    with LoopbackServer() as srv:
        status = anyio.run(go, srv)
    assert status.state == "failed" and status.error and "line 1" in status.error


def test_the_store_keeps_a_100k_line_batch_in_one_row(tmp_path: Any) -> None:
    s = Store(tmp_path / "s.sqlite3")
    ids = [f"{i:064d}" for i in range(100_000)]
    s.batch_open("t", "b", "openai", "u", None, ids, 1.0)
    assert s.batch_custom_ids("t") == ids and s.batch_list("b", live=True)[0]["lines"] == 100_000
    assert msgspec.json.decode(msgspec.json.encode(s.batch_line_states("b")["0" * 64][1])) == "uploaded"
    s.batch_results("t", [(ids[0], "done", hb.Result(text="x"))], 0.5)
    assert s.batch_list("b", live=True) == [] and s.batch_get("t")["usd_billed"] == 0.5  # type: ignore[index]
    s.benchmark_delete(["b"])
    assert s.batch_list("b") == [] and s.batch_get("t") is None
