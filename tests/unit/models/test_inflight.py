"""Shared in-flight calls: identical requests in flight are sent once.

Several ``benchmark_async`` calls run at once in one process, against the loopback server
(which counts what it receives): the first caller of a request pays, the others are served
its reply as a cache hit (source ``"cache"``, ``usd = 0``) and reserve nothing.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from hrbench.arm import Arm
from hrbench.errors import ArmErrorWarning
from hrbench.models import OpenAIClient, Pricing
from hrbench.records import Result
from hrbench.reference import Reference
from hrbench.runner import Bench, Cache, Governor, benchmark_async
from hrbench.runner._cache import IN_FLIGHT, InFlight
from hrbench.store import Store
from hrbench.testing import LoopbackServer
from tests.unit.models.conftest import FAST

pytestmark = [
    pytest.mark.timeout(90),
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore::hrbench.errors.FewRunsWarning"),  # few runs keep it quick
]

PRICING = Pricing(overrides={"loopback-1": {"input": 1.0, "output": 2.0}})


async def ask(item: str, ctx: Any) -> Any:
    return await ctx.acall(item, seed=ctx.draw_index, max_tokens=8)


def _ref(n: int) -> Reference:
    return Reference(
        {f"q{i}": f"[[reply:a{i}]] question {i}" for i in range(n)}, labels=[f"a{i}" for i in range(n)]
    )


def _client(srv: LoopbackServer, **kw: Any) -> OpenAIClient:
    return OpenAIClient("loopback-1", base_url=srv.base_url, api_key_env=None, **{**FAST, **kw})


async def _together(k: int, make: Any) -> list[Bench]:
    """Run ``k`` benchmarks at once (``make(i)`` returns the i-th's coroutine)."""
    return list(await asyncio.gather(*(make(i) for i in range(k))))


def _sources(benches: list[Bench]) -> Counter[str]:
    """Where the requests' replies came from (a failed run's trace also holds its cause, an error step)."""
    return Counter(s.source for b in benches for t in b.traces.values() for s in t if s.kind == "request")


@pytest.mark.parametrize(("k", "items", "runs"), [(2, 3, 1), (3, 4, 2), (5, 2, 3)])
async def test_simultaneous_identical_benchmarks_pay_once(
    srv: LoopbackServer, tmp_path: Path, k: int, items: int, runs: int
) -> None:
    srv.set(latency_s=0.2)  # every request is still in flight when the others ask
    path = tmp_path / "store.sqlite3"
    caches = [Cache(Store(path)) for _ in range(k)]  # one file, opened by each benchmark
    ref = _ref(items)
    benches = await _together(
        k,
        lambda i: benchmark_async(
            Arm("ask", ask),
            ref,
            runs=runs,
            client=_client(srv),
            cache=caches[i],
            governor=Governor(max_calls=100),
            pricing=PRICING,
        ),
    )
    distinct = items * runs
    assert len(srv.requests) == distinct  # the first pays, once
    assert _sources(benches) == {"live": distinct, "cache": (k - 1) * distinct}
    assert all(r.failure_kind is None for b in benches for r in b.rows)
    paid = [s.usd for b in benches for t in b.traces.values() for s in t if s.source == "live"]
    assert len(paid) == distinct and all(u is not None and u > 0 for u in paid)
    for b in benches:  # a served step costs the run nothing, and keeps its nominal cost
        for t in b.traces.values():
            for s in t:
                if s.source == "cache":
                    assert s.usd == 0.0 and s.usd_nominal is not None and s.usd_nominal > 0
    assert sum(c.hits for c in caches) == (k - 1) * distinct
    assert len(IN_FLIGHT) == 0  # nothing left behind


async def test_waiters_reserve_no_budget(srv: LoopbackServer) -> None:
    """One governor for three benchmarks, capped at the distinct calls: every run is answered."""
    srv.set(latency_s=0.2)
    gov = Governor(max_calls=6)
    cache = Cache()
    ref = _ref(3)
    benches = await _together(
        3,
        lambda i: benchmark_async(
            Arm("ask", ask), ref, runs=2, client=_client(srv), cache=cache, governor=gov, pricing=PRICING
        ),
    )
    assert len(srv.requests) == 6 and gov.calls == 6 and gov.refused == 0
    assert all(r.failure_kind is None for b in benches for r in b.rows)
    assert gov.snapshot()["usd"] == pytest.approx(gov.usd)  # nothing left reserved


@pytest.mark.parametrize(
    ("cache_mode", "shared"),
    [("read-write", True), ("no-read", False), ("no-write", False), ("none", False)],
)
async def test_only_a_cache_that_reads_and_writes_shares(
    srv: LoopbackServer, cache_mode: str, shared: bool
) -> None:
    """A waiter gets what its cache would have given a moment later: no cache, no sharing."""
    srv.set(latency_s=0.2)
    store = Store(":memory:")
    modes = {"read-write": (True, True), "no-read": (False, True), "no-write": (True, False)}

    def cache() -> Cache | None:
        if cache_mode == "none":
            return None
        read, write = modes[cache_mode]
        return Cache(store, read=read, write=write)

    await _together(
        3,
        lambda i: benchmark_async(
            Arm("ask", ask),
            _ref(2),
            runs=1,
            client=_client(srv),
            cache=cache(),
            governor=Governor(max_calls=100),
            pricing=PRICING,
        ),
    )
    assert len(srv.requests) == (2 if shared else 6)


async def test_arms_and_draws_are_not_shared(srv: LoopbackServer) -> None:
    """The key is the cache key: another arm name or another draw index is another request."""
    srv.set(latency_s=0.2)
    cache = Cache()
    await _together(
        2,
        lambda i: benchmark_async(
            [Arm("ask", ask), Arm(f"copy{i}", ask)],
            _ref(2),
            runs=2,
            client=_client(srv),
            cache=cache,
            governor=Governor(max_calls=100),
            pricing=PRICING,
        ),
    )
    # "ask" is shared (2 items x 2 draws), each copy pays its own 4
    assert len(srv.requests) == 4 + 4 + 4


async def test_a_failed_lead_is_not_shared_the_waiters_send_their_own(srv: LoopbackServer) -> None:
    """A failure is not cached, so not shared; a waiter sends itself."""
    srv.set(latency_s=0.2)
    srv.push("500")  # the first request to arrive (the lead's) fails; no retry
    cache = Cache()
    with pytest.warns(ArmErrorWarning):
        benches = await _together(
            3,
            lambda i: benchmark_async(
                Arm("ask", ask),
                _ref(1),
                runs=1,
                client=_client(srv, max_attempts=1),
                cache=cache,
                governor=Governor(max_calls=100),
                pricing=PRICING,
            ),
        )
    rows = [r for b in benches for r in b.rows]
    assert sorted(str(r.failure_kind) for r in rows) == ["None", "None", "error"]
    assert len(srv.requests) == 2  # the failed lead, then one waiter that led again
    assert _sources(benches) == {"live": 2, "cache": 1}
    (failed,) = [b for b in benches if b.rows[0].failure_kind == "error"]
    assert "HTTP 500" in str([s.error for t in failed.traces.values() for s in t])


async def test_a_lead_that_raises_or_is_cancelled_frees_its_waiters() -> None:
    flights = InFlight()
    assert flights.join("s", "k") is None  # lead
    waiting = flights.join("s", "k")
    cancelled = flights.join("s", "k")
    assert waiting is not None and cancelled is not None
    cancelled.cancel()
    assert flights.land("s", "k", None) == 2
    assert await waiting is None  # nothing to share: the waiter sends its own
    assert len(flights) == 0
    assert flights.join("s", "k") is None  # a later caller leads again
    served = flights.join("s", "k")
    assert served is not None
    flights.land("s", "k", Result(text="x"))
    assert (await served).text == "x"  # type: ignore[union-attr]
    other = flights.join("t", "k")  # another scope (another cache file) is another flight
    assert other is None


class _NoScope:
    """A cache without a scope, like the Ray executor's proxy of the driver's cache in a worker."""

    def __init__(self) -> None:
        self.inner = Cache()
        self.read = self.write = True

    def get(self, request: Any, arm: str = "") -> Result | None:
        return self.inner.get(request, arm)

    def put(self, request: Any, result: Result, arm: str = "") -> bool:
        return self.inner.put(request, result, arm)


async def test_a_cache_without_a_scope_does_not_share(srv: LoopbackServer) -> None:
    # replies are held until all four requests are in flight: no reply can be cached (and
    # answer a late request) before the last is sent, however slow this machine is; once a
    # 0.2 s latency stood for that, a timing assumption a loaded machine could break
    srv.set(gather=4)
    cache = _NoScope()
    await _together(
        2,
        lambda i: benchmark_async(
            Arm("ask", ask),
            _ref(2),
            runs=1,
            client=_client(srv),
            cache=cache,  # type: ignore[arg-type]
            governor=Governor(max_calls=100),
            pricing=PRICING,
        ),
    )
    assert len(srv.requests) == 4  # each sent its own; nothing raised
