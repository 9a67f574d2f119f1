"""The runner's pool of workers: `concurrency` workers take cells in order.

Seed 002's rules the pool must keep: runs of one arm on one item are made one after another,
cells start in the seed's order (cluster x item x arm), and at most ``concurrency`` (arm, item)
pairs run at once -- exactly that many while enough cells wait.
"""

from __future__ import annotations

import time
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hrbench as hb
from tests._examples import examples


@settings(max_examples=examples(30), deadline=None)
@given(
    n_items=st.integers(1, 30),
    n_arms=st.integers(1, 3),
    concurrency=st.integers(1, 8),
    sync_arms=st.lists(st.booleans(), min_size=3, max_size=3),
)
def test_cells_start_in_order_and_at_most_concurrency_run_at_once(
    n_items: int, n_arms: int, concurrency: int, sync_arms: list[bool]
) -> None:
    started: list[tuple[str, str]] = []  # (arm, item) at each cell's first run
    runs_seen: dict[tuple[str, str], list[int]] = {}
    running: set[tuple[str, str]] = set()
    peak = 0

    def enter(arm: str, item: str, run: int) -> None:
        nonlocal peak
        if run == 1:
            started.append((arm, item))
        runs_seen.setdefault((arm, item), []).append(run)
        running.add((arm, item))
        peak = max(peak, len(running))

    def make(name: str, sync: bool) -> hb.Arm:
        if sync:

            def fn(item: str, ctx: hb.Context) -> str:
                enter(name, ctx.item_id, ctx.run)
                if ctx.run == 5:
                    running.discard((name, ctx.item_id))
                return "x"

            return hb.Arm(name, fn)

        async def afn(item: str, ctx: hb.Context) -> str:
            enter(name, ctx.item_id, ctx.run)
            for _ in range(3):  # let the other workers in
                await anyio.lowlevel.checkpoint()
            if ctx.run == 5:
                running.discard((name, ctx.item_id))
            return "x"

        return hb.Arm(name, afn)

    arms = [make(f"a{k}", sync_arms[k]) for k in range(n_arms)]
    ids = [f"q{i}" for i in range(n_items)]
    ref = hb.Reference(dict(zip(ids, ids, strict=True)), labels=["x"] * n_items)
    bench = hb.benchmark(arms, ref, runs=5, concurrency=concurrency, raise_duplicates=False)

    seed_order = [(a.name, i) for i in ids for a in arms]
    every_async = not any(sync_arms[:n_arms])
    if every_async or concurrency == 1:  # (sync cells grouped per thread trip start per group)
        assert started == seed_order
    assert sorted(started) == sorted(seed_order)
    assert all(runs == [1, 2, 3, 4, 5] for runs in runs_seen.values())
    assert [(r.arm, r.item) for r in bench.rows[::5]] == seed_order
    assert [r.run for r in bench.rows] == [1, 2, 3, 4, 5] * len(seed_order)
    assert peak <= concurrency
    if every_async:  # every arm suspends: the slots fill, and no more
        assert peak == min(concurrency, len(seed_order))


def _echoed(arm_fn: Any, items: int, concurrency: int) -> hb.Bench:
    """A benchmark of ``arm_fn`` on ``items`` items, 5 runs, a mock echoing the prompt; every row right, in order."""
    ids = [f"q{i}" for i in range(items)]
    ref = hb.Reference(dict(zip(ids, ids, strict=True)), labels=ids)
    client = hb.MockClient(lambda m, p: m[0]["content"])
    bench = hb.benchmark(
        hb.Arm("a", arm_fn), ref, runs=5, client=client, concurrency=concurrency, governor=hb.Governor()
    )
    assert [r.item for r in bench.rows[::5]] == ids and all(r.correct for r in bench.rows)
    return bench


def _trips(monkeypatch: Any, arm_fn: Any, items: int, concurrency: int) -> tuple[int, hb.Bench]:
    """Worker-thread trips of a sync arm's benchmark of ``items`` items x 5 runs, and its Bench."""
    import anyio.to_thread

    real = anyio.to_thread.run_sync
    trips = 0

    async def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal trips
        trips += 1
        return await real(*args, **kwargs)

    monkeypatch.setattr(anyio.to_thread, "run_sync", counted)
    bench = _echoed(arm_fn, items, concurrency)
    return trips, bench


