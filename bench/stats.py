"""Time hrbench.stats.report() against naive baselines measured in the same run.

Sets: 1,000 items x 2 arms x 5 runs (10,000 rows) and 10,000 items x 5 arms x 5 runs
(250,000 rows; the target: report and all-pairs comparison <= 2 s, bootstrap with 2,000
resamples <= 20 s), and the first run of each alone as a descriptive report (one greedy
prediction per item, as `make demo` scores: intervals over items are computed there too). Baselines: a naive pandas groupby mean (frame built from the rows, then mean
over runs within item, then over items, per arm), the same groupby on a prebuilt frame, and the
runner's own summary table (hrbench.runner.summarise) when it is there.

Usage: .venv/bin/python bench/stats.py [--quick]
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

import msgspec
import numpy as np
import pandas as pd
from _common import header

from hrbench.records import Row
from hrbench.stats import report

try:
    from hrbench.runner import summarise
except ImportError:  # the runner is not there yet
    summarise = None


def make_rows(n_items: int, n_arms: int, runs: int, seed: int = 0) -> list[Row]:
    rng = np.random.default_rng(seed)
    p = rng.beta(0.7, 0.7, n_items)
    rows = []
    for i in range(n_items):
        for a in range(n_arms):
            pa = min(1.0, p[i] + 0.02 * a)
            for r in range(1, runs + 1):
                ok = bool(rng.random() < pa)
                rows.append(
                    Row(
                        cluster=f"c{i // 4}",
                        item=f"q{i}",
                        arm=f"arm{a}",
                        run=r,
                        split="test",
                        correct=ok,
                        outcome=None,
                        failure_kind=None if ok else "wrong",
                        usd=0.001 * (a + 1),
                        draw_index=r,
                    )
                )
    return rows


def best(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def pandas_naive(rows: list[Row]) -> Any:
    df = pd.DataFrame([msgspec.structs.asdict(r) for r in rows])
    return groupby_mean(df)


def groupby_mean(df: pd.DataFrame) -> Any:
    lab = df[df["reportable"] & df["correct"].notna()]
    return (
        lab.assign(correct=lab["correct"].astype(float))
        .groupby(["arm", "item"])["correct"]
        .mean()
        .groupby("arm")
        .mean()
    )


def main() -> None:
    quick = "--quick" in sys.argv
    sets = [(1000, 2, 5, 5)] + ([] if quick else [(10_000, 5, 5, 1)])
    header(
        "stats: report() over rows of simulated benchmarks (4 items a cluster)",
        {
            "report": "hrbench.stats.report(rows): per-arm intervals and every pair compared, clustered; "
            "also on a pandas frame, with the bootstrap (2,000 resamples), and descriptive on run 1",
            "baselines": "pandas: a frame built from the rows then groupby mean (item, then arm); the "
            "groupby alone on a built frame; the runner's summary table (summarise)",
        },
        "every side: 1 untimed warm-up on 100 items first; then the best of the set's repeats",
    )
    warm = make_rows(100, 2, 5)
    for fn in (pandas_naive, summarise, report, lambda rows: report(rows, method="bootstrap", n_boot=100)):
        if fn is not None:
            fn(warm)
    for n_items, n_arms, runs, repeat in sets:
        rows = make_rows(n_items, n_arms, runs)
        df = pd.DataFrame([msgspec.structs.asdict(r) for r in rows])
        print(f"== {n_items:,} items x {n_arms} arms x {runs} runs = {len(rows):,} rows (best of {repeat})")
        base_naive = best(lambda rows=rows: pandas_naive(rows), repeat)
        base_group = best(lambda df=df: groupby_mean(df), repeat)
        t_report = best(lambda rows=rows: report(rows), repeat)
        t_frame = best(lambda df=df: report(df), repeat)
        t_boot = best(lambda rows=rows: report(rows, method="bootstrap", n_boot=2000), 1)
        one = [r for r in rows if r.run == 1]
        t_one = best(lambda one=one: report(one, descriptive=True), repeat)
        check = pandas_naive(rows)
        rep = report(rows)
        assert all(abs(a.accuracy - check[a.arm]) < 1e-12 for a in rep.arms), "accuracy differs from pandas"
        print(f"  baseline pandas (frame from rows + groupby mean) {base_naive:8.3f} s")
        print(f"  baseline pandas groupby mean on a built frame    {base_group:8.3f} s")
        if summarise is not None:
            base_sum = best(lambda rows=rows: summarise(rows), repeat)
            print(f"  baseline runner summary table (summarise)        {base_sum:8.3f} s")
        print(
            f"  report(rows) + {len(rep.comparisons):>2} pairs, clustered          {t_report:8.3f} s"
            f"  = {t_report / base_naive:5.2f}x naive pandas, {t_report / base_group:5.2f}x groupby"
            + (f", {t_report / base_sum:5.2f}x summary" if summarise is not None else "")
        )
        print(
            f"  report(pandas frame), clustered                  {t_frame:8.3f} s"
            f"  = {t_frame / base_naive:5.2f}x naive"
        )
        print(
            f"  report(rows, bootstrap, 2000 resamples)          {t_boot:8.3f} s"
            f"  = {t_boot / base_naive:5.2f}x naive"
        )
        print(
            f"  report(first run only, descriptive), clustered   {t_one:8.3f} s"
            f"  ({len(one):,} rows, intervals over items)"
        )
        if n_items == 10_000:
            print(
                f"  targets: report+pairs <= 2 s: {'ok' if t_report <= 2 else 'MISSED'}; "
                f"bootstrap <= 20 s: {'ok' if t_boot <= 20 else 'MISSED'}"
            )


if __name__ == "__main__":
    main()
