"""The pace of a provider key and model: limits read from headers, 429s, the slow start (a fake clock)."""

from __future__ import annotations

import math
from typing import Any

import anyio
import pytest

from hrbench.models import _pace
from hrbench.models._limits import Limit, parse_limits, parse_reset
from hrbench.models._pace import Pace, PaceRefused

OPENAI_10 = {
    "x-ratelimit-limit-requests": "600",
    "x-ratelimit-remaining-requests": "4",
    "x-ratelimit-reset-requests": "600ms",
}
"""OpenAI's headers for 10 requests a second with 4 left of a bucket of 10."""


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def ready(headers: dict[str, str] | None = None) -> tuple[Pace, Clock]:
    """A pace past its slow start: its first reply stated ``headers`` (none: no limits)."""
    clock = Clock()
    p = Pace(clock=clock)
    t = p.try_take()
    assert t is not None
    p.on_reply(t, headers or {}, 200)
    p.release(t)
    return p, clock


def drain(p: Pace, clock: Clock, seconds: float, step: float = 0.001) -> int:
    """Requests let through in ``seconds`` by a sender that tries every ``step`` seconds."""
    sent = 0
    end = clock.now + seconds
    while clock.now < end:
        t = p.try_take()
        if t is not None:
            sent += 1
            p.release(t)
        else:
            clock.now += step
    return sent


# -- what the headers say ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("1s", 1.0),
        ("6m0s", 360.0),
        ("20ms", 0.02),
        ("1h2m3.5s", 3723.5),
        ("0s", 0.0),
        ("2.5", 2.5),
        ("17us", 17e-6),
    ],
)
def test_openai_durations(text: str, seconds: float) -> None:
    assert parse_reset(text) == pytest.approx(seconds)


@pytest.mark.parametrize(
    "bad", ["", "soon", "-1", "1x", "nan", "inf", "2026-13-45T00:00:00Z", "9" * 400 + "h", "1s" * 30000 + "x"]
)
def test_unreadable_resets_are_none(bad: str) -> None:
    assert parse_reset(bad) is None


def test_anthropic_reset_is_a_time() -> None:
    assert parse_reset("2015-10-21T07:28:30.250Z", now=1445412500.0) == pytest.approx(10.25)
    assert parse_reset("2015-10-21T09:28:30+02:00", now=1445412500.0) == pytest.approx(10.0)
    assert parse_reset("2015-10-21T07:28:30Z", now=1445412600.0) == 0.0  # in the past


def test_both_providers_headers_read_alike() -> None:
    openai = parse_limits(
        {
            **OPENAI_10,
            "x-ratelimit-limit-tokens": "120000",
            "x-ratelimit-remaining-tokens": "119000",
            "x-ratelimit-reset-tokens": "500ms",
        }
    )
    assert openai == {"requests": Limit(600.0, 4.0, 0.6), "tokens": Limit(120000.0, 119000.0, 0.5)}
    assert openai["requests"].rate == 10.0 and openai["requests"].capacity() == 10.0
    anthropic = parse_limits(
        {
            "anthropic-ratelimit-requests-limit": "50",
            "anthropic-ratelimit-requests-remaining": "49",
            "anthropic-ratelimit-requests-reset": "2015-10-21T07:28:31.2Z",
            "anthropic-ratelimit-input-tokens-limit": "30000",
            "anthropic-ratelimit-output-tokens-limit": "8000",
            "anthropic-ratelimit-tokens-limit": "8000",
        },
        now=1445412510.0,
    )
    assert set(anthropic) == {"requests", "input_tokens", "output_tokens"}  # tokens-*: the tightest of them
    assert anthropic["requests"].reset_s == pytest.approx(1.2)
    assert anthropic["requests"].capacity() == pytest.approx(50.0)  # 49 + 50/60 * 1.2


def test_a_replys_headers_are_read_in_any_case_of_their_names() -> None:
    import httpx2

    stated = httpx2.Headers(
        [("Date", "x"), ("X-RateLimit-Limit-Requests", "600"), ("x-ratelimit-remaining-REQUESTS", "4")]
    )
    assert parse_limits(stated) == {"requests": Limit(600.0, 4.0, None)}
    assert parse_limits(httpx2.Headers({"content-type": "application/json", "server": "s"})) == {}
    assert parse_limits({"Server": "s"}) == {}


@pytest.mark.parametrize("bad", ["0", "-5", "many", "nan", "inf", ""])
def test_a_limit_that_is_no_number_is_left_out(bad: str) -> None:
    assert parse_limits({"x-ratelimit-limit-requests": bad}) == {}


# -- pacing by rate ---------------------------------------------------------------------------


def test_a_stated_rate_is_kept() -> None:
    p, clock = ready(OPENAI_10)
    sent = drain(p, clock, 10.0)
    # 4 left, then 98% of 10/s: never more than the provider's bucket (4 + 10 * 10)
    assert 4 + 0.97 * 98 <= sent <= 4 + 98 + 1


