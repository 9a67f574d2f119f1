"""What a replay matches, and what ``strict`` does.

A replay does not ignore ``base_url`` (a recording made against one server must not answer a spec
pointing at another), and ``strict = false`` does not behave as ``strict = true``. The recording key is the
live cache's (the request as sent, the endpoint included, the arm, the draw index); a
``base_url`` the recording was not made against is refused up front; ``strict = false`` asks
the fallback on a miss and is refused without one.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import hrbench as hb
from hrbench.testing import LoopbackServer

pytestmark = pytest.mark.filterwarnings("ignore::hrbench.errors.NoLabelsWarning")

ASK = hb.Arm("A", lambda item, ctx: ctx.call(f"say {item}").text)
REF = hb.Reference({"q1": "one", "q2": "two"}, labels=None)


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[LoopbackServer, LoopbackServer]]:
    with LoopbackServer(vary=True) as a, LoopbackServer(vary=True) as b:
        yield a, b


@pytest.fixture
def recorded(tmp_path: Any, servers: tuple[LoopbackServer, LoopbackServer]) -> tuple[hb.Store, hb.Bench]:
    store = hb.Store(tmp_path / "s.db")
    live = hb.OpenAIClient("loopback-1", base_url=servers[0].base_url, api_key_env=None)
    return store, hb.benchmark(ASK, REF, runs=5, client=live, record="rec", store=store)


def _outcomes(bench: hb.Bench) -> list[Any]:
    return [r.outcome for r in bench.rows]


@pytest.mark.parametrize("given", [None, "same", "same/"])
def test_a_replay_at_the_recorded_endpoint_or_none_given_answers_every_run(
    recorded: tuple[hb.Store, hb.Bench], servers: tuple[LoopbackServer, LoopbackServer], given: str | None
) -> None:
    store, first = recorded
    base_url = None if given is None else servers[0].base_url + ("/" if given.endswith("/") else "")
    replay = hb.ReplayClient(store, "rec", base_url=base_url)
    assert _outcomes(hb.benchmark(ASK, REF, runs=5, client=replay)) == _outcomes(first)


@pytest.mark.parametrize("other", ["second-server", "http://127.0.0.1:9999/v1"])
def test_a_replay_pointed_at_another_server_is_refused_naming_the_recorded_one(
    recorded: tuple[hb.Store, hb.Bench], servers: tuple[LoopbackServer, LoopbackServer], other: str
) -> None:
    store, _ = recorded
    base_url = servers[1].base_url if other == "second-server" else other
    with pytest.raises(hb.ConfigError, match="base_url: recording 'rec' was made against") as err:
        hb.ReplayClient(store, "rec", base_url=base_url)
    assert servers[0].base_url in str(err.value)


def test_strict_false_without_a_fallback_is_refused(recorded: tuple[hb.Store, hb.Bench]) -> None:
    with pytest.raises(hb.ConfigError, match="strict: strict = false asks the fallback"):
        hb.ReplayClient(recorded[0], "rec", strict=False)


def test_strict_false_asks_the_fallback_on_a_miss_and_strict_true_never_does(
    recorded: tuple[hb.Store, hb.Bench], servers: tuple[LoopbackServer, LoopbackServer]
) -> None:
    store, first = recorded
    fallback = hb.OpenAIClient("loopback-1", base_url=servers[0].base_url, api_key_env=None)
    sent = len(servers[0].requests)
    loose = hb.ReplayClient(store, "rec", strict=False, fallback=fallback)
    more = hb.benchmark(ASK, REF, runs=6, client=loose)  # run 6 was never recorded
    assert _outcomes(more)[:5] + _outcomes(more)[6:11] == _outcomes(first)
    assert len(servers[0].requests) - sent == 2  # one miss per item, asked live and recorded
    assert len(store.recording_export("rec")) == 12
    strict = hb.ReplayClient(store, "rec", strict=True, fallback=fallback)
    sent = len(servers[0].requests)
    with pytest.warns(hb.ArmErrorWarning, match="ReplayMiss"):
        missed = hb.benchmark(ASK, REF, runs=7, client=strict)
    assert [r.failure_kind for r in missed.rows if r.run == 7] == ["error", "error"]
    assert len(servers[0].requests) == sent  # the fallback is never called under strict


def test_the_spec_names_the_field(recorded: tuple[hb.Store, hb.Bench]) -> None:
    from hrbench import specs

    with pytest.raises(hb.ConfigError, match=r"^client\.strict: "):
        with specs.field_under("client"):
            specs.build_client({"kind": "replay", "recording": "rec", "strict": False}, recorded[0])
    with pytest.raises(hb.ConfigError, match=r"^client\.base_url: "):
        with specs.field_under("client"):
            specs.build_client(
                {"kind": "replay", "recording": "rec", "base_url": "http://127.0.0.1:9999/v1"}, recorded[0]
            )
