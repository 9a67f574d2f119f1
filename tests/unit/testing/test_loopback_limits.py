"""The loopback server's rate limits, their headers and 429s in both providers' styles, and its latency."""

from __future__ import annotations

import math
import random
import statistics
import time
from collections.abc import Iterator

import httpx2
import pytest

from hrbench.models._limits import parse_limits
from hrbench.models._retries import parse_retry_after
from hrbench.testing import LoopbackServer
from hrbench.testing._loopback_limits import Bucket, Limits, Spike, latency

pytestmark = pytest.mark.timeout(60)

PATHS = {"openai": "/chat/completions", "anthropic": "/messages"}


def post(http: httpx2.Client, srv: LoopbackServer, kind: str, prompt: str = "hi there") -> httpx2.Response:
    payload = {"model": "loopback-1", "max_tokens": 16, "messages": [{"role": "user", "content": prompt}]}
    return http.post(srv.base_url + PATHS[kind], json=payload, timeout=30)


@pytest.fixture
def http() -> Iterator[httpx2.Client]:
    """One client for every request of a test (the rates below assume requests a few milliseconds
    apart, at most), closed with its connections when the test ends."""
    with httpx2.Client(trust_env=False) as client:
        yield client


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_over_the_limit_a_429_at_once_with_both_waits(kind: str, http: httpx2.Client) -> None:
    with LoopbackServer(rate_limit=(0.5, 3.0)) as srv:
        codes = [post(http, srv, kind).status_code for _ in range(3)]
        refused = post(http, srv, kind)
        assert codes == [200, 200, 200] and refused.status_code == 429
        ms = int(refused.headers["retry-after-ms"])
        assert 0 < ms <= 2000 and refused.headers["retry-after"] == str(math.ceil(ms / 1000))  # whole seconds
        assert parse_retry_after(refused.headers) == ms / 1000
        error = refused.json()["error"]
        assert error["type"] == "rate_limit_error"
        assert srv.rate_limited == 1 and srv.requests[-1].fault == "429"
        assert srv.stats() == {
            "requests": 4,
            "rate_limited": 1,
            "over_limit": 0,
            "max_in_flight": 1,
            "during_spike": 0,
        }


def test_openai_states_its_limits_in_its_headers(http: httpx2.Client) -> None:
    with LoopbackServer(rate_limit=(40.0, 20.0), token_limit=(1000.0, 500.0)) as srv:
        r = post(http, srv, "openai", "one two three")
        h = r.headers
        assert h["x-ratelimit-limit-requests"] == "2400" and h["x-ratelimit-remaining-requests"] == "19"
        assert h["x-ratelimit-limit-tokens"] == "60000" and h["x-ratelimit-remaining-tokens"] == "497"
        assert h["x-ratelimit-reset-requests"].endswith("ms")  # OpenAI's duration form
        limits = parse_limits(h)
        assert limits["requests"].rate == 40.0 and limits["requests"].capacity() == pytest.approx(
            20.0, abs=0.1
        )
        assert not any(k.startswith("anthropic-") for k in h)


def test_anthropic_states_its_limits_in_its_headers(http: httpx2.Client) -> None:
    with LoopbackServer(rate_limit=(40.0, 20.0), token_limit=(1000.0, 500.0)) as srv:
        h = post(http, srv, "anthropic", "one two three").headers
        assert h["anthropic-ratelimit-requests-limit"] == "2400"
        assert h["anthropic-ratelimit-input-tokens-remaining"] == "497"
        assert h["anthropic-ratelimit-requests-reset"].endswith("Z")  # RFC 3339
        assert {"anthropic-ratelimit-output-tokens-limit", "anthropic-ratelimit-tokens-limit"} <= set(h)
        limits = parse_limits(h)
        assert set(limits) == {"requests", "input_tokens", "output_tokens"}
        assert limits["requests"].capacity() == pytest.approx(20.0, abs=1.0)  # read a moment later
        assert not any(k.startswith("x-ratelimit") for k in h)


def test_completion_tokens_are_taken_when_the_reply_is_made(http: httpx2.Client) -> None:
    with LoopbackServer(token_limit=(0.01, 30.0)) as srv:
        srv.set(reply_words=12)
        prompt = "a b c d e f g h i j"
        first = post(http, srv, "openai", prompt)  # 10 prompt tokens in, then 12 completion tokens
        second = post(http, srv, "openai", prompt)
        assert first.status_code == 200 and first.headers["x-ratelimit-remaining-tokens"] == "20"
        assert second.status_code == 429  # 8 left, not the 10 its prompt needs


