"""The cost of the per-call governor ledger: rows/s with and without it, and commits.

The same benchmark runs with and without the ledger in one process, alternating, each side
after one untimed warm-up run, the best rows/s of ``--repeat`` timed runs kept:

- ``http``: ``hrbench.runner._benchmark`` with an ``OpenAIClient`` to a loopback server (its own
  process) answering after L ms, C requests in flight: every reservation is committed to a
  SQLite file before its request is sent (``kept_ledger``), so C requests in flight wait on
  shared group commits;
- ``mock``: an instant ``MockClient`` (the daemon's mock case): its calls are counted durably,
  without waiting for the commit.

Prints rows/s without and with the ledger, their ratio, and commits per request (group commit:
far below 2, one reservation and one settlement each, when many are in flight).

    .venv/bin/python bench/ledger.py [--n 400] [--latency-ms 20] [--c 100] [--repeat 2]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import warnings
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import _common  # noqa: E402

import hrbench as hb  # noqa: E402
from hrbench.models import OpenAIClient  # noqa: E402
from hrbench.runner import kept_ledger  # noqa: E402
from hrbench.store import Store  # noqa: E402
from hrbench.testing import LoopbackServer  # noqa: E402

RUNS = 5


def run(client: Any, items: int, c: int, store: Store | None, bench_id: str) -> tuple[float, int]:
    """Rows/s of one benchmark, and the ledger's commits (0 without one)."""
    ref = hb.Reference({f"q{i}": f"Capital of France? ({i})" for i in range(items)}, labels="Paris")
    arm = hb.Arm("ask", lambda item, ctx: ctx.call(item).text)
    gov = hb.Governor(max_calls=10 * items * RUNS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        if store is None:
            hb.benchmark(arm, ref, runs=RUNS, client=client, governor=gov, concurrency=c)
            return items * RUNS / (time.perf_counter() - start), 0
        with kept_ledger(gov, store, bench_id) as journal:
            hb.benchmark(arm, ref, runs=RUNS, client=client, governor=gov, concurrency=c)
        return items * RUNS / (time.perf_counter() - start), journal.commits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=400, help="items (x 5 runs) per HTTP benchmark")
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument("--c", type=int, default=100, help="requests in flight")
    parser.add_argument("--mock-items", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    _common.header(
        "ledger: hb.benchmark() (a sync arm, ctx.call, Governor(max_calls=...)) with and without kept_ledger()",
        {
            "with": "every reservation and settlement kept in a SQLite ledger (kept_ledger) as the daemon does",
            "without": "the same benchmark, no ledger",
            "http": f"OpenAIClient to a loopback server (own process) answering after {args.latency_ms:g} ms, "
            f"{args.n} items x {RUNS} runs, {args.c} in flight",
            "mock": f"an instant MockClient, {args.mock_items} items x {RUNS} runs, concurrency 16",
        },
        f"each side: 1 untimed warm-up run, then the best rows/s of {args.repeat} timed runs, alternating",
    )
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(os.path.join(tmp, "ledger.sqlite3"))
        with LoopbackServer(latency_s=args.latency_ms / 1000, separate_process=True) as srv:
            http = OpenAIClient("loopback-1", base_url=srv.base_url, api_key_env=None, max_connections=args.c)
            mock = hb.MockClient(lambda messages, params: "Paris")
            for name, client, items, c in (
                ("http", http, args.n, args.c),
                ("mock", mock, args.mock_items, 16),
            ):
                without, with_, commits = [], [], []
                run(client, items, c, None, "")  # the warm-ups, untimed
                run(client, items, c, store, f"{name}-warm-up")
                for r in range(args.repeat):
                    without.append(run(client, items, c, None, "")[0])
                    rate, n_commits = run(client, items, c, store, f"{name}-{r}")
                    with_.append(rate)
                    commits.append(n_commits)
                best_without, best_with = max(without), max(with_)
                print(
                    f"{name:<5} {items} items x {RUNS} runs, {c} in flight: without ledger {best_without:,.0f} rows/s, "
                    f"with {best_with:,.0f} rows/s; with/without = {best_with / best_without:.2f}; "
                    f"commits per request {min(commits) / (items * RUNS):.3f} (no group commit: 2)"
                )


if __name__ == "__main__":
    main()
