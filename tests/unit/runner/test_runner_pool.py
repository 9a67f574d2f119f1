"""The runner's pool of workers (issue 15, point 6): `concurrency` workers take cells in order.

Seed 002's rules the pool must keep: runs of one arm on one item are made one after another,
cells start in the seed's order (cluster x item x arm), and at most ``concurrency`` (arm, item)
pairs run at once -- exactly that many while enough cells wait.
"""

from __future__ import annotations

import anyio
import anyio.lowlevel
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
