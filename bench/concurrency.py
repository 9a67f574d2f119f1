"""Concurrency: N requests to a loopback server answering after L ms, at concurrency C.

Every way of sending them runs in one run against one server (in its own process, so it does
not share the client's interpreter lock):

- ``bare-1pool``: a bare loop, a semaphore of C and one ``AsyncClient`` whose pool holds C
  connections (``hrbench.models._http.make_async_client``), posting the body (msgspec) and
  reading the reply's text (msgspec), nothing else, timed from before its client is built;
- ``bare-shards``: the same loop over ceil(C / 16) such clients of at most 16 connections each,
  each request to the one with the fewest in flight (what ``hrbench.models._http.ShardedPool``
  does: one pool's scan of its connections costs CPU in proportion to their number), the clients
  sharing one TLS context as ``ShardedPool``'s do;
- ``client``: ``OpenAIClient.send`` in the same loop (limiter, shared sharded pool, retries,
  parsing, usage);
- ``benchmark``: ``hrbench.runner.benchmark_async`` with an ``OpenAIClient`` arm, a capped
  governor and the exact scorer (N = items x 5 runs), every row checked correct.

Every way sends the same requests (the benchmark's: item ``q{i}``'s message with the loopback's
reply marker, ``seed`` its run) and checks each reply's text, and every way's time covers building
its connection pool. The baseline is the best bare client, whichever of the two is faster in this run. Each way has
one untimed warm-up run (4 x C requests), then ``--repeat`` timed runs interleaved round by round
(load from elsewhere hits every way alike), each after a full garbage collection outside its
timed section (``bench/_timing.py``'s rule); the figure is the least wall time and the least CPU
time of this process (the client's side) of the timed runs. Prints each wall time, the ideal
N * L / C, wall/ideal, CPU seconds, and each way's time over the baseline's (the runner's
target: benchmark <= 1.15 x the best bare client).

    .venv/bin/python bench/concurrency.py [--n 2000] [--latency-ms 50] [--c 20 100] [--repeat 2]
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import _common
import anyio
import httpx2
import msgspec

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from hrbench.arm import Arm  # noqa: E402
from hrbench.models import (
    OpenAIClient,  # noqa: E402
    Pricing,  # noqa: E402
    _http,  # noqa: E402
)
from hrbench.records import Request  # noqa: E402
from hrbench.reference import Reference  # noqa: E402
from hrbench.runner import (
    Governor,  # noqa: E402
    benchmark_async,  # noqa: E402
)
from hrbench.scoring import exact_scorer  # noqa: E402
from hrbench.testing import LoopbackServer  # noqa: E402

RUNS = 5
FREE = Pricing(free={"loopback-1"})
"""The loopback model costs nothing, and is declared so (docs/guides/prices.md): no unpriced-model warning."""
SHARD = 16
"""Connections per shard of the sharded bare client (``hrbench.models._http.SHARD_CONNECTIONS``)."""

BODY = {"model": "loopback-1"}

encode = msgspec.json.Encoder().encode
decode = msgspec.json.decode

Way = Callable[[str, int, int], Awaitable[float]]


def request_of(k: int, items: int) -> tuple[str, int, str]:
    """The ``k``-th request of a way: (its user message, its ``seed``, the reply expected).

    Every way sends the benchmark's requests (item ``q{i}``, run ``r``, the loopback's reply
    marker), so the server does the same work for each.
    """
    i, run = divmod(k % (items * RUNS), RUNS)
    return f"[[reply:a{i}]] q{i}", run, f"a{i}"


async def _bare(base_url: str, n: int, c: int, shards: int) -> float:
    """A bare loop over ``shards`` clients of ceil(c / shards) connections; wall seconds.

    Timed from before its clients are built (one TLS context shared by them, as
    ``hrbench.models._http.ShardedPool`` does), as the benchmark's time covers building its pool;
    bodies encoded and replies decoded with msgspec, as hrbench's client does.
    """
    start = time.perf_counter()
    per = -(-c // shards)
    tls = httpx2.create_ssl_context(trust_env=False)
    clients = [_http.make_async_client(per, 30.0, trust_env=False, ssl_context=tls) for _ in range(shards)]
    in_flight = [0] * shards
    sem = anyio.Semaphore(c)
    url = base_url + "/chat/completions"
    headers = {"content-type": "application/json", "accept": "application/json"}
    items = max(1, n // RUNS)
    failures = 0

    async def one(k: int) -> None:
        nonlocal failures
        text, seed, expected = request_of(k, items)
        async with sem:
            i = min(range(shards), key=in_flight.__getitem__) if shards > 1 else 0
            in_flight[i] += 1
            try:
                body = encode({**BODY, "messages": [{"role": "user", "content": text}], "seed": seed})
                r = await clients[i].post(url, content=body, headers=headers)
            finally:
                in_flight[i] -= 1
            reply = decode(r.content) if r.status_code == 200 else {}
            failures += reply.get("choices", [{}])[0].get("message", {}).get("content") != expected

    async with anyio.create_task_group() as tg:
        for k in range(n):
            tg.start_soon(one, k)
    wall = time.perf_counter() - start
    for cl in clients:
        await cl.aclose()
    assert failures == 0, failures
    return wall


async def bare(base_url: str, n: int, c: int) -> float:
    """``bare-1pool``: one client whose pool holds ``c`` connections."""
    return await _bare(base_url, n, c, 1)


async def bare_sharded(base_url: str, n: int, c: int) -> float:
    """``bare-shards``: ceil(c / 16) clients, each request to the least busy."""
    return await _bare(base_url, n, c, max(1, -(-c // SHARD)))


BARE: dict[str, Way] = {"bare-1pool": bare, "bare-shards": bare_sharded}
"""The bare clients; the best of them in a run is that run's baseline."""