def test_an_instant_sync_arms_groups_grow_a_waiting_ones_stay_small(monkeypatch: Any) -> None:
    # an arm answered at once takes fewer, larger worker-thread trips (each costs two thread
    # hand-offs); one that waits keeps groups of GROUP_FIRST cells, spread over the workers
    from hrbench.runner._loop import GROUP_FIRST

    instant, _ = _trips(monkeypatch, lambda item, ctx: ctx.call(item).text, 800, 4)
    assert instant < 800 // GROUP_FIRST // 2  # groups of GROUP_FIRST cells: 100 trips

    def waits(item: str, ctx: hb.Context) -> str:
        time.sleep(0.0005)  # over FAST_RUN_S
        return str(ctx.call(item).text)

    slow, _ = _trips(monkeypatch, waits, 160, 2)  # up to 20 cells a group were allowed
    assert slow == 160 // GROUP_FIRST


def _trips_at_once(monkeypatch: Any, arm_fn: Any, items: int, concurrency: int) -> list[int]:
    """For each worker-thread trip of a sync arm's benchmark, in the order they started: how many
    trips were running (itself included) when it started, once the first quarter of them had ended
    and every trip of the first wave (those started before any ended, on every slot) was back: a
    slower machine may keep one of those running past the first quarter, which no later pacing
    can take back."""
    import threading

    from hrbench.runner._loop import Loop

    real = Loop.trip
    lock = threading.Lock()
    running = ended = 0
    at_start: list[tuple[int, int]] = []  # (trips ended before, trips running)

    def trip(self: Loop, group: Any, todos: Any) -> Any:
        nonlocal running, ended
        with lock:
            running += 1
            at_start.append((ended, running))
        try:
            return real(self, group, todos)
        finally:
            with lock:
                running -= 1
                ended += 1

    monkeypatch.setattr(Loop, "trip", trip)
    _echoed(arm_fn, items, concurrency)
    first_wave = sum(1 for before, _ in at_start if before == 0)
    return [n for before, n in at_start if before >= max(first_wave, len(at_start) // 4)]


def test_an_instant_sync_arm_runs_one_trip_at_a_time_a_waiting_one_every_slot(monkeypatch: Any) -> None:
    # an arm whose runs compute gains nothing from more threads than one (they take turns on the
    # GIL, each turn costing CPU): once its first trips are back, at most COMPUTING_THREADS run
    # at once; an arm that waits gets every slot back. The instant arm's trips are said to be on
    # the CPU all the time (thread_time as the wall clock): how busy the machine is must not
    # decide the test (test_paced_sets_the_trips_at_once checks the share rule itself), nor may
    # a run the machine's load held past FAST_RUN_S make an instant arm's trip look like waiting
    from hrbench.runner import _loop
    from hrbench.runner._loop import COMPUTING_THREADS

    with monkeypatch.context() as patched:
        patched.setattr(time, "thread_time", time.perf_counter)
        patched.setattr(_loop, "FAST_RUN_S", 1.0)
        instant = _trips_at_once(monkeypatch, lambda item, ctx: ctx.call(item).text, 1600, 8)
    assert instant and max(instant) <= COMPUTING_THREADS

    def waits(item: str, ctx: hb.Context) -> str:
        time.sleep(0.0005)  # over FAST_RUN_S, and the thread is off the CPU
        return str(ctx.call(item).text)

    slow = _trips_at_once(monkeypatch, waits, 160, 8)
    assert max(slow) > COMPUTING_THREADS


@pytest.mark.parametrize(
    ("run_s", "cpu_share", "threads", "sizes"),
    [
        (0.00001, 1.0, 1, [16, 32, 64, 64]),  # runs at once, the thread computing: one trip at a time
        (0.00001, 0.4, 1, [16, 32, 64, 64]),  # (larger groups: fewer hand-offs)
        (0.00001, 0.2, 16, [16, 20, 20, 20]),  # at once, but the thread mostly waited (a lock, a short sleep)
        (0.001, 1.0, 16, [8, 8, 8, 8]),  # slow runs: every slot and small groups, whatever the share
    ],
)
def test_paced_sets_the_trips_at_once_and_their_size(
    run_s: float, cpu_share: float, threads: int, sizes: list[int]
) -> None:
    from hrbench.runner._invoke import Attempt
    from hrbench.runner._loop import Loop

    loop = Loop.__new__(Loop)
    loop.threads, loop.thread_limiter = 16, anyio.CapacityLimiter(16)
    loop.group_first = loop.group_size = 8
    loop.group_cap, loop.group_cap_computing = 20, 64
    atts = [[Attempt(None, seconds=run_s) for _ in range(5)]]  # type: ignore[arg-type]
    grown = []
    for _ in sizes:
        loop.paced(atts, cpu_share)
        assert loop.thread_limiter.total_tokens == threads
        grown.append(loop.group_size)
    assert grown == sizes
    loop.paced([[Attempt(None, seconds=0.001)]], 0.0)  # a trip that waited: every slot back
    assert (loop.thread_limiter.total_tokens, loop.group_size) == (16, 8)
