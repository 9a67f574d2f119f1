"""Replaying a 10,000-row benchmark from recordings, against the in-memory mock run.

Records 2 arms x 1,000 items x 5 runs (10,000 rows) from an instant mock into a SQLite store,
then replays the benchmark from the recording; prints rows/s and us/row of both, and their
ratio. Target: replay >= 10,000 rows/s.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import hrbench as hb

ITEMS, RUNS = 1000, 5


def main() -> None:
    ref = hb.Reference({f"q{i}": f"question {i}" for i in range(ITEMS)}, labels="answer")
    live = hb.MockClient(lambda messages, params: f"answer {params['draw_index']}")

    async def ask(item, ctx):
        return (await ctx.acall(item)).text

    arms = [hb.Arm("A", ask), hb.Arm("B", ask)]
    with tempfile.TemporaryDirectory() as d:
        store = hb.Store(Path(d) / "replay.db")
        t = time.perf_counter()
        mock_bench = hb.benchmark(arms, ref, runs=RUNS, client=live, governor=hb.Governor())
        mock_s = time.perf_counter() - t
        hb.benchmark(arms, ref, runs=RUNS, client=live, governor=hb.Governor(), record="bench", store=store)
        replay = hb.ReplayClient(store, recording="bench")
        t = time.perf_counter()
        replayed = hb.benchmark(arms, ref, runs=RUNS, client=replay, governor=hb.Governor())
        replay_s = time.perf_counter() - t
    n = len(replayed.rows)
    assert [r.outcome for r in replayed.rows] == [r.outcome for r in mock_bench.rows]
    print(f"in-memory mock run: {n / mock_s:,.0f} rows/s ({1e6 * mock_s / n:.1f} us/row)")
    print(f"replay from SQLite: {n / replay_s:,.0f} rows/s ({1e6 * replay_s / n:.1f} us/row)")
    print(
        f"replay / mock time: {replay_s / mock_s:.2f}x; target >= 10,000 rows/s: {'met' if n / replay_s >= 10000 else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
