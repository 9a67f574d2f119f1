"""A request waiting on another benchmark's in-flight one takes over at once.

Identical requests in flight are sent once: the first caller leads, the others wait for its
reply. A leader whose benchmark is being cancelled cleanly (a drain: it sends nothing new and
waits there until the benchmark is cancelled, up to the grace) must not keep its key, or the
waiters of other benchmarks stall for the grace (10 s) before sending their own.
"""

from __future__ import annotations

import functools
from typing import Any

import anyio
import pytest

import hrbench as hb
from hrbench.runner.runtime import Drain
from hrbench.testing import LoopbackServer

pytestmark = [
    pytest.mark.filterwarnings("ignore::hrbench.errors.FewRunsWarning"),
    pytest.mark.filterwarnings("ignore::hrbench.errors.NoLabelsWarning"),
]


@pytest.mark.parametrize("items", [1, 3])
def test_a_waiter_takes_over_from_a_leader_held_at_a_drain(tmp_path: Any, items: int) -> None:
    ref = hb.Reference({f"q{i}": f"x{i}" for i in range(items)}, labels=None)
    with LoopbackServer(latency_s=0.05) as srv:
        client = hb.OpenAIClient("loopback-1", base_url=srv.base_url, api_key_env=None)
        store = hb.Store(tmp_path / "s.db")
        drain = Drain()
        leading = anyio.Event()
        finished: list[str] = []

        async def held(item: Any, ctx: Any) -> str:
            drain.begin()  # `hrb cancel` began: nothing new is sent by this benchmark
            leading.set()
            return (await ctx.acall(f"say {item}")).text

        async def plain(item: Any, ctx: Any) -> str:
            return (await ctx.acall(f"say {item}")).text

        async def run(name: str, fn: Any, **kw: Any) -> hb.Bench:
            bench = await hb.benchmark_async(
                hb.Arm("ask", fn), ref, 1, client, cache=hb.Cache(store), governor=hb.Governor(), **kw
            )
            finished.append(name)
            return bench

        async def main() -> hb.Bench:
            async with anyio.create_task_group() as tg:
                tg.start_soon(functools.partial(run, "held", held, drain=drain, concurrency=items))
                await leading.wait()
                await anyio.sleep(0.2)  # its requests lead their keys and stop at the drain
                with anyio.fail_after(60):  # the old code waited until the held benchmark was cancelled
                    bench = await run("waiter", plain)
                assert finished == ["waiter"]  # the held benchmark is still held: it led, sent nothing
                tg.cancel_scope.cancel()
            return bench

        bench = anyio.run(main)
    assert len(srv.requests) == items  # the waiter sent its own, once per key
    assert all(s.source == "live" for t in bench.traces.values() for s in t if s.kind == "request")
    assert [r.outcome is not None for r in bench.rows] == [True] * items
