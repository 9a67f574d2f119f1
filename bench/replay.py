"""Replaying a 10,000-row benchmark from recordings, against the in-memory mock run.

Records 2 arms x 1,000 items x 5 runs (10,000 rows) from an instant mock into a SQLite store,
then times the benchmark replayed from that recording against the same benchmark on the mock.
Both sides are warmed and timed the same way (``bench/_timing.py``: an untimed warm-up run, which
imports every module either side uses, then the least wall time of the timed runs); prints rows/s
and us/row of both, and their ratio. Target: replay >= 10,000 rows/s.

Usage: ``python bench/replay.py [--items 1000] [--repeat 3]``
"""

from __future__ import annotations

import argparse
import tempfile
import warnings
from pathlib import Path
from typing import Any

import _common
from _timing import statistic, timed

import hrbench as hb

RUNS = 5


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    rows = 2 * a.items * RUNS
    _common.header(
        f"replay: 2 arms x {a.items:,} items x {RUNS} runs = {rows:,} rows",
        {
            "replay": "hb.benchmark() with a ReplayClient reading each call's reply from a recording in "
            "a SQLite store (an async arm, await ctx.acall), default scorer, no cache",
            "mock": "the same hb.benchmark() with the instant MockClient the recording was made from",
        },
        statistic(a.repeat, 1),
    )
    ref = hb.Reference({f"q{i}": f"question {i}" for i in range(a.items)}, labels="answer")
    live = hb.MockClient(lambda messages, params: f"answer {params['draw_index']}")

    async def ask(item: str, ctx: Any) -> str:
        return (await ctx.acall(item)).text

    arms = [hb.Arm("A", ask), hb.Arm("B", ask)]
    outcomes: dict[str, list[Any]] = {}

    def side(name: str, client: Any) -> Any:
        def run() -> hb.Bench:
            return hb.benchmark(arms, ref, runs=RUNS, client=client, governor=hb.Governor())

        def rows_of(bench: hb.Bench) -> int:
            outcomes[name] = [r.outcome for r in bench.rows]
            return len(bench.rows)

        return timed(run, rows_of, a.repeat, 1)

    with tempfile.TemporaryDirectory() as d, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        store = hb.Store(Path(d) / "replay.db")
        hb.benchmark(arms, ref, runs=RUNS, client=live, governor=hb.Governor(), record="bench", store=store)
        mock = side("mock", live)
        replay = side("replay", hb.ReplayClient(store, recording="bench"))
        store.close()
    assert outcomes["replay"] == outcomes["mock"] and mock.rows == replay.rows == rows
    print(f"  in-memory mock run: {mock.rows_per_s:,.0f} rows/s ({mock.us_per_row:.1f} us/row)")
    print(f"  replay from SQLite: {replay.rows_per_s:,.0f} rows/s ({replay.us_per_row:.1f} us/row)")
    met = "met" if replay.rows_per_s >= 10_000 else "NOT met"
    print(f"  replay / mock time: {replay.wall_s / mock.wall_s:.2f}x; target >= 10,000 rows/s: {met}")


if __name__ == "__main__":
    main()
