"""Harness overhead with an instantly answering mock model: rows per second, hrbench against peers.

hrbench runs in-process (an async arm and a sync arm, each making one model call per run through
ctx, with the exact scorer); DSPy ``Evaluate`` (with ``DummyLM``) and inspect_ai (with its
``mockllm/model``) run the same number of rows in their own virtual environment,
``.venv-peers`` (made by ``make bench``; skipped with a note when it is absent). Every figure is
measured in this run and printed as a ratio against the peers.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import hrbench as hb

ITEMS = 2000
RUNS = 5
N = ITEMS * RUNS
HERE = Path(__file__).resolve().parent
PEERS_PY = HERE.parent / ".venv-peers" / "bin" / "python"


CPU_ROWS_PER_S: dict[str, float] = {}
"""Rows per CPU second (every thread of this process), best of the runs: steadier than wall time
on a loaded machine, where other processes take the cores."""


def hrbench_rows_per_s(sync: bool) -> float:
    ref = hb.Reference({f"q{i}": f"Capital of France? ({i})" for i in range(ITEMS)}, labels="Paris")
    client = hb.MockClient(lambda messages, params: "Paris")

    async def ask_async(item, ctx):
        return (await ctx.acall(item)).text

    arm = hb.Arm("ask", (lambda item, ctx: ctx.call(item).text) if sync else ask_async)
    best = 0.0
    # best of 5: a run that meets one of the interpreter's full collections (50-70 ms for the
    # rows and traces a Bench keeps) is ~15% slower, and 3 runs met one in turn or not (the
    # async arm read 36k or 42k rows/s on the same code, by that alone)
    for _ in range(5):
        t, cpu = time.perf_counter(), time.process_time()
        bench = hb.benchmark(arm, ref, runs=RUNS, client=client, governor=hb.Governor(), concurrency=16)
        best = max(best, len(bench.rows) / (time.perf_counter() - t))
        name = "sync" if sync else "async"
        used = time.process_time() - cpu
        CPU_ROWS_PER_S[name] = max(CPU_ROWS_PER_S.get(name, 0.0), len(bench.rows) / used)
    return best


def bare_loop_rows_per_s() -> float:
    """The floor: a plain loop calling the same mock function and the same scorer."""

    def fn(messages, params):
        return "Paris"

    scorer = hb.exact_scorer()
    best = 0.0
    for _ in range(3):
        t = time.perf_counter()
        for i in range(ITEMS):
            item = f"Capital of France? ({i})"
            for run in range(1, RUNS + 1):
                out = fn([{"role": "user", "content": item}], {"draw_index": run})
                scorer(item, out, "Paris")
        best = max(best, N / (time.perf_counter() - t))
    return best


def main() -> None:
    bare = bare_loop_rows_per_s()
    ours_async = hrbench_rows_per_s(sync=False)
    ours_sync = hrbench_rows_per_s(sync=True)
    print(f"{ITEMS} items x {RUNS} runs, instant mock, exact scorer")
    print(f"bare loop (mock + scorer):     {bare:,.0f} rows/s ({1e6 / bare:.1f} us/row)")
    for name, v in (("async", ours_async), ("sync", ours_sync)):
        print(
            f"hrbench in-process, {name} arm: {v:,.0f} rows/s ({1e6 / v:.1f} us/row); "
            f"bare loop / hrbench = {bare / v:.1f}x; target >= 35,000 rows/s: {'met' if v >= 35000 else 'NOT met'}"
        )
        print(f"  per CPU second: {CPU_ROWS_PER_S[name]:,.0f} rows (what a free core would give)")
    if not PEERS_PY.exists():
        print("peers: .venv-peers not found (make bench creates it); no peer ratio this run")
        return
    out = subprocess.run(
        [str(PEERS_PY), str(HERE / "_peers.py"), str(N)], capture_output=True, text=True, timeout=600
    )
    try:
        peers = json.loads(out.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        print(f"peers: failed to run ({out.stderr.strip()[-300:]})")
        return
    for name, value in peers.items():
        if isinstance(value, (int, float)):
            print(
                f"{name}: {value:,.0f} rows/s -> hrbench async x{ours_async / value:.1f}, sync x{ours_sync / value:.1f}"
            )
        else:
            print(f"{name}: {value}")


if __name__ == "__main__":
    sys.exit(main())
