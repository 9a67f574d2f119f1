"""Ray executor: the same benchmark locally and on a 2-worker local Ray cluster.

1. ``instant``: a sync arm on an instant mock model (what the executor costs per row);
2. ``loopback``: an async arm on a loopback OpenAI-compatible server (own process) answering
   after 50 ms, concurrency 100 per worker: local at 100 (one process) and at 200, Ray at
   2 workers x 100;
3. ``governor``: a USD cap under 100 concurrent reservations per worker (2 workers), random
   costs within the worst-case estimate: the overshoot (goal 0) per cap.

Prints rows/s for each and the ratio Ray / local, measured in the same run. Ray's start-up
and the first task on each worker (imports) are left out: every side (local and Ray, in 1 and 2)
has one untimed warm-up run on a few items first, then one timed run each.

    .venv/bin/python bench/ray.py [--items 2000] [--loopback-items 800] [--latency-ms 50]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import sys
import time
import warnings
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
# this file is bench/ray.py: its directory must not hide the ray package
sys.path[:] = [os.path.dirname(HERE)] + [p for p in sys.path if os.path.abspath(p or ".") != HERE]
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # a loopback-only local cluster

import ray  # noqa: E402

sys.path.append(HERE)  # after ray is imported: bench/ray.py must not hide it, _common must be found
import _common  # noqa: E402

import hrbench as hb  # noqa: E402
from hrbench.models import OpenAIClient, Pricing  # noqa: E402
from hrbench.records import Result, Usage  # noqa: E402
from hrbench.runner.ray import RayExecutor  # noqa: E402
from hrbench.testing import LoopbackServer  # noqa: E402

RUNS = 5
WORKERS = 2


def instant(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    return str(messages[-1]["content"]).split()[-1].upper()


def ask_sync(item: Any, ctx: Any) -> str:
    return ctx.call(f"Say {item}").text


async def ask_async(item: Any, ctx: Any) -> Any:
    return await ctx.acall(item, seed=ctx.draw_index)


async def priced(messages: list[dict[str, Any]], params: dict[str, Any]) -> Result:
    await asyncio.sleep(0.05)
    content = str(messages[-1]["content"])
    h = hashlib.sha256(f"{content}|{params.get('draw_index')}".encode()).digest()
    return Result(
        text=content.split()[-1],
        usage=Usage(tokens_in=1 + h[0] % (len(content) + 8), tokens_out=1 + h[1] % int(params["max_tokens"])),
        model="priced",
    )


async def ask_priced(item: Any, ctx: Any) -> Any:
    return await ctx.acall(f"Say {item}", max_tokens=ctx.rng.choice([5, 20, 60]))


def timed(**kw: Any) -> tuple[float, hb.Bench]:
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bench = hb.benchmark(runs=RUNS, **kw)
    return time.perf_counter() - start, bench


def line(name: str, n: int, wall: float, base: float | None = None) -> None:
    ratio = "" if base is None else f"{(n / wall) / (n / base):>8.2f}"
    print(f"  {name:<28} {n:>7} rows {wall:>7.2f} s {n / wall:>9.0f} rows/s {ratio}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--items", type=int, default=2000, help="items of the instant benchmark")
    parser.add_argument("--loopback-items", type=int, default=800, help="items of the loopback benchmark")
    parser.add_argument("--latency-ms", type=float, default=50.0)
    ns = parser.parse_args()
    _common.header(
        "ray: the same hb.benchmark() run locally and by the Ray executor on a local 2-CPU cluster",
        {
            "local": "hb.benchmark() in this process (executor None): 1. a sync arm on an instant MockClient, "
            "concurrency 16; 2. an async arm on an OpenAIClient to a loopback server (its own process), "
            "concurrency 100 and 200",
            "Ray": "the same benchmark with executor='ray' (2 workers x 16) in 1, RayExecutor(worker_concurrency"
            "=100) at 200 in 2; 3. a USD cap under 2 x 100 concurrent reservations (goal: no overshoot)",
        },
        "each side: 1 untimed warm-up run on a few items, then 1 timed run; rows checked the same on both",
    )
    start = time.perf_counter()
    t = time.perf_counter()
    ray.init(num_cpus=WORKERS, include_dashboard=False, log_to_driver=False)
    print(
        f"Ray {ray.__version__}: local cluster of {WORKERS} CPUs started in {time.perf_counter() - t:.1f} s"
    )
    try:
        gov = lambda: hb.Governor(max_calls=10**7)  # noqa: E731
        ref = hb.Reference(
            {f"q{i}": f"w{i}" for i in range(ns.items)}, labels=[f"W{i}" for i in range(ns.items)]
        )
        small = hb.Reference({"a": "w", "b": "v"}, labels=["W", "V"])
        t = time.perf_counter()
        timed(
            arms=hb.Arm("a", ask_sync),
            reference=small,
            client=hb.MockClient(instant),
            executor="ray",
            governor=gov(),
        )
        print(f"warm-up on Ray (workers start, import hrbench): {time.perf_counter() - t:.1f} s")
        timed(arms=hb.Arm("a", ask_sync), reference=small, client=hb.MockClient(instant), governor=gov())

        print(
            f"\n1. instant mock, sync arm, {ns.items} items x {RUNS} runs (columns: rows, wall, rows/s, /local)"
        )
        common = {"arms": hb.Arm("a", ask_sync), "reference": ref, "client": hb.MockClient(instant)}
        local_w, local_b = timed(**common, governor=gov(), concurrency=16)
        ray_w, ray_b = timed(**common, governor=gov(), concurrency=2 * 16, executor="ray")
        n = len(local_b.rows)
        line("local, concurrency 16", n, local_w)
        line("Ray, 2 workers x 16", n, ray_w, local_w)
        same = [(r.item, r.run, r.correct) for r in local_b.rows] == [
            (r.item, r.run, r.correct) for r in ray_b.rows
        ]
        print(f"  same rows: {same}")

        lat = ns.latency_ms / 1000
        m = ns.loopback_items
        print(f"\n2. loopback server, {ns.latency_ms:g} ms per reply, async arm, {m} items x {RUNS} runs")
        lref = hb.Reference(
            {f"q{i}": f"[[reply:a{i}]] q{i}" for i in range(m)}, labels=[f"a{i}" for i in range(m)]
        )
        with LoopbackServer(lat, separate_process=True) as srv:

            def client(c: int) -> OpenAIClient:
                return OpenAIClient(
                    "loopback-1", base_url=srv.base_url, api_key_env=None, max_connections=c, trust_env=False
                )

            arm = hb.Arm("ask", ask_async)
            ideal = m * RUNS * lat
            warm = hb.Reference(
                {f"q{i}": f"[[reply:a{i}]] q{i}" for i in range(20)}, labels=[f"a{i}" for i in range(20)]
            )
            for c, executor in ((100, None), (200, None), (200, RayExecutor(worker_concurrency=100))):
                timed(
                    arms=arm,
                    reference=warm,
                    client=client(min(c, 100) if executor else c),
                    governor=gov(),
                    concurrency=c,
                    executor=executor,
                )
            w100, b100 = timed(arms=arm, reference=lref, client=client(100), governor=gov(), concurrency=100)
            w200, _ = timed(arms=arm, reference=lref, client=client(200), governor=gov(), concurrency=200)
            wray, bray = timed(
                arms=arm,
                reference=lref,
                client=client(100),
                governor=gov(),
                concurrency=200,
                executor=RayExecutor(worker_concurrency=100),
            )
            n = len(b100.rows)
            line("local, concurrency 100", n, w100)
            line("local, concurrency 200", n, w200, w100)
            line("Ray, 2 workers x 100", n, wray, w100)
            print(f"  ideal: {ideal / 100:.2f} s at 100 in flight, {ideal / 200:.2f} s at 200")
            assert all(r.correct for r in bray.rows) and all(r.correct for r in b100.rows)

        print(f"\n3. governor: USD cap, 2 workers x 100 concurrent reservations, random costs, {RUNS} runs")
        pricing = Pricing(table={"models": {"priced": {"input": 10.0, "cached_input": 5.0, "output": 40.0}}})
        gref = hb.Reference({f"q{i}": f"w{i}" for i in range(400)}, labels=[f"W{i}" for i in range(400)])
        worst = 0.0
        for cap in (0.05, 0.2, 0.6, 1.0):
            g = hb.Governor(max_usd=cap)
            w, b = timed(
                arms=hb.Arm("p", ask_priced),
                reference=gref,
                client=hb.MockClient(priced, model="priced"),
                governor=g,
                pricing=pricing,
                concurrency=200,
                executor=RayExecutor(worker_concurrency=100),
            )
            spent = sum(r.usd or 0.0 for r in b.rows)
            stopped = sum(r.failure_kind == "budget_stop" for r in b.rows)
            over = max(0.0, spent - cap)
            worst = max(worst, over)
            print(
                f"  cap {cap:>5.2f} USD: spent {spent:.4f}, governor {g.usd:.4f}, calls {g.calls}, "
                f"stopped {stopped}/{len(b.rows)}, overshoot {over:.6f} USD ({w:.1f} s)"
            )
        print(f"  worst overshoot: {worst:.6f} USD (goal 0)")
    finally:
        ray.shutdown()
    print(f"\ntotal {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
