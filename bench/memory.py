"""Peak memory of a 1,000,000-row benchmark against a 100,000-row one, rows streamed to SQLite.

Both run in fresh subprocesses on the same 10,000 items (2 arms), 5 runs against 50 runs, with an
instantly answering mock; rows go to a Store in batches as they are scored (``keep_rows=False``).
The figure is the ratio of peak RSS (1M rows / 100k rows): memory must not grow with rows, so it
should stay near 1.0.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile

CHILD = r"""
import resource, sys, time, tempfile, os, anyio
import hrbench as hb
runs = int(sys.argv[1])
ref = hb.Reference({f"q{i}": f"item {i}" for i in range(10_000)}, labels="x")
client = hb.MockClient(lambda m, p: "x")
async def ask(item, ctx):
    return (await ctx.acall(item)).text
arms = [hb.Arm("a", ask), hb.Arm("b", ask)]
store = hb.Store(os.path.join(sys.argv[2], "m.db"))
batch = []
async def on_row(seq, row, trace):
    batch.append((seq, row))
    if len(batch) >= 2000:
        rows = list(batch); batch.clear()
        await store.arun(lambda: store.rows_put("mem", rows, fresh=len(rows)))  # every key new
async def main():
    b = await hb.benchmark_async(arms, ref, runs=runs, client=client, governor=hb.Governor(),
                                 concurrency=64, keep_rows=False, on_row=on_row)
    if batch:
        await store.arun(lambda: store.rows_put("mem", list(batch), fresh=len(batch)))
    return b
t = time.perf_counter()
bench = anyio.run(main)
dt = time.perf_counter() - t
n = store.rows_count("mem")
print(json.dumps({"rows": n, "seconds": dt, "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "accuracy": bench.summary()[0]["accuracy"]}))
""".replace("import resource", "import json, resource")


def measure(runs: int) -> dict:
    with tempfile.TemporaryDirectory() as d:
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(runs), d], capture_output=True, text=True, check=True
        )
    return json.loads(out.stdout)


if __name__ == "__main__":
    print(
        "memory: peak RSS of hb.benchmark_async() streaming rows to a Store (keep_rows=False), 2 arms x 10,000 items"
    )
    print("  1M rows:   50 runs, in a fresh subprocess, instant MockClient, rows written in batches of 2,000")
    print("  baseline:  the same at 5 runs (100,000 rows), in a fresh subprocess")
    small = measure(5)
    big = measure(50)
    print(
        f"100k rows: peak RSS {small['peak_rss_mib']:.0f} MiB in {small['seconds']:.1f} s ({small['rows']} rows stored)"
    )
    print(
        f"1M rows:   peak RSS {big['peak_rss_mib']:.0f} MiB in {big['seconds']:.1f} s ({big['rows']} rows stored)"
    )
    print(
        f"memory ratio 1M / 100k rows: {big['peak_rss_mib'] / small['peak_rss_mib']:.2f} (target: near 1.0)"
    )
    print(f"rows/s streamed to SQLite: {big['rows'] / big['seconds']:.0f}")
