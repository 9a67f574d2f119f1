"""Coverage, test size and power of hrbench's intervals, simulated, beside naive iid ones (issue 14).

Each design (hrbench.testing.designs: logit random effects for clusters and items shared by two
correlated arms, an arm x item effect each) is simulated N times (default 2,000) at the level
of per-item mean scores, and each benchmark goes through the same functions report() and
compare() call (proportion_interval, difference_interval). Printed per design:

- arm: coverage of arm a's 95% interval (target 0.935-0.965), its mean width, and the naive
  Wald interval over all runs as if independent;
- pair: coverage of the paired difference's 95% interval when the arms differ by `diff`, and
  the naive unpaired interval;
- FPR: rejections at alpha 0.05 when the arms are equally good (target 0.035-0.065), naive too;
- power: rejections when they differ by `diff`, against what power() promises for the design
  (noncentral t on clusters - 1 df, components from a pilot of 2,000 clusters; target within
  0.03) and what the normal approximation (the old power()) promised.

Then designs sized by power() itself (5, 10 and 20-cluster families, target power 0.80) are
simulated: the power power() promised for the whole clusters run, against the simulated power.

A design whose true accuracy is 1 (all correct) covers trivially (any interval reaching 1
does); its rows show the interval's width, which must not be 0.

Usage: .venv/bin/python bench/coverage.py [N] [--quick] [--sized-only]
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import replace
from statistics import NormalDist

import numpy as np

from hrbench.stats import power
from hrbench.testing.designs import Design, arm_rows, check, planned_power

UNEQUAL = tuple(int(x) for x in np.linspace(2, 40, 15).round())  # 15 clusters of 2-40 items

DESIGNS = [
    Design("50x10x5", (10,) * 50, 5, 0.7, diff=0.04),
    Design("20x20x5 strong cluster", (20,) * 20, 5, 0.7, diff=0.05, sd_cluster=1.5),
    Design("5x40x5", (40,) * 5, 5, 0.7, diff=0.06),
    Design("10x10x5", (10,) * 10, 5, 0.7, diff=0.06),
    Design("40x2x10", (2,) * 40, 10, 0.7, diff=0.08),
    Design("15 cl of 2-40 @0.90", UNEQUAL, 5, 0.9, diff=0.04),
    Design("25x8x1 descriptive", (8,) * 25, 1, 0.7, diff=0.1, descriptive=True),
    Design("10x3x5 @0.97", (3,) * 10, 5, 0.97, diff=0.05),
    Design("all correct, 5 items", (1,) * 5, 5, 1.0),
    Design("all correct, 30 items", (3,) * 10, 5, 1.0),
    Design("all correct, 300 items", (5,) * 60, 5, 1.0),
]


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    quick = "--quick" in sys.argv
    n = int(args[0]) if args else (300 if quick else 2000)
    print(f"{n} simulated benchmarks per design; 95% intervals, alpha 0.05; naive = every run iid\n")
    head = (
        f"{'design':24} {'arm cov':>7} {'naive':>6} {'width':>6} | {'pair cov':>8} {'naive':>6} | "
        f"{'FPR':>6} {'naive':>6} | {'power':>6} {'power()':>7} {'normal':>6}"
    )
    print(head)
    print("-" * len(head))
    start = time.perf_counter()
    for i, d in enumerate(DESIGNS if "--sized-only" not in sys.argv else []):
        r = check(d, n, seed=1000 + i)
        plan = planned_power(d, seed=2000 + i, clusters=400 if quick else 2000) if d.diff else None

        def f(key: str, r: dict[str, float] = r) -> str:
            return f"{r[key]:.3f}" if key in r else "-"

        planned = "-" if plan is None else f"{plan['planned']:.3f}"
        normal = "-" if plan is None else f"{plan['normal']:.3f}"
        print(
            f"{d.name:24} {f('arm_cover'):>7} {f('arm_naive'):>6} {f('arm_width'):>6} | "
            f"{f('pair_cover'):>8} {f('pair_naive'):>6} | {f('fpr'):>6} {f('fpr_naive'):>6} | "
            f"{f('power'):>6} {planned:>7} {normal:>6}",
            flush=True,
        )
    print("\nDesigns sized by power() itself (target 0.80 at alpha 0.05), in whole clusters of the")
    print("design's size; the normal approximation's size beside it:")
    for i, d in enumerate([DESIGNS[2], DESIGNS[3], DESIGNS[1]]):
        m = d.sizes[0]
        rng = np.random.default_rng(3000 + i)
        pilot = arm_rows(d, rng, copies=max(1, 2000 // len(d.sizes)))
        plan = power(d.diff, bench=pilot, items_per_cluster=m)
        g = plan.n_clusters
        sized = replace(d, name=f"{d.name} -> {g} clusters", sizes=(m,) * g)
        sim = check(sized, n, seed=4000 + i)["power"]
        at = power(
            d.diff,
            var_within=plan.var_within,
            var_between=plan.var_between,
            design_effect=plan.design_effect,
            runs=d.runs,
            items_per_cluster=m,
            n_items=g * m,
        ).achieved
        z = NormalDist().inv_cdf(0.975) + NormalDist().inv_cdf(0.8)
        normal_n = math.ceil(
            z * z * plan.design_effect * (plan.var_between + plan.var_within / d.runs) / d.diff**2
        )
        print(
            f"  {sized.name:36} needs {plan.n_items:>4} items (normal approx. {normal_n:>4}); at {g * m:>4} "
            f"items power() promises {at:.3f}, simulated {sim:.3f}",
            flush=True,
        )
    se = (0.95 * 0.05 / n) ** 0.5
    print(
        f"\nMonte Carlo standard error of a coverage near 0.95: {se:.4f}; of an FPR near 0.05: "
        f"{se:.4f}. {time.perf_counter() - start:.0f} s."
    )


if __name__ == "__main__":
    main()
