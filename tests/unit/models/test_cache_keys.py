"""Cache and recording keys are the request as sent (case R03a)."""

from __future__ import annotations

import warnings
from typing import Any

import msgspec
import pytest

import hrbench as hb
from hrbench.testing import LoopbackServer
from tests.conftest import case
from tests.unit.models.conftest import FAST

# these benchmarks run on unlabelled items on purpose (cache, draws, retries, threads)
pytestmark = pytest.mark.filterwarnings("ignore::hrbench.errors.NoLabelsWarning")

GOV = hb.Governor(max_calls=10_000)


def _ref(n: int = 1) -> hb.Reference:
    return hb.Reference({f"q{i}": f"question {i}" for i in range(n)}, labels=None)


ASK = hb.Arm("ask", lambda item, ctx: ctx.call(item).text)


def _bench(client: Any, cache: hb.Cache, runs: int = 5) -> hb.Bench:
    return hb.benchmark(ASK, _ref(), runs=runs, client=client, cache=cache, governor=GOV)


def test_case_R03a_client_max_tokens_is_in_the_key(srv: LoopbackServer) -> None:
    c = case("R03a")
    # a reply of 3 words fits max_tokens=3 (a reply cut at the limit is an error, never cached)
    srv.set(reply_words=3)
    cache = hb.Cache()
    short = hb.AnthropicClient("claude-x", base_url=srv.base_url, api_key_env=None, max_tokens=3, **FAST)
    first = _bench(short, cache)
    assert all(len(r.outcome.split()) == 3 for r in first.rows)
    srv.reset()
    srv.set(reply_words=10)  # had max_tokens been left out of the key, the 3-word replies would be served
    full = hb.AnthropicClient("claude-x", base_url=srv.base_url, api_key_env=None, max_tokens=1000, **FAST)
    second = _bench(full, cache)
    assert len(srv.requests) == c["label"]["run_2_provider_calls"] == 5
    assert c["label"]["run_2_replies"] == "full"
    assert all(len(r.outcome.split()) == 10 for r in second.rows)
    srv.reset()
    again = _bench(
        hb.AnthropicClient("claude-x", base_url=srv.base_url, api_key_env=None, max_tokens=1000, **FAST),
        cache,
    )
    assert len(srv.requests) == 0  # the same request as sent: served from the cache
    assert [r.outcome for r in again.rows] == [r.outcome for r in second.rows]


def _wire_key(client: Any, **params: Any) -> str:
    req = hb.Request(
        messages=[{"role": "user", "content": "hi"}],
        params=params,
        model=client.model,
        provider=client.provider,
        base_url=client.base_url,
        draw_index=1,
    )
    return hb.cache_key(msgspec.structs.replace(req, wire=client.wire(req)), "A")


URL = "http://127.0.0.1:9/v1"


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ({"max_tokens": 3}, {"max_tokens": 1000}),
        ({"anthropic_version": "2023-06-01"}, {"anthropic_version": "2024-01-01"}),
        ({"headers": {"anthropic-beta": "x"}}, {"headers": {"anthropic-beta": "y"}}),
        ({}, {"headers": {"anthropic-beta": "y"}}),
        ({"base_url": URL}, {"base_url": "http://127.0.0.1:10/v1"}),
    ],
)
def test_every_client_setting_that_changes_the_request_changes_the_key(
    a: dict[str, Any], b: dict[str, Any]
) -> None:
    ka = _wire_key(hb.AnthropicClient("m", **{"base_url": URL, **a}))
    kb = _wire_key(hb.AnthropicClient("m", **{"base_url": URL, **b}))
    assert ka != kb


@pytest.mark.parametrize("header", ["Authorization", "X-Api-Key", "api-key", "X-Auth-Token", "Cookie"])
def test_credential_headers_are_never_in_the_key(header: str) -> None:
    ka = _wire_key(hb.OpenAIClient("m", base_url=URL, headers={header: "secret-one"}))
    kb = _wire_key(hb.OpenAIClient("m", base_url=URL, headers={header: "secret-two"}))
    assert ka == kb
    c = hb.OpenAIClient("m", base_url=URL, headers={header: "secret-one"})
    assert "secret" not in msgspec.json.encode(c.wire(hb.Request(messages=[]))).decode()


