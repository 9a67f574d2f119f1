"""Concurrency: N requests to a loopback server answering after L ms, at concurrency C.

Three ways to send them, in one run against one server (in its own process, so it does not
share the client's interpreter lock):

- ``bare``: a bare AsyncClient loop, a semaphore and a pool of C, nothing else (the client
  comes from ``hrbench.models._http.make_async_client``, the one module that imports httpx2);
- ``client``: ``OpenAIClient.send`` in the same loop (limiter, retries, parsing);
- ``benchmark``: ``hrbench.runner.benchmark`` with an ``OpenAIClient`` arm, a governor and the exact
  scorer (N = items x 5 runs).

Prints each wall time, the ideal N*L/C, wall/ideal, and hrbench/bare (issue 4's target:
benchmark <= 1.15 x bare). Bounded in time: about 40 s with the defaults.

    .venv/bin/python bench/concurrency.py [--n 2000] [--latency-ms 50] [--c 20 100] [--repeat 2]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

import anyio

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from hrbench.arm import Arm  # noqa: E402
from hrbench.models import _http  # noqa: E402
from hrbench.models.openai import OpenAIClient  # noqa: E402
from hrbench.records import Request  # noqa: E402
from hrbench.reference import Reference  # noqa: E402
from hrbench.runner.benchmark import benchmark_async  # noqa: E402
from hrbench.runner.governor import Governor  # noqa: E402
from hrbench.scoring.scorer import exact_scorer  # noqa: E402
from hrbench.testing.loopback import LoopbackServer  # noqa: E402

RUNS = 5


async def bare(base_url: str, n: int, c: int) -> float:
    http = _http.make_async_client(c, 30.0, trust_env=False)
    sem = anyio.Semaphore(c)
    body = {"model": "loopback-1", "messages": [{"role": "user", "content": "hi"}]}
    failures = 0

    async def one(i: int) -> None:
        nonlocal failures
        async with sem:
            r = await http.post(base_url + "/chat/completions", json={**body, "seed": i})
            failures += r.status_code != 200 or "choices" not in r.json()

    start = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for i in range(n):
            tg.start_soon(one, i)
    wall = time.perf_counter() - start
    await http.aclose()
    assert failures == 0, failures
    return wall


async def client_loop(base_url: str, n: int, c: int) -> float:
    cl = OpenAIClient("loopback-1", base_url=base_url, api_key_env=None, max_connections=c, trust_env=False)
    sem = anyio.Semaphore(c)
    failures = 0

    async def one(i: int) -> None:
        nonlocal failures
        async with sem:
            r = await cl.send(Request(messages=[{"role": "user", "content": "hi"}], params={"seed": i}))
            failures += not r.ok

    start = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for i in range(n):
            tg.start_soon(one, i)
    wall = time.perf_counter() - start
    await cl.aclose()
    assert failures == 0, failures
    return wall


async def bench_loop(base_url: str, n: int, c: int) -> float:
    items = max(1, n // RUNS)
    ref = Reference(
        {f"q{i}": f"[[reply:a{i}]] q{i}" for i in range(items)}, labels=[f"a{i}" for i in range(items)]
    )
    cl = OpenAIClient("loopback-1", base_url=base_url, api_key_env=None, max_connections=c, trust_env=False)

    async def ask(item: str, ctx: Any) -> Any:
        return await ctx.acall(item, seed=ctx.draw_index)

    start = time.perf_counter()
    bench = await benchmark_async(
        Arm("ask", ask),
        ref,
        runs=RUNS,
        client=cl,
        scorer=exact_scorer(),
        governor=Governor(max_calls=10 * n),
        concurrency=c,
    )
    wall = time.perf_counter() - start
    await cl.aclose()
    wrong = sum(1 for r in bench.rows if r.correct is not True)
    assert len(bench.rows) == items * RUNS and wrong == 0, wrong
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=2000, help="requests per measurement")
    parser.add_argument("--latency-ms", type=float, default=50.0, help="the server's reply delay (ms)")
    parser.add_argument("--c", type=int, nargs="+", default=[20, 100], help="concurrency levels")
    parser.add_argument("--repeat", type=int, default=2, help="most repeats per level (the best is kept)")
    ns = parser.parse_args()
    latency_s = ns.latency_ms / 1000.0
    variants = (("bare", bare), ("client", client_loop), ("benchmark", bench_loop))
    print(f"N = {ns.n} requests, L = {ns.latency_ms:g} ms, loopback server in a separate process;")
    print("best of up to --repeat interleaved runs (fewer when the ideal time is long)")
    print(f"{'C':>4} {'variant':>10} {'wall s':>8} {'ideal s':>8} {'wall/ideal':>10} {'/bare':>6}")
    start = time.perf_counter()
    with LoopbackServer(latency_s, separate_process=True) as srv:
        anyio.run(bare, srv.base_url, 50, 10)  # warm up the server and the import paths
        for c in ns.c:
            ideal = ns.n * latency_s / c
            repeats = max(1, min(ns.repeat, int(8 / ideal)))
            walls: dict[str, float] = {}
            for _ in range(repeats):  # interleaved, so that load from elsewhere hits every variant
                for name, fn in variants:
                    walls[name] = min(walls.get(name, float("inf")), anyio.run(fn, srv.base_url, ns.n, c))
            for name, _ in variants:
                w = walls[name]
                print(
                    f"{c:>4} {name:>10} {w:>8.2f} {ideal:>8.2f} {w / ideal:>10.2f} {w / walls['bare']:>6.2f}"
                )
            print(f"{c:>4} hrbench / bare = {walls['benchmark'] / walls['bare']:.2f} (target <= 1.15)")
    print(f"total {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
