"""Batch mode against the fixed synchronous design: cost at twice the planned effect, round trips, client CPU.

The design: clusters of 5 items, 5 runs per item, arm ``a`` right 70% of the time (logit random
effects for clusters, items and arm x item, as :mod:`hrbench.testing._designs`), planned to find a
difference of 0.08 with 80% power (:func:`hrbench.power`: ``n`` clusters). The reference holds
``4 n`` clusters; arm ``b`` is worse by twice the planned difference (0.16). Both designs run
for real, through :func:`hrbench.benchmark`, against the loopback server (in this process),
whose bill is the cost:

- the fixed synchronous design: the first ``n`` clusters, every call through the synchronous
  API at the list price;
- batch mode: ``hb.Batch()`` with ``hb.StopWhenSure(plan=...)`` on the whole reference: waves of
  clusters through the batch API (billed at half the list price), until the test decides.

Printed: the batch design's cost over the fixed design's at 2x the planned effect (goal
<= 0.35x), its batch round trips (goal <= 5), and the client CPU (this process's, the loopback
in its own process) to prepare and upload 100,000 lines through the batch collector: each
request handed to it by a waiting task (as a run hands its request over), its ``custom_id`` (the
draw-keyed request key) and body made, the batch kept in the ledger (SQLite) first, the JSON
Lines encoded and uploaded as two batches of 50,000 (goal <= 10 s), with its ratio to
``json.dumps`` of the same lines in the same run. The runner's own work per run (the arm, the
runtime's cache look-up and reservation, scoring) is not in it.

Usage: .venv/bin/python bench/batch.py [REPS] [--quick]
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import anyio
import numpy as np

import hrbench as hb
from hrbench.models import BatchPricing, OpenAIBatchApi
from hrbench.records import Request
from hrbench.runner.batch import BatchLedger, Collector
from hrbench.testing import Design, LoopbackServer
from hrbench.testing._designs import _solve_mu

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sequential import plan_for  # noqa: E402

DESIGN = Design("5-item clusters, 5 runs, 0.70", (5,) * 200, 5, 0.7, diff=0.08)
PRICE = (1.0, 2.0)
PRICING = hb.Pricing(
    overrides={"loopback-1": {"input": PRICE[0], "cached_input": PRICE[0], "output": PRICE[1]}}
)
GOALS = {"cost": 0.35, "round_trips": 5, "cpu_s": 10.0}
LINES = 100_000


def _probabilities(n_clusters: int, seed: int) -> dict[tuple[str, str], float]:
    """Each arm's chance to be right on each item: shared cluster and item effects, its own arm x item one."""
    from scipy.special import expit

    rng = np.random.default_rng(seed)
    d = DESIGN
    items = n_clusters * 5
    shared = np.repeat(rng.normal(0, d.sd_cluster, n_clusters), 5) + rng.normal(0, d.sd_item, items)
    out: dict[tuple[str, str], float] = {}
    for arm, acc in (("a", d.accuracy), ("b", d.accuracy - 2 * d.diff)):  # twice the planned difference
        p = expit(_solve_mu(acc, d.sd) + shared + rng.normal(0, d.sd_arm_item, items))
        out.update({(arm, f"q{i}"): float(p[i]) for i in range(items)})
    return out


def _reference(n_clusters: int) -> hb.Reference:
    ids = [f"q{i}" for i in range(n_clusters * 5)]
    return hb.Reference(
        {i: i for i in ids},
        labels={i: "yes" for i in ids},
        cluster={i: f"c{int(i[1:]) // 5:03d}" for i in ids},
    )


def _arms() -> list[hb.Arm]:
    def make(name: str) -> hb.Arm:
        async def arm(item: str, ctx: Any) -> Any:
            return (await ctx.acall(f"arm={name} item={item} draw={ctx.draw_index}", max_tokens=4)).text

        return hb.Arm(name, arm)

    return [make("a"), make("b")]


def _replier(chances: dict[tuple[str, str], float]) -> Any:
    def reply(prompt: str, seed: Any, call: int) -> str:
        fields = dict(part.split("=", 1) for part in prompt.split())
        u = int.from_bytes(hashlib.sha256(prompt.encode()).digest()[:8], "big") / 2**64
        return "yes" if u < chances[(fields["arm"], fields["item"])] else "no"

    return reply


def _bill(srv: LoopbackServer) -> float:
    return sum(b.usd for b in srv.bills)


