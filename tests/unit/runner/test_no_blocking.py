"""A guard: the runner's async path makes no blocking call on the event loop (anyio's style).

blockbuster raises when a blocking function (file or socket I/O, sqlite3, time.sleep, ...) runs
on the event loop thread; worker threads are allowed. The benchmark below touches SQLite through
the cache, a recording and a replay, all of which must go through worker threads.
"""

from __future__ import annotations

import itertools

import anyio
import blockbuster
import pytest

import hrbench as hb

# every public name imported now, not under the guard: a first import reads files, which the
# guard counts as blocking (run alone, or first on its worker, the test failed on an import)
for _name in hb.__all__:
    getattr(hb, _name)

# these benchmarks run on unlabelled items on purpose (cache, draws, retries, threads)
pytestmark = pytest.mark.filterwarnings("ignore::hrbench.errors.NoLabelsWarning")


def test_cache_recording_and_replay_never_block_the_loop(tmp_path) -> None:
    store = hb.Store(tmp_path / "s.db")
    counter = itertools.count(1)

    async def reply(messages, params):  # an async mock: no inline shortcut
        return hb.Result(text=f"r{next(counter)}", model="m")

    async def ask(item, ctx):
        return (await ctx.acall(item)).text

    ref = hb.Reference({f"q{i}": f"q{i}" for i in range(20)}, labels=None)
    arm = hb.Arm("a", ask)

    async def main() -> None:
        with blockbuster.blockbuster_ctx("hrbench"):
            await hb.benchmark_async(
                arm,
                ref,
                runs=5,
                client=hb.MockClient(reply),
                cache=hb.Cache(store),
                record="r",
                store=store,
                governor=hb.Governor(),
            )
            # the constructor reads the recording's identity from SQLite: build it off the loop
            replay = await anyio.to_thread.run_sync(lambda: hb.ReplayClient(store, recording="r"))
            await hb.benchmark_async(arm, ref, runs=5, client=replay, governor=hb.Governor())

    anyio.run(main)
    assert len(store.recording_export("r")) == 100


def test_the_guard_catches_a_blocking_call_in_an_arm(tmp_path) -> None:
    store = hb.Store(tmp_path / "s.db")

    async def blocking(item, ctx):
        store.cache_stats()  # sqlite3 on the event loop: what the guard is for
        return "x"

    async def main() -> None:
        with blockbuster.blockbuster_ctx("hrbench"):
            return await hb.benchmark_async(hb.Arm("b", blocking), hb.Reference({"q": 1}), runs=5)

    with pytest.warns(hb.ArmErrorWarning, match="BlockingError"):
        bench = anyio.run(main)
    assert {r.failure_kind for r in bench.rows} == {"error"}
