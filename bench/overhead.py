"""Harness overhead on an instantly answering mock model: the runner against its floor, and against the peers.

Two figures, every side of each warmed and timed the same way (``bench/_timing.py``: untimed
warm-up runs, then the least wall and the least CPU time of the timed runs):

1. ``hrbench``: ``hb.benchmark()`` of ITEMS x RUNS rows, an async arm (``await ctx.acall(item)``)
   and a sync arm (``ctx.call(item)``), an instant ``MockClient`` answering ``Paris``, the exact
   scorer, an uncapped ``Governor()``, concurrency 16, the rows kept in the ``Bench``, no store;
   against the floor (``_common.FLOOR``) over the same rows (target: at most 3x its CPU per row).
2. The same hrbench run at PEER_ITEMS x RUNS rows against DSPy's ``Evaluate`` and inspect_ai's
   ``eval`` making as many rows, each in its own process from ``.venv-peers`` (``bench/_peers.py``
   says what each does; ``make bench`` makes the venv, else no peer figure). The peers cost about
   a millisecond of CPU a row and more, hence the smaller size. A peer's figure counts only when
   its run succeeded and scored every row right, and when it was warmed and timed as hrbench was;
   otherwise the script says why and prints no ratio for it.
3. A stop rule's cost: ``hb.benchmark()`` with ``stop=StopWhenSure()`` (goal ``"rank"``) against
   the same benchmark without it, in rows/s, on two designs (``STOP_DESIGNS``: 5 arms the rule
   decides, as TAT-QA dev's; 2 tied arms it never decides, as SQuAD 2.0's two pipelines), 300
   clusters of 1-9 items (5 on average), 1 run, sync arms answering at once, a store (the stop
   rule keeps its running record there, as in the daemon). Target: the rule at least half the
   rows/s without it.

Usage: ``python bench/overhead.py [--items 2000] [--runs 5] [--repeat 5] [--peer-items 200]
[--peer-repeat 3] [--no-peers] [--stop-clusters 300] [--stop-only]``
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import tempfile
import time
import warnings
import zlib
from pathlib import Path
from typing import Any

import _common
from _timing import Timing, statistic, timed

import hrbench as hb

HERE = Path(__file__).resolve().parent
PEERS_PY = HERE.parent / ".venv-peers" / "bin" / "python"
CONCURRENCY = 16
TARGET_ROWS_PER_S = 35_000
TARGET_CPU_RATIO = 3.0
"""The runner's CPU per row against the floor's, at most."""
TARGET_STOP_RATIO = 2.0
"""Rows/s without a stop rule against with it, at most."""


def reference(items: int) -> hb.Reference:
    return hb.Reference({f"q{i}": f"Capital of France? ({i})" for i in range(items)}, labels="Paris")


def mock() -> hb.MockClient:
    return hb.MockClient(lambda messages, params: "Paris")


def hrbench_timing(items: int, runs: int, sync: bool, repeats: int, warmups: int) -> Timing:
    """hrbench's side: ``hb.benchmark()`` as the module docstring says, every row checked correct."""
    ref, client = reference(items), mock()

    async def ask_async(item: str, ctx: Any) -> str:
        return (await ctx.acall(item)).text

    def ask_sync(item: str, ctx: Any) -> str:
        return ctx.call(item).text

    arm = hb.Arm("ask", ask_sync if sync else ask_async)

    def run() -> hb.Bench:
        return hb.benchmark(
            arm, ref, runs=runs, client=client, governor=hb.Governor(), concurrency=CONCURRENCY
        )

    def rows_of(bench: hb.Bench) -> int:
        wrong = sum(r.correct is not True for r in bench.rows)
        assert len(bench.rows) == items * runs and not wrong, (len(bench.rows), wrong)
        return len(bench.rows)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return timed(run, rows_of, repeats, warmups)