def designs(reps: int) -> dict[str, Any]:
    """The fixed synchronous design once per seed, and batch mode with stop-when-sure, ``reps`` seeds."""
    plan = plan_for(DESIGN, 0)
    n = int(plan.n_clusters)
    costs, trips, clusters = [], [], []
    with LoopbackServer() as srv, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        srv.set(price=PRICE)
        client = hb.OpenAIClient("loopback-1", base_url=srv.base_url, api_key_env=None, trust_env=False)
        for rep in range(reps):
            srv.set(reply_fn=_replier(_probabilities(4 * n, rep)))
            srv.reset()
            hb.benchmark(
                _arms(),
                _reference(n),
                runs=5,
                client=client,
                pricing=PRICING,
                concurrency=64,
                governor=hb.Governor(max_usd=100.0),
            )
            fixed = _bill(srv)
            srv.reset()
            made = len(srv.batches.created)
            bench = hb.benchmark(
                _arms(),
                _reference(4 * n),
                runs=5,
                client=client,
                pricing=PRICING,
                stop=hb.StopWhenSure(plan=plan, seed=rep),
                batch=hb.Batch(poll_s=0.01, gather_s=0.05),
                governor=hb.Governor(max_usd=100.0),
            )
            costs.append(_bill(srv) / fixed)
            trips.append(len(srv.batches.created) - made)
            clusters.append(bench.stop.clusters if bench.stop is not None else 4 * n)
    return {"n": n, "costs": costs, "trips": trips, "clusters": clusters}


async def _upload(n_lines: int, store_path: Path, srv: LoopbackServer) -> float:
    """CPU seconds to queue, keep, encode and upload ``n_lines`` lines through a collector."""
    client = hb.OpenAIClient("loopback-1", base_url=srv.base_url, api_key_env=None, trust_env=False)
    store = hb.Store(store_path)
    collector = Collector(
        OpenAIBatchApi(client),
        hb.Batch(poll_s=3600.0, gather_s=0.0),
        BatchLedger(store, "bench", "openai", srv.base_url, None),
        pricing=BatchPricing(PRICING, "openai"),
        list_pricing=PRICING,
        inner=client,
    )
    requests = [
        Request(
            messages=[{"role": "user", "content": f"item {i} of the batch bench"}],
            model="loopback-1",
            provider="openai",
            base_url=srv.base_url,
            draw_index=1,
            params={"max_tokens": 16},
        )
        for i in range(n_lines)
    ]
    start = time.process_time()
    async with anyio.create_task_group() as tg:
        await collector.start(tg)
        waiting = [asyncio.ensure_future(collector.request(r, None)) for r in requests]  # one waiter a line
        expected = math.ceil(n_lines / OpenAIBatchApi.max_lines)
        while sum(1 for b in collector.batches.values() if b.id) < expected:  # noqa: ASYNC110 - each uploaded and made
            await asyncio.sleep(0.005)
        cpu = time.process_time() - start
        tg.cancel_scope.cancel()
        for w in waiting:
            w.cancel()
    await collector.api.aclose()
    store.close()
    return cpu


def upload_cpu(n_lines: int) -> tuple[float, float]:
    """The collector's CPU for ``n_lines`` lines, and ``json.dumps`` of their bodies (the baseline)."""
    with LoopbackServer(separate_process=True) as srv, tempfile.TemporaryDirectory() as tmp:
        cpu = anyio.run(_upload, n_lines, Path(tmp) / "bench.sqlite3", srv)
    bodies = [
        {
            "model": "loopback-1",
            "messages": [{"role": "user", "content": f"item {i} of the batch bench"}],
            "max_tokens": 16,
        }
        for i in range(n_lines)
    ]
    start = time.process_time()
    for b in bodies:
        json.dumps({"custom_id": "x" * 64, "method": "POST", "url": "/v1/chat/completions", "body": b})
    return cpu, time.process_time() - start


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    quick = "--quick" in sys.argv
    reps = int(args[0]) if args else (3 if quick else 12)
    t0 = time.monotonic()
    got = designs(reps)
    n = got["n"]
    cost, trips = statistics.mean(got["costs"]), max(got["trips"])
    print(
        f"design: {DESIGN.name}; planned difference {DESIGN.diff} needs n = {n} clusters (80% power); true difference 2x"
    )
    print(f"fixed synchronous design: {n} clusters at the list price, every call through the synchronous API")
    print(
        f"batch mode + stop when sure over {4 * n} clusters, {reps} seeds: clusters run {statistics.mean(got['clusters']):.1f} (mean)"
    )
    print(
        f"  cost / fixed design's cost: mean {cost:.3f}, max {max(got['costs']):.3f}  (goal <= {GOALS['cost']})  {'PASS' if cost <= GOALS['cost'] else 'FAIL'}"
    )
    print(
        f"  batch round trips: mean {statistics.mean(got['trips']):.1f}, max {trips}  (goal <= {GOALS['round_trips']})  {'PASS' if trips <= GOALS['round_trips'] else 'FAIL'}"
    )
    lines = LINES // 10 if quick else LINES
    cpu, baseline = upload_cpu(lines)
    print(
        f"client CPU to prepare and upload {lines:,} lines: {cpu:.2f} s = {cpu / baseline:.1f}x json.dumps of their "
        f"bodies ({baseline:.2f} s)  (goal <= {GOALS['cpu_s']:g} s)  {'PASS' if cpu <= GOALS['cpu_s'] else 'FAIL'}"
    )
    print(f"({time.monotonic() - t0:.0f} s)")


if __name__ == "__main__":
    main()