async def client_loop(base_url: str, n: int, c: int) -> float:
    cl = OpenAIClient("loopback-1", base_url=base_url, api_key_env=None, max_connections=c, trust_env=False)
    sem = anyio.Semaphore(c)
    items = max(1, n // RUNS)
    failures = 0

    async def one(k: int) -> None:
        nonlocal failures
        text, seed, expected = request_of(k, items)
        async with sem:
            r = await cl.send(Request(messages=[{"role": "user", "content": text}], params={"seed": seed}))
            failures += not r.ok or r.text != expected

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
        pricing=FREE,
    )
    wall = time.perf_counter() - start
    await cl.aclose()
    wrong = sum(1 for r in bench.rows if r.correct is not True)
    assert len(bench.rows) == items * RUNS and wrong == 0, wrong
    return wall


def measure(
    ways: dict[str, Way], base_url: str, n: int, c: int, repeats: int
) -> dict[str, tuple[float, float]]:
    """(least wall s, least CPU s of this process) of each way: one warm-up each, then interleaved runs.

    A full garbage collection before each timed run, outside it (``bench/_timing.py``'s rule): the
    ways run in one process, so without it a way could pay for a collection of what the way before
    it left (a full collection of this process takes tens of milliseconds, a few percent of a run).
    """
    for fn in ways.values():
        anyio.run(fn, base_url, 4 * c, c)
    best: dict[str, tuple[float, float]] = {}
    for _ in range(repeats):
        for name, fn in ways.items():
            gc.collect()  # as bench/_timing.py times every side: no way pays for the garbage of the one before
            cpu = time.process_time()
            wall = anyio.run(fn, base_url, n, c)
            cpu = time.process_time() - cpu
            w, u = best.get(name, (float("inf"), float("inf")))
            best[name] = (min(w, wall), min(u, cpu))
    return best


def baseline(best: dict[str, tuple[float, float]]) -> str:
    """The name of the fastest bare client in ``best``."""
    return min((name for name in best if name in BARE), key=lambda name: best[name][0])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=2000, help="requests per measurement")
    parser.add_argument("--latency-ms", type=float, default=50.0, help="the server's reply delay (ms)")
    parser.add_argument("--c", type=int, nargs="+", default=[20, 100], help="concurrency levels")
    parser.add_argument("--repeat", type=int, default=2, help="most timed runs per way (the best is kept)")
    ns = parser.parse_args()
    latency_s = ns.latency_ms / 1000.0
    ways: dict[str, Way] = {**BARE, "client": client_loop, "benchmark": bench_loop}
    _common.header(
        f"concurrency: N = {ns.n} requests to a loopback server (its own process) answering after "
        f"{ns.latency_ms:g} ms, at C = {', '.join(map(str, ns.c))} in flight",
        {
            "bare-1pool": "a semaphore of C, one httpx2 AsyncClient pooling C connections, post + the reply's "
            "text checked (msgspec both ways), timed from before the client is built",
            "bare-shards": f"the same over ceil(C / {SHARD}) AsyncClients sharing one TLS context, each request "
            "to the least busy",
            "client": "OpenAIClient.send() in the same loop (limiter, shared sharded pool, retries, parsing)",
            "benchmark": f"benchmark_async(), N / {RUNS} items x {RUNS} runs, an OpenAIClient arm, capped "
            "Governor, exact scorer",
            "requests": "every way the benchmark's (item q{i}'s message with the loopback's reply marker, "
            "seed = its run), each reply's text checked",
            "baseline": "the fastest bare client of this run",
        },
        "each way: 1 untimed warm-up of 4 x C requests, then up to --repeat timed runs interleaved round "
        "by round (fewer when the ideal time is long); the least wall and the least CPU time of this process",
    )
    print(f"{'C':>4} {'way':>12} {'wall s':>8} {'ideal s':>8} {'wall/ideal':>10} {'CPU s':>7} {'/base':>6}")
    start = time.perf_counter()
    with LoopbackServer(latency_s, separate_process=True) as srv:
        for c in ns.c:
            ideal = ns.n * latency_s / c
            repeats = max(1, min(ns.repeat, int(8 / ideal)))
            best = measure(ways, srv.base_url, ns.n, c, repeats)
            base = baseline(best)
            bw, bu = best[base]
            for name in ways:
                w, u = best[name]
                print(
                    f"{c:>4} {name:>12} {w:>8.2f} {ideal:>8.2f} {w / ideal:>10.2f} {u:>7.2f} {w / bw:>6.2f}"
                )
            w, u = best["benchmark"]
            print(
                f"{c:>4} hrbench / best bare client ({base}) = {w / bw:.2f} by wall time (target <= 1.15), "
                f"{u / bu:.2f} by CPU"
            )
    print(f"total {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