def floor_timing(items: int, runs: int, repeats: int, warmups: int) -> Timing:
    """The floor's side: ``_common.FLOOR`` over the same items, labels and runs."""
    ref, client = reference(items), mock()
    pairs = [(ref.items[i], ref.labels.get(i)) for i in ref.ids]
    return timed(lambda: _common.floor_pass(client, pairs, runs), lambda n: n, repeats, warmups)


STOP_DESIGNS = {
    "decides": {"a": 8, "b": 7, "c": 6, "d": 5, "e": 3},
    "tied": {"a": 6, "b": 6},
}
"""Figure 3's designs: per arm, right on this many items in 10. ``decides``: 5 arms, as TAT-QA dev's
(the rule drops arms decided worse and stops with reason ``decided``); ``tied``: 2 arms right on the same items,
as SQuAD 2.0's two pipelines (the rule never decides and runs every cluster)."""


def stop_rate(
    design: str, clusters: int, with_stop: bool, repeats: int, warmups: int
) -> tuple[float, float, int]:
    """Figure 3's side: ``(rows/s, us CPU/row, rows)``, the best of the timed runs (``_timing``'s rule per row).

    The stop side's rows vary from run to run (arms dropped and clusters cancelled while others
    run), so the figure is per row: the most rows per wall second and the least CPU per row.
    """
    from hrbench.stats import StopWhenSure
    from hrbench.store import Store

    sizes = [1 + (c * 7) % 9 for c in range(clusters)]
    ids = [f"c{c:04d}-{k}" for c, m in enumerate(sizes) for k in range(m)]
    ref = hb.Reference(dict.fromkeys(ids, "q"), labels="yes", cluster={i: i.split("-")[0] for i in ids})

    def arm(name: str, right: int) -> hb.Arm:  # arms of the same accuracy are right on the same items
        return hb.Arm(
            name,
            lambda item, ctx: "yes" if zlib.crc32(f"{ctx.item_id}/{right}".encode()) % 10 < right else "no",
        )

    arms = [arm(n, r) for n, r in STOP_DESIGNS[design].items()]
    home = tempfile.TemporaryDirectory(prefix="hrbench-overhead-")
    store = Store(f"{home.name}/hrbench.sqlite3")
    made = [0]

    def run() -> hb.Bench:
        made[0] += 1
        store.benchmark_put(f"b{made[0]}", {}, ref.hash)
        stop = StopWhenSure() if with_stop else None
        bench = hb.benchmark(
            arms, ref, runs=1, concurrency=64, store=store, benchmark_id=f"b{made[0]}", stop=stop
        )
        want = "decided" if design == "decides" else "max_clusters"
        assert not with_stop or (bench.stop is not None and bench.stop.reason == want), bench.stop
        assert with_stop or len(bench.rows) == len(ids) * len(arms), len(bench.rows)
        return bench

    best_rate, best_cpu, rows = 0.0, float("inf"), 0
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(warmups):
                run()
            for _ in range(repeats):
                gc.collect()
                t, c = time.perf_counter(), time.process_time()
                bench = run()
                wall, cpu, rows = time.perf_counter() - t, time.process_time() - c, len(bench.rows)
                best_rate, best_cpu = max(best_rate, rows / wall), min(best_cpu, 1e6 * cpu / rows)
    finally:
        store.close()
        home.cleanup()
    return best_rate, best_cpu, rows