def test_the_bucket_never_holds_more_than_the_provider_says() -> None:
    """Another process uses the same key: a reply's remaining, carried forward, lowers the pace's bucket."""
    p, clock = ready(
        {**OPENAI_10, "x-ratelimit-remaining-requests": "10", "x-ratelimit-reset-requests": "0s"}
    )
    t = p.try_take()
    assert t is not None
    clock.now += 0.05  # half a token's time later, the provider says none is left
    p.on_reply(t, {**OPENAI_10, "x-ratelimit-remaining-requests": "0"}, 200)
    p.release(t)
    assert p.try_take() is None  # 0 left when sent, 0.5 refilled since: not one whole token
    clock.now += 0.06
    assert p.try_take() is not None


def test_no_headers_no_pace() -> None:
    p, _ = ready()
    assert p.rate() is None
    assert all(p.try_take() is not None for _ in range(1000))  # at once, however many


def test_a_2xx_without_headers_clears_the_stated_limits() -> None:
    p, _ = ready(OPENAI_10)
    assert p.rate() == pytest.approx(9.8)
    t = p.try_take()
    assert t is not None
    p.on_reply(t, {}, 200)
    assert p.rate() is None


def test_token_limits_become_a_request_rate() -> None:
    headers = {
        "x-ratelimit-limit-tokens": "60000",  # 1,000 tokens a second
        "x-ratelimit-remaining-tokens": "1000",
        "x-ratelimit-reset-tokens": "0s",
    }
    p, clock = ready()
    t = p.try_take()
    assert t is not None
    p.on_reply(t, headers, 200)
    p.on_usage(150, 50)  # 200 tokens a request: 5 requests a second
    p.release(t)
    assert p.rate() == pytest.approx(5 * 0.98)
    assert drain(p, clock, 10.0) <= 5 + 50


def test_anthropic_input_and_output_limits_pace_by_the_tighter() -> None:
    headers = {
        "anthropic-ratelimit-input-tokens-limit": "600000",  # 10,000 input tokens a second
        "anthropic-ratelimit-output-tokens-limit": "6000",  # 100 output tokens a second
        "anthropic-ratelimit-tokens-limit": "6000",
    }
    p, _ = ready()
    t = p.try_take()
    assert t is not None
    p.on_reply(t, headers, 200)
    p.on_usage(1000, 50)  # input allows 10/s, output 2/s
    assert p.rate() == pytest.approx(2 * 0.98)


# -- 429s -------------------------------------------------------------------------------------


def test_a_429_holds_every_request_for_its_wait() -> None:
    p, clock = ready()
    t = p.try_take()
    assert t is not None and p.try_take() is not None  # no limit stated: both go
    p.on_rate_limited(t, 0.5, {})
    assert p.try_take() is None
    clock.now += 0.49
    assert p.try_take() is None
    clock.now += 0.02
    assert p.try_take() is not None  # after the wait


def test_a_storm_of_429s_cuts_a_stated_rate_once_per_episode_and_it_heals() -> None:
    p, clock = ready(OPENAI_10)
    a, b, c = p.try_take(), p.try_take(), p.try_take()
    clock.now += 1.0
    d = p.try_take()
    assert a is not None and b is not None and c is not None and d is not None
    p.on_rate_limited(d, 0.0, {})
    p.on_rate_limited(c, 0.0, {})
    assert p.rate() == pytest.approx(9.8)  # a 429 or two hold, they do not cut
    p.on_rate_limited(b, 0.0, {})  # three of the last replies: a storm
    assert p.rate() == pytest.approx(10 * 0.98 * 0.75)  # lower the rate, not the slots
    p.on_rate_limited(a, 0.0, {})  # sent before the cut: the same episode
    assert p.rate() == pytest.approx(10 * 0.98 * 0.75)
    clock.now += 0.2
    e = p.try_take()
    assert e is not None
    p.on_rate_limited(e, 0.0, {})  # sent after the cut: a new episode
    assert p.rate() == pytest.approx(10 * (0.98 * 0.75 + 0.2 * _pace.HEAL_PER_S) * 0.75)
    clock.now += 5.0
    assert p.rate() == pytest.approx(
        10 * ((0.98 * 0.75 + 0.2 * _pace.HEAL_PER_S) * 0.75 + 5 * _pace.HEAL_PER_S)
    )
    clock.now += 60.0
    assert p.rate() == pytest.approx(9.8)  # healed up to the share used, no further


def test_a_429_among_many_replies_only_holds() -> None:
    p, clock = ready()
    tickets = []
    for _ in range(200):  # 200 replies in the window
        clock.now += 0.005
        t = p.try_take() or p.try_take()
        if t is not None:
            p.on_reply(t, {}, 200)
            p.release(t)
            tickets.append(t)
    for t in tickets[-3:]:
        p.on_rate_limited(t, 0.0, {})  # 3 of 204: under 2%
    assert p.rate() is None