def test_an_explicit_limit_wins_over_the_client_default_in_the_key() -> None:
    """The body sent with max_tokens=5 is the same whatever the client default: so is the key."""
    ka = _wire_key(hb.AnthropicClient("m", base_url=URL, max_tokens=3), max_tokens=5)
    kb = _wire_key(hb.AnthropicClient("m", base_url=URL, max_tokens=1000), max_tokens=5)
    assert ka == kb
    ko = _wire_key(hb.OpenAIClient("m", base_url=URL, max_tokens=7))
    assert ko == _wire_key(hb.OpenAIClient("m", base_url=URL), max_tokens=7)
    assert ko != _wire_key(hb.OpenAIClient("m", base_url=URL))


def test_openai_client_default_max_tokens_is_sent(srv: LoopbackServer) -> None:
    cl = hb.OpenAIClient("m", base_url=srv.base_url, api_key_env=None, max_tokens=4, **FAST)
    srv.set(reply_words=4)
    _bench(cl, hb.Cache(), runs=5)
    assert [r.body["max_tokens"] for r in srv.requests] == [4] * 5


def test_anthropic_replay_keys_as_the_recording_client(srv: LoopbackServer) -> None:
    store = hb.Store(":memory:")
    live = hb.AnthropicClient("claude-x", base_url=srv.base_url, api_key_env=None, max_tokens=3, **FAST)
    srv.set(vary=True)
    first = hb.benchmark(ASK, _ref(2), runs=5, client=live, record="rec", store=store, governor=GOV)
    n = len(srv.requests)
    replay = hb.ReplayClient(store, recording="rec")
    again = hb.benchmark(ASK, _ref(2), runs=5, client=replay, governor=GOV)
    assert len(srv.requests) == n
    assert [r.outcome for r in again.rows] == [r.outcome for r in first.rows]


# -- the mock's responder fingerprint ------------------------------------------------------


def test_a_changed_mock_function_is_not_served_old_replies() -> None:
    cache = hb.Cache()
    old = hb.MockClient(lambda m, p: "old")
    assert {r.outcome for r in _bench(old, cache).rows} == {"old"}
    new = hb.MockClient(lambda m, p: "new")
    assert {r.outcome for r in _bench(new, cache).rows} == {"new"}
    assert new.calls == 5
    same = hb.MockClient(lambda m, p: "new")
    assert {r.outcome for r in _bench(same, cache).rows} == {"new"}
    assert same.calls == 0  # the same function: served from the cache


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ({"Peru": "Lima"}, {"Peru": "Cusco"}),
        (["x"], ["y"]),
        (1, 2),
    ],
)
def test_mock_fingerprint_covers_closure_and_globals(a: Any, b: Any) -> None:
    def make(table: Any) -> hb.MockClient:
        return hb.MockClient(lambda m, p: str(table))

    assert make(a).fingerprint != make(b).fingerprint
    assert make(a).fingerprint == make(a).fingerprint


TABLE = {"France": "Paris"}


def test_mock_fingerprint_covers_module_level_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    fn = lambda m, p: TABLE[m[0]["content"]]  # noqa: E731
    before = hb.MockClient(fn).fingerprint
    monkeypatch.setitem(TABLE, "France", "Lyon")
    assert hb.MockClient(fn).fingerprint != before


def _deep(n: int) -> Any:
    out: Any = "leaf"
    for _ in range(n):
        out = [out]
    return out


@pytest.mark.parametrize("state", [_deep(20), {i: i for i in range(200_000)}])
def test_unfingerprintable_mock_is_not_cached_and_says_so_once(state: Any) -> None:
    cl = hb.MockClient(lambda m, p: f"n{len(str(state)) > 0}")
    assert cl.fingerprint is None and not cl.cacheable
    cache = hb.Cache()
    with pytest.warns(hb.NotCachedWarning, match="not cached") as got:
        _bench(cl, cache)
    assert len([w for w in got if issubclass(w.category, hb.NotCachedWarning)]) == 1
    assert cl.calls == 5 and cache.stats()["entries"] == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", hb.NotCachedWarning)
        _bench(cl, cache)  # said once per client
    assert cl.calls == 10