def stop_figure(clusters: int, repeats: int, warmups: int) -> None:
    """Print figure 3: rows/s with the stop rule against without it, on each design, in the same run."""
    _common.header(
        f"stop rule: {clusters} clusters of 1-9 items x 1 run, instant sync arms, a store",
        {
            "without": "hb.benchmark(), concurrency 64, no stop rule",
            "stop": "the same with stop=StopWhenSure() (goal rank, no plan: the symmetric test)",
        },
        statistic(repeats, warmups) + "; per row: the stop side's rows vary",
    )
    for design, accuracy in STOP_DESIGNS.items():
        plain, plain_cpu, plain_rows = stop_rate(design, clusters, False, repeats, warmups)
        stop, stop_cpu, stop_rows = stop_rate(design, clusters, True, repeats, warmups)
        ratio = plain / stop
        met = "met" if ratio <= TARGET_STOP_RATIO else "NOT met"
        print(f"  {design} ({len(accuracy)} arms):")
        print(f"    without:   {plain:>9,.0f} rows/s, {plain_cpu:6.1f} us CPU/row ({plain_rows:,} rows)")
        print(
            f"    stop rule: {stop:>9,.0f} rows/s, {stop_cpu:6.1f} us CPU/row ({stop_rows:,} rows); without / stop "
            f"{ratio:.2f}x rows/s, {stop_cpu / plain_cpu:.2f}x CPU/row (target <= {TARGET_STOP_RATIO:g}x: {met})"
        )