def test_with_no_stated_limit_a_storm_teaches_a_rate_from_what_was_accepted() -> None:
    p, clock = ready()
    for _ in range(19):  # 20 accepted in the last second (the first in ready())
        clock.now += 0.05
        t = p.try_take()
        assert t is not None
        p.on_reply(t, {}, 200)
        p.release(t)
    t, u, v = p.try_take(), p.try_take(), p.try_take()
    assert t is not None and u is not None and v is not None
    p.on_rate_limited(t, 0.0, {})
    p.on_rate_limited(u, 0.0, {})
    assert p.rate() is None  # a 429 or two: a hold, no rate
    p.on_rate_limited(v, 0.0, {})
    assert p.rate() == pytest.approx(20 / 0.95 * 0.75, rel=0.05)
    clock.now += _pace.FORGET_S + 1
    assert p.rate() is None  # forgotten a while after the last 429


def test_a_wait_longer_than_allowed_is_refused() -> None:
    p, _ = ready()
    t = p.try_take()
    assert t is not None
    p.on_rate_limited(t, 120.0, {})

    async def main() -> None:
        with pytest.raises(PaceRefused) as info:
            await p.acquire(max_hold_s=60.0)
        assert info.value.wait_s == pytest.approx(120.0) and info.value.held

    anyio.run(main)


def test_a_turn_past_the_time_left_is_refused() -> None:
    p, _ = ready({"x-ratelimit-limit-requests": "6", "x-ratelimit-remaining-requests": "0"})  # one in 10 s

    async def main() -> None:
        with pytest.raises(PaceRefused) as info:
            await p.acquire(within_s=1.0)
        assert not info.value.held and info.value.wait_s > 1.0

    anyio.run(main)


def test_a_429_without_a_wait_holds_for_one_token_of_a_stated_rate() -> None:
    p, clock = ready(OPENAI_10)
    t = p.try_take()
    assert t is not None
    p.on_rate_limited(t, None, {})
    assert p.hold_until == pytest.approx(clock.now + 1 / 9.8)


# -- the slow start ---------------------------------------------------------------------------


def test_until_the_first_reply_one_request_goes_alone_then_twice_as_many_every_step() -> None:
    clock = Clock()
    p = Pace(clock=clock)
    assert p.try_take() is not None and p.try_take() is None
    clock.now += _pace.START_STEP_S
    assert p.try_take() is not None and p.try_take() is None  # two in flight
    clock.now += _pace.START_STEP_S
    assert [p.try_take() is not None for _ in range(3)] == [True, True, False]  # four


def test_the_first_reply_ends_the_slow_start() -> None:
    clock = Clock()
    p = Pace(clock=clock)
    t = p.try_take()
    assert t is not None and p.try_take() is None
    p.on_reply(t, {}, 200)
    assert all(p.try_take() is not None for _ in range(100))


# -- waiting, keys ----------------------------------------------------------------------------


@pytest.mark.timeout(30)
def test_waiters_are_served_in_order_and_a_cancelled_one_passes_its_turn() -> None:
    p, _ = ready()
    p.clock = Clock()  # a frozen clock: the pace lets nothing through until it is told
    t = p.try_take()
    assert t is not None
    p.on_rate_limited(t, math.inf, {})  # held until further notice
    order: list[int] = []

    async def one(i: int) -> None:
        ticket = await p.acquire()
        order.append(i)
        p.release(ticket)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            for i in range(5):
                tg.start_soon(one, i)
            scope = anyio.CancelScope()
            tg.start_soon(_cancelled, p, scope)
            await anyio.sleep(0.05)
            scope.cancel()
            await anyio.sleep(0.05)
            p.hold_until, p.learned = -math.inf, None  # the wait is over, the rate unbounded
            p._poke()

    anyio.run(main)
    assert order == [0, 1, 2, 3, 4]


async def _cancelled(p: Pace, scope: anyio.CancelScope) -> None:
    with scope:
        await p.acquire()
        raise AssertionError("a cancelled waiter was let through")


def test_one_pace_per_key_and_model_the_key_never_held() -> None:
    key = "sk-" + "Zq9xW2" * 6
    a = _pace.pace_for("openai", "http://h/v1", key, "m")
    assert a is _pace.pace_for("openai", "http://h/v1", key, "m")
    assert a is not _pace.pace_for("openai", "http://h/v1", key + "x", "m")
    assert a is not _pace.pace_for("openai", "http://h/v1", key, "m2")
    assert a is not _pace.pace_for("anthropic", "http://h/v1", key, "m")
    assert a is not _pace.pace_for("openai", "http://h/v1", None, "m")
    held = repr(_pace._PACES) + repr(vars(a))
    assert key not in held and key.encode().hex() not in held
    assert all(key.encode() not in k[2] for k in _pace._PACES if k[2] is not None)


def test_idle_paces_are_forgotten_past_the_most_kept(monkeypatch: Any) -> None:
    monkeypatch.setattr(_pace, "MAX_PACES", 8)
    busy = _pace.pace_for("openai", "http://h/v1", None, "busy")
    busy.in_flight = 1
    for i in range(50):
        _pace.pace_for("openai", "http://h/v1", None, f"m{i}")
    assert len(_pace._PACES) <= 8
    assert _pace.pace_for("openai", "http://h/v1", None, "busy") is busy