def test_stated_not_enforced_counts_what_a_provider_would_refuse(http: httpx2.Client) -> None:
    with LoopbackServer(rate_limit=(0.01, 2.0), enforce_limits=False) as srv:
        codes = [post(http, srv, "openai").status_code for _ in range(5)]
        assert codes == [200] * 5
        assert srv.over_limit == 3 and srv.rate_limited == 0


def test_reset_fills_the_buckets_again(http: httpx2.Client) -> None:
    with LoopbackServer(rate_limit=(0.01, 1.0)) as srv:
        assert [post(http, srv, "openai").status_code for _ in range(2)] == [200, 429]
        srv.reset()
        assert srv.rate_limited == 0 and post(http, srv, "openai").status_code == 200
        srv.set(rate_limit=None)
        r = post(http, srv, "openai")
        assert r.status_code == 200 and not any(k.startswith("x-ratelimit") for k in r.headers)


def test_scripted_faults_pass_outside_the_limits(http: httpx2.Client) -> None:
    with LoopbackServer(rate_limit=(0.01, 1.0)) as srv:
        srv.push("500")
        assert post(http, srv, "openai").status_code == 500
        assert post(http, srv, "openai").status_code == 200  # the 500 took no token


def test_a_latency_spike_from_the_nth_request(http: httpx2.Client) -> None:
    with LoopbackServer(0.01, latency_spike=(3, 60.0, 20.0)) as srv:
        for _ in range(2):
            post(http, srv, "openai")
        slow = time.perf_counter()
        post(http, srv, "openai")
        waited = time.perf_counter() - slow
    assert waited >= 0.2  # 20 x 10 ms: a floor only (the machine may be slower, never faster)


def test_spike_unit() -> None:
    spike = Spike(after=3, seconds=10.0, factor=5.0)
    assert [spike.factor_at(n, 0.0) for n in (1, 2)] == [1.0, 1.0]
    assert spike.factor_at(3, 100.0) == 5.0 and spike.factor_at(4, 109.9) == 5.0
    assert spike.factor_at(5, 110.0) == 1.0
    assert spike.during == 2  # the requests that arrived while it lasted
    with pytest.raises(ValueError, match="spike"):
        Spike(1, -1.0, 2.0)


def test_latency_is_lognormal_around_its_median() -> None:
    rng = random.Random(7)
    draws = [latency(0.3, 0.5, rng) for _ in range(4000)]
    assert statistics.median(draws) == pytest.approx(0.3, rel=0.05)
    assert min(draws) > 0 and max(draws) > 0.6  # a long right tail
    assert latency(0.3, 0.0, rng, factor=5.0) == pytest.approx(1.5)
    assert latency(0.0, 0.5, rng) == 0.0


def test_bucket_and_limits_units() -> None:
    b = Bucket(10.0, 5.0, stamp=0.0)
    assert b.take(5, 0.0) and not b.take(1, 0.0)
    assert b.wait_for(1, 0.0) == pytest.approx(0.1) and b.reset_s(0.0) == pytest.approx(0.5)
    b.charge(10, 0.0)  # into debt
    assert b.wait_for(1, 0.0) == pytest.approx(1.1)
    with pytest.raises(ValueError, match="bucket"):
        Bucket(0.0, 5.0)
    now = [0.0]
    lim = Limits((10.0, 1.0), None, clock=lambda: now[0])
    assert lim.admit("anthropic", 1)[0] and not lim.admit("anthropic", 1)[0]
    now[0] = 0.1
    assert lim.admit("anthropic", 1)[0]


def test_limits_in_a_separate_process_report_their_counts(http: httpx2.Client) -> None:
    srv = LoopbackServer(separate_process=True, rate_limit=(0.01, 2.0), latency_s=0.001, latency_sigma=0.3)
    with srv:
        codes = [post(http, srv, "openai").status_code for _ in range(4)]
        assert srv.stats() == {}  # reported when it stops
    assert codes == [200, 200, 429, 429]
    assert srv.stats()["rate_limited"] == 2 and srv.stats()["requests"] == 4 and srv.rate_limited == 2


@pytest.mark.parametrize("bad", ["--rate-limit=5", "--rate-limit=a:b", "--latency-spike=1:2"])
def test_the_command_line_refuses_malformed_limits(bad: str, capsys: pytest.CaptureFixture[str]) -> None:
    from hrbench.testing._loopback import _main

    with pytest.raises(SystemExit):
        _main([bad])
    assert "numbers joined by ':'" in capsys.readouterr().err