def peers(items: int, runs: int, repeats: int, warmups: int) -> dict[str, Any] | str:
    """The peers' figures from ``bench/_peers.py`` in ``.venv-peers``, or why there are none."""
    if not PEERS_PY.exists():
        return ".venv-peers not found (make bench creates it)"
    args = ["--items", str(items), "--runs", str(runs), "--repeat", str(repeats), "--warmup", str(warmups)]
    out = subprocess.run(
        [str(PEERS_PY), str(HERE / "_peers.py"), *args], capture_output=True, text=True, timeout=7200
    )
    try:
        got = json.loads(out.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        return f"bench/_peers.py printed no figures (status {out.returncode}): {out.stderr.strip()[-300:]}"
    return got if isinstance(got, dict) else f"bench/_peers.py printed {got!r}"


def peer_lines(found: dict[str, Any] | str, ours: dict[str, Timing]) -> list[str]:
    """The lines printed for the peers: a ratio only for a peer whose run counts.

    A peer's run counts when ``bench/_peers.py`` reports figures (not ``failed``) for the same
    rows, warm-up runs and timed runs as hrbench's ``ours`` (by arm).

    Example:
        >>> t = Timing(1000, 0.02, 0.02, 3, 1)
        >>> peer_lines({"inspect_ai": {"failed": "2 samples errored", "does": "eval()"}}, {"async": t})
        ['  inspect_ai: FAILED: 2 samples errored; no ratio (the run did not score every row)']
        >>> peer_lines({"dspy": {"rows": 1000, "wall_s": 2.0, "cpu_s": 1.0, "repeats": 3, "warmups": 1,
        ...                      "does": "Evaluate"}}, {"async": t})[0]
        '  dspy: 500 rows/s, 1000.0 us CPU/row; hrbench async arm 100.0x faster by wall time, 50.0x by CPU'
    """
    if isinstance(found, str):
        return [f"  peers: {found}; no peer ratio this run"]
    lines = []
    mine = next(iter(ours.values()))
    for name, got in found.items():
        if not isinstance(got, dict) or "failed" in got:
            why = got.get("failed") if isinstance(got, dict) else got
            lines.append(f"  {name}: FAILED: {why}; no ratio (the run did not score every row)")
            continue
        try:
            theirs = Timing(**{k: got[k] for k in ("rows", "wall_s", "cpu_s", "repeats", "warmups")})
        except (KeyError, TypeError) as exc:
            lines.append(f"  {name}: figures unreadable ({exc!r}); no ratio")
            continue
        same = (theirs.rows, theirs.repeats, theirs.warmups) == (mine.rows, mine.repeats, mine.warmups)
        if not same:
            lines.append(
                f"  {name}: {theirs.rows} rows, {theirs.warmups} warm-up, {theirs.repeats} timed runs, "
                f"not hrbench's {mine.rows}, {mine.warmups}, {mine.repeats}; no ratio"
            )
            continue
        lines.append(
            f"  {name}: {theirs.rows_per_s:,.0f} rows/s, {theirs.cpu_us_per_row:.1f} us CPU/row; "
            + "; ".join(
                f"hrbench {arm} arm {theirs.wall_s / t.wall_s:.1f}x faster by wall time, "
                f"{theirs.cpu_s / t.cpu_s:.1f}x by CPU"
                for arm, t in ours.items()
            )
        )
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=5, help="timed runs of each side, figure 1")
    ap.add_argument("--peer-items", type=int, default=200)
    ap.add_argument("--peer-repeat", type=int, default=3, help="timed runs of each side, figure 2")
    ap.add_argument("--warmup", type=int, default=1, help="untimed warm-up runs of each side")
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--stop-clusters", type=int, default=300, help="figure 3's clusters")
    ap.add_argument("--stop-only", action="store_true", help="figure 3 only")
    a = ap.parse_args()
    if a.stop_only:
        stop_figure(a.stop_clusters, a.repeat, a.warmup)
        return
    rows = a.items * a.runs
    _common.header(
        f"overhead: {a.items:,} items x {a.runs} runs = {rows:,} rows, instant mock, exact scorer",
        {
            "hrbench": f"hb.benchmark() of {a.items:,} items x {a.runs} runs, an async arm (await ctx.acall) "
            f"and a sync arm (ctx.call), MockClient answering 'Paris', exact scorer, Governor() "
            f"uncapped, concurrency {CONCURRENCY}, rows kept in the Bench, no store",
            "floor": _common.FLOOR + ", over the same rows",
        },
        statistic(a.repeat, a.warmup),
    )
    floor = floor_timing(a.items, a.runs, a.repeat, a.warmup)
    ours = {
        "async": hrbench_timing(a.items, a.runs, False, a.repeat, a.warmup),
        "sync": hrbench_timing(a.items, a.runs, True, a.repeat, a.warmup),
    }
    print(f"  floor:                {floor.rows_per_s:>9,.0f} rows/s, {floor.cpu_us_per_row:5.1f} us CPU/row")
    for name, t in ours.items():
        met = "met" if t.rows_per_s >= TARGET_ROWS_PER_S else "NOT met"
        print(
            f"  hrbench {name:<5} arm:    {t.rows_per_s:>9,.0f} rows/s, {t.cpu_us_per_row:5.1f} us CPU/row; "
            f"runner / floor {t.wall_s / floor.wall_s:.1f}x wall, {t.cpu_s / floor.cpu_s:.2f}x CPU "
            f"(target <= {TARGET_CPU_RATIO:g}x: {'met' if t.cpu_s <= TARGET_CPU_RATIO * floor.cpu_s else 'NOT met'}); "
            f"target >= {TARGET_ROWS_PER_S:,} rows/s: {met}"
        )
    print()
    stop_figure(a.stop_clusters, a.repeat, a.warmup)
    if a.no_peers:
        return
    prow = a.peer_items * a.runs
    print()
    _common.header(
        f"overhead against the peers: {a.peer_items:,} items x {a.runs} runs = {prow:,} rows on every side",
        {
            "hrbench": f"as above at {a.peer_items:,} items x {a.runs} runs (both arms)",
            "peers": "bench/_peers.py in .venv-peers, each in its own process (what each does: below); "
            "a peer's run counts only if it succeeded and scored every row right",
        },
        statistic(a.peer_repeat, a.warmup),
    )
    mine = {
        "async": hrbench_timing(a.peer_items, a.runs, False, a.peer_repeat, a.warmup),
        "sync": hrbench_timing(a.peer_items, a.runs, True, a.peer_repeat, a.warmup),
    }
    for name, t in mine.items():
        print(f"  hrbench {name} arm: {t.rows_per_s:,.0f} rows/s, {t.cpu_us_per_row:.1f} us CPU/row")
    found = peers(a.peer_items, a.runs, a.peer_repeat, a.warmup)
    if isinstance(found, dict):
        for name, got in found.items():
            print(f"  {name} does: {got.get('does', '?') if isinstance(got, dict) else '?'}")
    print("\n".join(peer_lines(found, mine)))


if __name__ == "__main__":
    sys.exit(main())
