"""Pacing: hrbench against an ideally paced bare client, on a provider that limits its rate.

The loopback provider runs in its own process, as a real one behaves: a token bucket of
``--rate`` requests a second with a burst of ``--burst`` (40 and 20), HTTP 429 at once with
``Retry-After`` and ``retry-after-ms`` when over, the limits stated in OpenAI's headers on every
reply, lognormal latency (median ``--latency-ms`` 300, shape ``--sigma`` 0.5), usage tokens. A
fresh server for every measurement: its bucket starts full and its spike is to come.

Two senders of ``--calls`` requests each, interleaved in the same run:

- ``ideal``: httpx2 + asyncio and nothing else, one request per bucket token: the burst at once,
  then one every ``1 / rate`` seconds, each in a task of its own (it knows the bucket; it reads
  no header and needs no retry);
- ``hrbench``: ``hrbench.benchmark`` of an ``OpenAIClient`` arm (``max_connections`` and
  ``concurrency`` C), ``calls / 5`` items x 5 runs, reading the limits from the headers.

Scenarios: C = 16 and C = 64 steady; C = 64 with a latency spike (``--spike``: from the 600th
request on, latency x5 for 30 s). Prints each wall, hrbench / ideal, each sender's share of the
allowed rate (calls / wall / rate), hrbench's 429s (what the server refused) and failed runs,
the most requests the server held at once, and the load average (the machine is shared).
Targets: share >= 0.95 steady, hrbench / ideal <= 1.10 through the spike, 429s <= 2%, no failed
run.

    .venv/bin/python bench/pacing.py [--calls 2000] [--rate 40] [--burst 20] [--c 16 64] [--rounds 1]

About 50 s a measurement with the defaults (six of them: about 5 minutes).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from typing import Any

import anyio

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from hrbench.arm import Arm  # noqa: E402
from hrbench.models import (
    OpenAIClient,  # noqa: E402
    _http,  # noqa: E402
)
from hrbench.reference import Reference  # noqa: E402
from hrbench.runner import (
    Governor,  # noqa: E402
    benchmark_async,  # noqa: E402
)
from hrbench.scoring import exact_scorer  # noqa: E402
from hrbench.testing import LoopbackServer  # noqa: E402

RUNS = 5


async def ideal(base_url: str, n: int, rate: float, burst: int) -> tuple[float, int]:
    """The burst at once, then one request every ``1 / rate`` seconds. Returns (wall s, failures)."""
    http = _http.make_async_client(512, 120.0, trust_env=False)
    failures = 0

    async def one(i: int) -> None:
        nonlocal failures
        body = {"model": "loopback-1", "messages": [{"role": "user", "content": f"q{i}"}], "seed": i}
        r = await http.post(base_url + "/chat/completions", json=body)
        failures += r.status_code != 200

    start = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for i in range(n):
            due = start + (0.0 if i < burst else (i - burst + 1) / rate)
            await anyio.sleep(max(0.0, due - time.perf_counter()))
            tg.start_soon(one, i)
    wall = time.perf_counter() - start
    await http.aclose()
    return wall, failures


async def hrbench(base_url: str, n: int, c: int) -> tuple[float, int]:
    """``hrbench.benchmark`` at concurrency ``c``. Returns (wall s, failed runs)."""
    items = max(1, n // RUNS)
    ref = Reference(
        {f"q{i}": f"[[reply:a{i}]] q{i}" for i in range(items)}, labels=[f"a{i}" for i in range(items)]
    )
    cl = OpenAIClient("loopback-1", base_url=base_url, api_key_env=None, max_connections=c, trust_env=False)

    async def ask(item: str, ctx: Any) -> Any:
        return await ctx.acall(item, seed=ctx.draw_index, max_tokens=16)

    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a failed run is counted below, not warned of
        bench = await benchmark_async(
            Arm("ask", ask),
            ref,
            runs=RUNS,
            client=cl,
            scorer=exact_scorer(),
            governor=Governor(max_calls=20 * n),
            concurrency=c,
        )
    wall = time.perf_counter() - start
    await cl.aclose()
    return wall, sum(1 for r in bench.rows if r.failure_kind == "error")


def measure(
    ns: argparse.Namespace, sender: str, c: int, spike: tuple[int, float, float] | None
) -> dict[str, Any]:
    """One measurement against a fresh server in its own process."""
    srv = LoopbackServer(
        ns.latency_ms / 1000.0,
        latency_sigma=ns.sigma,
        rate_limit=(ns.rate, float(ns.burst)),
        latency_spike=spike,
        separate_process=True,
    )
    with srv:
        if sender == "ideal":
            wall, failed = anyio.run(ideal, srv.base_url, ns.calls, ns.rate, ns.burst)
        else:
            wall, failed = anyio.run(hrbench, srv.base_url, ns.calls, c)
    stats = srv.stats()
    return {"wall": wall, "failed": failed, "share": ns.calls / wall / ns.rate, **stats}


def spike_of(text: str) -> tuple[int, float, float]:
    after, seconds, factor = text.split(":")
    return int(after), float(seconds), float(factor)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=2000, help="requests per measurement")
    parser.add_argument("--rate", type=float, default=40.0, help="the bucket's requests per second")
    parser.add_argument("--burst", type=int, default=20, help="the bucket's size")
    parser.add_argument("--latency-ms", type=float, default=300.0, help="the median latency (ms)")
    parser.add_argument("--sigma", type=float, default=0.5, help="the latency's lognormal shape")
    parser.add_argument("--spike", type=spike_of, default=(600, 30.0, 5.0), help="AFTER:SECONDS:FACTOR")
    parser.add_argument("--c", type=int, nargs="+", default=[16, 64], help="concurrency levels, steady")
    parser.add_argument("--spike-c", type=int, default=64, help="the concurrency through the spike")
    parser.add_argument("--rounds", type=int, default=1, help="rounds of every measurement, interleaved")
    ns = parser.parse_args()
    scenarios = [(f"C={c} steady", c, None) for c in ns.c]
    scenarios.append((f"C={ns.spike_c} spike x{ns.spike[2]:g} {ns.spike[1]:g} s", ns.spike_c, ns.spike))
    print(
        f"{ns.calls} calls; bucket {ns.rate:g}/s, burst {ns.burst}; latency lognormal, median "
        f"{ns.latency_ms:g} ms, sigma {ns.sigma:g}; loopback in its own process, a fresh one each time"
    )
    print(f"load average at start: {' '.join(f'{x:.1f}' for x in os.getloadavg())} (2 cores shared)")
    start = time.perf_counter()
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for _ in range(ns.rounds):
        for name, c, spike in scenarios:
            for sender in ("ideal", "hrbench"):  # interleaved: load from elsewhere hits both
                results.setdefault((name, sender), []).append(measure(ns, sender, c, spike))
    head = f"{'scenario':<24} {'sender':>8} {'wall s':>8} {'/ideal':>7} {'share':>6} {'429s':>12} {'failed':>7} {'in flight':>9}"
    print(head)
    for name, _, _ in scenarios:
        for i in range(ns.rounds):
            ideal_wall = results[(name, "ideal")][i]["wall"]
            for sender in ("ideal", "hrbench"):
                r = results[(name, sender)][i]
                limited = r.get("rate_limited", 0)
                print(
                    f"{name:<24} {sender:>8} {r['wall']:>8.2f} {r['wall'] / ideal_wall:>7.3f} {r['share']:>6.3f} "
                    f"{limited:>5} ({limited / max(1, r.get('requests', 1)):>4.1%}) {r['failed']:>7} "
                    f"{r.get('max_in_flight', 0):>9}"
                )
    print(f"load average at end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"total {time.perf_counter() - start:.0f} s")
    print("targets: share >= 0.95 steady, hrbench / ideal <= 1.10 through the spike, 429s <= 2%, 0 failed")


if __name__ == "__main__":
    main()
